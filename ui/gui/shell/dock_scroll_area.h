#pragma once
// A dock's content in a vertical scroll area that asks for the content's full size (so on a large screen
// nothing scrolls and the layout is what it was) but can shrink below it: on a 768-pixel screen, with the
// allocator's Advanced fold open or in a language whose rows are taller, the window then still fits the
// screen and the rows scroll instead.
#include <QScrollArea>

namespace batchfit {

class DockScrollArea : public QScrollArea {
    Q_OBJECT

public:
    /// Takes `content` (reparented).
    DockScrollArea(QWidget* content, QWidget* parent);

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

signals:
    /// The content asked for a new size (a fold opened or closed): its dock may give it the height.
    void contentResized();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    int barWidth() const; ///< the vertical scroll bar's, while it shows; else 0
};

} // namespace batchfit
