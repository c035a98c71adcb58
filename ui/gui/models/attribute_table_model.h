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

    /// Shows a layer's attributes: always the values the model holds. A rejection mark survives when
    /// `keepRejected` is set (the same layer, refreshed).
    void setAttributes(const Attributes& attrs, bool keepRejected = false);
    const Attributes& attributes() const { return m_attrs; }
    QString keyAt(int row) const;
    /// Marks `key` as having been refused (a red row with `message` as its tooltip; the value shown stays
    /// the model's). An empty message clears the mark.
    void setRejected(const QString& key, const QString& message);
    /// Why the last value typed for `key` was refused, or empty.
    QString rejection(const QString& key) const { return m_rejected.value(key); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;

signals:
    /// A value parsed: the caller applies it (as an undoable edit).
    void attributeEdited(const QString& key, const batchfit::AttrValue& value);
    /// A value did not parse; `message` says why (and quotes the text). The table shows the model's value.
    void inputRejected(const QString& key, const QString& message);

private:
    Attributes m_attrs;
    QStringList m_keys;
    QHash<QString, QString> m_rejected; ///< key -> why the last text typed for it was refused
};

} // namespace batchfit
