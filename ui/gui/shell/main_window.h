#pragma once
// The main window: layer stack (left), training set-up and what-if levers (right), the live chart, the batch
// slider with the verdict, and the breakdown / step timeline / per-layer tabs.
#include "gui/estimation/estimation_result.h"

#include <QMainWindow>
#include <QTimer>
#include <cstdint>
#include <memory>
#include <optional>

class QCheckBox;
class QResizeEvent;
class QLabel;
class QMenu;
class QStackedWidget;
class QTabBar;
class QTabWidget;
class QTableView;
class QFrame;
class QSplitter;

namespace batchfit {

class AppSettings;
class BatchPanel;
class BreakdownModel;
class GpuFitModel;
class ElidingLabel;
class DocsWindow;
class Document;
class EstimationService;
class FitHeatMap;
class FileController;
class LayerActivationModel;
class LayerStackPanel;
class MemoryChart;
class SegmentsView;
class ServingView;
class TimelineChart;
class TrainingPanel;
class WhatIfPanel;

/// Wires the document, the background estimation and the views. Holds no memory arithmetic.
class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(AppSettings* settings, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Restores the training set-up, GPU, batch and axis from the settings (no undo step).
    void restoreSettings();
    /// Saves geometry, set-up and the open model's identity.
    void saveSettings();

    /// Sets the batch as if the user had dragged the slider to it.
    void setBatch(std::int64_t batch);
    /// The batch shown (the document keeps it: Save stores it with the set-up).
    std::int64_t batch() const;
    /// Jumps to the solver's largest batch.
    void goToMaxBatch();
    void setLogScale(bool log);
    /// The chart's memory axis in powers of two (menu, checkbox and settings follow).
    void setLogMemoryScale(bool log);
    /// Processes events until the newest request is shown (and the levers, if asked). False on timeout.
    bool waitForIdle(int timeoutMs = 10000, bool levers = false);
    /// The estimate shown at the current batch (without per-layer rows), if any.
    const std::optional<Estimate>& shownEstimate() const { return m_shown; }
    std::shared_ptr<const EstimationResult> result() const { return m_result; }
    QString verdictText() const;

    Document* document() const { return m_doc; }
    EstimationService* service() const { return m_service; }
    FileController* files() const { return m_files; }
    LayerStackPanel* layerPanel() const { return m_layers; }
    TrainingPanel* trainingPanel() const { return m_training; }
    WhatIfPanel* whatIfPanel() const { return m_whatIf; }
    BatchPanel* batchPanel() const { return m_batchPanel; }
    MemoryChart* memoryChart() const { return m_chart; }
    TimelineChart* timelineChart() const { return m_timeline; }
    /// The "Segments" tab: the caching allocator's segments through the step.
    SegmentsView* segmentsView() const { return m_segments; }
    BreakdownModel* breakdown() const { return m_breakdown; }
    LayerActivationModel* layerTable() const { return m_layerRows; }
    QTabWidget* tabs() const { return m_tabs; }

    /// The "Which GPUs fit" table.
    GpuFitModel* gpuFitModel() const { return m_gpuFits; }
    QTableView* gpuFitView() const { return m_gpuFitView; }
    /// The "Batch × sequence" tab: the heat map, or why there is none.
    FitHeatMap* heatMap() const { return m_heatMap; }
    /// Brings the "Batch × sequence" tab to the front (batchfit --chart heatmap).
    void showHeatMapTab();
    /// Training (false) or serving (true): the central page, and the training docks shown or hidden.
    void setServingMode(bool serving);
    bool isServingMode() const;
    ServingView* servingView() const { return m_serving; }
    /// Brings a tab to the front by name: breakdown, timeline, segments, layers, gpus or heatmap (batchfit
    /// --tab). False for another name.
    bool showTab(const QString& name);
    /// Help → Documentation's window (created on first use; null before).
    DocsWindow* docsWindow() const { return m_docs; }

protected:
    void closeEvent(QCloseEvent* event) override;
    void showEvent(QShowEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void buildCentral();
    /// First start: WindowGeometry::firstStart on this screen; later: the saved geometry, kept on the screen.
    void placeOnScreen();
    void buildDocks();
    QWidget* wrapInModes(QWidget* training); ///< the Training | Serving bar over both pages
    void connectServing();
    void exportServingReport(); ///< File > Export Report in serving mode
    /// Gives the Training Set-up dock the height of its rows where the column has room (main_window_layout).
    void fitTrainingDock();
    void buildMenus();
    void rebuildRecentMenu();
    void requestEstimate();
    void onResult();
    void onFailure(const QString& message);
    void showBatch(std::int64_t batch);
    void showPlan(); ///< the advisor's plan for the batch shown (the start of the service's plan)
    void widenChartTo(std::int64_t batch);
    void updateTimeline();
    void updateLayerFigures();
    void updateTitle();
    void exportReport();
    /// Edit > Copy as CLI Command (or, with `python`, Copy as Python: the batchfit.estimate call): the current
    /// model, set-up, GPU and batch.
    void copyCliCommand(bool python);
    /// Edit → Copy Chart: the report's chart with its title and legend (the widget itself without the report
    /// library).
    void copyChart();
    void chooseLanguage(const QString& language);
    void about();
    void showDocumentation();

    AppSettings* m_settings;
    Document* m_doc = nullptr;
    EstimationService* m_service = nullptr;
    FileController* m_files = nullptr;
    LayerStackPanel* m_layers = nullptr;
    TrainingPanel* m_training = nullptr;
    WhatIfPanel* m_whatIf = nullptr;
    BatchPanel* m_batchPanel = nullptr;
    MemoryChart* m_chart = nullptr;
    TimelineChart* m_timeline = nullptr;
    SegmentsView* m_segments = nullptr;
    BreakdownModel* m_breakdown = nullptr;
    LayerActivationModel* m_layerRows = nullptr;
    QTableView* m_layerTableView = nullptr;
    QTableView* m_breakdownView = nullptr;
    QTabWidget* m_tabs = nullptr;
    QTabBar* m_modeBar = nullptr;
    QStackedWidget* m_modeStack = nullptr;
    ServingView* m_serving = nullptr;
    QStringList m_docksHiddenForServing; ///< the training docks serving mode hid, shown again on the way back
    QSplitter* m_split = nullptr;
    QFrame* m_welcome = nullptr;
    ElidingLabel* m_welcomeText = nullptr;
    QLabel* m_problem = nullptr;
    QLabel* m_modelInfo = nullptr;
    QLabel* m_busy = nullptr;
    QMenu* m_recentMenu = nullptr;
    QAction* m_logAction = nullptr;
    QAction* m_logMemoryAction = nullptr;
    GpuFitModel* m_gpuFits = nullptr;
    QTableView* m_gpuFitView = nullptr;
    FitHeatMap* m_heatMap = nullptr;
    QCheckBox* m_logBatchBox = nullptr;  ///< next to the chart, the same as m_logAction
    QCheckBox* m_logMemoryBox = nullptr; ///< next to the chart, the same as m_logMemoryAction

    std::shared_ptr<const EstimationResult> m_result;
    std::optional<Estimate> m_shown;
    std::optional<OomReport> m_shownOom; ///< the verdict's, for the Segments view
    DocsWindow* m_docs = nullptr;
    std::int64_t m_chartRange = 0;
    QTimer m_requestTimer;
    QTimer m_timelineTimer;
    QTimer m_layerTimer;
    bool m_timelineDirty = true;
    bool m_segmentsDirty = true;
    bool m_stateRestored = false;
    bool m_stale = false; ///< the newest request failed: the shown estimator is for an older model
    bool m_resetBatchPending = false; ///< a new model was loaded: its first estimate may choose the batch
};

} // namespace batchfit
