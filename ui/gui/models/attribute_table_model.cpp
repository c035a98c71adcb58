#include "gui/models/attribute_table_model.h"

#include "gui/charts/component_style.h"
#include "gui/document/attribute_value.h"

#include <QApplication>
#include <QStyle>

namespace batchfit {

AttributeTableModel::AttributeTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void AttributeTableModel::setAttributes(const Attributes& attrs, bool keepRejected) {
    beginResetModel();
    m_attrs = attrs;
    m_keys.clear();
    for (const auto& [k, v] : attrs.values()) m_keys << QString::fromStdString(k);
    if (!keepRejected) m_rejected.clear();
    for (auto it = m_rejected.begin(); it != m_rejected.end();)
        it = m_keys.contains(it.key()) ? std::next(it) : m_rejected.erase(it);
    endResetModel();
}

void AttributeTableModel::setRejected(const QString& key, const QString& message) {
    if (message.isEmpty())
        m_rejected.remove(key);
    else
        m_rejected.insert(key, message);
    const int row = static_cast<int>(m_keys.indexOf(key));
    if (row >= 0) emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
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
    const auto rejected = m_rejected.constFind(key);
    if (index.column() == KeyColumn) {
        if (role == Qt::DisplayRole) return key;
        if (rejected != m_rejected.cend() && role == Qt::ForegroundRole) return ComponentStyle::oomColor();
        if (rejected != m_rejected.cend() && role == Qt::ToolTipRole) return *rejected;
        return {};
    }
    switch (role) {
    case Qt::DisplayRole:
    case Qt::EditRole: // never a value the model does not hold
        return v ? AttributeValue::toText(*v) : QString();
    case Qt::ForegroundRole:
        if (rejected != m_rejected.cend()) return ComponentStyle::oomColor();
        return {};
    case Qt::DecorationRole:
        if (rejected != m_rejected.cend())
            return QApplication::style()->standardIcon(QStyle::SP_MessageBoxWarning);
        return {};
    case Qt::ToolTipRole:
        if (rejected != m_rejected.cend()) return *rejected;
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
        const QString reason = tr("%1: '%2' was not applied (%3); it stays %4.")
                                   .arg(key, text.trimmed(), QString::fromStdString(parsed.error().message),
                                        current ? AttributeValue::toText(*current) : tr("unset"));
        setRejected(key, reason);
        emit inputRejected(key, reason);
        return false; // the model is unchanged, and so is the cell
    }
    if (!current || !(*current == *parsed))
        emit attributeEdited(key, *parsed);
    else
        setRejected(key, {});
    return true;
}

QVariant AttributeTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    return section == KeyColumn ? tr("Attribute") : tr("Value");
}

} // namespace batchfit
