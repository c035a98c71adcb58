#pragma once
// The selected layer's attributes as an editable key/value table. Text that does not parse stays visible
// (red) with the reason, so nothing typed is lost.
#include "batchfit/attributes.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QStringList>

namespace batchfit {

/// Key/value rows of one layer's Attributes. Valid edits are reported through attributeEdited().
class AttributeTableModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { KeyColumn, ValueColumn, ColumnCount };

    explicit AttributeTableModel(QObject* parent = nullptr);

    /// Shows a layer's attributes. Pending (invalid) texts survive when `keepPending` is set.
    void setAttributes(const Attributes& attrs, bool keepPending = false);
    const Attributes& attributes() const { return m_attrs; }
    QString keyAt(int row) const;
    /// The reason the text typed for `key` was not accepted, or empty.
    QString pendingError(const QString& key) const { return m_pending.value(key).second; }
    bool hasPending() const { return !m_pending.isEmpty(); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;

signals:
    /// A value parsed: the caller applies it (as an undoable edit).
    void attributeEdited(const QString& key, const batchfit::AttrValue& value);
    /// A value did not parse; `message` says why. The text stays in the table.
    void inputRejected(const QString& key, const QString& message);

private:
    Attributes m_attrs;
    QStringList m_keys;
    QHash<QString, std::pair<QString, QString>> m_pending; ///< key -> (typed text, reason)
};

} // namespace batchfit
