#include "gui/panels/lora_editor.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QSpinBox>
#include <QToolButton>

namespace batchfit {

namespace {
constexpr int kMergeRank = 301, kMergeAlpha = 302, kMergeDropout = 303, kMergeTargets = 304;

/// What switching to LoRA starts from: r=16, alpha=32, dropout 0.05 (the Hugging Face PEFT examples' choice;
/// PEFT's own defaults are r=8, alpha=8, dropout 0).
LoraConfig starterLora() {
    LoraConfig l;
    l.rank = 16;
    l.alpha = 32;
    l.dropout = 0.05;
    return l;
}
} // namespace

LoraEditor::LoraEditor(QFormLayout* form, QWidget* parent) : QWidget(parent), m_lastLora(starterLora()) {
    hide(); // a logic holder: its widgets live in the form
    m_mode = new QComboBox(parent);
    m_mode->setObjectName(QStringLiteral("fineTuningBox"));
    m_mode->addItem(tr("full training"));
    m_mode->addItem(tr("LoRA adapters"));
    m_mode->setToolTip(
        tr("LoRA (PEFT): small trainable adapters on the chosen linears, everything else frozen. "
           "Freeze layers by hand from the layer tree's Trains column."));
    form->addRow(tr("Fine-tuning:"), m_mode);

    auto* row = new QWidget(parent);
    auto* h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    m_rank = new QSpinBox(row);
    m_rank->setObjectName(QStringLiteral("loraRank"));
    m_rank->setRange(1, 4096);
    m_rank->setPrefix(QStringLiteral("r "));
    m_rank->setToolTip(tr("LoRA rank r: each adapted linear gets r × (in + out) trainable parameters"));
    m_alpha = new QDoubleSpinBox(row);
    m_alpha->setRange(0.01, 100000);
    m_alpha->setDecimals(2);
    m_alpha->setPrefix(QStringLiteral("α "));
    m_alpha->setToolTip(tr("lora_alpha: the adapter output is scaled by α / r (no effect on memory)"));
    m_dropout = new QDoubleSpinBox(row);
    m_dropout->setRange(0, 0.99);
    m_dropout->setDecimals(2);
    m_dropout->setSingleStep(0.05);
    m_dropout->setPrefix(tr("drop "));
    m_dropout->setToolTip(
        tr("lora_dropout: each adapted linear keeps its own dropout mask and dropped copy of "
           "its input; 0 keeps nothing"));
    h->addWidget(m_rank);
    h->addWidget(m_alpha);
    h->addWidget(m_dropout);
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

    connect(m_mode, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i == 1 && m_lora.rank == 0) {
            m_lora = m_lastLora;
            emitEdit(tr("LoRA r=%1").arg(m_lora.rank));
        } else if (i == 0 && m_lora.rank > 0) {
            m_lastLora = m_lora;
            m_lora = LoraConfig{};
            emitEdit(tr("Full training"));
        }
    });
    connect(m_rank, &QSpinBox::valueChanged, this, [this](int r) {
        if (m_lora.rank == 0) return;
        m_lora.rank = r;
        emitEdit(tr("LoRA r=%1").arg(r), kMergeRank);
    });
    connect(m_alpha, &QDoubleSpinBox::valueChanged, this, [this](double a) {
        if (m_lora.rank == 0) return;
        m_lora.alpha = a;
        emitEdit(tr("LoRA alpha %1").arg(a), kMergeAlpha);
    });
    connect(m_dropout, &QDoubleSpinBox::valueChanged, this, [this](double p) {
        if (m_lora.rank == 0) return;
        m_lora.dropout = p;
        emitEdit(tr("LoRA dropout %1").arg(p), kMergeDropout);
    });
    connect(m_targets, &QLineEdit::editingFinished, this, [this] {
        if (m_lora.rank == 0) return;
        std::vector<std::string> t;
        for (const QString& s : m_targets->text().split(QLatin1Char(','), Qt::SkipEmptyParts))
            if (!s.trimmed().isEmpty()) t.push_back(s.trimmed().toStdString());
        setTargets(std::move(t), tr("LoRA targets"));
    });
    setLora({});
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

void LoraEditor::setLora(const LoraConfig& lora) {
    m_updating = true;
    m_lora = lora;
    const LoraConfig shown = lora.rank > 0 ? lora : m_lastLora;
    m_mode->setCurrentIndex(lora.rank > 0 ? 1 : 0);
    m_rank->setValue(static_cast<int>(shown.rank));
    m_alpha->setValue(shown.alpha);
    m_dropout->setValue(shown.dropout);
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
    return m_targets;
}

void LoraEditor::emitEdit(const QString& what, int mergeId) {
    updateEnabled();
    if (m_updating) return;
    emit loraEdited(m_lora, what, mergeId);
}

void LoraEditor::updateEnabled() {
    // LoRA's rows only while LoRA is chosen: full training keeps the form (and the window) as small as before
    const bool on = m_lora.rank > 0;
    m_form->setRowVisible(m_row, on);
    m_form->setRowVisible(m_targetRow, on);
}

} // namespace batchfit
