#include "gui/files/import_onnx_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>

namespace batchfit {

OnnxImportDialog::OnnxImportDialog(const QString& path, QWidget* parent)
    : ImportDialog(tr("Import ONNX Model"), path, parent) {
    m_loss = new QComboBox;
    m_loss->addItem(tr("Cross-entropy (classification)"), static_cast<int>(OnnxLoss::CrossEntropy));
    m_loss->addItem(tr("Mean squared error (regression)"), static_cast<int>(OnnxLoss::Mse));
    m_loss->addItem(tr("None (the graph output is the loss)"), static_cast<int>(OnnxLoss::None));
    m_loss->setToolTip(tr("The loss layer appended after the graph output"));

    m_opaque = new QCheckBox(tr("Keep operators BatchFit cannot map as &opaque layers"));
    m_opaque->setToolTip(
        tr("Opaque layers count their parameters but no saved activations; without this option "
           "such a model is refused with the list of operators."));

    form()->addRow(tr("&Loss:"), m_loss);
    form()->addRow(QString(), m_opaque);
    finish();
}

OnnxImportOptions OnnxImportDialog::options() const {
    OnnxImportOptions o;
    o.loss = static_cast<OnnxLoss>(m_loss->currentData().toInt());
    o.allowOpaque = m_opaque->isChecked();
    return o;
}

} // namespace batchfit
