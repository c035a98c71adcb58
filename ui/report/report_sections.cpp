#include "report/report_sections.h"

#include "batchfit/settings.h"
#include "report/component_palette.h"
#include "report/report_language.h"
#include "report/report_text.h"
#include "report/setting_labels.h"

#include <set>

namespace batchfit {
namespace {

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}
QString qs(std::string_view s) {
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

constexpr Component kComponents[] = {Component::Parameters, Component::Gradients, Component::OptimizerStates,
                                     Component::Activations, Component::Temporaries};

} // namespace

QString ReportSections::reportTitle() const {
    return ReportText::tr("GPU memory report");
}

QString ReportSections::modelName() const {
    return qs(m_data.request.model.name);
}

QString ReportSections::modelSummary() const {
    const Model& m = m_data.request.model;
    return ReportText::tr("%1 parameters · %2 layers · input %3 %4")
        .arg(ReportText::number(static_cast<std::int64_t>(m_data.estimate.parameterCount)),
             ReportText::number(m_data.layerCount), qs(shapeToString(m.inputShape)),
             qs(dtypeName(m.inputDtype)));
}

std::vector<std::pair<QString, QString>> ReportSections::setup() const {
    const TrainingConfig& c = m_data.request.config;
    const GpuSpec& g = m_data.request.gpu;
    std::vector<std::pair<QString, QString>> out;
    out.emplace_back(ReportText::tr("GPU"),
                     ReportText::tr("%1 (%2)").arg(qs(g.name), ReportText::bytes(g.memoryBytes)));
    out.emplace_back(ReportText::tr("Micro-batch"), ReportText::number(m_data.request.batch));
    QString opt = ReportText::tr("%1 (%2)").arg(qs(optimizerName(c.optimizer)), qs(optimizerImplLabel(c)));
    if (c.amsgrad) opt += QStringLiteral(", amsgrad");
    if (c.optimizerOffload) opt += ReportText::tr(", states in host memory");
    out.emplace_back(ReportText::tr("Optimizer"), opt);
    out.emplace_back(ReportText::tr("Precision"), qs(precisionName(c.precision)));
    out.emplace_back(ReportText::tr("Accumulation"),
                     c.accumulationSteps <= 1
                         ? ReportText::tr("none")
                         : ReportText::tr("%1 micro-batches per step (effective batch %2)")
                               .arg(ReportText::number(c.accumulationSteps),
                                    ReportText::number(c.accumulationSteps * m_data.request.batch)));
    // The kinds are the CLI's names (every-block, selective), as precision and optimizer; "none" is a word.
    QString ckpt = c.checkpointing == Checkpointing::None ? ReportText::tr("none")
                                                          : qs(checkpointingName(c.checkpointing));
    if (c.checkpointing == Checkpointing::EveryKthBlock)
        ckpt += ReportText::tr(" (every %1 blocks)").arg(c.checkpointEvery);
    if (c.checkpointing != Checkpointing::None)
        ckpt += QStringLiteral(", ") + qs(checkpointModeName(c.checkpointMode));
    out.emplace_back(ReportText::tr("Checkpointing"), ckpt);
    const Estimate& e = m_data.estimate;
    QString tuning = ReportText::tr("full training");
    if (c.lora.rank > 0) {
        QStringList targets;
        for (const auto& t : c.lora.targets) targets << qs(t);
        tuning = (c.lora.dora ? ReportText::tr("DoRA r=%1 α=%2 dropout %3, %4")
                              : ReportText::tr("LoRA r=%1 α=%2 dropout %3, %4"))
                     .arg(c.lora.rank)
                     .arg(c.lora.alpha)
                     .arg(c.lora.dropout)
                     .arg(targets.isEmpty() ? ReportText::tr("PEFT's default targets")
                                            : targets.join(QStringLiteral(", ")));
    } else if (e.trainableParameterCount != e.parameterCount) {
        tuning = ReportText::tr("frozen layers");
    }
    if (c.quant.enabled())
        tuning += ReportText::tr("; %1%2 base weights (%3 parameters in %4)")
                      .arg(qs(quantKindName(c.quant.kind)).toUpper(),
                           c.quant.doubleQuant ? ReportText::tr(" double-quantized") : QString(),
                           ReportText::number(static_cast<std::int64_t>(e.quantizedParameterCount)),
                           ReportText::bytes(e.quantizedParameterBytes));
    if (e.trainableParameterCount != e.parameterCount)
        tuning += ReportText::tr(": %1 of %2 train")
                      .arg(ReportText::number(static_cast<std::int64_t>(e.trainableParameterCount)),
                           ReportText::number(static_cast<std::int64_t>(e.parameterCount)));
    out.emplace_back(ReportText::tr("Fine-tuning"), tuning);
    if (c.parallel.gpus > 1) {
        QString par = ReportText::tr("%1 on %2 GPUs, shards over %3; every figure is rank %4's (the most "
                                     "loaded); global batch %5")
                          .arg(qs(parallelStrategyName(c.parallel.strategy)))
                          .arg(c.parallel.gpus)
                          .arg(e.parallel.group)
                          .arg(e.parallel.rank)
                          .arg(ReportText::number(
                              m_data.request.batch * c.parallel.dataParallel() * c.accumulationSteps *
                              (c.parallel.pp > 1
                                   ? (c.parallel.microbatches > 0 ? c.parallel.microbatches : c.parallel.pp)
                                   : 1)));
        if (c.parallel.tp > 1)
            par += c.parallel.splitsSequence()
                       ? ReportText::tr("; tensor parallel %1 with sequence parallelism").arg(c.parallel.tp)
                       : ReportText::tr("; tensor parallel %1").arg(c.parallel.tp);
        if (c.parallel.pp > 1)
            par +=
                (e.parallel.stage > 0
                     ? ReportText::tr("; pipeline %1 stages, the last shown, the heavier (%2 micro-batches "
                                      "in flight)")
                     : ReportText::tr("; pipeline %1 stages, the first shown, the heavier (%2 micro-batches "
                                      "in flight)"))
                    .arg(c.parallel.pp)
                    .arg(e.parallel.microBatchesInFlight);
        if (e.parallel.bucketBytes)
            par +=
                ReportText::tr("; communication buckets %1").arg(ReportText::bytes(e.parallel.bucketBytes));
        if (e.parallel.largestGatheredBytes)
            par += ReportText::tr("; largest gathered unit %1: %2")
                       .arg(qs(e.parallel.largestGatheredUnit),
                            ReportText::bytes(e.parallel.largestGatheredBytes));
        out.emplace_back(ReportText::tr("Parallelism"), par);
    }
    out.emplace_back(ReportText::tr("PYTORCH_CUDA_ALLOC_CONF", "set-up key: the allocator's settings"),
                     c.fragmentationFraction ? ReportText::tr("not replayed: fragmentation override %1")
                                                   .arg(ReportText::fraction(*c.fragmentationFraction))
                     : c.allocConf.empty() ? ReportText::tr("not set (PyTorch's defaults)")
                                           : qs(c.allocConf));
    if (!m_data.estimate.allocator.sequences.empty()) {
        QStringList lengths;
        for (std::int64_t s : m_data.estimate.allocator.sequences) lengths << ReportText::number(s);
        out.emplace_back(ReportText::tr("Batch lengths replayed"),
                         ReportText::tr("%1 (variable-length batches; the last is the step shown)")
                             .arg(lengths.join(QStringLiteral(" → "))));
    }
    if (c.epochSamples)
        out.emplace_back(
            ReportText::tr("Samples per epoch"),
            m_data.estimate.allocator.lastBatch > 0
                ? ReportText::tr("%1 (the last batch, %2 samples, is replayed before the step shown)")
                      .arg(ReportText::number(*c.epochSamples),
                           ReportText::number(m_data.estimate.allocator.lastBatch))
                : ReportText::tr("%1 (every batch full at this size)")
                      .arg(ReportText::number(*c.epochSamples)));
    out.emplace_back(ReportText::tr("Safety margin"),
                     ReportText::tr("%1 of capacity").arg(ReportText::fraction(c.marginFraction)));
    out.emplace_back(ReportText::tr("Step simulated"),
                     c.firstStep ? ReportText::tr("first step") : ReportText::tr("steady state"));
    // Every other setting that differs from its default, from the settings table: nothing in the set-up is
    // left out of the report (the rows above summarize the rest with what they imply).
    static const std::set<std::string> summarized = {"gpu",
                                                     "gpu_memory_bytes",
                                                     "batch",
                                                     "optimizer",
                                                     "optimizer_impl",
                                                     "amsgrad",
                                                     "optimizer_offload",
                                                     "precision",
                                                     "accumulation_steps",
                                                     "checkpointing",
                                                     "checkpoint_every",
                                                     "checkpoint_mode",
                                                     "alloc_conf",
                                                     "fragmentation_fraction",
                                                     "replay_sequences",
                                                     "epoch_samples",
                                                     "margin_fraction",
                                                     "first_step",
                                                     "parallel.gpus",
                                                     "parallel.strategy",
                                                     "parallel.tp",
                                                     "parallel.sequence_parallel",
                                                     "parallel.pp"};
    TrainingSetup t;
    t.batch = m_data.request.batch;
    t.config = c;
    for (const SettingInfo& s : settingsTable()) {
        if (summarized.count(s.key) || s.group() == "lora" || s.group() == "quant") continue;
        const SettingValue v = s.get(t);
        if (isDefaultSetting(s, v)) continue;
        out.emplace_back(settingLabel(s), qs(settingText(s, v)));
    }
    return out;
}

QString ReportSections::setupLine() const {
    const TrainingConfig& c = m_data.request.config;
    QString line = ReportText::tr("batch %1 · %2, %3, checkpointing %4 · %5 (%6)")
                       .arg(ReportText::number(m_data.request.batch), qs(optimizerName(c.optimizer)),
                            qs(precisionName(c.precision)), qs(checkpointingName(c.checkpointing)),
                            qs(m_data.request.gpu.name), ReportText::bytes(m_data.request.gpu.memoryBytes));
    const Estimate& e = m_data.estimate;
    if (c.parallel.gpus > 1)
        line += ReportText::tr(" · %1 × %2")
                    .arg(c.parallel.gpus)
                    .arg(qs(parallelStrategyName(c.parallel.strategy)));
    if (c.lora.rank > 0)
        line += (c.quant.enabled() ? ReportText::tr(" · QLoRA r=%1 (%2)")
                                         .arg(c.lora.rank)
                                         .arg(qs(quantKindName(c.quant.kind)).toUpper())
                                   : ReportText::tr(" · LoRA r=%1").arg(c.lora.rank));
    if (e.trainableParameterCount != e.parameterCount)
        line += ReportText::tr(" · %1 of %2 parameters train")
                    .arg(ReportText::number(static_cast<std::int64_t>(e.trainableParameterCount)),
                         ReportText::number(static_cast<std::int64_t>(e.parameterCount)));
    return line;
}

QString ReportSections::verdictHeadline() const {
    const QString batch = ReportText::number(m_data.request.batch);
    const QString gpu = qs(m_data.request.gpu.name);
    if (fits() && m_data.verdict.cacheReleased)
        return ReportText::tr("Batch %1 fits on %2 with cache flushes").arg(batch, gpu);
    return fits() ? ReportText::tr("Batch %1 fits on %2").arg(batch, gpu)
                  : ReportText::tr("Batch %1 does not fit on %2").arg(batch, gpu);
}

QString ReportSections::verdictDetail() const {
    const Verdict& v = m_data.verdict;
    // What this GPU needs: below the estimate's figure when the allocator fits by freeing its cache.
    const QString required = ReportText::bytes(v.requiredBytes);
    if (v.fits)
        // One denominator everywhere: the usable memory, as in the GUI's and the CLI's verdict.
        return ReportText::tr("Needs %1 of %2 usable (%3); %4 to spare.")
                   .arg(required, ReportText::bytes(v.usableBytes),
                        ReportText::percentOf(v.requiredBytes, v.usableBytes),
                        ReportText::bytes(static_cast<std::uint64_t>(v.headroomBytes))) +
               (v.cacheReleased
                    ? QLatin1Char(' ') +
                          ReportText::tr("On a GPU large enough it would reserve %1; on this one PyTorch "
                                         "frees its cached blocks when a cudaMalloc fails and retries (no "
                                         "out-of-memory error, slower steps: each retry synchronizes the "
                                         "GPU).")
                              .arg(ReportText::bytes(m_data.estimate.requiredBytes))
                    : QString());
    QString text = ReportText::tr("Needs %1 but only %2 is usable: short by %3.")
                       .arg(required, ReportText::bytes(v.usableBytes),
                            ReportText::bytes(static_cast<std::uint64_t>(-v.headroomBytes)));
    if (v.oom && !v.oom->stepLabel.empty()) { // where the caching allocator's replay on this GPU gives up
        const QString at = qs(v.oom->stepLabel), tried = ReportText::bytes(v.oom->triedBytes);
        if (v.oom->firstIteration)
            text +=
                QLatin1Char(' ') + ReportText::tr("On this GPU the first training step runs out of memory "
                                                  "at %1, trying to allocate %2.")
                                       .arg(at, tried);
        else if (v.oom->lastBatch > 0)
            text +=
                QLatin1Char(' ') + ReportText::tr("On this GPU the epoch's last batch (%1 samples) runs out "
                                                  "of memory at %2, trying to allocate %3.")
                                       .arg(ReportText::number(v.oom->lastBatch), at, tried);
        else
            text +=
                QLatin1Char(' ') + ReportText::tr("On this GPU the steady-state step runs out of memory at "
                                                  "%1, trying to allocate %2.")
                                       .arg(at, tried);
    }
    return text;
}

QString ReportSections::maxBatchLine() const {
    const MaxBatch& m = m_data.maxBatch;
    if (m.largest <= 0) return ReportText::tr("Not even batch 1 fits on this GPU with this set-up.");
    if (m.capped)
        return ReportText::tr("Largest batch that fits: more than %1 (the solver's limit).")
            .arg(ReportText::number(m.largest));
    const QString mult8 =
        m.largestMultipleOf8 > 0 ? ReportText::number(m.largestMultipleOf8) : ReportText::tr("none");
    return ReportText::tr("Largest batch that fits: %1 · largest multiple of 8: %2")
        .arg(ReportText::number(m.largest), mult8);
}

QString ReportSections::peakLine() const {
    const Estimate& e = m_data.estimate;
    return ReportText::tr("Peak allocated %1 during %2, at %3")
        .arg(ReportText::bytes(e.peakAllocatedBytes), ReportText::phaseLabel(e.peakPhase).toLower(),
             qs(e.peakLabel));
}

QString ReportSections::componentTableTitle() const {
    return ReportText::tr("Memory at the peak (batch %1)").arg(ReportText::number(m_data.request.batch));
}

ReportTable ReportSections::componentTable() const {
    const Estimate& e = m_data.estimate;
    const Verdict& v = m_data.verdict;
    const std::uint64_t cap = v.capacityBytes;
    ReportTable t;
    t.columns = {{ReportText::tr("Component"), 1, true, Qt::AlignLeft, Qt::ElideRight},
                 {ReportText::tr("Size"), 1, false, Qt::AlignRight, Qt::ElideRight},
                 {ReportText::tr("Bytes"), 1, false, Qt::AlignRight, Qt::ElideLeft},
                 {ReportText::tr("% of capacity"), 1, false, Qt::AlignRight, Qt::ElideRight}};
    auto row = [&](const QString& label, std::uint64_t bytes, QColor swatch = {}, bool bold = false,
                   bool rule = false) {
        t.rows.push_back({{label, ReportText::bytes(bytes), ReportText::exactBytes(bytes),
                           ReportText::percentOf(bytes, cap)},
                          swatch,
                          bold,
                          rule});
    };
    for (Component c : kComponents)
        row(ReportText::componentLabel(c), e.atPeak[c], ComponentPalette::color(c));
    row(ReportText::tr("Peak allocated"), e.peakAllocatedBytes, {}, true, true);
    // Fits with cache flushes: the reserve and the total are what this GPU holds (the verdict's figures).
    const bool flushes = v.fits && v.cacheReleased;
    row(ReportText::tr("Allocator reserve"), flushes ? v.reserveBytes : e.allocatorReserveBytes,
        ComponentPalette::overhead(), false, true);
    if (e.allocator.simulated) {
        row(ReportText::tr("Peak reserved (replay)"), e.allocator.peakReservedBytes);
        row(ReportText::tr("Free in split segments"), e.allocator.peakInactiveSplitBytes);
    } else {
        row(ReportText::tr("Peak reserved (fragmentation override)"), e.reservedBytes);
    }
    row(ReportText::tr("Outside PyTorch"), e.cudaContextBytes, ComponentPalette::overhead());
    if (flushes) {
        row(ReportText::tr("Required here (nvidia-smi)"), v.requiredBytes, {}, true, true);
        row(ReportText::tr("On a GPU large enough"), e.requiredBytes);
    } else {
        row(ReportText::tr("Required (nvidia-smi)"), e.requiredBytes, {}, true, true);
    }
    row(ReportText::tr("Usable (minus %1 margin)")
            .arg(ReportText::fraction(m_data.request.config.marginFraction)),
        v.usableBytes, {}, false, true);
    row(ReportText::tr("GPU capacity"), cap);
    if (v.headroomBytes >= 0)
        row(ReportText::tr("Headroom"), static_cast<std::uint64_t>(v.headroomBytes), {}, true);
    else
        row(ReportText::tr("Short by"), static_cast<std::uint64_t>(-v.headroomBytes), {}, true);
    const bool several = e.parallel.gpus > 1; // one GPU's share, and a node's
    bool firstHostRow = true;                 // the host rows start a group
    auto hostRow = [&](std::uint64_t bytes, const QString& perGpu, const QString& one) {
        if (bytes == 0) return;
        t.rows.push_back({{several ? perGpu : one, ReportText::bytes(bytes), ReportText::exactBytes(bytes),
                           QStringLiteral("—")},
                          {},
                          false,
                          firstHostRow});
        firstHostRow = false;
    };
    hostRow(e.hostBytes, ReportText::tr("Host memory (offloaded optimizer, per GPU)"),
            ReportText::tr("Host memory (offloaded optimizer)"));
    hostRow(e.hostParameterBytes, ReportText::tr("Host memory (offloaded parameter shards, per GPU)"),
            ReportText::tr("Host memory (offloaded parameters)"));
    hostRow(e.hostActivationBytes, ReportText::tr("Host memory (offloaded activations, per GPU)"),
            ReportText::tr("Host memory (offloaded activations)"));
    if (e.hostTotalBytes() > 0) {
        if (several)
            t.rows.push_back({{ReportText::tr("Host memory of a node (%1 GPUs)").arg(e.parallel.gpusOnNode),
                               ReportText::bytes(e.hostBytesPerNode()),
                               ReportText::exactBytes(e.hostBytesPerNode()), QStringLiteral("—")},
                              {},
                              false,
                              false});
    }
    if (e.pagedStateBytes > 0)
        t.rows.push_back({{ReportText::tr("Paged optimizer states (CUDA managed memory)"),
                           ReportText::bytes(e.pagedStateBytes), ReportText::exactBytes(e.pagedStateBytes),
                           QStringLiteral("—")},
                          {},
                          false,
                          true});
    return t;
}

QString ReportSections::layerTableTitle() const {
    return ReportText::tr("Top layers by activation memory");
}

ReportTable ReportSections::layerTable() const {
    ReportTable t;
    t.columns = {{QStringLiteral("#"), 1, false, Qt::AlignRight, Qt::ElideRight},
                 {ReportText::tr("Layer"), 3, true, Qt::AlignLeft, Qt::ElideMiddle},
                 {ReportText::tr("Op"), 1, true, Qt::AlignLeft, Qt::ElideRight},
                 {ReportText::tr("Saved for backward"), 1, false, Qt::AlignRight, Qt::ElideRight},
                 {ReportText::tr("Output"), 1, false, Qt::AlignRight, Qt::ElideRight},
                 {ReportText::tr("% of peak"), 1, false, Qt::AlignRight, Qt::ElideRight}};
    const QLocale locale = ReportLanguage::currentLocale();
    int n = 0;
    for (const auto& l : m_data.topLayers)
        t.rows.push_back({{ReportText::number(++n), qs(l.path), qs(l.op), ReportText::bytes(l.savedBytes),
                           ReportText::bytes(l.outputBytes),
                           locale.toString(100.0 * l.shareOfPeak, 'f', 1) + QLatin1Char('%')},
                          {},
                          false,
                          false});
    return t;
}

QString ReportSections::chartTitle() const {
    return ReportText::tr("Memory by batch size");
}

QString ReportSections::timelineTitle() const {
    return ReportText::tr("Memory through one training step (batch %1)")
        .arg(ReportText::number(m_data.request.batch));
}

} // namespace batchfit
