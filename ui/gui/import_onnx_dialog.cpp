#include "gui/import_onnx_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace batchfit {

OnnxImportDialog::OnnxImportDialog(const QString& path, QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Import ONNX Model"));
    auto* file = new QLabel(QDir::toNativeSeparators(path));
    file->setTextInteractionFlags(Qt::TextSelectableByMouse);
    file->setWordWrap(true);

    m_loss = new QComboBox;
    m_loss->addItem(tr("Cross-entropy (classification)"), static_cast<int>(OnnxLoss::CrossEntropy));
    m_loss->addItem(tr("Mean squared error (regression)"), static_cast<int>(OnnxLoss::Mse));
    m_loss->addItem(tr("None (the graph output is the loss)"), static_cast<int>(OnnxLoss::None));
    m_loss->setToolTip(tr("The loss layer appended after the graph output"));

    m_opaque = new QCheckBox(tr("Keep operators BatchFit cannot map as &opaque layers"));
    m_opaque->setToolTip(
        tr("Opaque layers count their parameters but no saved activations; without this option "
           "such a model is refused with the list of operators."));

    auto* form = new QFormLayout;
    form->addRow(tr("File:"), file);
    form->addRow(tr("&Loss:"), m_loss);
    form->addRow(QString(), m_opaque);
    auto* note =
        new QLabel(tr("The imported model replaces the current one. It has no file yet: Save asks for a "
                      "name."));
    note->setWordWrap(true);
    note->setEnabled(false);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("&Import"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(note);
    layout->addWidget(buttons);
}

OnnxImportOptions OnnxImportDialog::options() const {
    OnnxImportOptions o;
    o.loss = static_cast<OnnxLoss>(m_loss->currentData().toInt());
    o.allowOpaque = m_opaque->isChecked();
    return o;
}

} // namespace batchfit
