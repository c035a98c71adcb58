// What the report shows is the core's: the chart's points, the peak in the timeline, the layer ranking.
#include "batchfit/estimator.h"
#include "catch_compat.h"
#include "report/report_data.h"
#include "report/report_language.h"
#include "report/report_sections.h"
#include "report/report_text.h"
#include "report/setting_labels.h"
#include "report_test_support.h"

#include <algorithm>
#include <map>

using namespace batchfit;
using namespace batchfit::test;

TEST_CASE("Report data: the chart covers batch 1, the batch and both sides of the largest batch",
          "[report][data]") {
    const ReportRequest r = presetRequest("resnet50", 64);
    auto d = buildReportData(r);
    REQUIRE(d);
    auto est = Estimator::create(r.model, r.config, r.gpu);
    const MaxBatch m = est->maxBatch(r.gpu.memoryBytes);
    CHECK(d->maxBatch.largest == m.largest);
    CHECK(d->verdict.fits);
    REQUIRE(d->sweep.size() >= 30);
    CHECK(
        std::is_sorted(d->sweep.begin(), d->sweep.end(), [](auto& a, auto& b) { return a.batch < b.batch; }));
    auto has = [&](std::int64_t b) {
        return std::any_of(d->sweep.begin(), d->sweep.end(),
                           [&](const SweepPoint& p) { return p.batch == b; });
    };
    CHECK(has(1));
    CHECK(has(64));
    CHECK(has(m.largest));
    CHECK(has(m.largest + 1));
    CHECK(d->sweepMax > m.largest);
    CHECK(d->sweep.back().batch <= d->sweepMax);
    for (const auto& p : d->sweep) CHECK(p.requiredBytes == *est->requiredBytes(p.batch));
}

TEST_CASE("Report data: the timeline's peak and the layer ranking", "[report][data]") {
    ReportRequest r = presetRequest("transformer-12", 8);
    r.topLayers = 5;
    auto d = buildReportData(r);
    REQUIRE(d);
    REQUIRE_FALSE(d->estimate.timeline.empty());
    REQUIRE(d->timelinePeak >= 0);
    const auto& peak = d->estimate.timeline[static_cast<std::size_t>(d->timelinePeak)];
    CHECK(peak.live.total() == d->estimate.peakAllocatedBytes);
    for (const auto& p : d->estimate.timeline) CHECK(p.live.total() <= d->estimate.peakAllocatedBytes);
    REQUIRE(d->topLayers.size() == 5);
    CHECK(std::is_sorted(d->topLayers.begin(), d->topLayers.end(),
                         [](auto& a, auto& b) { return a.savedBytes > b.savedBytes; }));
    std::uint64_t largest = 0;
    for (const auto& l : d->estimate.layers) largest = std::max(largest, l.savedBytes);
    CHECK(d->topLayers.front().savedBytes == largest);
    CHECK(d->layerCount + 1 == static_cast<int>(d->estimate.layers.size())); // minus the input entry
}

TEST_CASE("Report data: nothing fits, and bad requests fail with the core's message", "[report][data]") {
    auto d = buildReportData(presetRequest("llama-2-7b", 4, "24GiB"));
    REQUIRE(d);
    CHECK_FALSE(d->verdict.fits);
    CHECK(d->maxBatch.largest == 0);
    CHECK_FALSE(d->sweep.empty());

    ReportRequest bad = presetRequest("resnet50", 0);
    auto e = buildReportData(bad);
    REQUIRE_FALSE(e);
    CHECK(e.error().message.find("batch") != std::string::npos);
    bad = presetRequest("resnet50", 8);
    bad.gpu.memoryBytes = 0;
    CHECK_FALSE(buildReportData(bad));
}

TEST_CASE("Report data: a fine-tuning set-up is said in the set-up table and line", "[report][data][lora]") {
    ReportRequest r = presetRequest("llama-2-7b", 1);
    r.config.lora.rank = 16;
    r.config.precision = Precision::PureBf16;
    auto d = buildReportData(r);
    REQUIRE(d);
    const ReportSections s(*d);
    QString tuning;
    for (const auto& [k, v] : s.setup())
        if (k == QStringLiteral("Fine-tuning")) tuning = v;
    CHECK(tuning.startsWith(QStringLiteral("LoRA r=16")));
    CHECK(tuning.contains(QStringLiteral("8,388,608 of 6,746,804,224 train")));
    CHECK(s.setupLine().contains(QStringLiteral("LoRA r=16 · 8,388,608 of 6,746,804,224 parameters train")));
    ReportRequest full = presetRequest("resnet50", 8);
    auto fd = buildReportData(full);
    REQUIRE(fd);
    for (const auto& [k, v] : ReportSections(*fd).setup())
        if (k == QStringLiteral("Fine-tuning")) CHECK(v == QStringLiteral("full training"));
}

TEST_CASE("Report data: no checkpointing is a translated word, a kind keeps its CLI name",
          "[report][data][i18n]") {
    auto checkpointing = [](const ReportData& d) {
        for (const auto& [k, v] : ReportSections(d).setup())
            if (k == QStringLiteral("Checkpointing") || k == QString::fromUtf8("激活检查点")) return v;
        return QString();
    };
    auto none = buildReportData(presetRequest("resnet50", 8));
    REQUIRE(none);
    CHECK(checkpointing(*none) == QStringLiteral("none"));
    ReportRequest r = presetRequest("resnet50", 8);
    r.config.checkpointing = Checkpointing::EveryBlock;
    auto every = buildReportData(r);
    REQUIRE(every);
    CHECK(checkpointing(*every).startsWith(QStringLiteral("every-block")));
    const ReportLanguage zh(QStringLiteral("zh_CN"));
    REQUIRE(zh.ok());
    CHECK(checkpointing(*none) == QString::fromUtf8("无"));
    CHECK(checkpointing(*every).startsWith(QStringLiteral("every-block")));
}

TEST_CASE("Report data: variable-length batches are said in the set-up table", "[report][data][sequences]") {
    ReportRequest r = presetRequest("gpt2-small", 8);
    auto plain = buildReportData(r);
    REQUIRE(plain);
    for (const auto& [k, v] : ReportSections(*plain).setup())
        CHECK(k != QStringLiteral("Batch lengths replayed"));
    r.config.replaySequences = {512, 256};
    auto mixed = buildReportData(r);
    REQUIRE(mixed);
    QString lengths;
    for (const auto& [k, v] : ReportSections(*mixed).setup())
        if (k == QStringLiteral("Batch lengths replayed")) lengths = v;
    CHECK(lengths.startsWith(QString::fromUtf8("512 → 256 → 1,024 (variable-length batches")));
}

TEST_CASE("Report data: samples per epoch are said with the last batch replayed", "[report][data][epoch]") {
    ReportRequest r = presetRequest("resnet50", 8);
    auto row = [](const ReportData& d) {
        QString out;
        for (const auto& [k, v] : ReportSections(d).setup())
            if (k == QStringLiteral("Samples per epoch")) out = v;
        return out;
    };
    auto plain = buildReportData(r);
    REQUIRE(plain);
    CHECK(row(*plain).isEmpty());
    r.config.epochSamples = 50003;
    auto last = buildReportData(r);
    REQUIRE(last);
    CHECK(row(*last) ==
          QStringLiteral("50,003 (the last batch, 3 samples, is replayed before the step shown)"));
    r.config.epochSamples = 50000;
    auto even = buildReportData(r);
    REQUIRE(even);
    CHECK(row(*even) == QStringLiteral("50,000 (every batch full at this size)"));
    // vit_b_16 b8 on a 2 GiB card (no margin, no context): the last batch of 7 is the step that runs out.
    ReportRequest tight = presetRequest("vit_b_16", 8, "2GiB");
    tight.config.epochSamples = 50007;
    tight.config.marginFraction = 0;
    tight.config.cudaContextBytes = 0;
    auto out = buildReportData(tight);
    REQUIRE(out);
    CHECK(ReportSections(*out).verdictDetail().contains(
        QStringLiteral("On this GPU the epoch's last batch (7 samples) runs out of memory at ")));
}

TEST_CASE("Report data: QLoRA and data parallelism are said in the set-up table and assumptions",
          "[report][data][qlora][parallel]") {
    ReportRequest r = presetRequest("llama-2-7b", 1);
    r.config.lora.rank = 16;
    r.config.quant.kind = QuantKind::Nf4;
    r.config.quant.doubleQuant = true;
    r.config.parallel.gpus = 8;
    r.config.parallel.strategy = ParallelStrategy::Fsdp;
    auto d = buildReportData(r);
    REQUIRE(d);
    const ReportSections s(*d);
    QString tuning, par;
    for (const auto& [k, v] : s.setup()) {
        if (k == QStringLiteral("Fine-tuning")) tuning = v;
        if (k == QStringLiteral("Parallelism")) par = v;
    }
    CHECK(tuning.contains(QStringLiteral("NF4 double-quantized base weights (6,476,005,376 parameters")));
    CHECK(par.startsWith(QStringLiteral("fsdp on 8 GPUs, shards over 8")));
    CHECK(par.contains(QStringLiteral("global batch 8")));
    CHECK(s.setupLine().contains(QStringLiteral("8 × fsdp")));
    CHECK(s.setupLine().contains(QStringLiteral("QLoRA r=16 (NF4)")));
    bool nccl = false, quant = false;
    for (const QString& a : s.assumptions()) {
        nccl = nccl || a.contains(QStringLiteral("NCCL"));
        quant = quant || a.contains(QStringLiteral("bitsandbytes 0.49"));
    }
    CHECK(nccl);
    CHECK(quant);
}

TEST_CASE("Report data: sequence parallelism and the pipeline stage shown are named",
          "[report][data][parallel]") {
    ReportRequest r = presetRequest("gpt2-small", 1);
    r.config.parallel.gpus = 16;
    r.config.parallel.tp = 4;
    r.config.parallel.sequenceParallel = true;
    r.config.parallel.pp = 2;
    r.config.parallel.microbatches = 8;
    r.config.parallel.strategy = ParallelStrategy::Ddp;
    auto d = buildReportData(r);
    REQUIRE(d);
    const ReportSections s(*d);
    QString par;
    for (const auto& [k, v] : s.setup())
        if (k == QStringLiteral("Parallelism")) par = v;
    CHECK(par.contains(QStringLiteral("tensor parallel 4 with sequence parallelism")));
    // 16 / (4 x 2) = 2 replicas x 8 micro-batches
    CHECK(par.contains(QStringLiteral("global batch 16")));
    const QString stage =
        d->estimate.parallel.stage > 0 ? QStringLiteral("the last shown") : QStringLiteral("the first shown");
    CHECK(par.contains(stage));
    CHECK(par.contains(QStringLiteral("(%1 micro-batches in flight)")
                           .arg(d->estimate.parallel.stage > 0 ? 1 : 2))); // min(M, P - s)
    bool sequence = false, pipeline = false;
    for (const QString& a : s.assumptions()) {
        sequence = sequence || a.startsWith(QStringLiteral("Sequence parallelism as Megatron-LM runs it"));
        pipeline = pipeline || a.startsWith(QStringLiteral("Pipeline parallelism, 1F1B"));
    }
    CHECK(sequence);
    CHECK(pipeline);
}

TEST_CASE("Report set-up: every setting that differs from its default is shown, with a translated label",
          "[report][data][settings]") {
    for (const SettingInfo& s : settingsTable()) {
        INFO(s.label);
        CHECK(isTranslatableSettingLabel(s.label)); // setting_labels.cpp lists it for lupdate
    }
    ReportRequest r = presetRequest("resnet50", 8);
    r.config.torch = TorchRules::Torch113;
    r.config.zeroGradSetToNone = false;
    r.config.cublasWorkspaceBytes = 0;
    r.config.rmspropCentered = true;
    auto d = buildReportData(r);
    REQUIRE(d);
    const ReportSections sections(*d);
    QStringList rows;
    for (const auto& [key, value] : sections.setup()) rows << key + QStringLiteral(": ") + value;
    const QString all = rows.join(QLatin1Char('\n'));
    INFO(all.toStdString());
    CHECK(all.contains(QStringLiteral("PyTorch rules: 1.13")));
    CHECK(all.contains(QStringLiteral("zero_grad(set_to_none): off")));
    CHECK(all.contains(QStringLiteral("cuBLAS workspace: 0")));
    CHECK(all.contains(QStringLiteral("RMSprop centered: on")));
    // in the report's language, not the application's (batchfit-cli report --lang zh_CN installs none)
    ReportRequest lm = presetRequest("gpt2-small", 2);
    lm.config.recipe = Recipe::Grpo;
    lm.config.promptTokens = 64;
    const ReportLanguage zh(QStringLiteral("zh_CN"));
    REQUIRE(zh.ok());
    auto grpo = buildReportData(lm);
    REQUIRE(grpo);
    QStringList labels;
    for (const auto& [key, value] : ReportSections(*grpo).setup()) labels << key;
    INFO(labels.join(QLatin1Char('|')).toStdString());
    CHECK(labels.contains(QString::fromUtf8("训练方式")));
    CHECK(labels.contains(QString::fromUtf8("提示 token 数")));
    CHECK_FALSE(labels.contains(QStringLiteral("Recipe")));
}

TEST_CASE("Report: a fit with cache flushes says so, with this GPU's figures in the table and the text",
          "[report][data][one-answer]") {
    const ReportRequest r = presetRequest("resnet50", 256, "rtx-4090");
    auto d = buildReportData(r);
    REQUIRE(d);
    REQUIRE(d->verdict.fits);
    REQUIRE(d->verdict.cacheReleased); // the review's case
    const ReportSections s(*d);
    CHECK(s.verdictHeadline().contains(QStringLiteral("with cache flushes")));
    CHECK(d->verdict.requiredBytes <= d->verdict.usableBytes);
    bool said = false;
    for (const QString& a : s.assumptions())
        said = said || (a.contains(QStringLiteral("On this GPU the replay")) &&
                        a.contains(ReportText::bytes(d->verdict.requiredBytes)));
    CHECK(said);
    // every chart point carries the verdict's decision
    auto est = Estimator::create(r.model, r.config, r.gpu);
    REQUIRE(est);
    for (const SweepPoint& p : d->sweep) {
        REQUIRE(p.fit);
        CHECK(p.fit->fits == est->verdict(p.batch, r.gpu.memoryBytes)->fits);
    }
}

TEST_CASE("Report data: activation and parameter offload have their host rows, setting and assumptions",
          "[report][data][offload]") {
    ReportRequest r = presetRequest("llama-2-7b", 1);
    r.config.precision = Precision::PureBf16;
    r.config.checkpointing = Checkpointing::EveryBlock;
    r.config.activationOffload = ActivationOffload::Checkpoints;
    r.config.parallel.strategy = ParallelStrategy::Zero3; // one GPU: ZeRO-Infinity
    r.config.paramOffload = true;
    auto d = buildReportData(r);
    REQUIRE(d);
    const ReportSections s(*d);
    std::map<QString, QString> rows;
    for (const auto& row : s.componentTable().rows)
        if (row.cells.size() >= 2) rows[row.cells[0]] = row.cells[1];
    const Estimate& e = d->estimate;
    REQUIRE(e.hostParameterBytes > 0);
    REQUIRE(e.hostActivationBytes > 0);
    CHECK(rows[QStringLiteral("Host memory (offloaded parameters)")] == ReportText::bytes(e.hostParameterBytes));
    CHECK(rows[QStringLiteral("Host memory (offloaded activations)")] == ReportText::bytes(e.hostActivationBytes));
    CHECK(rows[QStringLiteral("Host memory (offloaded optimizer)")] == ReportText::bytes(e.hostBytes));
    QString offload;
    for (const auto& [k, v] : s.setup())
        if (k == QStringLiteral("Activation offload")) offload = v;
    CHECK(offload == QStringLiteral("checkpoints"));
    bool params = false, acts = false;
    for (const QString& a : s.assumptions()) {
        params = params || (a.startsWith(QStringLiteral("Parameter offload")) &&
                            a.contains(ReportText::bytes(e.parameterTransferBytes)));
        acts = acts || (a.startsWith(QStringLiteral("Activation offload (checkpoints)")) &&
                        a.contains(QStringLiteral("pinned")));
    }
    CHECK(params);
    CHECK(acts);
}
