#include "gui/panels/what_if_panel.h"

#include "batchfit/what_if.h"
#include "gui/estimation/byte_format.h"
#include "gui/models/lever_model.h"

#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

namespace batchfit {

WhatIfPanel::WhatIfPanel(QWidget* parent) : QWidget(parent) {
    // In a scroll area: on a short screen (1280 x 720) the status, the changes and the plan for a batch far
    // out of memory do not all fit the tab; the user scrolls instead of reading a cut line.
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* content = new QWidget(scroll);
    scroll->setWidget(content);
    outer->addWidget(scroll);
    auto* layout = new QVBoxLayout(content);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    m_model = new LeverModel(this);
    m_view = new QTableView(this);
    m_view->setModel(m_model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->verticalHeader()->hide();
    m_view->horizontalHeader()->setSectionResizeMode(LeverModel::TitleColumn, QHeaderView::Stretch);
    m_view->setWordWrap(true);
    m_view->setTextElideMode(Qt::ElideNone);
    m_view->setToolTip(
        tr("Changes you have not made yet, best first. Double-click or press Apply to make one "
           "(Ctrl+Z undoes it)."));
    m_apply = new QPushButton(tr("Appl&y"), this);
    m_apply->setEnabled(false);
    m_apply->setToolTip(tr("Apply the selected change to the training set-up (undoable)."));
    m_planText = new QLabel(this);
    m_planText->setWordWrap(true);
    m_planText->setObjectName(QStringLiteral("planText"));
    m_planText->hide();
    m_applyPlan = new QPushButton(tr("Apply &Together"), this);
    m_applyPlan->setToolTip(tr("Make every change of the plan in one step (Ctrl+Z undoes it)."));
    m_applyPlan->hide();
    layout->addWidget(m_status);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_apply, 0, Qt::AlignRight);
    layout->addWidget(m_planText);
    layout->addWidget(m_applyPlan, 0, Qt::AlignRight);
    connect(m_applyPlan, &QPushButton::clicked, this, [this] {
        if (m_planLever) emit applyRequested(*m_planLever);
    });

    connect(m_apply, &QPushButton::clicked, this, &WhatIfPanel::applyCurrent);
    connect(m_view, &QTableView::activated, this, &WhatIfPanel::applyCurrent);
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] { m_apply->setEnabled(false); });
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) { m_apply->setEnabled(current.isValid()); });
}

void WhatIfPanel::setPending() {
    m_status->setText(tr("Working out what would help…"));
}

void WhatIfPanel::setUnavailable(const QString& reason) {
    m_status->setText(reason);
    m_model->setLevers({});
    clearPlan();
}

void WhatIfPanel::setLevers(std::vector<Lever> levers, std::int64_t currentMaxBatch) {
    const std::size_t all = levers.size();
    QString status;
    if (currentMaxBatch <= 0 && all > 0) {
        // Nothing fits: every change, ranked by what it saves at batch 1 (the core ranks them so), so that
        // the user sees how far each gets and which to combine.
        const bool any =
            std::any_of(levers.begin(), levers.end(), [](const Lever& l) { return l.maxBatch > 0; });
        status =
            any ? tr("Not even batch 1 fits. Every change BatchFit knows, those that make it fit first, then "
                     "by the memory each saves at batch 1.")
                : tr("Not even batch 1 fits, and no single change is enough. Every change BatchFit knows, "
                     "by the memory each saves at batch 1; the plan below combines those that come closest.");
        m_status->setText(status);
        m_model->setLevers(std::move(levers), true);
        finishLevers();
        return;
    }
    std::erase_if(levers, [](const Lever& l) { return !leverHelps(l); }); // ×1.00 and "still does not fit"
    const auto hidden = static_cast<int>(all - levers.size());
    if (all == 0)
        status = tr("Every lever BatchFit knows is already pulled.");
    else if (levers.empty())
        status = tr("Largest batch now: %1. None of the %n changes BatchFit knows gains 1% or more.", nullptr,
                    hidden)
                     .arg(currentMaxBatch);
    else {
        status = tr("Largest batch now: %1. Each change below is evaluated by the estimator on its own.")
                     .arg(currentMaxBatch);
        if (hidden > 0)
            status +=
                QLatin1Char(' ') + tr("%n change(s) that gain less than 1% are not shown.", nullptr, hidden);
    }
    m_status->setText(status);
    m_model->setLevers(std::move(levers), false);
    finishLevers();
}

void WhatIfPanel::finishLevers() {
    m_view->resizeColumnToContents(LeverModel::BatchColumn);
    m_view->resizeColumnToContents(LeverModel::GainColumn);
    m_view->resizeRowsToContents();
    if (m_model->rowCount() > 0) m_view->setCurrentIndex(m_model->index(0, 0));
}

void WhatIfPanel::setPlan(const FitPlan& plan, std::int64_t target,
                          const std::optional<GpuFit>& smallestGpu) {
    m_planLever.reset();
    QString text;
    if (plan.steps.size() >= 2 || (!plan.steps.empty() && !plan.reachesTarget)) {
        QStringList titles;
        for (const Lever& l : plan.steps) titles << LeverModel::title(l);
        // Micro-batches, as the slider's: gradient accumulation is not part of a plan.
        if (plan.reachesTarget)
            text = tr("Together, %1 make batch %2 fit (largest %3).")
                       .arg(titles.join(QStringLiteral(" + ")))
                       .arg(target)
                       .arg(plan.maxMicroBatch);
        else if (plan.maxMicroBatch > 0)
            text = tr("Even together, %1 do not make batch %2 fit (largest %3).")
                       .arg(titles.join(QStringLiteral(" + ")))
                       .arg(target)
                       .arg(plan.maxMicroBatch);
        else
            text = tr("Even together, %1 do not make batch 1 fit; they come closest: with them batch 1 needs "
                      "%2.")
                       .arg(titles.join(QStringLiteral(" + ")), ByteFormat::bytes(plan.requiredAtOneBytes));
        Lever combined = plan.steps.back();
        combined.id = "plan";
        combined.title = titles.join(QStringLiteral(" + ")).toStdString();
        combined.baselineMaxBatch = plan.steps.front().baselineMaxBatch;
        if (plan.maxMicroBatch > plan.startMaxMicroBatch) m_planLever = std::move(combined);
    } else if (plan.steps.empty() && !plan.reachesTarget) {
        text = tr("No change BatchFit knows makes batch %1 fit.").arg(target);
    }
    if (!plan.reachesTarget) {
        const QString gpu =
            smallestGpu ? tr("The smallest GPU in the catalogue that fits batch %1 as set up now: %2 (%3).")
                              .arg(target)
                              .arg(QString::fromStdString(smallestGpu->gpu.name),
                                   ByteFormat::bytes(smallestGpu->gpu.memoryBytes))
                        : tr("No GPU in the catalogue fits batch %1 as set up now.").arg(target);
        text = text.isEmpty() ? gpu : text + QLatin1Char(' ') + gpu;
    }
    m_planText->setText(text);
    m_planText->setVisible(!text.isEmpty());
    m_applyPlan->setVisible(m_planLever.has_value());
}

void WhatIfPanel::clearPlan() {
    m_planLever.reset();
    m_planText->clear();
    m_planText->hide();
    m_applyPlan->hide();
}

QString WhatIfPanel::planText() const {
    return m_planText->isVisible() ? m_planText->text() : QString();
}

QString WhatIfPanel::statusText() const {
    return m_status->text();
}

void WhatIfPanel::applyCurrent() {
    const Lever* l = m_model->lever(m_view->currentIndex().row());
    if (l) emit applyRequested(*l);
}

} // namespace batchfit
