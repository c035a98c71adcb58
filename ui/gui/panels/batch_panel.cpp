#include "gui/panels/batch_panel.h"

#include "gui/charts/component_style.h"
#include "gui/estimation/byte_format.h"
#include "gui/panels/batch_spin_box.h"
#include "gui/panels/budget_bar.h"
#include "gui/panels/eliding_label.h"

#include <QGridLayout>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <algorithm>
#include <cmath>
#include <limits>

namespace batchfit {

namespace {
constexpr int kLogStepsPerOctave = 64;
} // namespace

BatchPanel::BatchPanel(QWidget* parent) : QWidget(parent) {
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);

    auto* label = new QLabel(tr("&Batch size:"), this);
    m_slider = new QSlider(Qt::Horizontal, this);
    m_slider->setToolTip(tr("Micro-batch size: drag to see the memory at each batch size."));
    m_slider->setPageStep(16);
    m_spin = new BatchSpinBox(this);
    m_spin->setRange(1, std::numeric_limits<int>::max());
    m_spin->setAccelerated(true);
    m_spin->setToolTip(m_slider->toolTip());
    // Wide enough for the largest batch it takes (ten digits): a typed 2147483647 is shown whole.
    m_spin->setMinimumWidth(
        m_spin->fontMetrics().horizontalAdvance(QString::number(m_spin->maximum()) + QLatin1Char('0')) + 30);
    label->setBuddy(m_spin);
    m_maxButton =
        new QPushButton(QIcon(QStringLiteral(":/icons/max-batch.svg")), tr("Largest batch that fits"), this);
    m_maxButton->setToolTip(tr("Jump to the largest batch size that fits the usable memory (Ctrl+M)."));
    m_maxLabel = new QLabel(this);
    m_maxLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_maxLabel->setWordWrap(true);
    m_maxLabel->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    // One line of fixed height for the verdict and for a problem in its place: a long message (the "2^62
    // bytes" one) is cut with "…" and whole in the tooltip, so nothing below moves.
    m_verdict = new ElidingLabel(this);
    m_bigFont = m_verdict->font();
    m_bigFont.setPointSizeF(m_bigFont.pointSizeF() * 1.35);
    m_bigFont.setBold(true);
    m_verdict->setFont(m_bigFont);
    m_verdict->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_verdict->setPlainToolTip(verdictTip());
    m_bar = new BudgetBar(this);

    grid->addWidget(label, 0, 0);
    grid->addWidget(m_slider, 0, 1);
    grid->addWidget(m_spin, 0, 2);
    grid->addWidget(m_maxButton, 0, 3);
    // The verdict has the panel's whole width, on one line; the largest batch sits under the budget bar.
    grid->addWidget(m_verdict, 1, 0, 1, 4);
    grid->addWidget(m_bar, 2, 0, 1, 4);
    grid->addWidget(m_maxLabel, 3, 0, 1, 4);
    grid->setColumnStretch(1, 1);
    m_verdict->setFixedHeight(QFontMetrics(m_bigFont).height());

    setTabOrder(m_slider, m_spin);
    setTabOrder(m_spin, m_maxButton);

    connect(m_slider, &QSlider::valueChanged, this, &BatchPanel::onSlider);
    connect(m_spin, &QSpinBox::valueChanged, this, &BatchPanel::onSpin);
    connect(m_spin, &BatchSpinBox::refused, this, &BatchPanel::showRefused);
    connect(m_maxButton, &QPushButton::clicked, this, &BatchPanel::maxBatchRequested);
    setSliderRange(m_rangeMax, false);
}

int BatchPanel::sliderPosition(std::int64_t batch) const {
    if (!m_log) return static_cast<int>(std::clamp<std::int64_t>(batch, 1, m_rangeMax));
    return static_cast<int>(
        std::lround(std::log2(static_cast<double>(std::max<std::int64_t>(batch, 1))) * kLogStepsPerOctave));
}

std::int64_t BatchPanel::batchAtPosition(int position) const {
    if (!m_log) return position;
    return std::llround(std::exp2(static_cast<double>(position) / kLogStepsPerOctave));
}

void BatchPanel::setSliderRange(std::int64_t maxBatch, bool log) {
    m_updating = true;
    m_rangeMax = std::max<std::int64_t>(maxBatch, 2);
    m_log = log;
    if (m_log)
        m_slider->setRange(0, sliderPosition(m_rangeMax));
    else
        m_slider->setRange(
            1, static_cast<int>(std::min<std::int64_t>(m_rangeMax, std::numeric_limits<int>::max())));
    // An arrow press on the log axis moves about 9% (8 presses an octave), and always by one batch at least.
    m_slider->setSingleStep(m_log ? kLogStepsPerOctave / 8 : 1);
    m_slider->setPageStep(m_log ? kLogStepsPerOctave / 2 : std::max(1, static_cast<int>(m_rangeMax / 32)));
    m_slider->setValue(sliderPosition(m_batch));
    m_updating = false;
}

void BatchPanel::setBatch(std::int64_t batch) {
    m_updating = true;
    m_batch = std::clamp<std::int64_t>(batch, 1, std::numeric_limits<int>::max());
    m_spin->setValue(static_cast<int>(m_batch));
    m_slider->setValue(sliderPosition(m_batch));
    m_updating = false;
}

void BatchPanel::onSlider(int position) {
    if (m_updating) return;
    std::int64_t b = batchAtPosition(position);
    const int here = sliderPosition(m_batch);
    // Small batches are far apart on the log axis: a step that rounds back to the same batch goes one
    // further.
    if (m_log && b == m_batch && position != here)
        b = std::clamp<std::int64_t>(m_batch + (position > here ? 1 : -1), 1, m_rangeMax);
    if (b == m_batch) return;
    m_batch = b;
    m_updating = true;
    m_spin->setValue(static_cast<int>(b));
    if (m_log) m_slider->setValue(sliderPosition(b)); // the handle sits on the batch shown
    m_updating = false;
    emit batchChanged(b);
}

void BatchPanel::onSpin(int value) {
    if (m_updating || value == m_batch) return;
    m_batch = value;
    m_updating = true;
    m_slider->setValue(sliderPosition(value));
    m_updating = false;
    emit batchChanged(value);
}

void BatchPanel::showRefused(const QString& typed) {
    m_maxLabel->setText(
        tr("'%1' is not a batch size (a whole number from 1 to %2); the batch stays %3.")
            .arg(typed, QLocale().toString(m_spin->maximum()), QLocale().toString(m_spin->value())));
    QPalette p = m_maxLabel->palette();
    p.setColor(QPalette::WindowText, ComponentStyle::oomColor());
    m_maxLabel->setPalette(p);
}

QSpinBox* BatchPanel::spinBox() const {
    return m_spin;
}

QString BatchPanel::noteText() const {
    return m_maxLabel->text();
}

void BatchPanel::setMaxBatch(const MaxBatch& m) {
    m_maxLabel->setPalette(palette());
    if (m.largest <= 0) {
        m_maxLabel->setText(tr("even batch 1 does not fit"));
        m_maxButton->setEnabled(false);
        return;
    }
    m_maxButton->setEnabled(true);
    QString text =
        m.largestMultipleOf8 > 0
            ? tr("largest: %1 · largest multiple of 8: %2").arg(m.largest).arg(m.largestMultipleOf8)
            : tr("largest: %1").arg(m.largest);
    if (m.capped) text = tr("fits at every batch up to %1").arg(m.largest);
    m_maxLabel->setText(text);
}

void BatchPanel::showVerdict(const Estimate& estimate, const Verdict& verdict, std::int64_t sequence) {
    m_verdict->setFont(m_bigFont);
    QString text = ByteFormat::verdict(verdict, estimate.requiredBytes);
    // data parallelism: the figures are one GPU's (the most loaded rank), the batch its micro-batch
    if (estimate.parallel.gpus > 1) text = tr("%1 per GPU").arg(text);
    m_verdict->setFullText(
        sequence > 0 ? tr("%1 at sequence %2").arg(text, QLocale().toString(static_cast<qlonglong>(sequence)))
                     : text);
    QPalette p = m_verdict->palette();
    const QColor c = verdict.fits ? ComponentStyle::fitsColor() : ComponentStyle::oomColor();
    p.setColor(QPalette::WindowText, ComponentStyle::readableOn(c, palette().color(QPalette::Window)));
    m_verdict->setPalette(p);
    // Out of memory on the whole GPU: the replay's first failing allocation, in PyTorch's own words.
    // (rich text, so the long message wraps in the tooltip)
    m_verdict->setPlainToolTip(
        verdict.oom ? QStringLiteral("<p>%1</p><p>%2<br><tt>%3</tt></p>")
                          .arg(verdictTip().toHtmlEscaped(), tr("PyTorch would stop with:").toHtmlEscaped(),
                               QString::fromStdString(verdict.oom->message).toHtmlEscaped())
                    : verdictTip());
    m_bar->setBudget(estimate, verdict);
}

QString BatchPanel::verdictTip() {
    return tr("What the GPU shows at the peak of one training step (nvidia-smi), against its "
              "capacity. It fits when it stays below the usable memory (capacity minus margin).");
}

void BatchPanel::showProblem(const QString& message) {
    QFont f = font();
    f.setBold(true);
    m_verdict->setFont(f);
    m_verdict->setFullText(message);
    m_verdict->setPlainToolTip(verdictTip());
    m_verdict->setPalette(palette());
    m_bar->clear();
}

} // namespace batchfit
