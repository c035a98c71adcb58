#include "gui/models/layer_activation_model.h"

#include "gui/estimation/byte_format.h"

namespace batchfit {

LayerActivationModel::LayerActivationModel(QObject* parent) : QAbstractTableModel(parent) {}

void LayerActivationModel::setLayers(std::vector<LayerActivation> layers) {
    bool same = layers.size() == m_rows.size();
    for (std::size_t i = 0; same && i < layers.size(); ++i) same = layers[i].path == m_rows[i].path;
    if (!same) {
        beginResetModel();
        m_rows = std::move(layers);
        endResetModel();
        return;
    }
    m_rows = std::move(layers);
    if (!m_rows.empty())
        emit dataChanged(index(0, SavedColumn), index(rowCount() - 1, ShareColumn),
                         {Qt::DisplayRole, kValueRole});
}

void LayerActivationModel::clear() {
    beginResetModel();
    m_rows.clear();
    endResetModel();
}

int LayerActivationModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int LayerActivationModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LayerActivationModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= static_cast<int>(m_rows.size())) return {};
    const LayerActivation& r = m_rows[static_cast<std::size_t>(index.row())];
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case PathColumn:
            return index.row() == 0 ? tr("(input batch)") : QString::fromStdString(r.path);
        case OpColumn:
            return QString::fromStdString(r.op);
        case SavedColumn:
            return ByteFormat::bytes(r.savedBytes);
        case OutputColumn:
            return ByteFormat::bytes(r.outputBytes);
        case ShareColumn:
            return ByteFormat::percent(r.shareOfPeak);
        default:
            return {};
        }
    }
    if (role == kValueRole) {
        switch (index.column()) {
        case PathColumn:
            return index.row(); // model order
        case OpColumn:
            return QString::fromStdString(r.op);
        case SavedColumn:
            return QVariant::fromValue<qulonglong>(r.savedBytes);
        case OutputColumn:
            return QVariant::fromValue<qulonglong>(r.outputBytes);
        case ShareColumn:
            return r.shareOfPeak;
        default:
            return {};
        }
    }
    if (role == Qt::TextAlignmentRole && index.column() >= SavedColumn)
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant LayerActivationModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
        case PathColumn:
            return tr("Layer");
        case OpColumn:
            return tr("Op");
        case SavedColumn:
            return tr("Saved for backward");
        case OutputColumn:
            return tr("Output");
        case ShareColumn:
            return tr("% of peak");
        default:
            return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case SavedColumn:
            return tr("Tensors this layer creates that autograd keeps until the backward pass.");
        case OutputColumn:
            return tr("Size of the layer's output tensor (it may be freed if nothing saves it).");
        case ShareColumn:
            return tr("Saved bytes as a share of the peak allocated memory.");
        default:
            return {};
        }
    }
    return {};
}

} // namespace batchfit
