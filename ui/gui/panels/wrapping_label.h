#pragma once
// A word-wrapped label that always gets the height its wrapped text needs.
#include <QLabel>

namespace batchfit {

/// QLabel with word wrap, whose minimum height follows its width. A wrapping QLabel beside other widgets in a
/// row is otherwise given the height of fewer lines than it wraps to, and paints over its neighbours (the
/// chart's legend ran over the x-axis at 1280 pixels wide).
class WrappingLabel : public QLabel {
    Q_OBJECT

public:
    explicit WrappingLabel(const QString& text, QWidget* parent = nullptr);

protected:
    void resizeEvent(QResizeEvent* event) override;
};

} // namespace batchfit
