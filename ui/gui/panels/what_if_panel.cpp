#include "gui/panels/what_if_panel.h"

#include "batchfit/what_if.h"
#include "gui/estimation/byte_format.h"
#include "gui/models/lever_model.h"

#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

namespace batchfit {

WhatIfPanel::WhatIfPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
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
    std::erase_if(levers, [](const Lever& l) { return !leverHelps(l); }); // ×1.00 and "still does not fit"
    const auto hidden = static_cast<int>(all - levers.size());
    QString status;
    if (all == 0)
        status = tr("Every lever BatchFit knows is already pulled.");
    else if (levers.empty() && currentMaxBatch <= 0)
        status = tr("No single change makes batch 1 fit (%n tried). A smaller model, fine-tuning fewer "
                    "parameters or a larger GPU is needed.",
                    nullptr, hidden);
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
    m_model->setLevers(std::move(levers));
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
        if (plan.reachesTarget)
            text = tr("Together, %1 make batch %2 fit (largest %3).")
                       .arg(titles.join(QStringLiteral(" + ")))
                       .arg(target)
                       .arg(plan.maxBatch);
        else
            text = tr("Even together, %1 do not make batch %2 fit (largest %3).")
                       .arg(titles.join(QStringLiteral(" + ")))
                       .arg(target)
                       .arg(plan.maxBatch);
        Lever combined = plan.steps.back();
        combined.id = "plan";
        combined.title = titles.join(QStringLiteral(" + ")).toStdString();
        combined.baselineMaxBatch = plan.steps.front().baselineMaxBatch;
        if (plan.maxBatch > combined.baselineMaxBatch) m_planLever = std::move(combined);
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
