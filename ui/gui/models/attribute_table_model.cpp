#include "gui/models/attribute_table_model.h"

#include "gui/charts/component_style.h"
#include "gui/document/attribute_value.h"

namespace batchfit {

AttributeTableModel::AttributeTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void AttributeTableModel::setAttributes(const Attributes& attrs, bool keepPending) {
    beginResetModel();
    m_attrs = attrs;
    m_keys.clear();
    for (const auto& [k, v] : attrs.values()) m_keys << QString::fromStdString(k);
    if (!keepPending) m_pending.clear();
    for (auto it = m_pending.begin(); it != m_pending.end();)
        it = m_keys.contains(it.key()) ? std::next(it) : m_pending.erase(it);
    endResetModel();
}

QString AttributeTableModel::keyAt(int row) const {
    return row >= 0 && row < m_keys.size() ? m_keys[row] : QString();
}

int AttributeTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : m_keys.size();
}

int AttributeTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

Qt::ItemFlags AttributeTableModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsSelectable | Qt::ItemIsEnabled;
    if (index.column() == ValueColumn) f |= Qt::ItemIsEditable;
    return f;
}

QVariant AttributeTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= m_keys.size()) return {};
    const QString key = m_keys[index.row()];
    const AttrValue* v = m_attrs.find(key.toStdString());
    const auto pending = m_pending.constFind(key);
    if (index.column() == KeyColumn) {
        if (role == Qt::DisplayRole) return key;
        return {};
    }
    switch (role) {
    case Qt::DisplayRole:
    case Qt::EditRole:
        if (pending != m_pending.cend()) return pending->first;
        return v ? AttributeValue::toText(*v) : QString();
    case Qt::ForegroundRole:
        if (pending != m_pending.cend()) return ComponentStyle::oomColor();
        return {};
    case Qt::ToolTipRole:
        if (pending != m_pending.cend()) return pending->second;
        return v ? tr("%1 (%2)").arg(key, AttributeValue::typeName(*v)) : QVariant();
    default:
        return {};
    }
}

bool AttributeTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (!index.isValid() || role != Qt::EditRole || index.column() != ValueColumn) return false;
    const QString key = m_keys.value(index.row());
    const QString text = value.toString();
    const AttrValue* current = m_attrs.find(key.toStdString());
    auto parsed = AttributeValue::parse(text, current);
    if (!parsed) {
        const QString reason = tr("%1: %2").arg(key, QString::fromStdString(parsed.error().message));
        m_pending.insert(key, {text, reason});
        emit dataChanged(index, index);
        emit inputRejected(key, reason);
        return true; // the text is kept (shown in red)
    }
    m_pending.remove(key);
    emit dataChanged(index, index);
    if (!current || !(*current == *parsed)) emit attributeEdited(key, *parsed);
    return true;
}

QVariant AttributeTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    return section == KeyColumn ? tr("Attribute") : tr("Value");
}

} // namespace batchfit
