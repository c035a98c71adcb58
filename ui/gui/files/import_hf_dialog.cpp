#include "gui/files/import_hf_dialog.h"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QSpinBox>
#include <algorithm>
#include <limits>
#include <optional>

namespace batchfit {

namespace {

/// The attention implementation the importer chose (the first attention layer's "impl").
std::optional<std::string> attentionImpl(const std::vector<Layer>& layers) {
    for (const Layer& l : layers) {
        if (l.op == "attention")
            if (auto impl = l.attrs.getString("impl")) return impl;
        for (const auto* children : {&l.layers, &l.shortcutLayers, &l.after})
            if (auto impl = attentionImpl(*children)) return impl;
    }
    return std::nullopt;
}

} // namespace

HfImportDialog::HfImportDialog(const QString& path, const Model& preview, QWidget* parent)
    : ImportDialog(tr("Import Hugging Face Config"), path, parent) {
    m_defaultSequence = preview.inputShape.empty() ? 0 : preview.inputShape.front();
    m_defaultAttention = QString::fromStdString(attentionImpl(preview.layers).value_or("eager"));

    auto* model = new QLabel(QString::fromStdString(preview.name));

    const bool tokens = preview.inputDtype == DType::Int64 && preview.inputShape.size() == 1;
    QHBoxLayout* sequenceRow = nullptr;
    if (tokens) {
        m_sequence = new QSpinBox;
        const int maxSequence =
            static_cast<int>(std::min<std::int64_t>(m_defaultSequence, std::numeric_limits<int>::max()));
        m_sequence->setRange(1, std::max(1, maxSequence));
        // People train at a common length, not at the model's maximum (32,768 for Mistral).
        m_sequence->setValue(std::min(maxSequence, kTrainingSequence));
        m_sequence->setSuffix(tr(" tokens"));
        m_sequence->setGroupSeparatorShown(true);
        m_sequence->setToolTip(
            tr("Tokens per sample: %L1 by default (or the maximum, if smaller); at most the "
               "config's maximum positions, %L2.")
                .arg(kTrainingSequence)
                .arg(m_defaultSequence));
        auto* maximum = new QLabel(tr("of at most %L1").arg(m_defaultSequence));
        maximum->setObjectName(QStringLiteral("sequenceMaximum"));
        sequenceRow = new QHBoxLayout;
        sequenceRow->addWidget(m_sequence, 1);
        sequenceRow->addWidget(maximum);
    }

    m_attention = new QComboBox;
    const std::pair<const char*, QString> impls[] = {
        {"eager", tr("eager (keeps the attention scores: memory grows with the square of the sequence)")},
        {"mem_efficient", tr("mem_efficient (memory-efficient kernel: no score matrix kept)")},
        {"flash", tr("flash (FlashAttention: no score matrix kept)")},
    };
    for (const auto& [id, text] : impls) {
        const QString key = QString::fromLatin1(id);
        m_attention->addItem(key == m_defaultAttention ? tr("%1 — default for this model").arg(text) : text,
                             key);
    }
    m_attention->setCurrentIndex(std::max(0, m_attention->findData(m_defaultAttention)));

    form()->addRow(tr("Model:"), model);
    if (sequenceRow) {
        form()->addRow(tr("&Sequence length:"), sequenceRow);
        if (auto* label = qobject_cast<QLabel*>(form()->labelForField(sequenceRow)))
            label->setBuddy(m_sequence);
    } else { // a vision model: its config fixes the image size
        QStringList dims;
        for (std::int64_t d : preview.inputShape) dims << QLocale().toString(static_cast<qlonglong>(d));
        auto* input = new QLabel(tr("an image of %1 per sample").arg(dims.join(QStringLiteral(" × "))));
        input->setObjectName(QStringLiteral("imageInput"));
        form()->addRow(tr("Input:"), input);
    }
    form()->addRow(tr("&Attention:"), m_attention);
    finish();
}

HfImportOptions HfImportDialog::options() const {
    HfImportOptions o;
    if (m_sequence && m_sequence->value() != m_defaultSequence) o.sequenceLength = m_sequence->value();
    const QString impl = m_attention->currentData().toString();
    if (impl != m_defaultAttention) o.attention = impl.toStdString();
    return o;
}

} // namespace batchfit
