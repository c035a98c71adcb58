#include "gui_test_support.h"

#include "gui/shell/language.h"

#include <QAbstractButton>
#include <QApplication>
#include <QFile>
#include <QMessageBox>
#include <QProgressDialog>
#include <QStandardPaths>
#include <QTemporaryDir>

namespace batchfit::test {

QApplication* app() {
    if (auto* existing = qobject_cast<QApplication*>(QCoreApplication::instance())) return existing;
    // Offscreen, on a screen larger than any window a test makes (Qt's default offscreen screen is 800x600,
    // and it keeps windows inside it): layout tests place windows of 1920x1080 screens.
    const QByteArray platform = qgetenv("QT_QPA_PLATFORM");
    if (platform.isEmpty() || platform == "offscreen") {
        static QTemporaryDir dir;
        const QString config = dir.filePath(QStringLiteral("screen.json"));
        QFile f(config);
        if (dir.isValid() && f.open(QIODevice::WriteOnly)) {
            f.write(R"({"screens":[{"name":"test","x":0,"y":0,"width":2560,"height":1440,"logicalDpi":96,)"
                    R"("logicalBaseDpi":96,"dpr":1}]})");
            f.close();
            qputenv("QT_QPA_PLATFORM", "offscreen:configfile=" + config.toLocal8Bit());
        } else {
            qputenv("QT_QPA_PLATFORM", "offscreen");
        }
    }
    QStandardPaths::setTestModeEnabled(true);
    static int argc = 1;
    static char name[] = "batchfit_ui_tests";
    static char* argv[] = {name, nullptr};
    // Never deleted: Qt objects created by tests may outlive any scope we could delete it in.
    auto* a = new QApplication(argc, argv);
    Language::install(QStringLiteral("en"));
    return a;
}

TempSettings::TempSettings()
    : m_settings(std::make_unique<AppSettings>(m_dir.filePath(QStringLiteral("test.ini")))) {}

ModalWatcher::ModalWatcher(int button) : m_timer(new QTimer) {
    m_timer->setInterval(10);
    auto texts = m_texts;
    QObject::connect(m_timer, &QTimer::timeout, [texts, button] {
        QWidget* w = QApplication::activeModalWidget();
        if (!w || qobject_cast<QProgressDialog*>(w))
            return; // progress goes away by itself; closing it cancels
        if (auto* box = qobject_cast<QMessageBox*>(w)) {
            texts->append(box->text());
            QAbstractButton* b = box->button(static_cast<QMessageBox::StandardButton>(button));
            if (b)
                b->click();
            else
                box->done(QMessageBox::Ok);
        } else {
            texts->append(w->windowTitle());
            w->close();
        }
    });
    m_timer->start();
}

ModalWatcher::~ModalWatcher() {
    delete m_timer;
}

} // namespace batchfit::test
