// TrainingPanel's lists: the titles of the optimizer, precision and checkpointing choices, and the GPU
// catalogue grouped by vendor.
#include "gui/estimation/byte_format.h"
#include "gui/panels/training_panel.h"

#include <QComboBox>
#include <QStandardItemModel>

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

void TrainingPanel::buildGpuList() {
    auto* model = qobject_cast<QStandardItemModel*>(m_gpu->model());
    QStringList vendors;
    for (const auto& g : gpuCatalogue())
        if (!vendors.contains(QString::fromStdString(g.vendor))) vendors << QString::fromStdString(g.vendor);
    for (const QString& vendor : vendors) {
        m_gpu->addItem(vendor);
        auto* header = model->item(m_gpu->count() - 1);
        header->setFlags(Qt::NoItemFlags);
        QFont f = header->font();
        f.setBold(true);
        header->setFont(f);
        for (const auto& g : gpuCatalogue()) {
            if (QString::fromStdString(g.vendor) != vendor) continue;
            // Under its vendor's heading the vendor prefix is redundant: "GeForce RTX 4090 — 23.99 GiB".
            QString name = QString::fromStdString(g.name);
            if (name.startsWith(vendor + QLatin1Char(' '))) name = name.mid(vendor.size() + 1);
            m_gpu->addItem(QStringLiteral("   %1 — %2").arg(name, ByteFormat::bytes(g.memoryBytes)),
                           QString::fromStdString(g.id));
            model->item(m_gpu->count() - 1)->setToolTip(QString::fromStdString(g.source));
        }
    }
    m_gpu->addItem(tr("Custom capacity"), customGpuId());
}

} // namespace batchfit
