#include "gui/shell/main_window.h"

#include "batchfit/cli_command.h"
#include "batchfit/lora_targets.h"
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
#include "gui/shell/app_settings.h"
#include "gui/shell/language.h"
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
#include <QLocale>
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

// Icons live in resources/batchfit.qrc, compiled into the static library: it must be registered explicitly.
static void initIconResources() {
    static const bool done = [] {
        Q_INIT_RESOURCE(batchfit);
        return true;
    }();
    (void)done;
}

namespace batchfit {

MainWindow::MainWindow(AppSettings* settings, QWidget* parent) : QMainWindow(parent), m_settings(settings) {
    initIconResources();
    setObjectName(QStringLiteral("MainWindow"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/batchfit.svg")));
    m_doc = new Document(this);
    m_service = new EstimationService(this);
    m_files = new FileController(m_doc, m_settings, this);
    buildCentral();
    buildDocks();
    buildMenus();
    connectServing();
    new ShortcutKeeper(this); // Ctrl+E and the other window shortcuts work from the batch box too
    // Each table and tree is one Tab stop: arrow keys move inside it, Tab moves on (it used to walk the
    // cells, so the what-if Apply button was never reached).
    for (QAbstractItemView* view : findChildren<QAbstractItemView*>()) view->setTabKeyNavigation(false);

    m_modelInfo = new QLabel(this);
    m_modelInfo->setObjectName(QStringLiteral("modelInfo"));
    m_busy = new QLabel(tr("estimating…"), this);
    m_busy->hide();
    statusBar()->addWidget(m_modelInfo, 1);
    statusBar()->addPermanentWidget(m_busy);

    m_requestTimer.setSingleShot(true);
    m_requestTimer.setInterval(0); // coalesces the signals of one edit into one request
    connect(&m_requestTimer, &QTimer::timeout, this,
            [this] { // the chart's range covers the batch shown and every measured point
                m_service->request(m_doc->model(), m_doc->config(), m_doc->gpu(),
                                   std::max(m_doc->batch(), m_chart->measuredMaxBatch()));
            });
    m_timelineTimer.setSingleShot(true);
    m_timelineTimer.setInterval(60); // the timeline follows the slider once it rests
    connect(&m_timelineTimer, &QTimer::timeout, this, &MainWindow::updateTimeline);
    m_layerTimer.setSingleShot(true);
    m_layerTimer.setInterval(40); // per-layer columns follow a drag at most 25 times a second
    connect(&m_layerTimer, &QTimer::timeout, this, &MainWindow::updateLayerFigures);

    connect(m_doc, &Document::modelChanged, this, &MainWindow::requestEstimate);
    connect(m_doc, &Document::modelReplaced, this, [this] { m_resetBatchPending = true; });
    connect(m_doc, &Document::batchRequested, this, &MainWindow::setBatch); // a file's saved batch stays
    connect(m_doc, &Document::configChanged, this, [this] {
        m_training->setConfig(m_doc->config());
        m_training->setLoraTargetInfo(loraTargetInfo(m_doc->model()));
        requestEstimate();
    });
    connect(m_doc, &Document::gpuChanged, this, [this] {
        m_training->setGpu(m_doc->gpu());
        requestEstimate();
    });
    connect(m_doc, &Document::modifiedChanged, this, &MainWindow::updateTitle);
    connect(m_doc, &Document::fileChanged, this, &MainWindow::updateTitle);
    connect(m_doc, &Document::modelChanged, this, &MainWindow::updateTitle); // the welcome names the model
    connect(m_doc, &Document::modelChanged, this,
            [this] { m_training->setLoraTargetInfo(loraTargetInfo(m_doc->model())); });
    connect(m_training, &TrainingPanel::configEdited, m_doc, &Document::editConfig);
    connect(m_training, &TrainingPanel::gpuEdited, this, [this](const GpuSpec& gpu) {
        m_doc->editGpu(gpu, tr("GPU: %1").arg(QString::fromStdString(gpu.name)));
    });
    connect(m_service, &EstimationService::resultReady, this, &MainWindow::onResult);
    connect(m_service, &EstimationService::resultFailed, this, &MainWindow::onFailure);
    connect(m_service, &EstimationService::busyChanged, m_busy, &QWidget::setVisible);
    connect(m_service, &EstimationService::leversChanged, this, [this] {
        m_whatIf->setLevers(m_service->levers(), m_result ? m_result->maxBatch.largest : 0);
        showPlan();
        m_gpuFits->setFits(m_service->gpuFits(), m_doc->batch(), m_doc->gpu().id);
        if (m_result && m_result->sequence > 0) {
            if (m_service->fitMap())
                m_heatMap->setMap(*m_service->fitMap(), m_result->sequence);
            else
                m_heatMap->showExplanation(tr("No batch × sequence map: %1").arg(m_service->fitMapError()));
        }
    });
    connect(m_whatIf, &WhatIfPanel::applyRequested, this, [this](const Lever& l) {
        m_doc->editConfig(l.config, tr("Apply: %1").arg(LeverModel::title(l)));
    });
    connect(m_batchPanel, &BatchPanel::batchChanged, this, &MainWindow::showBatch);
    connect(m_batchPanel, &BatchPanel::maxBatchRequested, this, &MainWindow::goToMaxBatch);
    connect(m_chart, &MemoryChart::batchPicked, this, &MainWindow::setBatch);
    connect(m_chart, &MemoryChart::measurementsChanged, this, [this] {
        widenChartTo(m_chart->measuredMaxBatch());
        if (m_chart->measuredPointsCrowded()) // e.g. resnet18's points on an 80 GiB card
            statusBar()->showMessage(
                tr("The measured points sit at the bottom of this memory axis: the log memory "
                   "axis beside the chart spreads them."),
                10000);
    });
    connect(m_files, &FileController::recentFilesChanged, this, &MainWindow::rebuildRecentMenu);
    updateTitle();
}

MainWindow::~MainWindow() = default;

void MainWindow::requestEstimate() {
    m_requestTimer.start();
}

void MainWindow::onResult() {
    m_result = m_service->current();
    m_stale = false;
    m_problem->hide();
    m_layers->editor()->setModelProblem({});
    m_layers->treeModel()->setProblem({});
    m_chart->setStale(false);
    m_chartRange = m_result->chartMax;
    m_chart->setModelName(QString::fromStdString(m_doc->model().name));
    m_chart->setResult(*m_result);
    m_batchPanel->setSliderRange(m_chartRange, m_chart->logScale());
    m_batchPanel->setMaxBatch(m_result->maxBatch);
    if (!m_service->leversReady()) m_whatIf->setPending();
    if (m_result->sequence <= 0)
        m_heatMap->showExplanation(
            tr("The batch × sequence map is for language models, whose input is a sequence of token ids "
               "(a Hugging Face import, the GPT-2 and Llama presets). This model's input is %1 %2: its "
               "sequence length is not a batch axis.")
                .arg(QString::fromStdString(shapeToString(m_doc->model().inputShape)),
                     QString::fromStdString(std::string(dtypeName(m_doc->model().inputDtype)))));
    else if (!m_service->leversReady())
        m_heatMap->setPending();
    const std::uint64_t params = m_result->estimator->parameterCount();
    const std::uint64_t trainable = m_result->estimator->trainableParameterCount();
    const QString paramText = trainable == params
                                  ? tr("%1 parameters").arg(ByteFormat::count(params))
                                  : tr("%1 of %2 parameters trainable")
                                        .arg(ByteFormat::count(trainable), ByteFormat::count(params));
    m_modelInfo->setText(
        tr("%1 · %2 · %3 · lowered in %4 ms")
            .arg(QString::fromStdString(m_doc->model().name), paramText,
                 m_result->gpu.id == "custom"
                     ? tr("custom %1 GiB").arg(ByteFormat::gibNumber(m_result->gpu.memoryBytes))
                     : QString::fromStdString(m_result->gpu.name))
            .arg(m_result->lowerSeconds * 1000.0, 0, 'f', 1));
    m_timelineDirty = m_segmentsDirty = true;
    if (m_resetBatchPending) { // a new model: keep the batch if it fits, else the largest that does (or 1)
        m_resetBatchPending = false;
        const auto v = m_result->estimator->verdict(m_doc->batch(), m_result->gpu.memoryBytes);
        if (v && !v->fits) {
            const MaxBatch& m = m_result->maxBatch;
            m_doc->setBatch(m.largestMultipleOf8 > 0 ? m.largestMultipleOf8
                                                     : std::max<std::int64_t>(m.largest, 1));
            m_batchPanel->setBatch(m_doc->batch()); // no new request: the plan follows the batch (showPlan)
        }
    }
    showBatch(m_doc->batch());
}

void MainWindow::onFailure(const QString& message) {
    m_problem->setText(
        tr("The model or its training set-up has a problem, so the chart shows the last valid estimate: %1")
            .arg(message));
    m_problem->show();
    m_layers->editor()->setModelProblem(message);
    m_layers->treeModel()->setProblem(message); // the layer it names turns red in the stack
    m_stale = true;
    m_chart->setStale(true);
    m_batchPanel->showProblem(tr("no estimate: the model or its set-up has a problem"));
    m_shown.reset();
    m_breakdown->clear();
    m_layers->treeModel()->setEstimate(nullptr);
    m_layerRows->clear();
    m_timeline->clear();
    m_segments->clear();
    m_whatIf->setUnavailable(tr("Fix the model first: the levers are evaluated on a valid model."));
    m_gpuFits->clear();
}

void MainWindow::setBatch(std::int64_t batch) {
    m_resetBatchPending = false; // a batch asked for after a load stays
    m_batchPanel->setBatch(batch);
    showBatch(m_batchPanel->batch());
}

void MainWindow::goToMaxBatch() {
    if (m_result && m_result->maxBatch.largest > 0) setBatch(m_result->maxBatch.largest);
}

void MainWindow::widenChartTo(std::int64_t batch) {
    if (!m_result || m_stale || batch <= m_chartRange || m_chartRange >= ChartData::kMaxRange) return;
    EstimationResult wider = *m_result;
    wider.chartMax = ChartData::range(wider.maxBatch, batch);
    wider.sweep = ChartData::sample(*wider.estimator, wider.chartMax, wider.gpu.memoryBytes);
    m_chartRange = wider.chartMax;
    m_chart->setResult(wider);
    m_batchPanel->setSliderRange(m_chartRange, m_chart->logScale());
}

void MainWindow::showBatch(std::int64_t batch) {
    m_doc->setBatch(batch);
    if (!m_result) return;
    if (m_stale) { // keep the problem on screen; only the marker follows
        m_chart->setBatch(batch);
        return;
    }
    const Estimator& est = *m_result->estimator;
    widenChartTo(batch); // typed into the spin box past the chart's right edge
    m_chart->setBatch(batch);
    auto e = est.estimate(batch);
    auto v = est.verdict(batch, m_result->gpu.memoryBytes);
    if (!e || !v) {
        m_shown.reset();
        // The core's words are English: the sentence around them is translated.
        m_batchPanel->showProblem(
            tr("No estimate at batch %1: %2")
                .arg(QLocale().toString(static_cast<qlonglong>(batch)),
                     QString::fromStdString(e ? v.error().message : e.error().message)));
        m_breakdown->clear();
        m_layers->treeModel()->setEstimate(nullptr);
        m_layerRows->clear();
        m_timeline->clear();
        m_segments->clear();
        return;
    }
    m_batchPanel->showVerdict(*e, *v, m_result->sequence);
    if (m_gpuFits->rowCount() > 0) // the "batch shown" column follows the slider
        m_gpuFits->setFits(m_service->gpuFits(), batch, m_doc->gpu().id);
    if (m_service->leversReady()) showPlan(); // the plan's text follows the slider too
    m_breakdown->setEstimate(*e, &*v);
    e->layers.clear();
    m_shown = std::move(*e);
    m_shownOom = v->oom;
    if (!m_layerTimer.isActive()) m_layerTimer.start();
    m_timelineDirty = m_segmentsDirty = true;
    if (m_tabs->currentWidget() == m_timeline || m_tabs->currentWidget() == m_segments)
        m_timelineTimer.start();
}

void MainWindow::showPlan() {
    const std::int64_t batch = m_doc->batch();
    m_whatIf->setPlan(m_service->planFor(batch), batch, m_service->smallestGpu(batch));
}

void MainWindow::updateLayerFigures() {
    if (!m_result || m_stale) return;
    auto e = m_result->estimator->estimate(m_doc->batch());
    if (!e) return;
    m_layers->treeModel()->setEstimate(&*e);
    m_layerRows->setLayers(std::move(e->layers));
}

void MainWindow::updateTimeline() {
    if (!m_result || m_stale) return;
    if (m_tabs->currentWidget() == m_segments) { // the caching allocator's replay at the batch shown
        m_segmentsDirty = false;
        m_segments->setStep(m_result->estimator, m_doc->batch(), m_shownOom);
        return;
    }
    if (m_tabs->currentWidget() != m_timeline) return;
    m_timelineDirty = false;
    auto e = m_result->estimator->estimate(m_doc->batch(), true);
    if (e)
        m_timeline->setEstimate(*e);
    else
        m_timeline->clear();
}

void MainWindow::setLogMemoryScale(bool log) {
    m_chart->setLogMemoryScale(log);
    if (m_logMemoryAction) m_logMemoryAction->setChecked(log);
    if (m_logMemoryBox) m_logMemoryBox->setChecked(log);
}

void MainWindow::setLogScale(bool log) {
    m_chart->setLogScale(log);
    if (m_logAction) m_logAction->setChecked(log);
    if (m_logBatchBox) m_logBatchBox->setChecked(log);
    m_batchPanel->setSliderRange(m_chartRange > 0 ? m_chartRange : 512, log);
}

bool MainWindow::waitForIdle(int timeoutMs, bool levers) {
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < timeoutMs) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
        const bool idle = !m_requestTimer.isActive() && !m_layerTimer.isActive() && !m_service->isBusy() &&
                          m_result && m_result->generation == m_service->requestedGeneration();
        const bool failedIdle = !m_requestTimer.isActive() && !m_service->isBusy() && m_stale;
        if ((idle && (!levers || m_service->leversReady())) || failedIdle) {
            QCoreApplication::processEvents();
            return true;
        }
        QThread::msleep(2);
    }
    return false;
}

std::int64_t MainWindow::batch() const {
    return m_doc->batch();
}

QString MainWindow::verdictText() const {
    return m_batchPanel->verdictLabel()->fullText();
}

void MainWindow::updateTitle() {
    setWindowTitle(tr("%1[*] — BatchFit").arg(m_doc->displayName()));
    setWindowModified(m_doc->isModified());
    m_welcomeText->setFullText(
        tr("Welcome: %1 is loaded. Drag the batch slider to see what fits your GPU; other models are under "
           "Model → Presets and File → Open; edit layers on the left; ask “What would help?” on the right.")
            .arg(QString::fromStdString(m_doc->model().name)));
}

} // namespace batchfit
