#include "gui/panels/what_if_panel.h"

#include "batchfit/what_if.h"
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
    m_apply = new QPushButton(tr("&Apply"), this);
    m_apply->setEnabled(false);
    m_apply->setToolTip(tr("Apply the selected change to the training set-up (undoable)."));
    layout->addWidget(m_status);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_apply, 0, Qt::AlignRight);

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

QString WhatIfPanel::statusText() const {
    return m_status->text();
}

void WhatIfPanel::applyCurrent() {
    const Lever* l = m_model->lever(m_view->currentIndex().row());
    if (l) emit applyRequested(*l);
}

} // namespace batchfit
