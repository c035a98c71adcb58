#include "report/report_language.h"

#include <QCoreApplication>
#include <QTranslator>
#include <map>
#include <memory>
#include <mutex>

namespace batchfit {
namespace {

const QString kEnglish = QStringLiteral("en");

struct LanguageState {
    std::mutex mutex;
    QString defaultLanguage = kEnglish;
    std::map<QString, std::unique_ptr<QTranslator>> translators; // loaded once, never unloaded
    QTranslator* installed = nullptr;
};

LanguageState& state() {
    static LanguageState* s = new LanguageState; // never destroyed: translators may be used at exit
    return *s;
}

thread_local QString t_language;
thread_local const QTranslator* t_translator = nullptr;

QString normalized(const QString& language) {
    QString l = language.trimmed();
    l.replace(QLatin1Char('-'), QLatin1Char('_'));
    if (l.compare(QLatin1String("en"), Qt::CaseInsensitive) == 0 || l.startsWith(QLatin1String("en_")))
        return kEnglish;
    if (l.compare(QLatin1String("zh"), Qt::CaseInsensitive) == 0 ||
        l.compare(QLatin1String("zh_CN"), Qt::CaseInsensitive) == 0 ||
        l.compare(QLatin1String("zh_Hans"), Qt::CaseInsensitive) == 0)
        return QStringLiteral("zh_CN");
    return l;
}

// The translator for a non-English language, loaded from the embedded .qm; nullptr if there is none.
QTranslator* translatorFor(const QString& language) {
    LanguageState& s = state();
    std::lock_guard lock(s.mutex);
    auto it = s.translators.find(language);
    if (it != s.translators.end()) return it->second.get();
    auto t = std::make_unique<QTranslator>();
    if (!t->load(QStringLiteral(":/i18n/batchfit_report_%1.qm").arg(language))) return nullptr;
    return s.translators.emplace(language, std::move(t)).first->second.get();
}

} // namespace

ReportLanguage::ReportLanguage(const QString& language) {
    m_language = language.isEmpty() ? defaultReportLanguage() : normalized(language);
    const QTranslator* translator = nullptr;
    if (m_language != kEnglish) {
        translator = translatorFor(m_language);
        if (!translator) return;
    }
    m_ok = true;
    m_active = true;
    m_previous = t_language;
    m_previousTranslator = t_translator;
    t_language = m_language;
    t_translator = translator;
}

ReportLanguage::~ReportLanguage() {
    if (!m_active) return;
    t_language = m_previous;
    t_translator = m_previousTranslator;
}

QString ReportLanguage::error() const {
    if (m_ok) return {};
    return QStringLiteral("no report translation for '%1' (available: %2)")
        .arg(m_language, available().join(QLatin1String(", ")));
}

QString ReportLanguage::current() {
    return t_language.isEmpty() ? defaultReportLanguage() : t_language;
}

QLocale ReportLanguage::currentLocale() {
    if (current() == QLatin1String("zh_CN")) return QLocale(QLocale::Chinese, QLocale::China);
    return QLocale(QLocale::English, QLocale::UnitedStates);
}

QStringList ReportLanguage::currentFontFamilies() {
    if (current() == QLatin1String("zh_CN"))
        return {QStringLiteral("Noto Sans CJK SC"),    QStringLiteral("Source Han Sans SC"),
                QStringLiteral("Microsoft YaHei"),     QStringLiteral("PingFang SC"),
                QStringLiteral("WenQuanYi Micro Hei"), QStringLiteral("DejaVu Sans")};
    return {QStringLiteral("Noto Sans"), QStringLiteral("DejaVu Sans"), QStringLiteral("Liberation Sans"),
            QStringLiteral("Arial"), QStringLiteral("Noto Sans CJK SC")};
}

const QTranslator* ReportLanguage::currentTranslator() {
    if (!t_language.isEmpty()) return t_translator;
    const QString d = defaultReportLanguage();
    return d == kEnglish ? nullptr : translatorFor(d);
}

QStringList ReportLanguage::available() {
    return {kEnglish, QStringLiteral("zh_CN")};
}

bool installReportTranslator(const QString& language) {
    const QString l = normalized(language);
    QTranslator* translator = nullptr;
    if (l != kEnglish) {
        translator = translatorFor(l);
        if (!translator) return false;
    }
    LanguageState& s = state();
    QTranslator* previous = nullptr;
    {
        std::lock_guard lock(s.mutex);
        s.defaultLanguage = l;
        previous = s.installed;
        s.installed = QCoreApplication::instance() ? translator : nullptr;
    }
    // Outside the lock: installing sends LanguageChange, whose handlers may ask for report text.
    if (QCoreApplication::instance() && previous != translator) {
        if (previous) QCoreApplication::removeTranslator(previous);
        if (translator) QCoreApplication::installTranslator(translator);
    }
    return true;
}

QString defaultReportLanguage() {
    LanguageState& s = state();
    std::lock_guard lock(s.mutex);
    return s.defaultLanguage;
}

} // namespace batchfit
