#include "gui/panels/lora_editor.h"

#include "gui/panels/setting_spin_box.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QToolButton>

namespace batchfit {

namespace {
constexpr int kMergeRank = 301, kMergeAlpha = 302, kMergeDropout = 303, kMergeTargets = 304;
enum Mode { FullTraining = 0, Lora = 1, QLora = 2 };

/// What switching to LoRA starts from: r=16, alpha=32, dropout 0.05 (the Hugging Face PEFT examples' choice;
/// PEFT's own defaults are r=8, alpha=8, dropout 0).
LoraConfig starterLora() {
    LoraConfig l;
    l.rank = 16;
    l.alpha = 32;
    l.dropout = 0.05;
    return l;
}

/// What switching to QLoRA starts from: the QLoRA paper's and PEFT's example (NF4, double quantization,
/// bf16 compute, prepare_model_for_kbit_training).
QuantConfig starterQuant() {
    QuantConfig q;
    q.kind = QuantKind::Nf4;
    q.doubleQuant = true;
    q.computeDtype = DType::BFloat16;
    return q;
}
} // namespace

LoraEditor::LoraEditor(QFormLayout* form, QWidget* parent)
    : QWidget(parent), m_lastLora(starterLora()), m_lastQuant(starterQuant()) {
    hide(); // a logic holder: its widgets live in the form
    m_mode = new QComboBox(parent);
    m_mode->setObjectName(QStringLiteral("fineTuningBox"));
    m_mode->addItem(tr("full training"));
    m_mode->addItem(tr("LoRA adapters"));
    m_mode->addItem(tr("QLoRA (4-bit base weights)"));
    m_mode->setToolTip(
        tr("LoRA (PEFT): small trainable adapters on the chosen linears, everything else frozen. QLoRA: "
           "the same on linears that bitsandbytes stores in 4 bits. Freeze layers by hand from the layer "
           "tree's Trains column."));
    form->addRow(tr("Fine-tuning:"), m_mode);

    auto* row = new QWidget(parent);
    auto* h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    // Ranges from the settings table (SettingSpinBox): a value a file holds is shown as it is, never clamped.
    m_rank = new SettingSpinBox("lora.rank", row);
    m_rank->setObjectName(QStringLiteral("loraRank"));
    m_rank->setLabelPrefix(QStringLiteral("r "));
    m_rank->setToolTip(tr("LoRA rank r: each adapted linear gets r × (in + out) trainable parameters"));
    m_alpha = new SettingSpinBox("lora.alpha", row);
    m_alpha->setLabelPrefix(QStringLiteral("α "));
    m_alpha->setToolTip(tr("lora_alpha: the adapter output is scaled by α / r (no effect on memory)"));
    m_dropout = new SettingSpinBox("lora.dropout", row);
    m_dropout->setSingleStep(0.05);
    m_dropout->setLabelPrefix(tr("drop "));
    m_dropout->setToolTip(
        tr("lora_dropout: each adapted linear keeps its own dropout mask and dropped copy of "
           "its input; 0 keeps nothing"));
    m_dora = new QCheckBox(tr("DoRA"), row);
    m_dora->setObjectName(QStringLiteral("loraDora"));
    m_dora->setToolTip(
        tr("use_dora: weight-decomposed LoRA. Each forward recomputes the row norms of W + BA in the "
           "adapters' dtype (an in × in identity and weight-sized products, briefly) and keeps the base "
           "output and the adapter output of every adapted linear for the backward"));
    h->addWidget(m_rank);
    h->addWidget(m_alpha);
    h->addWidget(m_dropout);
    h->addWidget(m_dora);
    form->addRow(tr("LoRA:"), row);
    m_targetRow = new QWidget(parent);
    auto* th = new QHBoxLayout(m_targetRow);
    th->setContentsMargins(0, 0, 0, 0);
    m_targets = new QLineEdit(m_targetRow);
    m_targets->setObjectName(QStringLiteral("loraTargets"));
    m_targets->setPlaceholderText(tr("default: PEFT's for the model family"));
    m_targets->setToolTip(tr("target_modules: comma-separated linear names (q_proj,v_proj), or all-linear; a "
                             "linear is adapted when its path is a name or ends with \".name\""));
    m_picker = new QToolButton(m_targetRow);
    m_picker->setObjectName(QStringLiteral("loraTargetPicker"));
    m_picker->setText(QStringLiteral("…"));
    m_picker->setToolTip(tr("Pick the targets among the model's linear layers"));
    m_picker->setPopupMode(QToolButton::InstantPopup);
    m_pickerMenu = new QMenu(m_picker);
    m_picker->setMenu(m_pickerMenu);
    connect(m_pickerMenu, &QMenu::aboutToShow, this, &LoraEditor::fillPicker);
    th->addWidget(m_targets, 1);
    th->addWidget(m_picker);
    form->addRow(tr("LoRA targets:"), m_targetRow);
    m_form = form;
    m_row = row;
    buildQuantRows(form, parent);

    connect(m_mode, &QComboBox::currentIndexChanged, this, &LoraEditor::setMode);
    connect(m_rank, &SettingSpinBox::settingEdited, this, [this] {
        if (m_lora.rank == 0) return;
        const std::int64_t r = m_rank->integer();
        m_lora.rank = r;
        emitEdit(tr("LoRA r=%1").arg(r), kMergeRank);
    });
    connect(m_alpha, &SettingSpinBox::settingEdited, this, [this] {
        if (m_lora.rank == 0) return;
        const double a = m_alpha->real();
        m_lora.alpha = a;
        emitEdit(tr("LoRA alpha %1").arg(a), kMergeAlpha);
    });
    connect(m_dropout, &SettingSpinBox::settingEdited, this, [this] {
        if (m_lora.rank == 0) return;
        const double p = m_dropout->real();
        m_lora.dropout = p;
        emitEdit(tr("LoRA dropout %1").arg(p), kMergeDropout);
    });
    connect(m_dora, &QCheckBox::toggled, this, [this](bool on) {
        if (m_lora.rank == 0) return;
        m_lora.dora = on;
        emitEdit(on ? tr("DoRA on") : tr("DoRA off"));
    });
    connect(m_targets, &QLineEdit::editingFinished, this, [this] {
        if (m_lora.rank == 0) return;
        std::vector<std::string> t;
        for (const QString& s : m_targets->text().split(QLatin1Char(','), Qt::SkipEmptyParts))
            if (!s.trimmed().isEmpty()) t.push_back(s.trimmed().toStdString());
        setTargets(std::move(t), tr("LoRA targets"));
    });
    setFineTuning({}, {});
}

void LoraEditor::buildQuantRows(QFormLayout* form, QWidget* parent) {
    m_quantRow = new QWidget(parent);
    auto* grid = new QHBoxLayout(m_quantRow);
    grid->setContentsMargins(0, 0, 0, 0);
    m_quantKind = new QComboBox(m_quantRow);
    m_quantKind->setObjectName(QStringLiteral("quantKind"));
    m_quantKind->addItem(QStringLiteral("NF4"), static_cast<int>(QuantKind::Nf4));
    m_quantKind->addItem(QStringLiteral("FP4"), static_cast<int>(QuantKind::Fp4));
    m_quantKind->addItem(QStringLiteral("int8"), static_cast<int>(QuantKind::Int8));
    m_quantKind->setToolTip(
        tr("bitsandbytes storage of every linear but the output head: NF4/FP4 keep two 4-bit codes per "
           "byte and an fp32 absmax per 64 weights (0.5625 B/param); int8 (LLM.int8) one byte and a scale "
           "per row. The matmul dequantizes its weight on the fly."));
    m_doubleQuant = new QCheckBox(tr("double quant"), m_quantRow);
    m_doubleQuant->setObjectName(QStringLiteral("doubleQuant"));
    m_doubleQuant->setToolTip(tr("bnb_4bit_use_double_quant: the absmax themselves in 8 bits "
                                 "(0.5159 B/param)"));
    m_computeDtype = new QComboBox(m_quantRow);
    m_computeDtype->setObjectName(QStringLiteral("computeDtype"));
    for (DType d : {DType::BFloat16, DType::Float16, DType::Float32})
        m_computeDtype->addItem(tr("compute %1").arg(QString::fromUtf8(dtypeName(d).data())),
                                static_cast<int>(d));
    m_computeDtype->setToolTip(tr("bnb_4bit_compute_dtype: used for fp16 inputs (bitsandbytes computes "
                                  "fp32 and bf16 inputs in their own dtype)"));
    grid->addWidget(m_quantKind);
    grid->addWidget(m_doubleQuant);
    grid->addWidget(m_computeDtype, 1);
    form->addRow(tr("Quantization:"), m_quantRow);
    m_prepare = new QCheckBox(tr("prepare_model_for_kbit_training (fp32 other weights)"), parent);
    m_prepare->setObjectName(QStringLiteral("kbitPrepare"));
    m_prepare->setToolTip(
        tr("PEFT's prepare_model_for_kbit_training: every weight that is not quantized (embeddings, norms, "
           "the head) becomes fp32, and gradient checkpointing is turned on."));
    form->addRow(QString(), m_prepare);

    connect(m_quantKind, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_quant.enabled()) return;
        m_quant.kind = static_cast<QuantKind>(m_quantKind->currentData().toInt());
        emitEdit(tr("Quantization %1").arg(m_quantKind->currentText()));
    });
    connect(m_doubleQuant, &QCheckBox::toggled, this, [this](bool on) {
        if (!m_quant.enabled()) return;
        m_quant.doubleQuant = on;
        emitEdit(on ? tr("Double quantization on") : tr("Double quantization off"));
    });
    connect(m_computeDtype, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_quant.enabled()) return;
        m_quant.computeDtype = static_cast<DType>(m_computeDtype->currentData().toInt());
        emitEdit(tr("Compute dtype %1").arg(m_computeDtype->currentText()));
    });
    connect(m_prepare, &QCheckBox::toggled, this, [this](bool on) {
        if (!m_quant.enabled()) return;
        m_quant.prepare = on;
        emitEdit(on ? tr("Prepare for k-bit training") : tr("No k-bit preparation"), -1, on);
    });
}

void LoraEditor::setMode(int mode) {
    if (m_updating) return;
    const int now = m_quant.enabled() ? QLora : m_lora.rank > 0 ? Lora : FullTraining;
    if (mode == now) return;
    if (m_lora.rank > 0) m_lastLora = m_lora;
    if (m_quant.enabled()) m_lastQuant = m_quant;
    m_lora = mode == FullTraining ? LoraConfig{} : m_lastLora;
    m_quant = mode == QLora ? m_lastQuant : QuantConfig{};
    if (mode == FullTraining)
        emitEdit(tr("Full training"));
    else if (mode == Lora)
        emitEdit(tr("LoRA r=%1").arg(m_lora.rank));
    else
        emitEdit(tr("QLoRA r=%1").arg(m_lora.rank), -1, true);
}

void LoraEditor::setTargets(std::vector<std::string> targets, const QString& what) {
    if (targets == m_lora.targets) return;
    m_lora.targets = std::move(targets);
    QStringList t;
    for (const auto& s : m_lora.targets) t << QString::fromStdString(s);
    m_updating = true;
    m_targets->setText(t.join(QLatin1Char(',')));
    m_updating = false;
    emitEdit(what, kMergeTargets);
}

void LoraEditor::fillPicker() {
    m_pickerMenu->clear();
    const auto chosen = [this](const std::string& n) {
        for (const auto& t : m_lora.targets)
            if (t == n) return true;
        return false;
    };
    QAction* all = m_pickerMenu->addAction(tr("all-linear (every linear but the output head)"));
    all->setCheckable(true);
    all->setChecked(chosen("all-linear"));
    connect(all, &QAction::triggered, this, [this](bool on) {
        setTargets(on ? std::vector<std::string>{"all-linear"} : std::vector<std::string>{},
                   tr("LoRA targets"));
    });
    if (!m_info.defaults.empty()) {
        QStringList d;
        for (const auto& s : m_info.defaults) d << QString::fromStdString(s);
        QAction* def = m_pickerMenu->addAction(tr("PEFT's default (%1)").arg(d.join(QStringLiteral(", "))));
        connect(def, &QAction::triggered, this, [this] { setTargets({}, tr("LoRA targets")); });
    }
    m_pickerMenu->addSeparator();
    for (const auto& n : m_info.names) {
        QAction* a = m_pickerMenu->addAction(QString::fromStdString(n));
        a->setCheckable(true);
        a->setChecked(chosen(n));
        connect(a, &QAction::triggered, this, [this, n](bool on) {
            std::vector<std::string> t;
            for (const auto& x : m_lora.targets)
                if (x != n && x != "all-linear") t.push_back(x);
            if (on) t.push_back(n);
            setTargets(std::move(t), tr("LoRA targets"));
        });
    }
}

void LoraEditor::setTargetInfo(const LoraTargetInfo& info) {
    m_info = info;
    QStringList d;
    for (const auto& s : info.defaults) d << QString::fromStdString(s);
    m_targets->setPlaceholderText(d.isEmpty() ? tr("no PEFT default for this model: pick targets")
                                              : tr("default: %1").arg(d.join(QLatin1Char(','))));
}

void LoraEditor::setFineTuning(const LoraConfig& lora, const QuantConfig& quant) {
    m_updating = true;
    m_lora = lora;
    m_quant = quant;
    const LoraConfig shown = lora.rank > 0 ? lora : m_lastLora;
    const QuantConfig q = quant.enabled() ? quant : m_lastQuant;
    m_mode->setCurrentIndex(quant.enabled() ? QLora : lora.rank > 0 ? Lora : FullTraining);
    m_quantKind->setCurrentIndex(m_quantKind->findData(static_cast<int>(q.kind)));
    m_doubleQuant->setChecked(q.doubleQuant);
    m_computeDtype->setCurrentIndex(m_computeDtype->findData(static_cast<int>(q.computeDtype)));
    m_prepare->setChecked(q.prepare);
    m_rank->setSettingValue(static_cast<std::int64_t>(shown.rank));
    m_alpha->setSettingValue(shown.alpha);
    m_dropout->setSettingValue(shown.dropout);
    m_dora->setChecked(shown.dora);
    QStringList t;
    for (const auto& s : shown.targets) t << QString::fromStdString(s);
    m_targets->setText(t.join(QLatin1Char(',')));
    updateEnabled();
    m_updating = false;
}

QWidget* LoraEditor::firstField() const {
    return m_mode;
}

QWidget* LoraEditor::lastField() const {
    return m_prepare;
}

void LoraEditor::emitEdit(const QString& what, int mergeId, bool quantSwitchedOn) {
    updateEnabled();
    if (m_updating) return;
    emit fineTuningEdited(m_lora, m_quant, what, mergeId, quantSwitchedOn);
}

void LoraEditor::updateEnabled() {
    // LoRA's rows only while LoRA is chosen: full training keeps the form (and the window) as small as before
    const bool on = m_lora.rank > 0 || m_quant.enabled();
    m_form->setRowVisible(m_row, on);
    m_form->setRowVisible(m_targetRow, on);
    m_form->setRowVisible(m_quantRow, m_quant.enabled());
    m_form->setRowVisible(m_prepare, m_quant.enabled());
    m_doubleQuant->setEnabled(m_quant.kind != QuantKind::Int8);
    m_computeDtype->setEnabled(m_quant.kind != QuantKind::Int8);
}

} // namespace batchfit
