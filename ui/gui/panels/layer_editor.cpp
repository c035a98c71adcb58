#include "gui/panels/layer_editor.h"

#include "batchfit/model_io.h"
#include "gui/charts/component_style.h"
#include "gui/document/attribute_value.h"
#include "gui/document/document.h"
#include "gui/document/layer_path_index.h"
#include "gui/document/op_catalogue.h"
#include "gui/models/attribute_table_model.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QRegularExpression>
#include <QSpinBox>
#include <QStackedWidget>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

namespace batchfit {

namespace {

enum Page { EmptyPage, InputPage, OpPage, BlockPage };
constexpr int kMergeRepeat = 201;
constexpr int kMergeFirstIndex = 202;
constexpr int kMergeDim = 203;

QString layerNameProblem(const QString& name, bool isBlock) {
    if (name.isEmpty() && !isBlock) return LayerEditor::tr("A layer needs a name.");
    if (name.contains(QRegularExpression(QStringLiteral("[.\\[\\]]"))))
        return LayerEditor::tr("Names cannot contain '.', '[' or ']' (they separate layer paths).");
    return {};
}

} // namespace

LayerEditor::LayerEditor(Document* doc, QWidget* parent) : QWidget(parent), m_doc(doc) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_pages = new QStackedWidget(this);
    auto* empty =
        new QLabel(tr("Select a layer to edit it, or the input row to change the input shape."), this);
    empty->setWordWrap(true);
    empty->setAlignment(Qt::AlignCenter);
    m_pages->addWidget(empty);
    m_pages->addWidget(buildInputPage());
    m_pages->addWidget(buildOpPage());
    m_pages->addWidget(buildBlockPage());
    m_problem = new QLabel(this);
    m_problem->setWordWrap(true);
    m_problem->setContentsMargins(6, 2, 6, 2);
    m_problem->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QPalette p = m_problem->palette();
    p.setColor(QPalette::WindowText, ComponentStyle::oomColor());
    m_problem->setPalette(p);
    m_problem->hide();
    layout->addWidget(m_pages, 1);
    layout->addWidget(m_problem);
    connect(m_doc, &Document::modelChanged, this, &LayerEditor::refresh);
}

QWidget* LayerEditor::buildInputPage() {
    auto* page = new QWidget(this);
    auto* form = new QFormLayout(page);
    m_shape = new QLineEdit(page);
    m_shape->setToolTip(
        tr("Per-sample shape, without the batch dimension: e.g. 3, 224, 224 for images or 128 "
           "for a sequence of token ids."));
    m_dtype = new QComboBox(page);
    for (auto t : {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64, DType::Int64,
                   DType::Int32, DType::UInt8, DType::Bool})
        m_dtype->addItem(QString::fromUtf8(dtypeName(t).data()), static_cast<int>(t));
    m_dtype->setToolTip(tr("Element type of the input: float32 for images, int64 for token ids."));
    form->addRow(tr("Input &shape:"), m_shape);
    form->addRow(tr("Input &dtype:"), m_dtype);
    connect(m_shape, &QLineEdit::editingFinished, this, &LayerEditor::commitShape);
    connect(m_dtype, &QComboBox::activated, this, [this] {
        Model m = m_doc->model();
        m.inputDtype = static_cast<DType>(m_dtype->currentData().toInt());
        m_doc->editModel(m, tr("Input dtype %1").arg(m_dtype->currentText()), {});
    });
    return page;
}

QWidget* LayerEditor::buildOpPage() {
    auto* page = new QWidget(this);
    auto* form = new QFormLayout(page);
    m_name = new QLineEdit(page);
    m_name->setToolTip(tr("Unique among its siblings; other layers refer to it by this name."));
    m_op = new QComboBox(page);
    m_op->addItems(OpCatalogue::ops());
    m_op->setMaxVisibleItems(20);
    m_op->setToolTip(tr("The operation (docs/model-format.md lists each op's attributes)."));
    m_opHelp = new QLabel(page);
    m_opHelp->setWordWrap(true);
    m_inputs = new QLineEdit(page);
    m_inputs->setPlaceholderText(tr("previous layer"));
    m_inputs->setToolTip(
        tr("Comma-separated layer names this layer reads (empty: the previous layer's output; "
           "@input is the block's input)."));
    m_attrs = new AttributeTableModel(this);
    m_attrView = new QTableView(page);
    m_attrView->setModel(m_attrs);
    m_attrView->verticalHeader()->hide();
    m_attrView->horizontalHeader()->setStretchLastSection(true);
    m_attrView->setEditTriggers(QAbstractItemView::AllEditTriggers);
    m_attrView->setToolTip(
        tr("The op's attributes; click a value to edit it. Missing ones take PyTorch's defaults."));
    m_addAttr = new QToolButton(page);
    m_addAttr->setIcon(QIcon(QStringLiteral(":/icons/add.svg")));
    m_addAttr->setToolTip(tr("Add an attribute"));
    m_addAttr->setPopupMode(QToolButton::InstantPopup);
    m_addAttr->setMenu(new QMenu(m_addAttr));
    m_removeAttr = new QToolButton(page);
    m_removeAttr->setIcon(QIcon(QStringLiteral(":/icons/delete.svg")));
    m_removeAttr->setToolTip(tr("Remove the selected attribute (back to its default)"));
    auto* attrButtons = new QHBoxLayout;
    attrButtons->addStretch();
    attrButtons->addWidget(m_addAttr);
    attrButtons->addWidget(m_removeAttr);
    form->addRow(tr("&Name:"), m_name);
    form->addRow(tr("&Op:"), m_op);
    form->addRow(QString(), m_opHelp);
    form->addRow(tr("Input&s:"), m_inputs);
    form->addRow(m_attrView);
    form->addRow(attrButtons);

    connect(m_name, &QLineEdit::editingFinished, this, [this] { commitName(m_name); });
    connect(m_inputs, &QLineEdit::editingFinished, this, &LayerEditor::commitInputs);
    connect(m_op, &QComboBox::activated, this, [this] {
        const QString op = m_op->currentText();
        commit(
            [op](Layer& l) {
                if (QString::fromStdString(l.op) == op) return false;
                const QStringList known = OpCatalogue::attributeKeys(op);
                Attributes kept = OpCatalogue::starterAttributes(op);
                for (const auto& [k, v] : l.attrs.values())
                    if (known.contains(QString::fromStdString(k))) kept.set(k, v);
                l.op = op.toStdString();
                l.attrs = kept;
                return true;
            },
            tr("Change op to %1").arg(op));
    });
    connect(m_attrs, &AttributeTableModel::attributeEdited, this,
            [this](const QString& key, const AttrValue& v) {
                const QString refused = valueProblem(key, v);
                m_attrs->setRejected(key, refused);
                showLocalProblem(refused);
                if (!refused.isEmpty()) return; // the model, and so the table, keep the old value
                commit(
                    [&](Layer& l) {
                        l.attrs.set(key.toStdString(), v);
                        return true;
                    },
                    tr("Set %1").arg(key));
            });
    connect(m_attrs, &AttributeTableModel::inputRejected, this,
            [this](const QString&, const QString& message) { showLocalProblem(message); });
    connect(m_addAttr->menu(), &QMenu::aboutToShow, this, [this] {
        QMenu* menu = m_addAttr->menu();
        menu->clear();
        for (const QString& key : OpCatalogue::attributeKeys(m_op->currentText()))
            if (!m_attrs->attributes().has(key.toStdString()))
                menu->addAction(key, this, [this, key] {
                    commit(
                        [&](Layer& l) {
                            l.attrs.set(key.toStdString(), std::int64_t{0});
                            return true;
                        },
                        tr("Add %1").arg(key));
                });
        menu->addSeparator();
        menu->addAction(tr("Other…"), this, &LayerEditor::addAttribute);
    });
    connect(m_removeAttr, &QToolButton::clicked, this, &LayerEditor::removeAttribute);
    return page;
}

QWidget* LayerEditor::buildBlockPage() {
    auto* page = new QWidget(this);
    auto* form = new QFormLayout(page);
    m_blockName = new QLineEdit(page);
    m_blockName->setToolTip(tr("May be empty: the block then adds only its index to layer paths."));
    m_repeat = new QSpinBox(page);
    m_repeat->setRange(1, 100000);
    m_repeat->setToolTip(tr("How many times the block runs, each repetition with its own weights (e.g. 32 "
                            "decoder layers)."));
    m_firstIndex = new QSpinBox(page);
    m_firstIndex->setRange(-1, 100000);
    m_firstIndex->setSpecialValueText(tr("automatic"));
    m_firstIndex->setToolTip(tr("Index of the first repetition in layer paths (automatic: none for a single "
                                "block, 0 otherwise)."));
    m_shortcut = new QComboBox(page);
    m_shortcut->addItem(tr("none"), static_cast<int>(ShortcutKind::None));
    m_shortcut->addItem(tr("identity (residual)"), static_cast<int>(ShortcutKind::Identity));
    m_shortcut->addItem(tr("layers (e.g. downsample)"), static_cast<int>(ShortcutKind::Layers));
    m_shortcut->setToolTip(tr("A residual branch from the block's input, merged with the block's output."));
    m_merge = new QComboBox(page);
    m_merge->addItem(tr("add"), static_cast<int>(MergeKind::Add));
    m_merge->addItem(tr("concatenate"), static_cast<int>(MergeKind::Concat));
    m_merge->setToolTip(tr("How the residual branch is merged with the main branch."));
    m_mergeDim = new QSpinBox(page);
    m_mergeDim->setRange(-8, 8);
    m_mergeDim->setToolTip(tr("Per-sample dimension of a concatenating merge."));
    m_checkpoint = new QCheckBox(tr("Checkpoint as one unit"), page);
    m_checkpoint->setToolTip(
        tr("With \"every block\" checkpointing, treat this block as one unit even when it "
           "runs once."));
    form->addRow(tr("&Name:"), m_blockName);
    form->addRow(tr("&Repeat:"), m_repeat);
    form->addRow(tr("First index:"), m_firstIndex);
    form->addRow(tr("&Shortcut:"), m_shortcut);
    form->addRow(tr("Merge:"), m_merge);
    form->addRow(tr("Merge &dim:"), m_mergeDim);
    form->addRow(m_checkpoint);

    connect(m_blockName, &QLineEdit::editingFinished, this, [this] { commitName(m_blockName); });
    connect(m_repeat, &QSpinBox::valueChanged, this, [this](int n) {
        if (m_refreshing) return;
        commit([n](Layer& l) { return l.repeat != n && (l.repeat = n, true); }, tr("Repeat × %1").arg(n),
               kMergeRepeat);
    });
    connect(m_firstIndex, &QSpinBox::valueChanged, this, [this](int v) {
        if (m_refreshing) return;
        commit([v](Layer& l) { return l.firstIndex != v && (l.firstIndex = v, true); }, tr("First index"),
               kMergeFirstIndex);
    });
    connect(m_shortcut, &QComboBox::activated, this, [this] {
        const auto kind = static_cast<ShortcutKind>(m_shortcut->currentData().toInt());
        commit(
            [kind](Layer& l) {
                if (l.shortcut == kind) return false;
                l.shortcut = kind;
                if (kind == ShortcutKind::Layers && l.shortcutLayers.empty()) {
                    Layer id;
                    id.name = "downsample";
                    id.op = "identity";
                    l.shortcutLayers.push_back(id);
                }
                return true;
            },
            tr("Shortcut: %1").arg(m_shortcut->currentText()));
    });
    connect(m_merge, &QComboBox::activated, this, [this] {
        const auto kind = static_cast<MergeKind>(m_merge->currentData().toInt());
        commit([kind](Layer& l) { return l.merge != kind && (l.merge = kind, true); },
               tr("Merge: %1").arg(m_merge->currentText()));
    });
    connect(m_mergeDim, &QSpinBox::valueChanged, this, [this](int d) {
        if (m_refreshing) return;
        commit([d](Layer& l) { return l.mergeDim != d && (l.mergeDim = d, true); }, tr("Merge dim"),
               kMergeDim);
    });
    connect(m_checkpoint, &QCheckBox::toggled, this, [this](bool on) {
        if (m_refreshing) return;
        commit([on](Layer& l) { return l.checkpointUnit != on && (l.checkpointUnit = on, true); },
               on ? tr("Checkpoint block") : tr("Do not checkpoint block"));
    });
    return page;
}

void LayerEditor::setTarget(const LayerAddress& address, bool isInput) {
    m_address = address;
    m_isInput = isInput;
    m_localProblem.clear();
    m_attrs->setAttributes({});
    refresh();
}

void LayerEditor::refresh() {
    m_refreshing = true;
    const Model& model = m_doc->model();
    const Layer* layer = m_address.resolve(model);
    if (m_isInput) {
        m_pages->setCurrentIndex(InputPage);
        if (!m_shape->hasFocus() || m_localProblem.isEmpty()) {
            QStringList dims;
            for (auto d : model.inputShape) dims << QString::number(d);
            m_shape->setText(dims.join(QStringLiteral(", ")));
        }
        m_dtype->setCurrentIndex(m_dtype->findData(static_cast<int>(model.inputDtype)));
    } else if (!layer) {
        m_pages->setCurrentIndex(EmptyPage);
    } else if (!layer->isBlock()) {
        m_pages->setCurrentIndex(OpPage);
        if (!m_name->hasFocus()) m_name->setText(QString::fromStdString(layer->name));
        const QString op = QString::fromStdString(layer->op);
        if (m_op->findText(op) < 0) m_op->addItem(op);
        m_op->setCurrentText(op);
        m_opHelp->setText(OpCatalogue::description(op));
        QStringList inputs;
        for (const auto& i : layer->inputs) inputs << QString::fromStdString(i);
        if (!m_inputs->hasFocus()) m_inputs->setText(inputs.join(QStringLiteral(", ")));
        m_attrs->setAttributes(layer->attrs, true);
    } else {
        m_pages->setCurrentIndex(BlockPage);
        if (!m_blockName->hasFocus()) m_blockName->setText(QString::fromStdString(layer->name));
        m_repeat->setValue(static_cast<int>(layer->repeat));
        m_firstIndex->setValue(static_cast<int>(layer->firstIndex));
        m_shortcut->setCurrentIndex(m_shortcut->findData(static_cast<int>(layer->shortcut)));
        m_merge->setCurrentIndex(m_merge->findData(static_cast<int>(layer->merge)));
        m_mergeDim->setValue(static_cast<int>(layer->mergeDim));
        m_mergeDim->setEnabled(layer->merge == MergeKind::Concat);
        m_checkpoint->setChecked(layer->checkpointUnit);
    }
    m_refreshing = false;
}

void LayerEditor::commit(const std::function<bool(Layer&)>& change, const QString& text, int mergeId) {
    if (m_refreshing) return;
    Model m = m_doc->model();
    Layer* l = m_address.resolve(m);
    if (!l || !change(*l)) return;
    m_doc->editModel(std::move(m), text, m_address, mergeId);
}

void LayerEditor::commitName(QLineEdit* edit) {
    const Layer* current = m_address.resolve(m_doc->model());
    if (!current) return;
    const QString name = edit->text().trimmed();
    QString problem = layerNameProblem(name, current->isBlock());
    if (problem.isEmpty() && !name.isEmpty()) {
        const auto* siblings = m_address.container(m_doc->model());
        for (int i = 0; siblings && i < static_cast<int>(siblings->size()); ++i)
            if (i != m_address.index() && (*siblings)[static_cast<std::size_t>(i)].name == name.toStdString())
                problem = tr("Another layer here is already called '%1'.").arg(name);
    }
    showLocalProblem(problem);
    if (!problem.isEmpty()) return; // the typed text stays in the field
    commit([&](Layer& l) { return l.name != name.toStdString() && (l.name = name.toStdString(), true); },
           tr("Rename to %1").arg(name));
}

void LayerEditor::commitShape() {
    const QString text = m_shape->text().trimmed();
    Shape shape;
    QString problem;
    const QString inner = text.startsWith(QLatin1Char('[')) && text.endsWith(QLatin1Char(']'))
                              ? text.mid(1, text.size() - 2)
                              : text;
    for (const QString& part :
         inner.split(QRegularExpression(QStringLiteral("[,\\s×x]+")), Qt::SkipEmptyParts)) {
        bool ok = false;
        const qlonglong d = part.toLongLong(&ok);
        if (!ok || d <= 0) {
            problem =
                tr("Input shape: '%1' is not a positive whole number. Write the per-sample dimensions, e.g. "
                   "3, 224, 224.")
                    .arg(part);
            break;
        }
        shape.push_back(d);
    }
    if (problem.isEmpty() && shape.empty())
        problem = tr("Input shape: give at least one dimension, e.g. 128.");
    showLocalProblem(problem);
    if (!problem.isEmpty() || shape == m_doc->model().inputShape) return;
    Model m = m_doc->model();
    m.inputShape = shape;
    m_doc->editModel(std::move(m), tr("Input shape %1").arg(QString::fromStdString(shapeToString(shape))),
                     {});
}

void LayerEditor::commitInputs() {
    std::vector<std::string> inputs;
    for (const QString& part : m_inputs->text().split(QLatin1Char(','), Qt::SkipEmptyParts))
        if (!part.trimmed().isEmpty()) inputs.push_back(part.trimmed().toStdString());
    commit([&](Layer& l) { return l.inputs != inputs && (l.inputs = inputs, true); }, tr("Set inputs"));
}

void LayerEditor::addAttribute() {
    bool ok = false;
    const QString key = QInputDialog::getText(this, tr("Add attribute"), tr("Attribute name:"),
                                              QLineEdit::Normal, QString(), &ok)
                            .trimmed();
    if (!ok || key.isEmpty()) return;
    commit(
        [&](Layer& l) {
            return !l.attrs.has(key.toStdString()) && (l.attrs.set(key.toStdString(), std::int64_t{0}), true);
        },
        tr("Add %1").arg(key));
}

void LayerEditor::removeAttribute() {
    const QString key = m_attrs->keyAt(m_attrView->currentIndex().row());
    if (key.isEmpty()) return;
    commit(
        [&](Layer& l) { return l.attrs.has(key.toStdString()) && (l.attrs.erase(key.toStdString()), true); },
        tr("Remove %1").arg(key));
}

QString LayerEditor::valueProblem(const QString& key, const AttrValue& value) const {
    Model candidate = m_doc->model();
    Layer* layer = m_address.resolve(candidate);
    if (!layer) return {};
    const AttrValue* old = layer->attrs.find(key.toStdString());
    const QString oldText = old ? AttributeValue::toText(*old) : tr("unset");
    layer->attrs.set(key.toStdString(), value);
    // The core's own checks (positive, at most 2^32, ...), on the whole model: only a failure about this
    // attribute of this layer refuses the value. A shape that no longer matches further down is an edit the
    // user may be half-way through (the model problem bar shows it, and marks the layer).
    auto after = validateModel(candidate);
    if (after || after.error().attribute != key.toStdString()) return {};
    const auto where = LayerPathIndex(candidate).addressInMessage(after.error().message);
    if (where && !(*where == m_address)) return {};
    auto before = validateModel(m_doc->model());
    if (!before && before.error().message == after.error().message) return {}; // it was already so
    return tr("%1: %2 was not applied (%3); it stays %4.")
        .arg(key, AttributeValue::toText(value), QString::fromStdString(after.error().message), oldText);
}

void LayerEditor::showLocalProblem(const QString& message) {
    m_localProblem = message;
    setModelProblem(m_modelProblem);
}

void LayerEditor::setModelProblem(const QString& message) {
    // The core's message is English; the sentence that frames it is translated.
    m_modelProblem = message.isEmpty() ? QString() : tr("The model has a problem: %1").arg(message);
    const QString shown = !m_localProblem.isEmpty() ? m_localProblem : m_modelProblem;
    m_problem->setText(shown);
    m_problem->setVisible(!shown.isEmpty());
}

QString LayerEditor::problemText() const {
    return m_problem->text();
}

} // namespace batchfit
