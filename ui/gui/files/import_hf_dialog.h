#pragma once
// File > Import > Hugging Face config: the sequence length and attention implementation to import with.
#include "batchfit/hf_import.h"
#include "batchfit/model.h"
#include "gui/files/import_dialog.h"

#include <QString>

class QComboBox;
class QSpinBox;

namespace batchfit {

/// Seeded from the core's import of the config with default options (`preview`): its sequence length is the
/// config's maximum and its attention the family's default.
class HfImportDialog : public ImportDialog {
    Q_OBJECT

public:
    /// The sequence length the dialog starts at, unless the config's maximum is smaller.
    static constexpr int kTrainingSequence = 2048;

    HfImportDialog(const QString& path, const Model& preview, QWidget* parent = nullptr);

    /// Only what differs from the defaults is set, so the core's own choices stay in charge.
    HfImportOptions options() const;
    QSpinBox* sequenceBox() const { return m_sequence; }
    QComboBox* attentionBox() const { return m_attention; }

private:
    QSpinBox* m_sequence = nullptr;
    QComboBox* m_attention = nullptr;
    std::int64_t m_defaultSequence = 0;
    QString m_defaultAttention;
};

} // namespace batchfit
