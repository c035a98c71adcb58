#pragma once
// Keeps the window's own shortcuts working while a text field has the focus.
#include <QObject>

class QWidget;

namespace batchfit {

/// Line edits and spin boxes claim some Ctrl keys for editing (QLineEdit takes Ctrl+E to move to the end), so
/// a window shortcut such as Ctrl+E (Export Report) did nothing while the batch box had the focus. Installed
/// on the application, this lets every window- or application-wide action of `window` win, except the
/// standard text-editing keys (copy, paste, undo, select all, …), which stay the field's.
class ShortcutKeeper : public QObject {
    Q_OBJECT

public:
    explicit ShortcutKeeper(QWidget* window);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QWidget* m_window;
};

} // namespace batchfit
