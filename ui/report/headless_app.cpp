#include "report/headless_app.h"

#include <QGuiApplication>

namespace batchfit {
namespace {

QtMessageHandler g_previousHandler = nullptr;

// Drops Qt's start-up note about XDG_RUNTIME_DIR (unset in CI and containers; nothing uses it here).
void quietStartup(QtMsgType type, const QMessageLogContext& context, const QString& message) {
    if (type == QtWarningMsg && message.startsWith(QLatin1String("QStandardPaths: XDG_RUNTIME_DIR not set")))
        return;
    g_previousHandler(type, context, message);
}

} // namespace

bool ensureGuiApplication() {
    if (QCoreApplication::instance())
        return qobject_cast<QGuiApplication*>(QCoreApplication::instance()) != nullptr;
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    static int argc = 1;
    static char name[] = "batchfit";
    static char* argv[] = {name, nullptr};
    g_previousHandler = qInstallMessageHandler(quietStartup);
    new QGuiApplication(argc, argv); // lives until exit: destroying it at static teardown crashes Qt
    qInstallMessageHandler(g_previousHandler);
    return true;
}

} // namespace batchfit
