#pragma once
// The breakdown table: each component at the peak, the overheads and the total that must fit.
#include "batchfit/estimate.h"

#include <QAbstractTableModel>
#include <optional>

namespace batchfit {

/// Rows: five components, allocator reserve, CUDA context, required total (and host memory when offloading,
/// or paged optimizer states).
class BreakdownModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { NameColumn, BytesColumn, ShareColumn, ColumnCount };
    static constexpr int kBytesRole = Qt::UserRole + 1;

    explicit BreakdownModel(QObject* parent = nullptr);

    /// `cacheReleased`: the verdict fits only by freeing the allocator's cache (Verdict::cacheReleased), so
    /// the total row is the need on a GPU large enough, not what this one must hold.
    void setEstimate(const Estimate& estimate, bool cacheReleased = false);
    void clear();

    int rowCount(const QModelIndex& parent = {}) const override;
    /// The most rows an estimate can have (with host memory, when offloading).
    static constexpr int maxRowCount() { return RowCount; }
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    enum Row { ReserveRow = kComponentCount, ContextRow, RequiredRow, HostRow, RowCount };
    std::uint64_t bytesAt(int row) const;
    QString rowName(int row) const;
    QString rowExplanation(int row) const;
    /// The reserve row's tooltip: the replay's allocated and reserved peaks, or that the override decides.
    QString reserveExplanation() const;

    std::optional<Estimate> m_estimate;
    bool m_cacheReleased = false;
};

} // namespace batchfit
