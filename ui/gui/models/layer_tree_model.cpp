#include "gui/models/layer_tree_model.h"

#include "gui/charts/component_style.h"
#include "gui/document/op_catalogue.h"
#include "gui/estimation/byte_format.h"

#include <QApplication>
#include <QFont>
#include <QLocale>
#include <QStringList>
#include <QStyle>
#include <functional>

namespace batchfit {

namespace {

// "B×64×56×56": the output's shape with the batch dimension as B ("scalar" for a 0-d loss).
QString shapeText(const LayerActivation& row) {
    QStringList dims;
    if (row.outputBatched) dims << QStringLiteral("B");
    for (std::int64_t d : row.outputShape) dims << QString::number(d);
    return dims.isEmpty() ? LayerTreeModel::tr("scalar") : dims.join(QChar(0x00D7));
}

} // namespace

LayerTreeModel::LayerTreeModel(QObject* parent) : QAbstractItemModel(parent) {
    setModel(Model{});
}

int LayerTreeModel::addNode(Kind kind, const LayerAddress& address, int parent) {
    Node n;
    n.kind = kind;
    n.address = address;
    n.parent = parent;
    const int id = static_cast<int>(m_nodes.size());
    if (parent >= 0) {
        n.row = static_cast<int>(m_nodes[static_cast<std::size_t>(parent)].children.size());
        m_nodes[static_cast<std::size_t>(parent)].children.push_back(id);
    }
    m_nodes.push_back(std::move(n));
    if (kind == Kind::Layer) m_byKey.insert(address.key(), id);
    return id;
}

void LayerTreeModel::addList(const std::vector<Layer>& list, const LayerAddress& parentAddress,
                             LayerAddress::Branch branch, int parentNode) {
    for (int i = 0; i < static_cast<int>(list.size()); ++i) {
        const LayerAddress addr =
            parentAddress.isEmpty() ? LayerAddress::top(i) : parentAddress.child(branch, i);
        const int id = addNode(Kind::Layer, addr, parentNode);
        m_nodes[static_cast<std::size_t>(id)].afterMerge = branch == LayerAddress::Branch::After;
        const Layer& l = list[static_cast<std::size_t>(i)];
        if (!l.isBlock()) continue;
        addList(l.layers, addr, LayerAddress::Branch::Main, id);
        if (l.shortcut == ShortcutKind::Layers) {
            const int group = addNode(Kind::ShortcutGroup, addr, id);
            addList(l.shortcutLayers, addr, LayerAddress::Branch::Shortcut, group);
        }
        addList(l.after, addr, LayerAddress::Branch::After, id);
    }
}

void LayerTreeModel::setModel(const Model& model) {
    beginResetModel();
    m_model = model;
    m_nodes.clear();
    m_byKey.clear();
    addNode(Kind::Root, {}, -1);
    addNode(Kind::Input, {}, 0);
    addList(m_model.layers, {}, LayerAddress::Branch::Main, 0);
    m_paths = LayerPathIndex(m_model);
    m_problemAddress.reset(); // the next estimate says whether the problem is still there
    m_problemMessage.clear();
    m_rowNodes.clear();
    m_rowPaths.clear();
    endResetModel();
}

void LayerTreeModel::setEstimate(const Estimate* estimate) {
    for (auto& n : m_nodes) {
        n.savedBytes = n.outputBytes = n.parameterCount = n.trainableCount = 0;
        n.outputShape.clear();
        n.share = 0;
        n.hasFigures = false;
    }
    m_batch = estimate ? estimate->batch : 0;
    if (estimate) {
        const auto& rows = estimate->layers;
        bool samePaths = rows.size() == m_rowPaths.size();
        for (std::size_t i = 0; samePaths && i < rows.size(); ++i) samePaths = rows[i].path == m_rowPaths[i];
        if (!samePaths) {
            const auto addresses = m_paths.resolve(rows);
            m_rowNodes.assign(rows.size(), -1);
            m_rowPaths.clear();
            for (std::size_t i = 0; i < rows.size(); ++i) {
                m_rowPaths.push_back(rows[i].path);
                if (i == 0)
                    m_rowNodes[i] = 1; // "(input batch)"
                else if (!addresses[i].isEmpty())
                    m_rowNodes[i] = m_byKey.value(addresses[i].key(), -1);
            }
        }
        for (std::size_t i = 0; i < rows.size(); ++i) {
            int id = m_rowNodes[i];
            if (id < 0) continue;
            Node& leaf = m_nodes[static_cast<std::size_t>(id)];
            if (!leaf.hasFigures) { // first repetition's output
                leaf.outputBytes = rows[i].outputBytes;
                leaf.outputShape = shapeText(rows[i]);
            }
            // Blocks show the sum of their layers (and their merge); repeated layers the sum of repetitions.
            for (; id > 0; id = m_nodes[static_cast<std::size_t>(id)].parent) {
                Node& n = m_nodes[static_cast<std::size_t>(id)];
                n.savedBytes += rows[i].savedBytes;
                n.parameterCount += rows[i].parameterCount;
                n.trainableCount += rows[i].trainableParameterCount;
                n.share += rows[i].shareOfPeak;
                n.hasFigures = true;
            }
        }
    }
    emitFiguresChanged(0);
}

void LayerTreeModel::emitFiguresChanged(int node) {
    const Node& n = m_nodes[static_cast<std::size_t>(node)];
    if (n.children.empty()) return;
    const QModelIndex parentIndex = node == 0 ? QModelIndex() : createIndex(n.row, 0, quintptr(node));
    emit dataChanged(index(0, OutputColumn, parentIndex),
                     index(static_cast<int>(n.children.size()) - 1, TrainableColumn, parentIndex),
                     {Qt::DisplayRole, Qt::ToolTipRole, kValueRole, Qt::CheckStateRole});
    for (int c : n.children)
        if (!m_nodes[static_cast<std::size_t>(c)].children.empty()) emitFiguresChanged(c);
}

const LayerTreeModel::Node* LayerTreeModel::nodeOf(const QModelIndex& index) const {
    if (!index.isValid()) return &m_nodes[0];
    const auto id = static_cast<std::size_t>(index.internalId());
    return id < m_nodes.size() ? &m_nodes[id] : nullptr;
}

const Layer* LayerTreeModel::layerOf(const Node& node) const {
    return node.kind == Kind::Input || node.kind == Kind::Root ? nullptr : node.address.resolve(m_model);
}

QModelIndex LayerTreeModel::index(int row, int column, const QModelIndex& parent) const {
    if (row < 0 || column < 0 || column >= ColumnCount) return {};
    const Node* p = nodeOf(parent);
    if (!p || row >= static_cast<int>(p->children.size())) return {};
    return createIndex(row, column, quintptr(p->children[static_cast<std::size_t>(row)]));
}

QModelIndex LayerTreeModel::parent(const QModelIndex& child) const {
    const Node* n = nodeOf(child);
    if (!child.isValid() || !n || n->parent <= 0) return {};
    return createIndex(m_nodes[static_cast<std::size_t>(n->parent)].row, 0, quintptr(n->parent));
}

int LayerTreeModel::rowCount(const QModelIndex& parent) const {
    if (parent.column() > 0) return 0;
    const Node* n = nodeOf(parent);
    return n ? static_cast<int>(n->children.size()) : 0;
}

int LayerTreeModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

Qt::ItemFlags LayerTreeModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsSelectable | Qt::ItemIsEnabled;
    const Node* n = nodeOf(index);
    if (index.column() == TrainableColumn && n && n->kind == Kind::Layer && n->parameterCount > 0)
        f |= Qt::ItemIsUserCheckable;
    return f;
}

bool LayerTreeModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    const Node* n = nodeOf(index);
    if (!index.isValid() || !n || role != Qt::CheckStateRole || index.column() != TrainableColumn ||
        n->kind != Kind::Layer || n->parameterCount == 0)
        return false;
    emit trainableToggled(n->address, value.toInt() == Qt::Checked);
    return true;
}

LayerAddress LayerTreeModel::addressOf(const QModelIndex& index) const {
    const Node* n = nodeOf(index);
    return index.isValid() && n ? n->address : LayerAddress();
}

bool LayerTreeModel::isInputRow(const QModelIndex& index) const {
    const Node* n = nodeOf(index);
    return index.isValid() && n && n->kind == Kind::Input;
}

bool LayerTreeModel::isShortcutGroup(const QModelIndex& index) const {
    const Node* n = nodeOf(index);
    return index.isValid() && n && n->kind == Kind::ShortcutGroup;
}

QModelIndex LayerTreeModel::indexOf(const LayerAddress& address, int column) const {
    if (address.isEmpty()) return {};
    const int id = m_byKey.value(address.key(), -1);
    if (id < 0) return {};
    return createIndex(m_nodes[static_cast<std::size_t>(id)].row, column, quintptr(id));
}

QString LayerTreeModel::blockRole(const Layer& block) {
    bool attention = false, linear = false, activation = false;
    std::function<void(const std::vector<Layer>&)> visit = [&](const std::vector<Layer>& layers) {
        for (const Layer& l : layers) {
            if (l.isBlock()) {
                visit(l.layers);
                visit(l.shortcutLayers);
                visit(l.after);
                continue;
            }
            attention |= l.op.find("attention") != std::string::npos;
            linear |= l.op == "linear";
            activation |=
                l.op == "gelu" || l.op == "relu" || l.op == "silu" || l.op == "swiglu" || l.op == "geglu";
        }
    };
    visit(block.layers);
    visit(block.after);
    if (attention) return tr("attention");
    if (linear && activation) return tr("MLP");
    return {};
}

std::optional<LayerAddress> LayerTreeModel::setProblem(const QString& message) {
    const QModelIndex before = problemIndex();
    m_problemMessage = message;
    m_problemAddress = message.isEmpty() ? std::nullopt : m_paths.addressInMessage(message.toStdString());
    const QModelIndex after = problemIndex();
    for (const QModelIndex& i : {before, after})
        if (i.isValid()) emit dataChanged(i.siblingAtColumn(0), i.siblingAtColumn(ColumnCount - 1));
    return m_problemAddress;
}

QModelIndex LayerTreeModel::problemIndex() const {
    return m_problemAddress ? indexOf(*m_problemAddress) : QModelIndex();
}

QVariant LayerTreeModel::data(const QModelIndex& index, int role) const {
    const Node* n = nodeOf(index);
    if (!index.isValid() || !n) return {};
    const bool problem = m_problemAddress && n->kind != Kind::ShortcutGroup && n->kind != Kind::Input &&
                         n->address == *m_problemAddress;
    if (problem) {
        if (role == Qt::ForegroundRole) return ComponentStyle::oomColor();
        if (role == Qt::ToolTipRole) return m_problemMessage;
        if (role == Qt::DecorationRole && index.column() == NameColumn)
            return QApplication::style()->standardIcon(QStyle::SP_MessageBoxWarning);
    }
    switch (role) {
    case Qt::DisplayRole:
        return displayData(*n, index.column());
    case Qt::ToolTipRole:
        return toolTipData(*n, index.column());
    case kAddressKeyRole:
        return n->address.key();
    case kValueRole:
        if (index.column() == ActivationColumn) return QVariant::fromValue<qulonglong>(n->savedBytes);
        if (index.column() == ShareColumn) return n->share;
        if (index.column() == OutputColumn) return QVariant::fromValue<qulonglong>(n->outputBytes);
        if (index.column() == ParametersColumn) return QVariant::fromValue<qulonglong>(n->parameterCount);
        if (index.column() == TrainableColumn) return QVariant::fromValue<qulonglong>(n->trainableCount);
        return {};
    case Qt::CheckStateRole:
        // Rows with parameters: all of them train, none (frozen) or some (a block with frozen layers).
        if (index.column() != TrainableColumn || n->kind != Kind::Layer || n->parameterCount == 0) return {};
        if (n->trainableCount == n->parameterCount) return Qt::Checked;
        return n->trainableCount == 0 ? Qt::Unchecked : Qt::PartiallyChecked;
    case Qt::TextAlignmentRole:
        if (index.column() >= OutputColumn) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Qt::FontRole:
        if (n->kind == Kind::ShortcutGroup || n->kind == Kind::Input || n->afterMerge) {
            QFont f;
            f.setItalic(true);
            return f;
        }
        return {};
    default:
        return {};
    }
}

QVariant LayerTreeModel::displayData(const Node& n, int column) const {
    if (n.kind == Kind::Input) {
        switch (column) {
        case NameColumn:
            return tr("input");
        case TypeColumn:
            return QString::fromUtf8(dtypeName(m_model.inputDtype).data());
        case OutputColumn:
            return QString::fromStdString(shapeToString(m_model.inputShape));
        case ActivationColumn:
            return n.hasFigures ? ByteFormat::bytes(n.savedBytes) : QVariant();
        case ShareColumn:
            return n.hasFigures ? ByteFormat::percent(n.share) : QVariant();
        default:
            return {};
        }
    }
    if (n.kind == Kind::ShortcutGroup) {
        switch (column) {
        case NameColumn:
            return tr("shortcut");
        case TypeColumn:
            return tr("residual branch");
        default:
            return {};
        }
    }
    const Layer* l = layerOf(n);
    if (!l) return {};
    switch (column) {
    case NameColumn: {
        if (!l->name.empty()) return QString::fromStdString(l->name);
        if (!l->isBlock()) return tr("(unnamed)");
        // An unnamed block appears in layer paths only by its index: show that.
        const std::int64_t first = l->firstIndex >= 0 ? l->firstIndex : 0;
        if (l->repeat > 1) return QStringLiteral("[%1–%2]").arg(first).arg(first + l->repeat - 1);
        if (l->firstIndex >= 0) return QStringLiteral("[%1]").arg(first);
        // Not in any path: say what it is (a transformer layer's two residual halves, mostly).
        const QString role = blockRole(*l);
        return role.isEmpty() ? tr("(unnamed)") : QStringLiteral("(%1)").arg(role);
    }
    case TypeColumn: {
        if (!l->isBlock()) {
            const QString op = QString::fromStdString(l->op);
            return n.afterMerge ? tr("%1 (after merge)").arg(op) : op;
        }
        QString t = l->repeat > 1 ? tr("block × %1").arg(l->repeat) : tr("block");
        if (l->shortcut != ShortcutKind::None) t += tr(", residual");
        return t;
    }
    case OutputColumn:
        return !l->isBlock() && n.hasFigures ? n.outputShape : QVariant();
    case ParametersColumn:
        return n.hasFigures ? QLocale().toString(static_cast<qulonglong>(n.parameterCount)) : QVariant();
    case ActivationColumn:
        return n.hasFigures ? ByteFormat::bytes(n.savedBytes) : QVariant();
    case ShareColumn:
        return n.hasFigures ? ByteFormat::percent(n.share) : QVariant();
    default:
        return {};
    }
}

QVariant LayerTreeModel::toolTipData(const Node& n, int column) const {
    if (column == ActivationColumn || column == ShareColumn) {
        if (!n.hasFigures) return {};
        return tr("%1 saved for the backward pass at batch %2 (%3 of the peak); blocks and repeated layers "
                  "show "
                  "the sum over their layers and repetitions.")
            .arg(ByteFormat::bytes(n.savedBytes))
            .arg(m_batch)
            .arg(ByteFormat::percent(n.share));
    }
    if (column == OutputColumn && n.kind != Kind::Input && n.hasFigures)
        return tr("Shape of the layer's output tensor (B = batch size); %1 at batch %2 (first repetition).")
            .arg(ByteFormat::bytes(n.outputBytes))
            .arg(m_batch);
    if (column == TrainableColumn && n.hasFigures && n.kind == Kind::Layer && n.parameterCount > 0) {
        if (n.trainableCount == n.parameterCount)
            return tr("Trains: %1 parameters get gradients and optimizer states. Untick to freeze "
                      "(requires_grad=False).")
                .arg(QLocale().toString(static_cast<qulonglong>(n.parameterCount)));
        if (n.trainableCount == 0)
            return tr("Frozen (requires_grad=False): no gradient, no optimizer state, and layers before the "
                      "first trainable one save nothing for backward. Tick to train it.");
        return tr("%1 of %2 parameters train; the others are frozen.")
            .arg(QLocale().toString(static_cast<qulonglong>(n.trainableCount)),
                 QLocale().toString(static_cast<qulonglong>(n.parameterCount)));
    }
    if (column == ParametersColumn && n.hasFigures)
        return tr(
            "Parameters of this layer: tied weights count once, at their first use; buffers such as "
            "running statistics are not counted. Blocks show the sum over their layers and repetitions.");
    if (n.kind == Kind::Input)
        return tr(
            "The per-sample input: shape without the batch dimension, and its dtype. Select it to edit.");
    if (n.kind == Kind::ShortcutGroup)
        return tr(
            "Layers on the residual branch, merged with the block's output (e.g. ResNet's downsample).");
    const Layer* l = layerOf(n);
    if (!l) return {};
    if (l->isBlock())
        return tr("A block of layers. It runs %n time(s), each repetition with its own weights.", nullptr,
                  static_cast<int>(l->repeat));
    const QString d = OpCatalogue::description(QString::fromStdString(l->op));
    return n.afterMerge ? tr("%1 Runs after the residual merge.").arg(d) : d;
}

QVariant LayerTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
        case NameColumn:
            return tr("Name");
        case TypeColumn:
            return tr("Type");
        case OutputColumn:
            return tr("Output");
        case ParametersColumn:
            return tr("Parameters");
        case ActivationColumn:
            return tr("Activations");
        case ShareColumn:
            return tr("% of peak");
        case TrainableColumn:
            return tr("Trains");
        default:
            return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case OutputColumn:
            return tr("Input: per-sample shape. Layers: output tensor size at the current batch.");
        case ActivationColumn:
            return tr("Forward activations the layer saves for the backward pass at the current batch.");
        case ShareColumn:
            return tr("Those activations as a share of the peak allocated memory.");
        case TrainableColumn:
            return tr("Ticked: the layer's parameters train. Unticked: frozen (fine-tuning), as "
                      "requires_grad=False.");
        default:
            return {};
        }
    }
    return {};
}

} // namespace batchfit
