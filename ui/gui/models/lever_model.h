#pragma once
// The what-if levers as a table: each change not yet made, the largest batch it allows and its cost.
#include "batchfit/what_if.h"

#include <QAbstractTableModel>
#include <vector>

namespace batchfit {

/// Rows are the core's rankLevers() result, best first.
class LeverModel : public QAbstractTableModel {
    Q_OBJECT

public:
    /// The title column shows the change and, on a second line, its cost.
    enum Column { TitleColumn, BatchColumn, GainColumn, ColumnCount };

    explicit LeverModel(QObject* parent = nullptr);

    /// `bySavings`: nothing fits, and the levers are ranked by what each saves at batch 1 (shown instead of
    /// the gain).
    void setLevers(std::vector<Lever> levers, bool bySavings = false);
    const Lever* lever(int row) const;

    /// Translated title and cost for a lever id ("checkpointing", "amp-bf16", ...); falls back to the core's
    /// text.
    static QString title(const Lever& lever);
    static QString cost(const Lever& lever);
    static QString explanation(const Lever& lever);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<Lever> m_levers;
    bool m_bySavings = false;
};

} // namespace batchfit
