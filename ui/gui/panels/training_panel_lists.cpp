// TrainingPanel's lists: the titles of the optimizer, precision and checkpointing choices, and the GPU
// catalogue grouped by family.
#include "gui/estimation/byte_format.h"
#include "gui/panels/training_panel.h"

#include <QComboBox>
#include <QLocale>
#include <QStandardItemModel>
#include <cstring>

namespace batchfit {

QString TrainingPanel::optimizerTitle(OptimizerKind k) {
    switch (k) {
    case OptimizerKind::Sgd:
        return tr("SGD");
    case OptimizerKind::SgdMomentum:
        return tr("SGD with momentum");
    case OptimizerKind::SgdNesterov:
        return tr("SGD with Nesterov momentum");
    case OptimizerKind::Adam:
        return tr("Adam");
    case OptimizerKind::AdamW:
        return tr("AdamW");
    case OptimizerKind::RmsProp:
        return tr("RMSprop");
    case OptimizerKind::Adagrad:
        return tr("Adagrad");
    case OptimizerKind::Adafactor:
        return tr("Adafactor");
    case OptimizerKind::Lion:
        return tr("Lion");
    case OptimizerKind::Adam8bit:
        return tr("8-bit Adam (bitsandbytes)");
    case OptimizerKind::PagedAdamW:
        return tr("Paged AdamW (bitsandbytes)");
    case OptimizerKind::PagedAdamW8bit:
        return tr("Paged 8-bit AdamW (bitsandbytes)");
    }
    return {};
}

QString TrainingPanel::precisionTitle(Precision p) {
    switch (p) {
    case Precision::Fp32:
        return tr("fp32");
    case Precision::AmpFp16:
        return tr("fp16 mixed precision (autocast)");
    case Precision::AmpBf16:
        return tr("bf16 mixed precision (autocast)");
    case Precision::PureFp16:
        return tr("pure fp16");
    case Precision::PureBf16:
        return tr("pure bf16");
    case Precision::MixedFp16Master:
        return tr("fp16 weights + fp32 master copy");
    case Precision::MixedBf16Master:
        return tr("bf16 weights + fp32 master copy");
    }
    return {};
}

QString TrainingPanel::checkpointingTitle(Checkpointing c) {
    switch (c) {
    case Checkpointing::None:
        return tr("none");
    case Checkpointing::EveryBlock:
        return tr("every block");
    case Checkpointing::EveryKthBlock:
        return tr("every k-th block");
    case Checkpointing::Selective:
        return tr("selective (attention only)");
    }
    return {};
}

namespace {

/// The model's name without the vendor's brand words: "RTX 4090", "H100 PCIe", "MI300X" (the family heading
/// above it and the tool tip say the rest).
QString shortGpuName(const GpuSpec& g) {
    QString name = QString::fromStdString(g.name);
    for (const char* brand : {"NVIDIA ", "AMD ", "GeForce ", "Instinct ", "Quadro "})
        if (name.startsWith(QLatin1String(brand))) name = name.mid(static_cast<int>(std::strlen(brand)));
    return name;
}

} // namespace

void TrainingPanel::buildGpuList() {
    // Grouped by family (resources/gpus.json's family_order); each card's whole model name and capacity, its
    // full name, Chinese name and note in the tool tip. The box is editable: typing filters the list (a
    // part of the name, the id, or the Chinese name: "4090", "h20", "特供").
    auto* model = qobject_cast<QStandardItemModel*>(m_gpu->model());
    const bool chinese = QLocale().language() == QLocale::Chinese;
    for (const std::string& family : gpuFamilies()) {
        m_gpu->addItem(QString::fromStdString(family));
        auto* header = model->item(m_gpu->count() - 1);
        header->setFlags(Qt::NoItemFlags);
        QFont f = header->font();
        f.setBold(true);
        header->setFont(f);
        for (const auto& g : gpuCatalogue()) {
            if (g.family != family) continue;
            QString name = shortGpuName(g);
            if (chinese && !g.nameZh.empty()) name = QString::fromStdString(g.nameZh);
            m_gpu->addItem(QStringLiteral("%1 · %2").arg(name, ByteFormat::bytes(g.memoryBytes)),
                           QString::fromStdString(g.id));
            auto* item = model->item(m_gpu->count() - 1);
            QString tip = QStringLiteral("<b>%1</b> (%2, %3)")
                              .arg(QString::fromStdString(g.name).toHtmlEscaped(),
                                   QString::fromStdString(g.id), QString::fromStdString(g.arch));
            if (!g.nameZh.empty())
                tip += QStringLiteral("<br>") + QString::fromStdString(g.nameZh).toHtmlEscaped();
            if (!g.noteZh.empty())
                tip += QStringLiteral("<br>") + QString::fromStdString(g.noteZh).toHtmlEscaped();
            tip +=
                QStringLiteral("<br><small>%1</small>").arg(QString::fromStdString(g.source).toHtmlEscaped());
            item->setToolTip(tip);
            // what the search matches: the names, the id and the notes
            item->setData(QStringLiteral("%1 %2 %3 %4 %5")
                              .arg(QString::fromStdString(g.name), QString::fromStdString(g.id),
                                   QString::fromStdString(g.nameZh), QString::fromStdString(g.noteZh),
                                   QString::fromStdString(family)),
                          kGpuSearchRole);
        }
    }
    m_gpu->addItem(tr("Custom capacity"), customGpuId());
    model->item(m_gpu->count() - 1)
        ->setData(tr("Custom capacity") + QStringLiteral(" custom"), kGpuSearchRole);
}

} // namespace batchfit
