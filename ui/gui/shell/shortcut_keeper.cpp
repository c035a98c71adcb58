#include "gui/shell/shortcut_keeper.h"

#include <QAction>
#include <QCoreApplication>
#include <QKeyEvent>
#include <QWidget>

namespace batchfit {

ShortcutKeeper::ShortcutKeeper(QWidget* window) : QObject(window), m_window(window) {
    QCoreApplication::instance()->installEventFilter(this);
}

bool ShortcutKeeper::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() != QEvent::ShortcutOverride) return false;
    auto* widget = qobject_cast<QWidget*>(watched);
    if (!widget || widget->window() != m_window) return false;
    auto* key = static_cast<QKeyEvent*>(event);
    // The keys of editing itself stay the field's. Cursor moves do not: under X11, Ctrl+E is also "end of
    // line".
    for (QKeySequence::StandardKey editing :
         {QKeySequence::Copy, QKeySequence::Cut, QKeySequence::Paste, QKeySequence::Undo, QKeySequence::Redo,
          QKeySequence::SelectAll, QKeySequence::Delete, QKeySequence::Backspace,
          QKeySequence::DeleteStartOfWord, QKeySequence::DeleteEndOfWord})
        if (key->matches(editing)) return false;
    const QKeySequence pressed(key->keyCombination());
    for (const QAction* action : m_window->findChildren<QAction*>()) {
        if (!action->isEnabled() || (action->shortcutContext() != Qt::WindowShortcut &&
                                     action->shortcutContext() != Qt::ApplicationShortcut))
            continue;
        for (const QKeySequence& s : action->shortcuts())
            if (s == pressed) return true; // not offered to the field: the shortcut map triggers the action
    }
    return false;
}

} // namespace batchfit
