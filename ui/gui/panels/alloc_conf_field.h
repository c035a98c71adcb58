#pragma once
// The PYTORCH_CUDA_ALLOC_CONF row of the training set-up, behind an "Advanced" fold beside the PyTorch
// choice: the caching allocator's options for the replay, checked by the core's parser before they change the
// set-up.
#include <QLineEdit>
#include <QWidget>

class QBoxLayout;
class QFormLayout;
class QToolButton;

namespace batchfit {

/// Adds its rows to a form (the field, and under it the parser's message while the text is refused), shown
/// while the "Advanced" toggle it puts in `toggleRow` is on (it turns on by itself for a set-up that has
/// options, or a refused text). Emits
/// the canonical text (batchfit::allocConfText) when the user commits text the core accepts and that
/// differs from the set-up's; refused text changes nothing.
class ElidingLabel;

class AllocConfField : public QWidget {
    Q_OBJECT

public:
    /// The widgets go into `form` (this object only owns the logic).
    AllocConfField(QFormLayout* form, QBoxLayout* toggleRow, QWidget* parent);

    /// Shows the set-up's text (canonical) without emitting; clears a refusal.
    void setAllocConf(const QString& canonical);
    QLineEdit* lineEdit() const { return m_edit; }
    QToolButton* advancedButton() const { return m_advanced; }
    /// The parser's message while the text is refused; empty otherwise.
    QString problem() const { return m_problem; }

signals:
    void allocConfEdited(const QString& canonical);

private:
    /// Checks the text; true (and the canonical text in `canonical`) when the core accepts it.
    bool check(QString* canonical);
    void commit();
    void showProblem(const QString& message);
    void updateVisible();

    QFormLayout* m_form = nullptr;
    QLineEdit* m_edit = nullptr;
    QToolButton* m_advanced = nullptr;
    ElidingLabel* m_message = nullptr;
    QString m_tip;     ///< the field's tooltip while the text is accepted
    QString m_current; ///< the set-up's canonical text
    QString m_problem;
};

} // namespace batchfit
