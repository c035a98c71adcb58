#include "gui/panels/layer_stack_panel.h"

#include "gui/document/document.h"
#include "gui/document/model_edits.h"
#include "gui/document/op_catalogue.h"
#include "gui/models/layer_tree_model.h"
#include "gui/panels/add_layer_menu.h"
#include "gui/panels/layer_editor.h"

#include <QAction>
#include <QHeaderView>
#include <QInputDialog>
#include <QMenu>
#include <QScrollBar>
#include <QSplitter>
#include <QToolBar>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>
#include <functional>

namespace batchfit {

LayerStackPanel::LayerStackPanel(Document* doc, QWidget* parent) : QWidget(parent), m_doc(doc) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_toolBar = new QToolBar(this);
    m_toolBar->setIconSize(QSize(18, 18));
    m_model = new LayerTreeModel(this);
    m_view = new QTreeView(this);
    m_view->setModel(m_model);
    m_view->setUniformRowHeights(true);
    m_view->setAlternatingRowColors(true);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->header()->setStretchLastSection(false);
    // Names stay readable: the tree scrolls sideways instead of squeezing the name column.
    m_view->header()->setSectionResizeMode(LayerTreeModel::NameColumn, QHeaderView::Interactive);
    m_view->header()->resizeSection(
        LayerTreeModel::NameColumn,
        m_view->fontMetrics().horizontalAdvance(QStringLiteral("downsample_conv")) + 36);
    // Fixed widths for the per-batch columns: ResizeToContents would measure every row on every slider tick.
    const QFontMetrics fm = m_view->fontMetrics();
    const int numberWidth = fm.horizontalAdvance(QStringLiteral("0000.00 MiB")) + 16;
    m_view->header()->setSectionResizeMode(LayerTreeModel::TypeColumn, QHeaderView::Interactive);
    m_view->header()->resizeSection(LayerTreeModel::TypeColumn,
                                    fm.horizontalAdvance(QStringLiteral("adaptive_avgpool2d")) + 16);
    m_view->header()->resizeSection(LayerTreeModel::OutputColumn,
                                    fm.horizontalAdvance(QStringLiteral("B×64×112×112")) + 12);
    m_view->header()->resizeSection(LayerTreeModel::ParametersColumn,
                                    fm.horizontalAdvance(QStringLiteral("000,000,000")) + 16);
    m_view->header()->resizeSection(LayerTreeModel::ActivationColumn, numberWidth);
    m_view->header()->resizeSection(LayerTreeModel::ShareColumn,
                                    fm.horizontalAdvance(QStringLiteral("100.0%")) + 16);
    m_view->header()->resizeSection(
        LayerTreeModel::TrainableColumn,
        std::max(fm.horizontalAdvance(
                     m_model->headerData(LayerTreeModel::TrainableColumn, Qt::Horizontal).toString()) +
                     16,
                 40));
    // What a memory tool is read for comes first: a dock of ~380 px shows name, activations, share and
    // parameters; type and output shape follow (scroll sideways, or hide columns from the header's menu).
    QHeaderView* header = m_view->header();
    header->setObjectName(QStringLiteral("layerTreeHeader"));
    header->moveSection(header->visualIndex(LayerTreeModel::ActivationColumn), 1);
    header->moveSection(header->visualIndex(LayerTreeModel::ShareColumn), 2);
    header->moveSection(header->visualIndex(LayerTreeModel::ParametersColumn), 3);
    header->moveSection(header->visualIndex(LayerTreeModel::TrainableColumn),
                        1); // fine-tuning: next to the name
    header->setSectionHidden(LayerTreeModel::TrainableColumn, true);
    header->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(header, &QWidget::customContextMenuRequested, this, [this, header](const QPoint& pos) {
        QMenu menu(this);
        for (int c = 1; c < LayerTreeModel::ColumnCount; ++c) { // the name column always stays
            QAction* a = menu.addAction(m_model->headerData(c, Qt::Horizontal).toString());
            a->setCheckable(true);
            a->setChecked(!header->isSectionHidden(c));
            connect(a, &QAction::toggled, header, [header, c](bool on) { header->setSectionHidden(c, !on); });
        }
        menu.exec(header->mapToGlobal(pos));
    });
    m_editor = new LayerEditor(doc, this);

    auto action = [this](const QString& icon, const QString& text, const QKeySequence& key,
                         const QString& tip) {
        auto* a = new QAction(QIcon(QStringLiteral(":/icons/%1.svg").arg(icon)), text, this);
        a->setShortcut(key);
        a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        a->setToolTip(tip + QStringLiteral(" (%1)").arg(key.toString(QKeySequence::NativeText)));
        m_view->addAction(a);
        return a;
    };
    m_add = action(QStringLiteral("add"), tr("&Add Layer"), QKeySequence(Qt::Key_Insert),
                   tr("Add a layer after the selected one"));
    m_addMenu = new AddLayerMenu(this); // a search field, then the ops by family
    connect(m_addMenu, &AddLayerMenu::opChosen, this, &LayerStackPanel::addLayer);
    m_add->setMenu(m_addMenu);
    m_duplicate = action(QStringLiteral("duplicate"), tr("Dup&licate"), QKeySequence(Qt::CTRL | Qt::Key_D),
                         tr("Duplicate the selected layer or block"));
    m_delete = action(QStringLiteral("delete"), tr("&Delete Layer"), QKeySequence(QKeySequence::Delete),
                      tr("Delete the selected layer or block"));
    m_up = action(QStringLiteral("up"), tr("Move U&p"), QKeySequence(Qt::ALT | Qt::Key_Up), tr("Move up"));
    m_down = action(QStringLiteral("down"), tr("Move Dow&n"), QKeySequence(Qt::ALT | Qt::Key_Down),
                    tr("Move down"));
    m_wrap = action(QStringLiteral("wrap"), tr("&Wrap in Block"), QKeySequence(Qt::CTRL | Qt::Key_G),
                    tr("Put the selected layer into a new block"));
    m_repeat = action(QStringLiteral("repeat"), tr("Set Rep&eat…"), QKeySequence(Qt::CTRL | Qt::Key_R),
                      tr("Set how many times the selected block runs"));
    for (auto* a : {m_add, m_duplicate, m_delete, m_up, m_down, m_wrap, m_repeat}) m_toolBar->addAction(a);
    // Fine-tuning: menu and context-menu only (the toolbar stays short).
    auto* separator = new QAction(this);
    separator->setSeparator(true);
    m_view->addAction(separator);
    m_freezeBefore = new QAction(tr("&Freeze Layers Before This One"), this);
    m_freezeBefore->setToolTip(tr("Fine-tune from the selected layer on: every layer before it is frozen "
                                  "(requires_grad=False), it and every layer after it train"));
    connect(m_freezeBefore, &QAction::triggered, this,
            [this] { m_view->header()->setSectionHidden(LayerTreeModel::TrainableColumn, false); });
    m_trainAll = new QAction(tr("&Train All Layers"), this);
    m_trainAll->setToolTip(tr("Unfreeze every layer (full training)"));
    m_view->addAction(m_freezeBefore);
    m_view->addAction(m_trainAll);
    m_view->setContextMenuPolicy(Qt::ActionsContextMenu);
    if (auto* b = qobject_cast<QToolButton*>(m_toolBar->widgetForAction(m_add)))
        b->setPopupMode(QToolButton::MenuButtonPopup);

    auto* split = new QSplitter(Qt::Vertical, this);
    split->setObjectName(QStringLiteral("layerTreeEditorSplitter")); // remembered by MainWindow
    split->addWidget(m_view);
    split->addWidget(m_editor);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setChildrenCollapsible(false);
    layout->addWidget(m_toolBar);
    layout->addWidget(split, 1);

    connect(m_add, &QAction::triggered, this, [this] { addLayer(QStringLiteral("linear")); });
    connect(m_duplicate, &QAction::triggered, this, &LayerStackPanel::duplicateCurrent);
    connect(m_delete, &QAction::triggered, this, &LayerStackPanel::deleteCurrent);
    connect(m_up, &QAction::triggered, this, [this] { moveCurrent(-1); });
    connect(m_down, &QAction::triggered, this, [this] { moveCurrent(1); });
    connect(m_wrap, &QAction::triggered, this, &LayerStackPanel::wrapCurrent);
    connect(m_repeat, &QAction::triggered, this, &LayerStackPanel::setRepeatOfCurrent);
    connect(m_freezeBefore, &QAction::triggered, this, &LayerStackPanel::freezeBeforeCurrent);
    connect(m_trainAll, &QAction::triggered, this, [this] {
        Model m = m_doc->model();
        if (ModelEdits::trainAll(m)) m_doc->editModel(std::move(m), tr("Train all layers"), currentAddress());
    });
    connect(m_model, &LayerTreeModel::trainableToggled, this, [this](const LayerAddress& a, bool on) {
        Model m = m_doc->model();
        const Layer* l = a.resolve(m);
        if (!l) return;
        const QString name = QString::fromStdString(l->name);
        if (!ModelEdits::setTrainable(m, a, on).isEmpty())
            m_doc->editModel(std::move(m), on ? tr("Train %1").arg(name) : tr("Freeze %1").arg(name), a);
    });
    connect(m_doc, &Document::modelReplaced, this, [this] { m_replaced = true; });
    connect(m_doc, &Document::modelChanged, this, &LayerStackPanel::onModelChanged);
    connect(m_doc, &Document::focusRequested, this, &LayerStackPanel::select);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentChanged, this,
            &LayerStackPanel::onCurrentChanged);
    onModelChanged();
}

QList<QAction*> LayerStackPanel::editActions() const {
    return {m_add, m_duplicate, m_delete, m_up, m_down, m_wrap, m_repeat, m_freezeBefore, m_trainAll};
}

LayerAddress LayerStackPanel::currentAddress() const {
    const QModelIndex cur = m_view->currentIndex();
    if (m_model->isShortcutGroup(cur)) return {};
    return m_model->addressOf(cur);
}

QStringList LayerStackPanel::expandedKeys() const {
    QStringList keys;
    std::function<void(const QModelIndex&)> walk = [&](const QModelIndex& parent) {
        for (int r = 0; r < m_model->rowCount(parent); ++r) {
            const QModelIndex i = m_model->index(r, 0, parent);
            if (!m_view->isExpanded(i)) continue;
            keys << (m_model->isShortcutGroup(i) ? QStringLiteral("s:") : QString()) +
                        m_model->addressOf(i).key();
            walk(i);
        }
    };
    walk({});
    return keys;
}

void LayerStackPanel::restoreExpanded(const QStringList& keys) {
    std::function<void(const QModelIndex&)> walk = [&](const QModelIndex& parent) {
        for (int r = 0; r < m_model->rowCount(parent); ++r) {
            const QModelIndex i = m_model->index(r, 0, parent);
            const QString key = (m_model->isShortcutGroup(i) ? QStringLiteral("s:") : QString()) +
                                m_model->addressOf(i).key();
            if (!keys.contains(key)) continue;
            m_view->setExpanded(i, true);
            walk(i);
        }
    };
    walk({});
}

void LayerStackPanel::onModelChanged() {
    const LayerAddress current = currentAddress();
    const bool inputSelected = m_model->isInputRow(m_view->currentIndex());
    const QStringList expanded = expandedKeys();
    m_model->setModel(m_doc->model());
    // The Trains column is for fine-tuning: shown while something is frozen (or asked for from the header's
    // menu), so that full training keeps the columns it reads.
    std::function<bool(const std::vector<Layer>&)> frozen = [&](const std::vector<Layer>& list) {
        for (const Layer& l : list)
            if (!l.trainable || !l.frozenParams.empty() || frozen(l.layers) || frozen(l.shortcutLayers) ||
                frozen(l.after))
                return true;
        return false;
    };
    const bool fineTuning = frozen(m_doc->model().layers) || !m_doc->config().freeze.empty() ||
                            !m_doc->config().trainOnly.empty();
    if (fineTuning)
        m_view->header()->setSectionHidden(LayerTreeModel::TrainableColumn, false);
    else if (m_replaced)
        m_view->header()->setSectionHidden(LayerTreeModel::TrainableColumn, true);
    if (m_replaced) {
        m_replaced = false;
        m_view->expandToDepth(0);
        m_view->setCurrentIndex(m_model->inputIndex());
    } else {
        restoreExpanded(expanded);
        if (inputSelected)
            m_view->setCurrentIndex(m_model->inputIndex());
        else
            select(current);
    }
    updateActions();
}

void LayerStackPanel::select(const LayerAddress& address) {
    const QModelIndex i = m_model->indexOf(address);
    if (!i.isValid()) {
        onCurrentChanged();
        return;
    }
    for (QModelIndex p = i.parent(); p.isValid(); p = p.parent()) m_view->expand(p);
    m_view->setCurrentIndex(i);
    m_view->scrollTo(i);
    onCurrentChanged();
}

void LayerStackPanel::onCurrentChanged() {
    const QModelIndex cur = m_view->currentIndex();
    m_editor->setTarget(currentAddress(), m_model->isInputRow(cur));
    updateActions();
}

void LayerStackPanel::updateActions() {
    const LayerAddress a = currentAddress();
    const Layer* l = a.resolve(m_doc->model());
    const auto* list = a.container(m_doc->model());
    m_duplicate->setEnabled(l);
    m_delete->setEnabled(l);
    m_up->setEnabled(l && a.index() > 0);
    m_down->setEnabled(l && list && a.index() + 1 < static_cast<int>(list->size()));
    m_wrap->setEnabled(l);
    m_repeat->setEnabled(l && l->isBlock());
    m_freezeBefore->setEnabled(l);
}

void LayerStackPanel::freezeBeforeCurrent() {
    const LayerAddress a = currentAddress();
    Model m = m_doc->model();
    const Layer* l = a.resolve(m);
    if (!l) return;
    const QString name = QString::fromStdString(l->name);
    if (!ModelEdits::freezeBefore(m, a).isEmpty())
        m_doc->editModel(std::move(m), tr("Freeze layers before %1").arg(name), a);
}

void LayerStackPanel::addLayer(const QString& op) {
    Model m = m_doc->model();
    Layer layer;
    layer.name = op.toStdString();
    layer.op = op.toStdString();
    layer.attrs = OpCatalogue::starterAttributes(op);
    const LayerAddress at = currentAddress();
    LayerAddress added;
    if (!at.isEmpty()) {
        added = ModelEdits::insertAfter(m, at, std::move(layer));
    } else if (!m_model->isInputRow(m_view->currentIndex()) && m.layers.size() >= 2) {
        // Nothing selected: just before the last layer (normally the loss).
        added = ModelEdits::insertAfter(m, LayerAddress::top(static_cast<int>(m.layers.size()) - 2),
                                        std::move(layer));
    } else {
        // The input row: at the very top.
        layer.name = ModelEdits::uniqueName(m.layers, layer.name);
        m.layers.insert(m.layers.begin(), std::move(layer));
        added = LayerAddress::top(0);
    }
    if (added.isEmpty()) return;
    m_doc->editModel(std::move(m), tr("Add %1").arg(op), added);
}

void LayerStackPanel::duplicateCurrent() {
    Model m = m_doc->model();
    const LayerAddress added = ModelEdits::duplicate(m, currentAddress());
    if (!added.isEmpty()) m_doc->editModel(std::move(m), tr("Duplicate"), added);
}

void LayerStackPanel::deleteCurrent() {
    Model m = m_doc->model();
    bool removed = false;
    const LayerAddress next = ModelEdits::remove(m, currentAddress(), &removed);
    if (removed) m_doc->editModel(std::move(m), tr("Delete"), next);
}

void LayerStackPanel::moveCurrent(int delta) {
    Model m = m_doc->model();
    const LayerAddress moved = ModelEdits::move(m, currentAddress(), delta);
    if (!moved.isEmpty()) m_doc->editModel(std::move(m), delta < 0 ? tr("Move up") : tr("Move down"), moved);
}

void LayerStackPanel::wrapCurrent() {
    Model m = m_doc->model();
    const LayerAddress block = ModelEdits::wrapInBlock(m, currentAddress());
    if (!block.isEmpty()) m_doc->editModel(std::move(m), tr("Wrap in block"), block);
}

void LayerStackPanel::setRepeatOfCurrent() {
    const LayerAddress a = currentAddress();
    const Layer* l = a.resolve(m_doc->model());
    if (!l || !l->isBlock()) return;
    bool ok = false;
    const int n = QInputDialog::getInt(this, tr("Set Repeat"), tr("Times the block runs:"),
                                       static_cast<int>(l->repeat), 1, 100000, 1, &ok);
    if (!ok) return;
    Model m = m_doc->model();
    if (!ModelEdits::setRepeat(m, a, n).isEmpty())
        m_doc->editModel(std::move(m), tr("Repeat × %1").arg(n), a);
}

int LayerStackPanel::preferredWidth() const {
    int columns = 0;
    for (int c = 0; c < m_view->header()->count(); ++c)
        if (!m_view->header()->isSectionHidden(c)) columns += m_view->header()->sectionSize(c);
    const QMargins m = contentsMargins();
    return columns + 2 * m_view->frameWidth() + m_view->verticalScrollBar()->sizeHint().width() + m.left() +
           m.right() + 4;
}

} // namespace batchfit
