#pragma once
// "Which GPUs fit": every catalogue GPU with the largest batch at the current set-up, least memory first.
#include "batchfit/fit_plan.h"

#include <QAbstractTableModel>
#include <cstdint>
#include <string>
#include <vector>

namespace batchfit {

/// Rows are the core's fitAcrossCatalogue() result. The GPU in use is bold; a GPU that fits the batch shown
/// says so, one that does not fit batch 1 says that.
class GpuFitModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { GpuColumn, MemoryColumn, LargestColumn, ShownColumn, ColumnCount };

    explicit GpuFitModel(QObject* parent = nullptr);

    /// `batch` is the batch shown, `currentId` the GPU in use.
    void setFits(std::vector<GpuFit> fits, std::int64_t batch, const std::string& currentId);
    void clear();
    const GpuFit* fit(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<GpuFit> m_fits;
    std::int64_t m_batch = 1;
    std::string m_current;
};

} // namespace batchfit
