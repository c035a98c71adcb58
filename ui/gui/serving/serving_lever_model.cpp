#include "gui/serving/serving_lever_model.h"

#include <QLocale>

namespace batchfit {

ServingLeverModel::ServingLeverModel(QObject* parent) : QAbstractTableModel(parent) {}

void ServingLeverModel::setLevers(std::vector<ServingLever> levers, std::int64_t now) {
    beginResetModel();
    m_levers = std::move(levers);
    m_now = now;
    endResetModel();
}

const ServingLever* ServingLeverModel::lever(int row) const {
    return row >= 0 && row < static_cast<int>(m_levers.size()) ? &m_levers[static_cast<std::size_t>(row)]
                                                               : nullptr;
}

int ServingLeverModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_levers.size());
}

int ServingLeverModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QString ServingLeverModel::title(const ServingLever& l) const {
    if (l.id == "kv-fp8") return tr("fp8 KV cache");
    if (l.id == "max-model-len")
        return tr("max_model_len %1").arg(QLocale().toString(static_cast<qlonglong>(l.config.maxModelLen)));
    if (l.id == "tp") return tr("tensor parallel %1 (per GPU)").arg(l.tp);
    if (l.id == "awq") return tr("AWQ 4-bit weights");
    if (l.id == "utilization")
        return tr("utilization %1").arg(l.config.memoryFraction.value_or(0), 0, 'f', 2);
    return QString::fromStdString(l.title);
}

QVariant ServingLeverModel::data(const QModelIndex& index, int role) const {
    const ServingLever* l = lever(index.row());
    if (!l) return {};
    const QLocale loc;
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case ChangeColumn:
            return title(*l);
        case SequencesColumn:
            if (l->estimate.failure != ServingEstimate::Failure::None) return tr("does not start");
            return m_now > 0 && l->sequencesAtContext != m_now
                       ? tr("%1 (×%2)")
                             .arg(loc.toString(static_cast<qlonglong>(l->sequencesAtContext)))
                             .arg(static_cast<double>(l->sequencesAtContext) / static_cast<double>(m_now), 0,
                                  'f', 2)
                       : loc.toString(static_cast<qlonglong>(l->sequencesAtContext));
        case TokensColumn:
            return loc.toString(static_cast<qlonglong>(l->estimate.kvTokens));
        default:
            return {};
        }
    }
    if (role == Qt::TextAlignmentRole && index.column() != ChangeColumn)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole) return tr("Double-click to apply this change.");
    return {};
}

QVariant ServingLeverModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case ChangeColumn:
        return tr("Change");
    case SequencesColumn:
        return tr("Sequences at once");
    case TokensColumn:
        return tr("KV cache (tokens)");
    default:
        return {};
    }
}

} // namespace batchfit
