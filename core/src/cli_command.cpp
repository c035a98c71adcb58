#include "batchfit/cli_command.h"

#include <cstdio>

namespace batchfit {

std::string shellQuote(const std::string& s) {
    if (!s.empty() &&
        s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=%+,@") ==
            std::string::npos)
        return s;
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

namespace {
std::string number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}
} // namespace

CliCommand cliCommand(const std::string& modelOption, const std::string& modelValue,
                      const TrainingConfig& config, const GpuSpec& gpu, std::int64_t batch) {
    const TrainingConfig d; // the CLI's defaults are TrainingConfig's
    CliCommand c;
    auto& a = c.arguments;
    a = {"estimate", modelOption, modelValue, "--batch", std::to_string(batch), "--gpu"};
    a.push_back(gpu.id == "custom" ? number(static_cast<double>(gpu.memoryBytes) / (1ull << 30)) + "GiB"
                                   : gpu.id);
    auto option = [&a](const char* name, std::string_view value) {
        a.emplace_back(name);
        a.emplace_back(value);
    };
    if (config.optimizer != d.optimizer) option("--optimizer", optimizerName(config.optimizer));
    if (config.impl != d.impl) option("--impl", optimizerImplName(config.impl));
    if (config.amsgrad) a.emplace_back("--amsgrad");
    if (config.precision != d.precision) option("--precision", precisionName(config.precision));
    if (config.checkpointing != d.checkpointing)
        option("--checkpointing", checkpointingName(config.checkpointing));
    if (config.checkpointing == Checkpointing::EveryKthBlock && config.checkpointEvery != d.checkpointEvery)
        option("--checkpoint-every", std::to_string(config.checkpointEvery));
    if (config.checkpointing != Checkpointing::None && config.checkpointMode != d.checkpointMode)
        option("--checkpoint-mode", checkpointModeName(config.checkpointMode));
    if (config.accumulationSteps != d.accumulationSteps)
        option("--accumulation", std::to_string(config.accumulationSteps));
    if (config.marginFraction != d.marginFraction) option("--margin", number(config.marginFraction));
    if (config.cudaContextBytes)
        option("--context-mib", number(static_cast<double>(*config.cudaContextBytes) / (1ull << 20)));
    if (!config.zeroGradSetToNone) a.emplace_back("--no-set-to-none");
    if (config.optimizerOffload) a.emplace_back("--offload");
    if (config.firstStep) a.emplace_back("--first-step");
    if (config.torch != d.torch) option("--torch", torchRulesName(config.torch));
    auto globs = [&option](const char* name, const std::vector<std::string>& list) {
        std::string joined;
        for (const auto& g : list) joined += (joined.empty() ? "" : ",") + g;
        if (!joined.empty()) option(name, joined);
    };
    globs("--freeze", config.freeze);
    globs("--train-only", config.trainOnly);
    if (config.lora.rank > 0) {
        option("--lora-rank", std::to_string(config.lora.rank));
        if (config.lora.alpha != d.lora.alpha) option("--lora-alpha", number(config.lora.alpha));
        if (config.lora.dropout != d.lora.dropout) option("--lora-dropout", number(config.lora.dropout));
        globs("--lora-targets", config.lora.targets);
    }
    const ParallelConfig& par = config.parallel;
    const ParallelConfig dp{};
    if (par.gpus > 1) {
        option("--gpus", std::to_string(par.gpus));
        if (par.tp > 1) option("--tp", std::to_string(par.tp));
        if (par.sequenceParallel) a.emplace_back("--sequence-parallel");
        if (par.pp > 1) option("--pp", std::to_string(par.pp));
        if (par.microbatches > 0) option("--microbatches", std::to_string(par.microbatches));
        if (par.strategy != ParallelStrategy::None) option("--strategy", parallelStrategyName(par.strategy));
        if (par.gpusPerNode != dp.gpusPerNode) option("--gpus-per-node", std::to_string(par.gpusPerNode));
        if (par.zeroImpl != dp.zeroImpl) option("--zero-impl", zeroImplName(par.zeroImpl));
        if (par.bucketCapMb != dp.bucketCapMb) option("--bucket-cap-mb", number(par.bucketCapMb));
        if (par.gradientAsBucketView) a.emplace_back("--gradient-as-bucket-view");
        if (par.reduceBucketSize != dp.reduceBucketSize)
            option("--reduce-bucket-size", std::to_string(par.reduceBucketSize));
        if (par.overlapComm >= 0) option("--overlap-comm", par.overlapComm ? "on" : "off");
        if (par.stage3ParamPersistenceThreshold != dp.stage3ParamPersistenceThreshold)
            option("--stage3-param-persistence-threshold",
                   std::to_string(par.stage3ParamPersistenceThreshold));
        if (!par.limitAllGathers) a.emplace_back("--no-limit-all-gathers");
        if (!par.backwardPrefetchPre) option("--backward-prefetch", "post");
        if (!par.reshardAfterForward) a.emplace_back("--no-reshard-after-forward");
    }
    if (config.quant.enabled()) {
        option("--quant", quantKindName(config.quant.kind));
        if (config.quant.doubleQuant) a.emplace_back("--double-quant");
        if (config.quant.computeDtype != d.quant.computeDtype)
            option("--compute-dtype", dtypeName(config.quant.computeDtype));
        if (!config.quant.prepare) a.emplace_back("--no-kbit-prepare");
        // --quant alone turns checkpointing on (applyQuantDefaults): say "none" when it is off
        if (config.quant.prepare && config.checkpointing == Checkpointing::None)
            option("--checkpointing", checkpointingName(config.checkpointing));
    }
    if (config.rmspropMomentum) c.unsaid.emplace_back("RMSprop momentum");
    if (config.rmspropCentered) c.unsaid.emplace_back("RMSprop centered");
    if (config.cublasWorkspaceBytes) {
        if (*config.cublasWorkspaceBytes % 1024 == 0)
            option("--cublas-workspace-kib", std::to_string(*config.cublasWorkspaceBytes / 1024));
        else
            c.unsaid.emplace_back("cuBLAS workspace override");
    }
    if (!config.allocConf.empty()) option("--alloc-conf", config.allocConf);
    if (!config.replaySequences.empty()) option("--replay-seqs", replaySequencesText(config.replaySequences));
    if (config.epochSamples) option("--epoch-samples", std::to_string(*config.epochSamples));
    if (config.fragmentationFraction) option("--fragmentation", number(*config.fragmentationFraction));
    c.line = "batchfit-cli";
    for (const std::string& s : a) c.line += " " + shellQuote(s);
    return c;
}

} // namespace batchfit
