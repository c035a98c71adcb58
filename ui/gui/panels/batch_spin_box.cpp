#include "gui/panels/batch_spin_box.h"

#include <QLineEdit>

namespace batchfit {

BatchSpinBox::BatchSpinBox(QWidget* parent) : QSpinBox(parent) {}

QValidator::State BatchSpinBox::validate(QString& text, int& pos) const {
    const QValidator::State state = QSpinBox::validate(text, pos);
    if (state != QValidator::Invalid) return state;
    // A sign, a zero or digits past the maximum: allowed while typing, refused (with a word) when left.
    const QString t = text.trimmed();
    bool digitsOnly = !t.isEmpty();
    for (int i = t.startsWith(QLatin1Char('-')) || t.startsWith(QLatin1Char('+')) ? 1 : 0; i < t.size(); ++i)
        digitsOnly &= t[i].isDigit();
    return digitsOnly || t == QLatin1String("-") ? QValidator::Intermediate : QValidator::Invalid;
}

void BatchSpinBox::fixup(QString& text) const {
    const QString typed = text.trimmed();
    QSpinBox::fixup(text);
    if (!typed.isEmpty() && typed != textFromValue(value())) emit refused(typed);
}

} // namespace batchfit
