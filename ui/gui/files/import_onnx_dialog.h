#pragma once
// File > Import > ONNX model: the loss appended after the graph and whether unknown operators stay opaque.
#include "batchfit/onnx_import.h"
#include "gui/files/import_dialog.h"

#include <QString>

class QCheckBox;
class QComboBox;

namespace batchfit {

class OnnxImportDialog : public ImportDialog {
    Q_OBJECT

public:
    explicit OnnxImportDialog(const QString& path, QWidget* parent = nullptr);

    OnnxImportOptions options() const;

private:
    QComboBox* m_loss = nullptr;
    QCheckBox* m_opaque = nullptr;
};

} // namespace batchfit
