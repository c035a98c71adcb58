#include "gui/serving/serving_view.h"

#include "batchfit/settings.h"
#include "gui/charts/component_style.h"
#include "gui/estimation/byte_format.h"
#include "gui/serving/serving_chart.h"
#include "gui/serving/serving_heat_map.h"
#include "gui/serving/serving_lever_model.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

namespace batchfit {

namespace {

/// A spin box over a settings-table key's range (batchfit/settings.h), with `unset` shown as `special`.
QSpinBox* rangedBox(const char* key, int unset, const QString& special, QWidget* parent) {
    auto* box = new QSpinBox(parent);
    const SettingInfo* s = findSetting(key);
    const double max = s ? std::min(s->max, 2147483647.0) : 2147483647.0;
    box->setRange(special.isEmpty() ? static_cast<int>(s ? s->min : 1) : unset, static_cast<int>(max));
    if (!special.isEmpty()) box->setSpecialValueText(special);
    if (s) box->setToolTip(QString::fromStdString(s->help));
    return box;
}

QString partName(ServingPart::Kind k) {
    switch (k) {
    case ServingPart::Kind::Total:
        return batchfit::ServingView::tr("GPU memory");
    case ServingPart::Kind::Context:
        return batchfit::ServingView::tr("CUDA context, NCCL (before the engine)");
    case ServingPart::Kind::Weights:
        return batchfit::ServingView::tr("Weights");
    case ServingPart::Kind::Activation:
        return batchfit::ServingView::tr("Activation peak (profile run)");
    case ServingPart::Kind::NonTorch:
        return batchfit::ServingView::tr("Non-torch memory after start-up");
    case ServingPart::Kind::CudaGraphs:
        return batchfit::ServingView::tr("CUDA graphs");
    case ServingPart::Kind::Margin:
        return batchfit::ServingView::tr("Margin after capture");
    case ServingPart::Kind::KvCache:
        return batchfit::ServingView::tr("KV cache");
    case ServingPart::Kind::KvPerToken:
        return batchfit::ServingView::tr("KV cache per token");
    }
    return {};
}

QString count(std::int64_t n) {
    return QLocale().toString(static_cast<qlonglong>(n));
}

} // namespace

ServingView::ServingView(QWidget* parent) : QWidget(parent), m_gpu(customGpu(24.0)) {
    auto* layout = new QVBoxLayout(this);
    auto* top = new QHBoxLayout;
    m_modelLabel = new QLabel(
        tr("No model config: open a decoder's config.json (or import one from Hugging Face)."), this);
    m_modelLabel->setWordWrap(true);
    auto* open = new QPushButton(tr("Open &config.json…"), this);
    connect(open, &QPushButton::clicked, this, &ServingView::openConfig);
    top->addWidget(m_modelLabel, 1);
    top->addWidget(open);
    layout->addLayout(top);
    auto* middle = new QHBoxLayout;
    // The form scrolls rather than pushing the window past a 768-pixel screen (taller CJK rows).
    auto* formScroll = new QScrollArea(this);
    formScroll->setWidget(buildForm());
    formScroll->setWidgetResizable(true);
    formScroll->setFrameShape(QFrame::NoFrame);
    formScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    formScroll->setMinimumWidth(formScroll->widget()->sizeHint().width() + 16);
    formScroll->setMinimumHeight(160);
    middle->addWidget(formScroll);
    m_chart = new ServingChart(this);
    middle->addWidget(m_chart, 1);
    layout->addLayout(middle, 3);
    layout->addWidget(buildSequenceRow());
    m_verdict = new QLabel(this);
    QFont big = m_verdict->font();
    big.setPointSizeF(big.pointSizeF() * 1.25);
    big.setBold(true);
    m_verdict->setFont(big);
    m_verdict->setWordWrap(true);
    m_verdict->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_engineLines = new QLabel(this);
    m_engineLines->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_engineLines->setWordWrap(true);
    layout->addWidget(m_verdict);
    layout->addWidget(m_engineLines);
    m_tabs = new QTabWidget(this);
    m_breakdown = new QStandardItemModel(this);
    auto* breakdownView = new QTableView(m_tabs);
    breakdownView->setModel(m_breakdown);
    breakdownView->verticalHeader()->hide();
    breakdownView->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    breakdownView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_tabs->addTab(breakdownView, tr("Memory"));
    m_heatMap = new ServingHeatMap(m_tabs);
    m_tabs->addTab(m_heatMap, tr("Sequences × context"));
    m_levers = new ServingLeverModel(this);
    m_leverView = new QTableView(m_tabs);
    m_leverView->setModel(m_levers);
    m_leverView->verticalHeader()->hide();
    m_leverView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_leverView->horizontalHeader()->setSectionResizeMode(ServingLeverModel::ChangeColumn,
                                                          QHeaderView::Stretch);
    m_leverView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_leverView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    connect(m_leverView, &QAbstractItemView::activated, this,
            [this](const QModelIndex& index) { applyLever(index.row()); });
    m_tabs->addTab(m_leverView, tr("What would help?"));
    layout->addWidget(m_tabs, 2);
    fillForm();
    recompute();
}

QWidget* ServingView::buildForm() {
    auto* box = new QGroupBox(tr("Serving set-up"), this);
    auto* form = new QFormLayout(box);
    // The GPU is the document's, as in training mode: picking one here changes it there too.
    m_gpuBox = new QComboBox(box);
    for (const GpuSpec& g : gpuCatalogue())
        m_gpuBox->addItem(
            QStringLiteral("%1 · %2").arg(QString::fromStdString(g.name), ByteFormat::bytes(g.memoryBytes)),
            QString::fromStdString(g.id));
    m_gpuBox->setMinimumContentsLength(16);
    m_gpuBox->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    connect(m_gpuBox, &QComboBox::currentIndexChanged, this, [this] {
        if (m_updating) return;
        if (auto g = findGpu(m_gpuBox->currentData().toString().toStdString())) emit gpuPicked(*g);
    });
    form->addRow(tr("&GPU:"), m_gpuBox);
    m_engine = new QComboBox(box);
    m_engine->addItem(tr("vLLM (V1 engine)"), static_cast<int>(ServingEngine::Vllm));
    m_engine->addItem(tr("vLLM V0 engine"), static_cast<int>(ServingEngine::VllmV0));
    m_engine->addItem(tr("SGLang"), static_cast<int>(ServingEngine::Sglang));
    m_engine->addItem(tr("HF generate(), DynamicCache"), static_cast<int>(ServingEngine::Hf));
    m_engine->addItem(tr("HF generate(), StaticCache"), static_cast<int>(ServingEngine::HfStatic));
    m_version = new QComboBox(box);
    for (int minor = 34; minor >= 7; --minor) m_version->addItem(QStringLiteral("0.%1").arg(minor), minor);
    m_fraction = new QDoubleSpinBox(box);
    m_fraction->setRange(0, 1);
    m_fraction->setDecimals(4);
    m_fraction->setSingleStep(0.01);
    m_fraction->setSpecialValueText(tr("engine default"));
    m_fraction->setToolTip(QString::fromStdString(findSetting("serving.gpu_memory_utilization")->help));
    m_maxLen = rangedBox("serving.max_model_len", 0, tr("the model's"), box);
    m_context = rangedBox("serving.max_model_len", 0, tr("max_model_len"), box);
    m_context->setToolTip(tr("Tokens per request (prompt and output) the concurrency is asked for."));
    m_kvDtype = new QComboBox(box);
    m_kvDtype->addItem(tr("model dtype"), static_cast<int>(KvCacheDtype::Auto));
    m_kvDtype->addItem(QStringLiteral("fp8"), static_cast<int>(KvCacheDtype::Fp8));
    m_quant = new QComboBox(box);
    for (WeightQuant q : allWeightQuants())
        m_quant->addItem(q == WeightQuant::Auto ? tr("as the config says")
                                                : QString::fromUtf8(weightQuantName(q).data()),
                         static_cast<int>(q));
    m_tpBox = rangedBox("parallel.tp", 1, QString(), box);
    m_ppBox = rangedBox("parallel.pp", 1, QString(), box);
    m_eager = new QCheckBox(tr("no CUDA graphs (enforce_eager)"), box);
    form->addRow(tr("E&ngine:"), m_engine);
    form->addRow(tr("vLLM ve&rsion:"), m_version);
    form->addRow(tr("GPU memory &utilization:"), m_fraction);
    form->addRow(tr("Max model &length:"), m_maxLen);
    form->addRow(tr("&Tokens per request:"), m_context);
    form->addRow(tr("&KV cache:"), m_kvDtype);
    form->addRow(tr("&Weights:"), m_quant);
    form->addRow(tr("Tensor &parallel:"), m_tpBox);
    form->addRow(tr("Pipeline &stages:"), m_ppBox);
    form->addRow(m_eager);
    for (QComboBox* c : {m_engine, m_version, m_kvDtype, m_quant})
        connect(c, &QComboBox::currentIndexChanged, this, &ServingView::readForm);
    for (QSpinBox* s : {m_maxLen, m_context, m_tpBox, m_ppBox})
        connect(s, &QSpinBox::valueChanged, this, &ServingView::readForm);
    connect(m_fraction, &QDoubleSpinBox::valueChanged, this, &ServingView::readForm);
    connect(m_eager, &QCheckBox::toggled, this, &ServingView::readForm);
    return box;
}

QWidget* ServingView::buildSequenceRow() {
    auto* row = new QWidget(this);
    auto* h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    auto* label = new QLabel(tr("Concurrent se&quences:"), row);
    m_slider = new QSlider(Qt::Horizontal, row);
    m_spin = new QSpinBox(row);
    m_spin->setRange(1, 2147483647);
    label->setBuddy(m_spin);
    m_maxButton = new QPushButton(QIcon(QStringLiteral(":/icons/max-batch.svg")), tr("Most that fit"), row);
    m_maxButton->setToolTip(tr("The most sequences of this length the KV cache holds at once (capped by "
                               "max_num_seqs)."));
    h->addWidget(label);
    h->addWidget(m_slider, 1);
    h->addWidget(m_spin);
    h->addWidget(m_maxButton);
    connect(m_slider, &QSlider::valueChanged, this, [this](int v) {
        if (!m_updating) setSequences(v);
    });
    connect(m_spin, &QSpinBox::valueChanged, this, [this](int v) {
        if (!m_updating) setSequences(v);
    });
    connect(m_maxButton, &QPushButton::clicked, this, [this] {
        if (m_model && m_estimate)
            setSequences(std::max<std::int64_t>(1, maxConcurrentSequences(*m_model, *m_estimate, context())));
    });
    return row;
}

bool ServingView::setConfigPath(const QString& path) {
    auto m = readServingModelFile(path.toStdString());
    if (!m) {
        m_modelLabel->setText(tr("Cannot serve %1: %2").arg(path, QString::fromStdString(m.error().message)));
        return false;
    }
    m_path = path;
    m_model = std::move(*m);
    m_modelLabel->setText(tr("%1 (%2, %3 parameters) from %4")
                              .arg(QString::fromStdString(m_model->name),
                                   QString::fromStdString(m_model->modelType),
                                   count(static_cast<std::int64_t>(m_model->parameterCount())), path));
    recompute();
    return true;
}

void ServingView::setGpu(const GpuSpec& gpu) {
    m_gpu = gpu;
    m_updating = true;
    const int index = m_gpuBox->findData(QString::fromStdString(gpu.id));
    if (index < 0 && m_gpuBox->findData(QStringLiteral("custom")) < 0)
        m_gpuBox->addItem(tr("Custom · %1").arg(ByteFormat::bytes(gpu.memoryBytes)),
                          QStringLiteral("custom"));
    m_gpuBox->setCurrentIndex(index >= 0 ? index : m_gpuBox->findData(QStringLiteral("custom")));
    m_updating = false;
    recompute();
}

void ServingView::setConfig(const ServingConfig& config) {
    m_config = config;
    fillForm();
    recompute();
}

void ServingView::setSequences(std::int64_t n) {
    n = std::clamp<std::int64_t>(n, 1, 2147483647);
    if (n == m_sequences) return;
    m_sequences = n;
    recompute();
}

std::int64_t ServingView::context() const {
    const std::int64_t maxLen =
        m_estimate ? m_estimate->config.maxModelLen : (m_model ? m_model->maxPositions : 1);
    return m_context->value() > 0 ? std::min<std::int64_t>(m_context->value(), maxLen) : maxLen;
}

void ServingView::fillForm() {
    m_updating = true;
    m_engine->setCurrentIndex(m_engine->findData(static_cast<int>(m_config.engine)));
    m_version->setCurrentIndex(std::max(0, m_version->findData(m_config.engineVersion)));
    m_fraction->setValue(m_config.memoryFraction.value_or(0));
    m_maxLen->setValue(static_cast<int>(m_config.maxModelLen));
    m_kvDtype->setCurrentIndex(m_kvDtype->findData(static_cast<int>(m_config.kvCacheDtype)));
    m_quant->setCurrentIndex(m_quant->findData(static_cast<int>(m_config.quant)));
    m_eager->setChecked(m_config.enforceEager);
    m_version->setEnabled(m_config.engine == ServingEngine::Vllm);
    m_updating = false;
}

void ServingView::readForm() {
    if (m_updating) return;
    m_config.engine = static_cast<ServingEngine>(m_engine->currentData().toInt());
    m_config.engineVersion = m_version->currentData().toInt();
    m_config.memoryFraction =
        m_fraction->value() > 0 ? std::optional<double>(m_fraction->value()) : std::nullopt;
    m_config.maxModelLen = m_maxLen->value();
    m_config.kvCacheDtype = static_cast<KvCacheDtype>(m_kvDtype->currentData().toInt());
    m_config.quant = static_cast<WeightQuant>(m_quant->currentData().toInt());
    m_config.enforceEager = m_eager->isChecked();
    m_tp = m_tpBox->value();
    m_pp = m_ppBox->value();
    m_version->setEnabled(m_config.engine == ServingEngine::Vllm);
    emit configEdited(m_config);
    recompute();
}

void ServingView::recompute() {
    m_estimate.reset();
    if (!m_model) {
        m_verdict->setText(tr("Open a decoder's config.json to see how many requests fit."));
        m_engineLines->clear();
        return;
    }
    auto e = estimateServing(*m_model, m_config, m_gpu, m_tp, m_pp);
    if (!e) {
        m_verdict->setText(QString::fromStdString(e.error().message));
        m_engineLines->clear();
        return;
    }
    m_estimate = *e;
    const std::int64_t most =
        e->failure == ServingEstimate::Failure::None ? maxConcurrentSequences(*m_model, *e, context()) : 0;
    const std::int64_t top = std::clamp<std::int64_t>(std::max<std::int64_t>(most * 3 / 2, 8), 8, 1 << 20);
    m_updating = true;
    m_slider->setRange(1, static_cast<int>(std::max<std::int64_t>(top, m_sequences)));
    m_slider->setValue(static_cast<int>(m_sequences));
    m_spin->setValue(static_cast<int>(m_sequences));
    m_updating = false;
    m_chart->show(*m_model, *e, context(), std::max<std::int64_t>(top, m_sequences), m_sequences);
    QPalette p = m_verdict->palette();
    const bool ok = e->failure == ServingEstimate::Failure::None &&
                    servingCell(*m_model, *e, m_sequences, context()).fits;
    p.setColor(QPalette::WindowText, ok ? ComponentStyle::fitsColor() : ComponentStyle::oomColor());
    m_verdict->setPalette(p);
    // The engine's own failure message is long: the verdict's large type is for the one-line answer.
    QFont f = font();
    f.setBold(true);
    if (e->failure == ServingEstimate::Failure::None) f.setPointSizeF(f.pointSizeF() * 1.25);
    m_verdict->setFont(f);
    m_verdict->setText(verdictText());
    m_engineLines->setText(engineLines());
    showBreakdown();
    // Rows: powers of two up to max_model_len from 1/256 of it (at least 128 tokens); short contexts say
    // little.
    std::vector<std::int64_t> rows;
    for (std::int64_t len : servingAxis(e->config.maxModelLen))
        if (len >= std::max<std::int64_t>(128, e->config.maxModelLen / 256) || len == e->config.maxModelLen)
            rows.push_back(len);
    auto map = servingFitMap(*m_model, *e, rows, servingAxis(std::max<std::int64_t>(top, m_sequences)));
    if (map) m_heatMap->setMap(*map);
    showLevers();
}

QString ServingView::verdictText() const {
    if (!m_model || !m_estimate) return {};
    const ServingEstimate& e = *m_estimate;
    if (e.failure != ServingEstimate::Failure::None)
        return tr("The engine would not start: %1").arg(QString::fromStdString(e.message));
    const ServingCell cell = servingCell(*m_model, e, m_sequences, context());
    const QString most = count(maxConcurrentSequences(*m_model, e, context()));
    return cell.fits ? tr("fits: %1 × %2 tokens use %3% of the KV cache (at most %4 at once)")
                           .arg(count(m_sequences), count(context()))
                           .arg(cell.usedFraction * 100, 0, 'f', 0)
                           .arg(most)
                     : tr("does not fit: %1 × %2 tokens need %3% of the KV cache (at most %4 at once)")
                           .arg(count(m_sequences), count(context()))
                           .arg(cell.usedFraction * 100, 0, 'f', 0)
                           .arg(most);
}

QString ServingView::engineLines() const {
    if (!m_model || !m_estimate) return {};
    const ServingEstimate& e = *m_estimate;
    return tr("GPU KV cache size: %1 tokens · Maximum concurrency for %2 tokens per request: %3x · at %4 "
              "tokens, %5 "
              "sequences at once")
        .arg(count(e.kvTokens), count(e.config.maxModelLen))
        .arg(e.maxConcurrency, 0, 'f', 2)
        .arg(count(context()), count(maxConcurrentSequences(*m_model, e, context())));
}

void ServingView::showBreakdown() {
    m_breakdown->clear();
    m_breakdown->setHorizontalHeaderLabels({tr("Part"), tr("On one GPU")});
    const ServingEstimate& e = *m_estimate;
    for (const ServingPart& part : servingParts(e)) {
        auto* value = new QStandardItem(ByteFormat::bytes(part.bytes));
        value->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        m_breakdown->appendRow({new QStandardItem(partName(part.kind)), value});
    }
}

void ServingView::showLevers() {
    const std::int64_t now = m_estimate->failure == ServingEstimate::Failure::None
                                 ? maxConcurrentSequences(*m_model, *m_estimate, context())
                                 : 0;
    m_levers->setLevers(servingLevers(*m_model, m_config, m_gpu, m_tp, m_pp, context()), now);
}

void ServingView::applyLever(int row) {
    const ServingLever* l = m_levers->lever(row);
    if (!l) return;
    const ServingConfig next = l->config;
    const std::int64_t tp = l->tp;
    m_config = next;
    fillForm();
    m_updating = true;
    m_tpBox->setValue(static_cast<int>(tp));
    m_updating = false;
    m_tp = tp;
    emit configEdited(m_config);
    recompute();
}

void ServingView::openConfig() {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open a Decoder's config.json"), QString(),
                                     tr("Hugging Face configs (config.json *.json);;All files (*)"));
    if (!path.isEmpty()) setConfigPath(path);
}

} // namespace batchfit
