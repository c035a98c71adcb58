#include "gui/models/breakdown_model.h"

#include "gui/charts/component_style.h"
#include "gui/estimation/byte_format.h"

#include <QFont>

namespace batchfit {

BreakdownModel::BreakdownModel(QObject* parent) : QAbstractTableModel(parent) {}

void BreakdownModel::setEstimate(const Estimate& estimate) {
    const bool hadHost = m_estimate && (m_estimate->hostBytes > 0 || m_estimate->pagedStateBytes > 0);
    const bool hasHost = estimate.hostBytes > 0 || estimate.pagedStateBytes > 0;
    Estimate copy;
    // Only the figures are shown; leave the per-layer rows and the timeline out of the copy.
    copy.batch = estimate.batch;
    copy.peakAllocatedBytes = estimate.peakAllocatedBytes;
    copy.atPeak = estimate.atPeak;
    copy.allocatorReserveBytes = estimate.allocatorReserveBytes;
    copy.cudaContextBytes = estimate.cudaContextBytes;
    copy.requiredBytes = estimate.requiredBytes;
    copy.hostBytes = estimate.hostBytes;
    copy.pagedStateBytes = estimate.pagedStateBytes;
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
    return m_estimate->hostBytes > 0 || m_estimate->pagedStateBytes > 0 ? RowCount : HostRow;
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
        return m_estimate->hostBytes > 0 ? m_estimate->hostBytes : m_estimate->pagedStateBytes;
    }
}

QString BreakdownModel::rowName(int row) const {
    if (row < kComponentCount) return ComponentStyle::name(row);
    switch (row) {
    case ReserveRow:
        return tr("Allocator reserve");
    case ContextRow:
        return tr("CUDA context");
    case RequiredRow:
        return tr("Peak GPU memory (must fit)");
    default:
        return m_estimate->hostBytes > 0 ? tr("Host memory (offloaded)") : tr("Paged optimizer states");
    }
}

QString BreakdownModel::rowExplanation(int row) const {
    if (row < kComponentCount) return ComponentStyle::explanation(row);
    switch (row) {
    case ReserveRow:
        return tr(
            "Reserved by PyTorch's caching allocator beyond what tensors use (segments, fragmentation).");
    case ContextRow:
        return tr("The CUDA context and libraries (cuBLAS, cuDNN), outside PyTorch's allocator.");
    case RequiredRow:
        return tr("What nvidia-smi would show at the peak of the step: this must fit the usable memory.");
    default:
        if (m_estimate->hostBytes == 0)
            return tr("bitsandbytes' paged optimizer keeps these states in CUDA managed memory: outside "
                      "PyTorch's counters and the peak; the driver moves them to host memory when the GPU "
                      "runs short (slower steps, not an out-of-memory error).");
        return tr("Optimizer states kept in CPU memory; not part of the GPU budget.");
    }
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
