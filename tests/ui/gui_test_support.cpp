#include "gui_test_support.h"

#include "gui/shell/language.h"

#include <QAbstractButton>
#include <QApplication>
#include <QMessageBox>
#include <QProgressDialog>
#include <QStandardPaths>

namespace batchfit::test {

QApplication* app() {
    if (auto* existing = qobject_cast<QApplication*>(QCoreApplication::instance())) return existing;
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
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
