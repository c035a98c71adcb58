#pragma once
// The per-layer table: activations each layer saves for the backward pass at the current batch.
#include "batchfit/estimate.h"

#include <QAbstractTableModel>
#include <vector>

namespace batchfit {

/// Rows of Estimate::layers (the input batch first). Sort through a proxy on kValueRole.
class LayerActivationModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { PathColumn, OpColumn, SavedColumn, OutputColumn, ShareColumn, ColumnCount };
    static constexpr int kValueRole = Qt::UserRole + 1;

    explicit LayerActivationModel(QObject* parent = nullptr);

    void setLayers(std::vector<LayerActivation> layers);
    void clear();

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<LayerActivation> m_rows;
};

} // namespace batchfit
