#pragma once
// The UI language: installs BatchFit's and Qt's translators and a font list with a CJK fallback.
#include <QCoreApplication>
#include <QString>
#include <QStringList>

namespace batchfit {

/// English (built in) and Simplified Chinese (:/i18n/batchfit_zh_CN.qm).
class Language {
    Q_DECLARE_TR_FUNCTIONS(batchfit::Language)

public:
    /// "en", "zh_CN".
    static QStringList available();
    /// "English", "简体中文" (each in its own language).
    static QString nativeName(const QString& language);
    /// `requested` if available, else the system language if available, else "en".
    static QString resolve(const QString& requested);
    /// Installs the translators for `language` (replacing earlier ones) and, for Chinese, a CJK font
    /// fallback. Returns false if the translation could not be loaded (the UI then stays in English).
    static bool install(const QString& language);
    /// The language installed last ("en" before any install()).
    static QString current();
};

} // namespace batchfit
