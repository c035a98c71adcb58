#pragma once
// The batch-size box: whole numbers from 1 to 2^31 - 1, and a word when something else is typed.
#include <QSpinBox>

namespace batchfit {

/// A QSpinBox that lets "-5" or "0" be typed (a plain QSpinBox drops the "-" and turns "-5" into 5) and, when
/// such text is left, keeps the old value and emits refused() with the text, so the panel can say why.
class BatchSpinBox : public QSpinBox {
    Q_OBJECT

public:
    explicit BatchSpinBox(QWidget* parent = nullptr);

    QValidator::State validate(QString& text, int& pos) const override;
    void fixup(QString& text) const override;

signals:
    /// `text` was typed and left, and is not a batch size; the value shown is still the old one.
    void refused(const QString& text) const;
};

} // namespace batchfit
