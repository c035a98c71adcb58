#include "gui/models/gpu_fit_model.h"

#include "gui/charts/component_style.h"
#include "gui/estimation/byte_format.h"

#include <QFont>
#include <QLocale>

namespace batchfit {

GpuFitModel::GpuFitModel(QObject* parent) : QAbstractTableModel(parent) {}

void GpuFitModel::setFits(std::vector<GpuFit> fits, std::int64_t batch, const std::string& currentId) {
    beginResetModel();
    m_fits = std::move(fits);
    m_batch = batch;
    m_current = currentId;
    endResetModel();
}

void GpuFitModel::clear() {
    setFits({}, m_batch, m_current);
}

const GpuFit* GpuFitModel::fit(int row) const {
    return row >= 0 && row < static_cast<int>(m_fits.size()) ? &m_fits[static_cast<std::size_t>(row)]
                                                             : nullptr;
}

int GpuFitModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_fits.size());
}

int GpuFitModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant GpuFitModel::data(const QModelIndex& index, int role) const {
    const GpuFit* f = fit(index.row());
    if (!f) return {};
    const bool fitsShown = f->maxBatch >= m_batch;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case GpuColumn:
            return QString::fromStdString(f->gpu.name);
        case MemoryColumn:
            return ByteFormat::bytes(f->gpu.memoryBytes);
        case LargestColumn:
            return f->maxBatch > 0 ? QLocale().toString(static_cast<qlonglong>(f->maxBatch)) : tr("none");
        case ShownColumn:
            return fitsShown ? tr("fits") : tr("does not fit");
        default:
            return {};
        }
    case Qt::ForegroundRole:
        if (index.column() == ShownColumn)
            return fitsShown ? ComponentStyle::fitsColor() : ComponentStyle::oomColor();
        return {};
    case Qt::FontRole:
        if (f->gpu.id == m_current) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        return {};
    case Qt::TextAlignmentRole:
        if (index.column() == MemoryColumn || index.column() == LargestColumn)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Qt::ToolTipRole:
        return tr("%1: %2 (nvidia-smi total; source: %3). Double-click to use this GPU.")
            .arg(QString::fromStdString(f->gpu.name), ByteFormat::bytes(f->gpu.memoryBytes),
                 QString::fromStdString(f->gpu.source));
    default:
        return {};
    }
}

QVariant GpuFitModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case GpuColumn:
        return tr("GPU");
    case MemoryColumn:
        return tr("Memory");
    case LargestColumn:
        return tr("Largest batch");
    case ShownColumn:
        return tr("Batch %1").arg(QLocale().toString(static_cast<qlonglong>(m_batch)));
    default:
        return {};
    }
}

} // namespace batchfit
