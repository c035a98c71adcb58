#pragma once
// Shared helpers of the GUI tests: a lazily created QApplication, temporary settings, dialog handling.
#include "gui/shell/app_settings.h"

#include <QStringList>
#include <QTemporaryDir>
#include <QTimer>
#include <memory>

class QApplication;

namespace batchfit::test {

/// The test process's QApplication (offscreen unless QT_QPA_PLATFORM is set), created on first use.
QApplication* app();

/// Settings in a temporary INI file, removed with the object.
class TempSettings {
public:
    TempSettings();
    AppSettings& settings() { return *m_settings; }
    QString dir() const { return m_dir.path(); }

private:
    QTemporaryDir m_dir;
    std::unique_ptr<AppSettings> m_settings;
};

/// Creates the QApplication before anything else of the object that derives from it.
struct AppFirst {
    AppFirst() { app(); }
};

/// The base of a window fixture: the QApplication, then temporary settings, both built before the fixture's
/// own members (a MainWindow member can take `&temp.settings()`).
struct AppWithSettings : AppFirst {
    TempSettings temp;
};

/// While alive, closes every modal dialog that opens (answering message boxes with `button`) and records
/// their texts.
class ModalWatcher {
public:
    explicit ModalWatcher(int button = 0x00800000 /* QMessageBox::Discard */);
    ~ModalWatcher();
    QStringList texts() const { return *m_texts; }

private:
    std::shared_ptr<QStringList> m_texts = std::make_shared<QStringList>();
    QTimer* m_timer = nullptr;
};

} // namespace batchfit::test
