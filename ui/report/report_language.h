#pragma once
// The report's language: its translator, locale and fonts, chosen per report independently of the app's UI.
#include <QLocale>
#include <QString>
#include <QStringList>

class QTranslator;

namespace batchfit {

/// Makes `language` the report language of this thread while it lives (scopes nest).
class ReportLanguage {
public:
    /// Empty: the default language (defaultReportLanguage()). Check ok(): unknown languages fail.
    explicit ReportLanguage(const QString& language);
    ~ReportLanguage();
    ReportLanguage(const ReportLanguage&) = delete;
    ReportLanguage& operator=(const ReportLanguage&) = delete;

    bool ok() const { return m_ok; }
    /// "no report translation for 'fr' (available: en, zh_CN)".
    QString error() const;

    /// The language in effect on this thread ("en" outside any scope unless a default was set).
    static QString current();
    static QLocale currentLocale();
    /// Font families for the current language, best first (CJK-capable for Chinese).
    static QStringList currentFontFamilies();
    /// Translator of the current language; nullptr for English.
    static const QTranslator* currentTranslator();
    static QStringList available();

private:
    QString m_language;
    QString m_previous;
    const QTranslator* m_previousTranslator = nullptr;
    bool m_ok = false;
    bool m_active = false;
};

/// Sets the language reports use when a request names none, and installs the report translator into the
/// application (for QCoreApplication::translate). False if the language has no translation.
bool installReportTranslator(const QString& language);
QString defaultReportLanguage();

} // namespace batchfit
