#pragma once
// The settings table's labels (batchfit/settings.h, English in core) translated for the report and the GUI.
#include "batchfit/settings.h"

#include <QString>

namespace batchfit {

/// The setting's label in the current language (its English label when it has no translation).
QString settingLabel(const SettingInfo& s);
/// True when `label` is one of the labels listed for translation (a test checks every setting's is).
bool isTranslatableSettingLabel(const std::string& label);

} // namespace batchfit
