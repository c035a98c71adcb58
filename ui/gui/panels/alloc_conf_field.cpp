#include "gui/panels/alloc_conf_field.h"

#include "batchfit/allocator_config.h"
#include "batchfit/training_config.h"
#include "gui/charts/component_style.h"
#include "gui/panels/eliding_label.h"

#include <QBoxLayout>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QToolButton>
#include <QToolTip>

namespace batchfit {

namespace {

// A tint of the "does not fit" red over the field's own background: readable on light and dark.
void markRefused(QLineEdit* edit, bool refused) {
    QPalette p = edit->parentWidget()->palette();
    if (refused) {
        const QColor bad = ComponentStyle::oomColor(), base = p.color(QPalette::Base);
        const auto mix = [](int a, int b) { return (a * 3 + b) / 4; };
        p.setColor(QPalette::Base, QColor(mix(base.red(), bad.red()), mix(base.green(), bad.green()),
                                          mix(base.blue(), bad.blue())));
    }
    edit->setPalette(p);
    edit->setProperty("invalid", refused);
}

} // namespace

AllocConfField::AllocConfField(QFormLayout* form, QBoxLayout* toggleRow, QWidget* parent)
    : QWidget(parent), m_form(form) {
    hide(); // a logic holder: its widgets live in the form
    // Folded by default, so the set-up keeps its height on a 720-pixel screen.
    m_advanced = new QToolButton(parent);
    m_advanced->setObjectName(QStringLiteral("allocConfAdvanced"));
    m_advanced->setText(tr("Advanced"));
    m_advanced->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_advanced->setArrowType(Qt::RightArrow);
    m_advanced->setCheckable(true);
    m_advanced->setToolTip(tr("PyTorch's CUDA caching allocator settings (PYTORCH_CUDA_ALLOC_CONF)"));
    toggleRow->addWidget(m_advanced);
    m_edit = new QLineEdit(parent);
    m_edit->setObjectName(QStringLiteral("allocConfEdit"));
    m_edit->setPlaceholderText(QStringLiteral("expandable_segments:True"));
    m_edit->setClearButtonEnabled(true);
    m_tip =
        tr("PYTORCH_CUDA_ALLOC_CONF: the options of PyTorch's CUDA caching allocator, which BatchFit replays "
           "to find the reserved memory and the verdict, e.g. expandable_segments:True (less fragmentation) "
           "or max_split_size_mb:128. Empty: PyTorch's defaults. Press Enter to apply.");
    m_edit->setToolTip(m_tip);
    auto* label = new QLabel(tr("Allocator settings:"), parent); // no Alt+letter left that reads well
    label->setBuddy(m_edit);
    label->setToolTip(m_tip);
    form->addRow(label, m_edit);

    // One line across the form (the parser's messages list every option: whole in the tooltip, which also
    // pops up at the field when the text is refused), so the set-up keeps its height.
    m_message = new ElidingLabel(parent);
    m_message->setObjectName(QStringLiteral("allocConfProblem"));
    QPalette p = m_message->palette();
    p.setColor(QPalette::WindowText,
               ComponentStyle::readableOn(ComponentStyle::oomColor(), p.color(QPalette::Window)));
    m_message->setPalette(p);
    form->addRow(m_message);
    form->setRowVisible(m_message, false);

    // Variable-length batches: the earlier steps' sequence lengths (TrainingConfig::replaySequences).
    m_seqEdit = new QLineEdit(parent);
    m_seqEdit->setObjectName(QStringLiteral("replaySequencesEdit"));
    m_seqEdit->setPlaceholderText(tr("e.g. 896,512,256"));
    m_seqEdit->setClearButtonEnabled(true);
    m_seqTip =
        tr("Variable-length batches (dynamic padding): the sequence lengths of the steps before the one "
           "shown, in order, replayed through the caching allocator. The first is the first training "
           "step, then steady steps; the model's own length, the longest, comes last. The blocks "
           "shorter batches leave fragment the cache the long one meets. Empty: every step has the "
           "model's length. Press Enter to apply.");
    m_seqEdit->setToolTip(m_seqTip);
    auto* seqLabel = new QLabel(tr("Earlier batch lengths:"), parent);
    seqLabel->setBuddy(m_seqEdit);
    seqLabel->setToolTip(m_seqTip);
    form->addRow(seqLabel, m_seqEdit);

    // The epoch's last, smaller batch (TrainingConfig::epochSamples).
    m_epochEdit = new QLineEdit(parent);
    m_epochEdit->setObjectName(QStringLiteral("epochSamplesEdit"));
    m_epochEdit->setPlaceholderText(tr("e.g. 50000"));
    m_epochEdit->setClearButtonEnabled(true);
    m_epochTip = tr("The training samples in one epoch (len(dataset)). With DataLoader(drop_last=False) the "
                    "epoch's last batch holds what is left, and the next epoch's first batch meets the cache "
                    "it left: that smaller step is replayed before the one shown. With several GPUs each "
                    "gets its share, as DistributedSampler pads it. Empty: every batch is full. Press Enter "
                    "to apply.");
    m_epochEdit->setToolTip(m_epochTip);
    auto* epochLabel = new QLabel(tr("Samples per epoch:"), parent);
    epochLabel->setBuddy(m_epochEdit);
    epochLabel->setToolTip(m_epochTip);
    form->addRow(epochLabel, m_epochEdit);
    updateVisible();

    connect(m_advanced, &QToolButton::toggled, this, &AllocConfField::updateVisible);
    connect(m_edit, &QLineEdit::editingFinished, this, &AllocConfField::commit);
    connect(m_seqEdit, &QLineEdit::editingFinished, this, &AllocConfField::commitSequences);
    connect(m_epochEdit, &QLineEdit::editingFinished, this, &AllocConfField::commitEpoch);
    connect(m_epochEdit, &QLineEdit::textEdited, this, [this] {
        if (!m_epochProblem.isEmpty() && parseEpochSamples(m_epochEdit->text().toStdString())) {
            showEpochProblem({});
        }
    });
    connect(m_seqEdit, &QLineEdit::textEdited, this, [this] {
        if (!m_seqProblem.isEmpty() && parseReplaySequences(m_seqEdit->text().toStdString()))
            showSequencesProblem({});
    });
    // While refused, the mark goes as soon as the text is one the core accepts (applied on Enter).
    connect(m_edit, &QLineEdit::textEdited, this, [this] {
        if (m_problem.isEmpty()) return;
        if (check(nullptr)) showProblem({});
    });
}

void AllocConfField::setAllocConf(const QString& canonical) {
    m_current = canonical;
    if (m_edit->text() != canonical) m_edit->setText(canonical);
    showProblem({});
    if (!canonical.isEmpty()) m_advanced->setChecked(true); // a set-up with options shows them
}

void AllocConfField::setReplaySequences(const std::vector<std::int64_t>& seqs) {
    m_seqCurrent = QString::fromStdString(replaySequencesText(seqs));
    if (m_seqEdit->text() != m_seqCurrent) m_seqEdit->setText(m_seqCurrent);
    showSequencesProblem({});
    if (!seqs.empty()) m_advanced->setChecked(true);
}

namespace {
QString epochText(std::optional<std::int64_t> samples) {
    return samples ? QString::number(*samples) : QString();
}
} // namespace

void AllocConfField::setEpochSamples(std::optional<std::int64_t> samples) {
    m_epochCurrent = epochText(samples);
    if (m_epochEdit->text() != m_epochCurrent) m_epochEdit->setText(m_epochCurrent);
    showEpochProblem({});
    if (samples) m_advanced->setChecked(true);
}

void AllocConfField::commitEpoch() {
    const auto parsed = parseEpochSamples(m_epochEdit->text().toStdString());
    if (!parsed) { // kept, marked, the set-up unchanged
        showEpochProblem(QString::fromStdString(parsed.error().message));
        if (m_epochEdit->isVisible())
            QToolTip::showText(m_epochEdit->mapToGlobal(QPoint(0, m_epochEdit->height())),
                               m_epochEdit->toolTip(), m_epochEdit);
        return;
    }
    showEpochProblem({});
    const QString canonical = epochText(*parsed);
    m_epochEdit->setText(canonical);
    if (canonical == m_epochCurrent) return;
    m_epochCurrent = canonical;
    emit epochSamplesEdited(*parsed);
}

void AllocConfField::showEpochProblem(const QString& message) {
    m_epochProblem = message;
    markField(m_epochEdit, m_epochTip, message);
}

void AllocConfField::markField(QLineEdit* edit, const QString& tip, const QString& message) {
    edit->setToolTip(message.isEmpty()
                         ? tip
                         : QStringLiteral("<p><b>%1</b></p><p>%2</p>")
                               .arg(tr("Not applied: %1").arg(message).toHtmlEscaped(), tip.toHtmlEscaped()));
    if (!message.isEmpty()) m_advanced->setChecked(true);
    markRefused(edit, !message.isEmpty());
}

void AllocConfField::commitSequences() {
    const auto parsed = parseReplaySequences(m_seqEdit->text().toStdString());
    if (!parsed) { // kept, marked, the set-up unchanged
        showSequencesProblem(QString::fromStdString(parsed.error().message));
        if (m_seqEdit->isVisible())
            QToolTip::showText(m_seqEdit->mapToGlobal(QPoint(0, m_seqEdit->height())), m_seqEdit->toolTip(),
                               m_seqEdit);
        return;
    }
    showSequencesProblem({});
    const QString canonical = QString::fromStdString(replaySequencesText(*parsed));
    m_seqEdit->setText(canonical);
    if (canonical == m_seqCurrent) return;
    m_seqCurrent = canonical;
    emit replaySequencesEdited(*parsed);
}

void AllocConfField::showSequencesProblem(const QString& message) {
    m_seqProblem = message;
    markField(m_seqEdit, m_seqTip, message);
}

void AllocConfField::updateVisible() {
    const bool on = m_advanced->isChecked();
    m_advanced->setArrowType(on ? Qt::DownArrow : Qt::RightArrow);
    m_form->setRowVisible(m_edit, on);
    m_form->setRowVisible(m_seqEdit, on);
    m_form->setRowVisible(m_epochEdit, on);
    m_form->setRowVisible(m_message, on && !m_problem.isEmpty());
}

bool AllocConfField::check(QString* canonical) {
    const auto parsed = parseAllocConf(m_edit->text().trimmed().toStdString());
    if (!parsed) {
        if (canonical) showProblem(QString::fromStdString(parsed.error().message));
        return false;
    }
    if (canonical) *canonical = QString::fromStdString(allocConfText(*parsed));
    return true;
}

void AllocConfField::commit() {
    QString canonical;
    if (!check(&canonical)) { // the typed text stays, marked, and the set-up is unchanged
        if (m_edit->isVisible())
            QToolTip::showText(m_edit->mapToGlobal(QPoint(0, m_edit->height())), m_edit->toolTip(), m_edit);
        return;
    }
    showProblem({});
    if (canonical == m_current) {
        if (m_edit->text() != canonical) m_edit->setText(canonical); // e.g. "expandable_segments:true"
        return;
    }
    m_current = canonical;
    m_edit->setText(canonical);
    emit allocConfEdited(canonical);
}

void AllocConfField::showProblem(const QString& message) {
    m_problem = message;
    m_message->setFullText(message.isEmpty() ? QString() : tr("Not applied: %1").arg(message));
    markField(m_edit, m_tip, message);
    m_form->setRowVisible(m_message, m_advanced->isChecked() && !message.isEmpty());
}

} // namespace batchfit
