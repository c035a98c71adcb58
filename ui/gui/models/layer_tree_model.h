#pragma once
// The layer stack as a tree for QTreeView: blocks expand, repeat counts show, per-layer activation columns.
#include "batchfit/estimate.h"
#include "batchfit/model.h"
#include "gui/document/layer_address.h"
#include "gui/document/layer_path_index.h"

#include <QAbstractItemModel>
#include <QHash>
#include <optional>
#include <vector>

namespace batchfit {

/// Read-only tree over a Model (edits go through Document's undo stack, then setModel()): ticking the
/// Trainable column only emits trainableToggled().
class LayerTreeModel : public QAbstractItemModel {
    Q_OBJECT

public:
    enum Column {
        NameColumn,
        TypeColumn,
        OutputColumn,
        ParametersColumn,
        ActivationColumn,
        ShareColumn,
        TrainableColumn, ///< a checkbox: the layer's parameters train (unchecked: frozen,
                         ///< requires_grad=False)
        ColumnCount
    };
    /// Raw numbers for sorting and tests (bytes, or share in 0..1).
    static constexpr int kValueRole = Qt::UserRole + 1;
    /// LayerAddress::key() of the row ("" for the input row).
    static constexpr int kAddressKeyRole = Qt::UserRole + 2;

    explicit LayerTreeModel(QObject* parent = nullptr);

    /// Rebuilds the tree (model reset).
    void setModel(const Model& model);
    /// Fills the activation columns from the core's per-layer figures; null clears them.
    void setEstimate(const Estimate* estimate);
    /// Marks the layer a problem message names (red, with the message as its tooltip); an empty message
    /// clears the mark. Returns the layer marked, if the message names one.
    std::optional<LayerAddress> setProblem(const QString& message);
    /// The marked layer's index (invalid when none), for the view to scroll to.
    QModelIndex problemIndex() const;

    /// The layer a row shows; empty for the input row. A shortcut-group row gives its block's address.
    LayerAddress addressOf(const QModelIndex& index) const;
    bool isInputRow(const QModelIndex& index) const;
    bool isShortcutGroup(const QModelIndex& index) const;
    QModelIndex indexOf(const LayerAddress& address, int column = 0) const;
    QModelIndex inputIndex() const { return index(0, 0); }

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

    /// "attention" or "MLP" for an unnamed block by what it holds (empty when neither).
    static QString blockRole(const Layer& block);

signals:
    /// The user ticked or unticked a row's Trainable box (the model itself does not change).
    void trainableToggled(const batchfit::LayerAddress& address, bool trainable);

private:
    std::optional<LayerAddress> m_problemAddress;
    QString m_problemMessage;

    enum class Kind { Root, Input, Layer, ShortcutGroup };
    struct Node {
        Kind kind = Kind::Layer;
        LayerAddress address;
        int parent = -1;
        int row = 0;
        std::vector<int> children;
        bool afterMerge = false;
        // Per-batch figures from the core (summed over repetitions for layers inside repeated blocks).
        std::uint64_t savedBytes = 0;
        std::uint64_t outputBytes = 0;
        std::uint64_t parameterCount = 0;
        std::uint64_t trainableCount = 0;
        QString outputShape;
        double share = 0;
        bool hasFigures = false;
    };

    int addNode(Kind kind, const LayerAddress& address, int parent);
    void addList(const std::vector<Layer>& list, const LayerAddress& parentAddress,
                 LayerAddress::Branch branch, int parentNode);
    const Node* nodeOf(const QModelIndex& index) const;
    const Layer* layerOf(const Node& node) const;
    QVariant displayData(const Node& node, int column) const;
    QVariant toolTipData(const Node& node, int column) const;
    void emitFiguresChanged(int node);

    Model m_model;
    std::vector<Node> m_nodes; ///< m_nodes[0] is the invisible root
    QHash<QString, int> m_byKey;
    LayerPathIndex m_paths;
    std::int64_t m_batch = 0;
    std::vector<int>
        m_rowNodes; ///< Estimate::layers row -> node (cached while the rows' paths stay the same)
    std::vector<std::string> m_rowPaths;
};

} // namespace batchfit
