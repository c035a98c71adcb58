#include "gui/shell/language.h"

#include <QApplication>
#include <QFont>
#include <QLibraryInfo>
#include <QLocale>
#include <QTranslator>

namespace batchfit {

namespace {

QTranslator* g_app = nullptr;
QTranslator* g_qt = nullptr;
QString g_current = QStringLiteral("en");

void removeTranslators() {
    for (QTranslator** t : {&g_app, &g_qt}) {
        if (!*t) continue;
        QCoreApplication::removeTranslator(*t);
        delete *t;
        *t = nullptr;
    }
}

} // namespace

QStringList Language::available() {
    return {QStringLiteral("en"), QStringLiteral("zh_CN")};
}

QString Language::nativeName(const QString& language) {
    if (language == QLatin1String("zh_CN")) return QStringLiteral("简体中文");
    return QStringLiteral("English");
}

QString Language::resolve(const QString& requested) {
    if (available().contains(requested)) return requested;
    const QString system = QLocale::system().name();
    if (system.startsWith(QLatin1String("zh"))) return QStringLiteral("zh_CN");
    return QStringLiteral("en");
}

QString Language::current() {
    return g_current;
}

bool Language::install(const QString& language) {
    removeTranslators();
    g_current = QStringLiteral("en");
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
    if (language != QLatin1String("zh_CN")) return language == QLatin1String("en") || language.isEmpty();

    auto* app = new QTranslator(QCoreApplication::instance());
    if (!app->load(QStringLiteral(":/i18n/batchfit_zh_CN.qm"))) {
        delete app;
        return false;
    }
    QCoreApplication::installTranslator(app);
    g_app = app;
    // Qt's own strings (standard buttons of message boxes and dialogs), when the system has them.
    auto* qt = new QTranslator(QCoreApplication::instance());
    if (qt->load(QLocale(QLocale::Chinese, QLocale::China), QStringLiteral("qtbase"), QStringLiteral("_"),
                 QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
        QCoreApplication::installTranslator(qt);
        g_qt = qt;
    } else {
        delete qt;
    }
    QLocale::setDefault(QLocale(QLocale::Chinese, QLocale::China));
    if (qobject_cast<QApplication*>(QCoreApplication::instance())) {
        // Prefer a Simplified Chinese sans-serif face; Latin text keeps the platform font first.
        QFont f = QApplication::font();
        QStringList families{f.family()};
        families << QStringLiteral("Noto Sans CJK SC") << QStringLiteral("Source Han Sans SC")
                 << QStringLiteral("WenQuanYi Micro Hei") << QStringLiteral("Microsoft YaHei")
                 << QStringLiteral("PingFang SC");
        f.setFamilies(families);
        QApplication::setFont(f);
    }
    g_current = language;
    return true;
}

} // namespace batchfit
