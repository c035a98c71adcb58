#pragma once
// The serving what-if levers as a table: the change, the sequences that fit with it, the KV tokens.
#include "batchfit/serving_plan.h"

#include <QAbstractTableModel>

namespace batchfit {

class ServingLeverModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { ChangeColumn, SequencesColumn, TokensColumn, ColumnCount };

    explicit ServingLeverModel(QObject* parent = nullptr);
    /// The levers and the sequences that fit now, at the context they were computed for.
    void setLevers(std::vector<ServingLever> levers, std::int64_t now);
    const ServingLever* lever(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

private:
    QString title(const ServingLever& l) const;

    std::vector<ServingLever> m_levers;
    std::int64_t m_now = 0;
};

} // namespace batchfit
