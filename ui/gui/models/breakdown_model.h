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

    /// With the verdict on the GPU shown: when it fits with cache flushes (Verdict::cacheReleased), the
    /// reserve and total rows are what this GPU holds (the verdict's figures), as the verdict line says.
    void setEstimate(const Estimate& estimate, const Verdict* verdict = nullptr);
    void clear();

    int rowCount(const QModelIndex& parent = {}) const override;
    /// The most rows an estimate can have (with host memory, when offloading).
    static constexpr int maxRowCount() { return RowCount; }
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    /// The rows after the components: the reserve, the context, the bold total (what must fit), host memory.
    enum Row { ReserveRow = kComponentCount, ContextRow, RequiredRow, HostRow, RowCount };

private:
    std::uint64_t bytesAt(int row) const;
    QString rowName(int row) const;
    QString rowExplanation(int row) const;
    QString contextExplanation() const;
    /// The reserve row's tooltip: the replay's allocated and reserved peaks, or that the override decides.
    QString reserveExplanation() const;
    QString hostActivationExplanation() const;

    std::optional<Estimate> m_estimate;
    bool m_cacheReleased = false;
    std::uint64_t m_largeGpuRequiredBytes = 0; ///< Estimate::requiredBytes when m_cacheReleased
};

} // namespace batchfit
