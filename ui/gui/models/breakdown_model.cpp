#include "gui/models/breakdown_model.h"

#include "gui/charts/component_style.h"
#include "gui/estimation/byte_format.h"

#include <QFont>
#include <QStringList>

namespace batchfit {

BreakdownModel::BreakdownModel(QObject* parent) : QAbstractTableModel(parent) {}

void BreakdownModel::setEstimate(const Estimate& estimate, const Verdict* verdict) {
    // Fits with cache flushes: the rows add up to what this GPU shows (the verdict's figures), and the
    // figure of a GPU large enough goes to the tool tip.
    m_cacheReleased = verdict && verdict->fits && verdict->cacheReleased;
    const bool hadHost = m_estimate && (m_estimate->hostTotalBytes() > 0 || m_estimate->pagedStateBytes > 0);
    const bool hasHost = estimate.hostTotalBytes() > 0 || estimate.pagedStateBytes > 0;
    Estimate copy;
    // Only the figures are shown; leave the per-layer rows and the timeline out of the copy.
    copy.batch = estimate.batch;
    copy.peakAllocatedBytes = estimate.peakAllocatedBytes;
    copy.atPeak = estimate.atPeak;
    copy.allocatorReserveBytes = m_cacheReleased ? verdict->reserveBytes : estimate.allocatorReserveBytes;
    copy.cudaContextBytes = estimate.cudaContextBytes;
    copy.requiredBytes = m_cacheReleased ? verdict->requiredBytes : estimate.requiredBytes;
    m_largeGpuRequiredBytes = estimate.requiredBytes;
    copy.hostBytes = estimate.hostBytes;
    copy.hostActivationBytes = estimate.hostActivationBytes;
    copy.hostParameterBytes = estimate.hostParameterBytes;
    copy.parameterTransferBytes = estimate.parameterTransferBytes;
    copy.hostParameterBytes = estimate.hostParameterBytes;
    copy.parameterTransferBytes = estimate.parameterTransferBytes;
    copy.activationTransferBytes = estimate.activationTransferBytes;
    copy.autocastWeightCopyBytes = estimate.autocastWeightCopyBytes;
    copy.savedActivationBytes = estimate.savedActivationBytes;
    copy.parallel.gpus = estimate.parallel.gpus;
    copy.parallel.gpusOnNode = estimate.parallel.gpusOnNode;
    copy.pagedStateBytes = estimate.pagedStateBytes;
    copy.reservedBytes = estimate.reservedBytes;
    copy.allocator = estimate.allocator;
    if (hadHost != hasHost || !m_estimate) {
        beginResetModel();
        m_estimate = std::move(copy);
        endResetModel();
        return;
    }
    m_estimate = std::move(copy);
    emit dataChanged(index(0, BytesColumn), index(rowCount() - 1, ShareColumn),
                     {Qt::DisplayRole, kBytesRole});
}

void BreakdownModel::clear() {
    beginResetModel();
    m_estimate.reset();
    endResetModel();
}

int BreakdownModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() || !m_estimate) return 0;
    return m_estimate->hostTotalBytes() > 0 || m_estimate->pagedStateBytes > 0 ? RowCount : HostRow;
}

int BreakdownModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

std::uint64_t BreakdownModel::bytesAt(int row) const {
    if (row < kComponentCount) return m_estimate->atPeak.bytes[row];
    switch (row) {
    case ReserveRow:
        return m_estimate->allocatorReserveBytes;
    case ContextRow:
        return m_estimate->cudaContextBytes;
    case RequiredRow:
        return m_estimate->requiredBytes;
    default:
        return m_estimate->hostTotalBytes() > 0 ? m_estimate->hostTotalBytes() : m_estimate->pagedStateBytes;
    }
}

QString BreakdownModel::rowName(int row) const {
    // autocast's cached half copies of the weights are saved for the backward like activations, but no layer
    // owns them (with ZeRO-3/FSDP they are the gathered weights): named, so the layer table's sum is not
    // taken for the whole row
    if (row == static_cast<int>(Component::Activations) && m_estimate->autocastWeightCopyBytes > 0)
        return tr("%1 (incl. %2 autocast weight copies)")
            .arg(ComponentStyle::name(row), ByteFormat::bytes(m_estimate->autocastWeightCopyBytes));
    if (row < kComponentCount) return ComponentStyle::name(row);
    switch (row) {
    case ReserveRow:
        return m_estimate->allocator.simulated ? tr("Allocator reserve (replay)")
                                               : tr("Allocator reserve (override)");
    case ContextRow:
        return tr("Outside PyTorch (CUDA context, libraries)");
    case RequiredRow:
        return m_cacheReleased ? tr("Peak on this GPU (fits with cache flushes)")
                               : tr("Peak GPU memory (must fit)");
    default:
        if (m_estimate->hostTotalBytes() > 0 && m_estimate->parallel.gpus > 1)
            return tr("Host memory (offloaded, per GPU)");
        return m_estimate->hostTotalBytes() > 0 ? tr("Host memory (offloaded)")
                                                : tr("Paged optimizer states");
    }
}

QString BreakdownModel::contextExplanation() const {
    const NonTorchMemory& m = m_estimate->nonTorch;
    if (m.measured)
        return tr("Memory outside PyTorch's allocator, as you measured it (the override in the set-up): %1.")
            .arg(ByteFormat::bytes(m.contextBytes));
    QStringList parts;
    for (const NonTorchPart& p : nonTorchParts(m)) {
        const QString b = ByteFormat::bytes(p.bytes);
        switch (p.kind) {
        case NonTorchPart::Kind::Context:
            parts << tr("CUDA context: %1").arg(b);
            break;
        case NonTorchPart::Kind::Cublas:
            parts << tr("cuBLAS kernels: %1").arg(b);
            break;
        case NonTorchPart::Kind::Eager:
            parts << tr("eager module loading: %1").arg(b);
            break;
        case NonTorchPart::Kind::Cudnn:
            parts << tr("cuDNN (the model has convolutions): %1").arg(b);
            break;
        case NonTorchPart::Kind::Nccl:
            parts << tr("NCCL, %n communicator(s): %1", nullptr, m.ncclCommunicators).arg(b);
            break;
        case NonTorchPart::Kind::Vllm:
            parts << tr("the colocated vLLM engine (its share of the GPU): %1").arg(b);
            break;
        }
    }
    return tr("Memory nvidia-smi shows beyond PyTorch's memory_reserved(): %1. Sources: "
              "docs/memory-model.md, "
              "section 6.3.")
        .arg(parts.join(QStringLiteral("; ")));
}

QString BreakdownModel::rowExplanation(int row) const {
    if (row == static_cast<int>(Component::Activations) && m_estimate->autocastWeightCopyBytes > 0)
        return ComponentStyle::explanation(row) + QStringLiteral("\n\n") +
               tr("Of the %1 saved at the end of the forward pass, %2 are autocast's cached half-precision "
                  "copies "
                  "of the weights (torch.autocast keeps one per weight until the forward ends, and the "
                  "backward keeps them); the layer table does not count them. With ZeRO-3 or FSDP these are "
                  "copies of the gathered, whole weights.")
                   .arg(ByteFormat::bytes(m_estimate->savedActivationBytes),
                        ByteFormat::bytes(m_estimate->autocastWeightCopyBytes));
    if (row < kComponentCount) return ComponentStyle::explanation(row);
    switch (row) {
    case ReserveRow:
        return reserveExplanation();
    case ContextRow:
        return contextExplanation();
    case RequiredRow:
        if (m_cacheReleased)
            return tr("What nvidia-smi would show at the peak of the step on this GPU. On a GPU large enough "
                      "the step would reserve %1; on this one PyTorch frees its cached blocks when a "
                      "cudaMalloc fails and tries again (no out-of-memory error, slower steps: each retry "
                      "synchronizes the GPU).")
                .arg(ByteFormat::bytes(m_largeGpuRequiredBytes));
        return tr("What nvidia-smi would show at the peak of the step: this must fit the usable memory.");
    default:
        if (m_estimate->hostTotalBytes() == 0)
            return tr("bitsandbytes' paged optimizer keeps these states in CUDA managed memory: outside "
                      "PyTorch's counters and the peak; the driver moves them to host memory when the GPU "
                      "runs short (slower steps, not an out-of-memory error).");
        if (m_estimate->hostActivationBytes > 0 || m_estimate->hostParameterBytes > 0)
            return hostActivationExplanation();
        if (m_estimate->parallel.gpus > 1)
            return tr("Optimizer states kept in CPU memory, one GPU's share; not part of the GPU budget. A "
                      "node "
                      "holds them for its %1 GPUs: %2 of host memory.")
                .arg(m_estimate->parallel.gpusOnNode)
                .arg(ByteFormat::bytes(m_estimate->hostBytesPerNode()));
        return tr("Optimizer states kept in CPU memory; not part of the GPU budget.");
    }
}

QString BreakdownModel::hostActivationExplanation() const {
    const Estimate& e = *m_estimate;
    QStringList parts;
    if (e.hostParameterBytes > 0)
        parts << tr("Parameter and gradient shards in host memory: %1; %2 cross PCIe per step (shards to "
                    "the GPU for each all-gather, gradients back).")
                     .arg(ByteFormat::bytes(e.hostParameterBytes), ByteFormat::bytes(e.parameterTransferBytes));
    if (e.hostActivationBytes > 0)
        parts << tr("Saved activations offloaded to host memory: %1, held from the forward to their "
                    "backward and copied over PCIe, %2 per step (to the host and back).")
                     .arg(ByteFormat::bytes(e.hostActivationBytes), ByteFormat::bytes(e.activationTransferBytes));
    QString text = parts.join(QLatin1Char(' '));
    if (e.hostBytes > 0)
        text +=
            QLatin1Char(' ') + tr("Optimizer states in host memory: %1.").arg(ByteFormat::bytes(e.hostBytes));
    if (e.parallel.gpus > 1)
        text += QLatin1Char(' ') + tr("A node holds this for its %1 GPUs: %2.")
                                       .arg(e.parallel.gpusOnNode)
                                       .arg(ByteFormat::bytes(e.hostBytesPerNode()));
    return text + QLatin1Char(' ') + tr("Not part of the GPU budget.");
}

QString BreakdownModel::reserveExplanation() const {
    const AllocatorEstimate& a = m_estimate->allocator;
    const QString what =
        tr("Reserved by PyTorch's caching allocator beyond what tensors use (segments, fragmentation).");
    if (!a.simulated)
        return what + QLatin1Char('\n') +
               tr("From the set-up's fragmentation override (a fixed fraction of the peak, rounded to "
                  "2 MiB), not from the replay: peak reserved %1.")
                   .arg(ByteFormat::bytes(m_estimate->reservedBytes));
    const QString conf =
        a.allocConf.empty()
            ? tr("PyTorch's default settings")
            : QStringLiteral("PYTORCH_CUDA_ALLOC_CONF=%1").arg(QString::fromStdString(a.allocConf));
    QStringList lines{
        what,
        (a.iterations == 1 ? tr("From a replay of one step through the caching allocator (%1), on a GPU "
                                "large enough:")
                                 .arg(conf)
                           : tr("From a replay of %1 steps through the caching allocator (%2; the last one "
                                "is shown), on a GPU large enough:")
                                 .arg(a.iterations)
                                 .arg(conf)),
        tr("peak allocated (on the GPU, with block slack): %1").arg(ByteFormat::bytes(a.peakAllocatedBytes)),
        tr("peak reserved: %1").arg(ByteFormat::bytes(a.peakReservedBytes)),
        tr("free pieces of split segments: %1").arg(ByteFormat::bytes(a.peakInactiveSplitBytes)),
        tr("segments at most: %1 · cudaMalloc calls: %2")
            .arg(ByteFormat::count(static_cast<std::uint64_t>(a.peakSegments)),
                 ByteFormat::count(static_cast<std::uint64_t>(a.deviceAllocs))),
        tr("The Segments tab shows them through the step.")};
    if (!a.sequences.empty()) {
        QStringList lengths;
        for (std::int64_t s : a.sequences) lengths << ByteFormat::count(static_cast<std::uint64_t>(s));
        lines.insert(
            2, tr("the steps' sequence lengths, in order: %1").arg(lengths.join(QStringLiteral(" → "))));
    }
    if (a.lastBatch > 0)
        lines.insert(2, tr("the epoch's last batch (%1 samples) runs before the step shown")
                            .arg(ByteFormat::count(static_cast<std::uint64_t>(a.lastBatch))));
    return lines.join(QLatin1Char('\n'));
}

QVariant BreakdownModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !m_estimate) return {};
    const int row = index.row();
    switch (role) {
    case Qt::DisplayRole:
        if (index.column() == NameColumn) return rowName(row);
        if (index.column() == BytesColumn) return ByteFormat::bytes(bytesAt(row));
        if (row == HostRow || !m_estimate->requiredBytes) return {};
        // A share of the core's total, for reading the table (display only).
        return ByteFormat::percent(static_cast<double>(bytesAt(row)) /
                                   static_cast<double>(m_estimate->requiredBytes));
    case kBytesRole:
        return QVariant::fromValue<qulonglong>(bytesAt(row));
    case Qt::DecorationRole:
        if (index.column() != NameColumn || row >= RequiredRow) return {};
        return ComponentStyle::color(row < kComponentCount ? row : ComponentStyle::kOverheadSlot)
            .darker(row == ContextRow ? 125 : 100);
    case Qt::ToolTipRole:
        return rowExplanation(row);
    case Qt::TextAlignmentRole:
        return index.column() == NameColumn ? QVariant() : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::FontRole:
        if (row == RequiredRow) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    default:
        return {};
    }
}

QVariant BreakdownModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case NameColumn:
        return tr("Component");
    case BytesColumn:
        return tr("At the peak");
    case ShareColumn:
        return tr("Share");
    default:
        return {};
    }
}

} // namespace batchfit
