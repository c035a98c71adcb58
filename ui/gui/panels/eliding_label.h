#pragma once
// A one-line label: text that does not fit is cut with "…" and shown whole in the tooltip.
#include <QLabel>

namespace batchfit {

/// Plain text on one line whatever the width: the label never asks for more than one line of height and never
/// forces its parent wider; what does not fit ends in "…", and the tooltip then holds the whole text.
class ElidingLabel : public QLabel {
    Q_OBJECT

public:
    explicit ElidingLabel(QWidget* parent = nullptr);

    void setFullText(const QString& text);
    /// The tooltip while the text is whole (when cut, the tooltip is the whole text).
    void setPlainToolTip(const QString& tip);
    QString fullText() const { return m_full; }
    /// True when the text shown is cut.
    bool isElided() const { return text() != m_full; }

    QSize minimumSizeHint() const override;
    QSize sizeHint() const override;

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void updateShown();

    QString m_full;
    QString m_plainTip;
};

} // namespace batchfit
