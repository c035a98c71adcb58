// MainWindow: the central area (chart, batch panel, tables) and the docks.
#include "batchfit/cli_command.h"
#include "batchfit/presets.h"
#include "gui/charts/chart_data.h"
#include "gui/charts/component_style.h"
#include "gui/charts/fit_heat_map.h"
#include "gui/charts/memory_chart.h"
#include "gui/charts/segments_view.h"
#include "gui/charts/timeline_chart.h"
#include "gui/document/document.h"
#include "gui/estimation/byte_format.h"
#include "gui/estimation/estimation_service.h"
#include "gui/files/file_controller.h"
#include "gui/files/report_exporter.h"
#include "gui/models/breakdown_model.h"
#include "gui/models/gpu_fit_model.h"
#include "gui/models/layer_activation_model.h"
#include "gui/models/layer_tree_model.h"
#include "gui/models/lever_model.h"
#include "gui/panels/batch_panel.h"
#include "gui/panels/eliding_label.h"
#include "gui/panels/layer_editor.h"
#include "gui/panels/layer_stack_panel.h"
#include "gui/panels/training_panel.h"
#include "gui/panels/what_if_panel.h"
#include "gui/panels/wrapping_label.h"
#include "gui/shell/app_settings.h"
#include "gui/shell/dock_scroll_area.h"
#include "gui/shell/language.h"
#include "gui/shell/main_window.h"
#include "gui/shell/shortcut_keeper.h"
#include "gui/shell/window_geometry.h"

#include <QAbstractItemView>
#include <QCheckBox>
#include <QClipboard>
#include <QCloseEvent>
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QScreen>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QThread>
#include <QToolButton>
#include <QUndoStack>
#include <QVBoxLayout>
#include <algorithm>
#include <cstdio>

namespace batchfit {

void MainWindow::buildCentral() {
    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    m_welcome = new QFrame(central);
    m_welcome->setFrameShape(QFrame::StyledPanel);
    m_welcome->setAutoFillBackground(true);
    QPalette wp = m_welcome->palette();
    wp.setColor(QPalette::Window, wp.color(QPalette::AlternateBase));
    m_welcome->setPalette(wp);
    auto* welcomeLayout = new QHBoxLayout(m_welcome);
    m_welcomeText = new ElidingLabel(m_welcome); // one line, so it never takes the chart's height
    m_welcomeText->setObjectName(QStringLiteral("welcomeText"));
    welcomeLayout->setContentsMargins(6, 2, 2, 2);
    auto* hint = m_welcomeText;
    auto* close = new QToolButton(m_welcome);
    close->setText(QStringLiteral("✕"));
    close->setAutoRaise(true);
    close->setToolTip(tr("Hide this hint"));
    welcomeLayout->addWidget(hint, 1);
    welcomeLayout->addWidget(close, 0, Qt::AlignVCenter);
    connect(close, &QToolButton::clicked, this, [this] {
        m_welcome->hide();
        m_settings->setWelcomeDismissed(true);
    });
    m_welcome->setVisible(!m_settings->welcomeDismissed());

    m_problem = new QLabel(central);
    m_problem->setWordWrap(true);
    m_problem->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_problem->setStyleSheet(
        QStringLiteral("QLabel { background: #b3261e; color: white; padding: 6px; border-radius: 3px; }"));
    m_problem->hide();

    m_chart = new MemoryChart(central);
    m_batchPanel = new BatchPanel(central);

    m_tabs = new QTabWidget(central);
    m_breakdown = new BreakdownModel(this);
    auto* breakdownView = new QTableView(m_tabs);
    breakdownView->setModel(m_breakdown);
    breakdownView->verticalHeader()->hide();
    breakdownView->horizontalHeader()->setSectionResizeMode(BreakdownModel::NameColumn, QHeaderView::Stretch);
    breakdownView->setSelectionBehavior(QAbstractItemView::SelectRows);
    breakdownView->setWordWrap(false);
    breakdownView->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    breakdownView->verticalHeader()->setDefaultSectionSize(breakdownView->fontMetrics().height() + 6);
    m_breakdownView = breakdownView;
    m_timeline = new TimelineChart(m_tabs);
    m_layerRows = new LayerActivationModel(this);
    auto* proxy = new QSortFilterProxyModel(this);
    proxy->setSourceModel(m_layerRows);
    proxy->setSortRole(LayerActivationModel::kValueRole);
    m_layerTableView = new QTableView(m_tabs);
    m_layerTableView->setModel(proxy);
    m_layerTableView->setSortingEnabled(true);
    m_layerTableView->sortByColumn(LayerActivationModel::SavedColumn, Qt::DescendingOrder);
    m_layerTableView->verticalHeader()->hide();
    m_layerTableView->horizontalHeader()->setSectionResizeMode(LayerActivationModel::PathColumn,
                                                               QHeaderView::Stretch);
    m_layerTableView->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    connect(m_layerRows, &QAbstractItemModel::modelReset, this, [this] {
        // Once per new model, not per slider tick (measuring every row is slow).
        for (int c = LayerActivationModel::OpColumn; c < LayerActivationModel::ColumnCount; ++c)
            m_layerTableView->resizeColumnToContents(c);
    });
    m_layerTableView->verticalHeader()->setDefaultSectionSize(m_layerTableView->fontMetrics().height() + 6);
    m_layerTableView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_tabs->addTab(breakdownView, tr("Brea&kdown"));
    m_tabs->addTab(m_timeline, tr("Step &timeline"));
    // PyTorch's memory viewer for the simulated step: the caching allocator's segments at a moment. No
    // Alt+letter: each letter of "Segments" is taken (the View menu has it).
    m_segments = new SegmentsView(m_tabs);
    m_tabs->addTab(m_segments, tr("Segments"));
    m_tabs->addTab(m_layerTableView, tr("Per-&layer activations"));
    // The question users of web calculators ask first: which GPU, and how large a batch on it.
    m_gpuFits = new GpuFitModel(this);
    m_gpuFitView = new QTableView(m_tabs);
    m_gpuFitView->setObjectName(QStringLiteral("gpuFitView"));
    m_gpuFitView->setModel(m_gpuFits);
    m_gpuFitView->verticalHeader()->hide();
    m_gpuFitView->horizontalHeader()->setSectionResizeMode(GpuFitModel::GpuColumn, QHeaderView::Stretch);
    m_gpuFitView->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_gpuFitView->verticalHeader()->setDefaultSectionSize(m_gpuFitView->fontMetrics().height() + 6);
    m_gpuFitView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_gpuFitView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_gpuFitView->setToolTip(tr("Every catalogue GPU at the current set-up. Double-click one to use it."));
    connect(m_gpuFitView, &QAbstractItemView::activated, this, [this](const QModelIndex& index) {
        if (const GpuFit* f = m_gpuFits->fit(index.row()))
            m_doc->editGpu(f->gpu, tr("GPU: %1").arg(QString::fromStdString(f->gpu.name)));
    });
    m_tabs->addTab(m_gpuFitView, tr("&Which GPUs fit"));
    // Sequence length, the other batch axis of a language model: the largest batch at each length.
    m_heatMap = new FitHeatMap(m_tabs);
    m_heatMap->setToolTip(tr("Micro-batch size against sequence length on the GPU chosen: each cell green "
                             "where it fits (darker: more of the usable memory), red where it does not."));
    m_tabs->addTab(m_heatMap, tr("Batch × se&quence"));
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] {
        if ((m_timelineDirty && m_tabs->currentWidget() == m_timeline) ||
            (m_segmentsDirty && m_tabs->currentWidget() == m_segments))
            updateTimeline();
    });

    auto* split = new QSplitter(Qt::Vertical, central);
    split->setObjectName(QStringLiteral("chartTablesSplitter"));
    m_split = split;
    auto* top = new QWidget(split);
    auto* topLayout = new QVBoxLayout(top);
    topLayout->setContentsMargins(0, 0, 0, 0);
    topLayout->addWidget(m_chart, 1);
    auto* legend = new WrappingLabel(ComponentStyle::legendHtml(), top);
    legend->setAlignment(Qt::AlignHCenter);
    legend->setToolTip(
        tr("Bottom to top: what is live at the peak of one training step, then the overheads."));
    // The axis scales sit by the chart (also in the View menu): far from fitting, a log memory axis keeps the
    // capacity line and the model's curve both readable.
    m_logBatchBox = new QCheckBox(tr("log batch axis"), top);
    m_logBatchBox->setObjectName(QStringLiteral("logBatchBox"));
    m_logBatchBox->setToolTip(tr("Batch sizes in powers of two (Ctrl+L)"));
    m_logMemoryBox = new QCheckBox(tr("log memory axis"), top);
    m_logMemoryBox->setObjectName(QStringLiteral("logMemoryBox"));
    m_logMemoryBox->setToolTip(tr("Memory in powers of two: a model far larger than the GPU stays readable "
                                  "(Ctrl+Shift+L)"));
    connect(m_logBatchBox, &QCheckBox::toggled, this, &MainWindow::setLogScale);
    connect(m_logMemoryBox, &QCheckBox::toggled, this, &MainWindow::setLogMemoryScale);
    auto* legendRow = new QHBoxLayout;
    legendRow->addWidget(legend, 1);
    legendRow->addWidget(m_logBatchBox);
    legendRow->addWidget(m_logMemoryBox);
    topLayout->addLayout(legendRow);
    topLayout->addWidget(m_batchPanel);
    // Tab goes down the page: chart, its axis boxes, then the batch.
    setTabOrder(m_chart, m_logBatchBox);
    setTabOrder(m_logBatchBox, m_logMemoryBox);
    setTabOrder(m_logMemoryBox, m_batchPanel->slider());
    split->addWidget(top);
    split->addWidget(m_tabs);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setChildrenCollapsible(false);
    layout->addWidget(m_welcome);
    layout->addWidget(m_problem);
    layout->addWidget(split, 1);
    setCentralWidget(wrapInModes(central));
}

void MainWindow::showHeatMapTab() {
    m_tabs->setCurrentWidget(m_heatMap);
}

bool MainWindow::showTab(const QString& name) {
    const std::pair<const char*, QWidget*> tabs[] = {
        {"breakdown", m_breakdownView}, {"timeline", m_timeline}, {"segments", m_segments},
        {"layers", m_layerTableView},   {"gpus", m_gpuFitView},   {"heatmap", m_heatMap}};
    for (const auto& [id, widget] : tabs)
        if (name == QLatin1String(id)) {
            m_tabs->setCurrentWidget(widget);
            return true;
        }
    return false;
}

void MainWindow::buildDocks() {
    auto dock = [this](const QString& title, const QString& name, QWidget* content, Qt::DockWidgetArea area) {
        auto* d = new QDockWidget(title, this);
        d->setObjectName(name);
        d->setWidget(content);
        d->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                       QDockWidget::DockWidgetClosable);
        addDockWidget(area, d);
        return d;
    };
    m_layers = new LayerStackPanel(m_doc, this);
    dock(tr("Layer Stack"), QStringLiteral("layerStackDock"), m_layers, Qt::LeftDockWidgetArea);
    m_training = new TrainingPanel(this);
    m_training->setObjectName(QStringLiteral("training"));
    // Scrolls rather than pushing the window past a 768-pixel screen (the Advanced fold, taller CJK rows).
    auto* trainingScroll = new DockScrollArea(m_training, this);
    dock(tr("Training Set-up"), QStringLiteral("trainingDock"), trainingScroll, Qt::RightDockWidgetArea);
    // The set-up keeps the height its rows need where the column has room; only on a screen too short for it
    // and the What-If dock below does it scroll.
    connect(trainingScroll, &DockScrollArea::contentResized, this, &MainWindow::fitTrainingDock);
    m_whatIf = new WhatIfPanel(this);
    dock(tr("What Would Help?"), QStringLiteral("whatIfDock"), m_whatIf, Qt::RightDockWidgetArea);
}

// The Training Set-up dock's least height: all its rows, or what the column leaves beside the What-If dock's
// own least height when that is less (then its rows scroll).
void MainWindow::fitTrainingDock() {
    auto* set = findChild<QDockWidget*>(QStringLiteral("trainingDock"));
    auto* help = findChild<QDockWidget*>(QStringLiteral("whatIfDock"));
    auto* scroll = set ? qobject_cast<DockScrollArea*>(set->widget()) : nullptr;
    if (!scroll || !scroll->widget()) return;
    const int rows = scroll->widget()->minimumSizeHint().height();
    int room = rows;
    if (!set->isFloating() && help && help->isVisible() && !help->isFloating() &&
        dockWidgetArea(help) == dockWidgetArea(set)) {
        const int column = set->height() + help->height();            // both docks and what they leave
        const int title = set->height() - scroll->height();           // the dock's title bar and frame
        room = column - help->minimumSizeHint().height() - title - 8; // 8: the separator between them
    }
    const int least = std::max(0, std::min(rows, room));
    if (scroll->minimumHeight() != least) scroll->setMinimumHeight(least);
}

} // namespace batchfit
