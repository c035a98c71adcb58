#pragma once
// Built-in model presets (resources/presets/*.json compiled into the core).
#include "batchfit/model.h"
#include "batchfit/result.h"

#include <string>
#include <vector>

namespace batchfit {

struct PresetInfo {
    std::string id;    ///< "resnet50"
    std::string title; ///< "ResNet-50 (torchvision)"
};

std::vector<PresetInfo> presetList();
Result<Model> loadPreset(const std::string& id);
/// The preset's JSON text as shipped.
Result<std::string> presetJson(const std::string& id);

} // namespace batchfit
