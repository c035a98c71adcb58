#pragma once
// Serving mode: a decoder's config.json on the GPU chosen, as vLLM, SGLang or generate() would size its KV
// cache; the chart against concurrent sequences, the largest concurrency, the concurrency x context map and
// the what-if levers (docs/serving.md). All the arithmetic is the core's.
#include "batchfit/gpu.h"
#include "batchfit/serving_plan.h"

#include <QWidget>
#include <optional>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;
class QStandardItemModel;
class QTableView;
class QTabWidget;

namespace batchfit {

class ServingChart;
class ServingHeatMap;
class ServingLeverModel;

class ServingView : public QWidget {
    Q_OBJECT

public:
    explicit ServingView(QWidget* parent = nullptr);

    /// Reads a decoder's config.json; false (and the reason shown) when it cannot be served.
    bool setConfigPath(const QString& path);
    QString configPath() const { return m_path; }
    void setGpu(const GpuSpec& gpu);
    /// Shows a set-up (from a model file) without emitting configEdited.
    void setConfig(const ServingConfig& config);
    ServingConfig config() const { return m_config; }
    void setSequences(std::int64_t n);

    std::int64_t sequences() const { return m_sequences; }
    const std::optional<ServingModel>& model() const { return m_model; }
    const GpuSpec& gpu() const { return m_gpu; }
    std::int64_t tensorParallel() const { return m_tp; }
    std::int64_t pipelineStages() const { return m_pp; }
    std::int64_t context() const;
    const std::optional<ServingEstimate>& estimate() const { return m_estimate; }
    QString verdictText() const;
    QString engineLines() const;
    ServingChart* chart() const { return m_chart; }
    ServingHeatMap* heatMap() const { return m_heatMap; }
    ServingLeverModel* levers() const { return m_levers; }
    QTableView* leverView() const { return m_leverView; }
    QTabWidget* tabs() const { return m_tabs; }
    QPushButton* maxButton() const { return m_maxButton; }
    QComboBox* engineBox() const { return m_engine; }
    QComboBox* gpuBox() const { return m_gpuBox; }
    QComboBox* kvDtypeBox() const { return m_kvDtype; }

signals:
    /// The user changed a serving setting (saved with the model file's set-up).
    void configEdited(const batchfit::ServingConfig& config);
    /// The user picked a GPU (the document's, shared with training mode).
    void gpuPicked(const batchfit::GpuSpec& gpu);

private:
    QWidget* buildForm();
    QWidget* buildSequenceRow();
    void fillForm();
    void readForm();
    void recompute();
    void showBreakdown();
    void showLevers();
    void openConfig();
    void applyLever(int row);

    QString m_path;
    std::optional<ServingModel> m_model;
    GpuSpec m_gpu;
    ServingConfig m_config;
    std::int64_t m_tp = 1, m_pp = 1;
    std::int64_t m_sequences = 1;
    std::optional<ServingEstimate> m_estimate;
    bool m_updating = false;

    QLabel* m_modelLabel = nullptr;
    QComboBox* m_gpuBox = nullptr;
    QComboBox* m_engine = nullptr;
    QComboBox* m_version = nullptr;
    QDoubleSpinBox* m_fraction = nullptr;
    QSpinBox* m_maxLen = nullptr;
    QSpinBox* m_context = nullptr;
    QComboBox* m_kvDtype = nullptr;
    QComboBox* m_quant = nullptr;
    QSpinBox* m_tpBox = nullptr;
    QSpinBox* m_ppBox = nullptr;
    QCheckBox* m_eager = nullptr;
    ServingChart* m_chart = nullptr;
    QSlider* m_slider = nullptr;
    QSpinBox* m_spin = nullptr;
    QPushButton* m_maxButton = nullptr;
    QLabel* m_verdict = nullptr;
    QLabel* m_engineLines = nullptr;
    QTabWidget* m_tabs = nullptr;
    QStandardItemModel* m_breakdown = nullptr;
    ServingHeatMap* m_heatMap = nullptr;
    ServingLeverModel* m_levers = nullptr;
    QTableView* m_leverView = nullptr;
};

} // namespace batchfit
