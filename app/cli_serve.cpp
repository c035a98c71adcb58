#include "cli_serve.h"

#include "batchfit/hf_cache.h"
#include "batchfit/serving.h"
#include "batchfit/serving_plan.h"
#include "cli_text.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

namespace batchfit {
namespace {

constexpr int kOk = 0, kNoFit = 1, kUsage = 2, kBadInput = 3;

int fail(std::ostream& err, int code, const std::string& msg) {
    err << "batchfit-cli: " << msg << "\n";
    return code;
}

std::string gib(double bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1u << 30));
    return buf;
}

std::string engineTitle(const ServingConfig& c) {
    switch (c.engine) {
    case ServingEngine::Vllm:
        return "vLLM 0." + std::to_string(c.engineVersion) + " (V1 engine)";
    case ServingEngine::VllmV0:
        return "vLLM V0 engine";
    case ServingEngine::Sglang:
        return "SGLang";
    case ServingEngine::Hf:
        return "Hugging Face generate() with DynamicCache";
    case ServingEngine::HfStatic:
        return "Hugging Face generate() with StaticCache";
    }
    return "?";
}

std::string servingText(const ServingModel& m, const ServingEstimate& e, const GpuSpec& gpu,
                        std::int64_t context, std::int64_t sequences) {
    const ServingConfig& c = e.config;
    std::ostringstream os;
    os << m.name << " (" << m.modelType << ", " << grouped(static_cast<std::int64_t>(m.parameterCount()))
       << " parameters, weights " << weightQuantName(c.quant) << ") on " << gpu.name << ", "
       << engineTitle(c);
    if (e.tp > 1 || e.pp > 1) os << ", tensor parallel " << e.tp << " x pipeline " << e.pp;
    os << "\n";
    auto row = [&os](const std::string& what, double bytes, const std::string& note = "") {
        char buf[160];
        std::snprintf(buf, sizeof buf, "  %-34s %12s", what.c_str(), gib(bytes).c_str());
        os << buf << (note.empty() ? "" : "   " + note) << "\n";
    };
    char fraction[64];
    std::snprintf(fraction, sizeof fraction, "x %.4g = %s", *c.memoryFraction,
                  gib(static_cast<double>(e.requestedBytes)).c_str());
    row("GPU memory", static_cast<double>(e.totalBytes), fraction);
    row("CUDA context (before the engine)", static_cast<double>(e.contextBytes));
    row("weights", static_cast<double>(e.weightBytes),
        e.pp > 1 ? "layers " + std::to_string(e.firstLayer) + ".." +
                       std::to_string(e.firstLayer + e.stageLayers - 1)
                 : "");
    if (e.activationBytes)
        row("activation peak (profile run)", static_cast<double>(e.activationBytes),
            c.activationBytes ? "given" : grouped(c.maxNumBatchedTokens) + " batched tokens");
    if (e.nonTorchBytes)
        row("non-torch memory", static_cast<double>(e.nonTorchBytes), c.nonTorchBytes ? "given" : "");
    if (e.cudaGraphBytes)
        row("CUDA graphs", static_cast<double>(e.cudaGraphBytes), c.cudaGraphBytes ? "given" : "");
    if (e.marginBytes) row("safety margin after capture", static_cast<double>(e.marginBytes));
    row("KV cache", static_cast<double>(e.kvAvailableBytes),
        grouped(static_cast<std::int64_t>(e.bytesPerToken)) + " bytes per token" +
            (c.engine == ServingEngine::Vllm || c.engine == ServingEngine::VllmV0
                 ? ", " + grouped(e.blocks) + " blocks of " + std::to_string(c.blockSize)
                 : ""));
    os << "GPU KV cache size: " << grouped(e.kvTokens) << " tokens\n";
    char conc[160];
    std::snprintf(conc, sizeof conc, "Maximum concurrency for %s tokens per request: %.2fx\n",
                  grouped(c.maxModelLen).c_str(), e.maxConcurrency);
    os << conc;
    os << "At " << grouped(context) << " tokens: " << grouped(maxConcurrentSequences(m, e, context))
       << " sequences at once";
    if (c.maxNumSeqs > 0) os << " (max_num_seqs " << grouped(c.maxNumSeqs) << ")";
    os << "; " << grouped(sequences) << " sequences: up to " << grouped(maxContextAt(m, e, sequences))
       << " tokens each\n";
    if (e.failure != ServingEstimate::Failure::None) {
        os << "Does not start: " << e.message << "\n";
    } else {
        const ServingCell cell = servingCell(m, e, sequences, context);
        char v[200];
        std::snprintf(v, sizeof v, "%s: %s sequences of %s tokens take %.0f%% of the KV cache\n",
                      cell.fits ? "Fits" : "Does not fit", grouped(sequences).c_str(),
                      grouped(context).c_str(), cell.usedFraction * 100);
        os << v;
    }
    return os.str();
}

/// The levers, each on its own: how many sequences of `context` tokens fit with it.
std::string leversText(const std::vector<ServingLever>& levers, std::int64_t context, std::int64_t now) {
    if (levers.empty()) return "";
    std::ostringstream os;
    os << "What would help (sequences of " << grouped(context) << " tokens at once; now " << grouped(now)
       << "):\n";
    for (const ServingLever& l : levers) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "  %-28s %12s   %s\n", l.title.c_str(),
                      grouped(l.sequencesAtContext).c_str(),
                      l.estimate.failure == ServingEstimate::Failure::None ? "" : "does not start");
        os << buf;
    }
    return os.str();
}

/// generate() with DynamicCache through the caching allocator: half the context as the prompt, the rest
/// generated (at most kMaxReplayedSteps tokens). Empty for the other engines.
struct CliReplay {
    std::optional<HfGenerateReplay> replay;
    std::int64_t prompt = 0, generated = 0;
    std::string error;
};

CliReplay hfReplay(const ServingModel& m, const ServingEstimate& e, std::int64_t sequences,
                   std::int64_t context) {
    CliReplay out;
    if (e.config.engine != ServingEngine::Hf || e.failure == ServingEstimate::Failure::Weights) return out;
    out.generated = std::clamp<std::int64_t>(context / 2, 1, kMaxReplayedSteps);
    out.prompt = std::max<std::int64_t>(context - out.generated + 1, 1);
    auto r = replayHfGenerate(m, e, sequences, out.prompt, out.generated);
    if (r)
        out.replay = std::move(*r);
    else
        out.error = r.error().message;
    return out;
}

std::string hfReplayText(const CliReplay& c, std::int64_t sequences) {
    if (!c.error.empty()) return "generate() replay: " + c.error + "\n";
    if (!c.replay) return "";
    const AllocatorStats& s = c.replay->result.stats;
    std::ostringstream os;
    os << "generate() replay, DynamicCache (" << grouped(sequences) << " x " << grouped(c.prompt)
       << "-token prompts, " << grouped(c.generated) << " new tokens): the cache ends at "
       << gib(static_cast<double>(c.replay->cacheBytes)) << "; PyTorch allocated peak "
       << gib(static_cast<double>(s.peakAllocatedBytes)) << ", reserved peak "
       << gib(static_cast<double>(s.peakReservedBytes)) << " (torch.cat leaves blocks too small to reuse)\n";
    if (c.replay->result.oom) os << "  Out of memory: " << c.replay->result.oom->message << "\n";
    return os.str();
}

} // namespace

int cliServe(const CliOptions& o, const CliIo& io, const ServingReportHook& report) {
    if (o.hfConfig.empty())
        return fail(io.err, kUsage,
                    "serve needs --hf-config FILE|ORG/NAME (a decoder's config.json, or a model id in the "
                    "local Hugging Face cache)");
    if (!o.gpu) return fail(io.err, kUsage, "serve needs --gpu (a catalogue id or a capacity such as 24GiB)");
    std::string path = o.hfConfig;
    if (!std::filesystem::exists(path) && isHfModelId(path)) {
        auto cached = findCachedHfConfig(path);
        if (!cached) return fail(io.err, kBadInput, cached.error().message);
        path = *cached;
    }
    auto model = readServingModelFile(path);
    if (!model) return fail(io.err, kBadInput, model.error().message);
    const ParallelConfig& p = o.config.parallel;
    auto e = estimateServing(*model, o.serving, *o.gpu, p.tp, p.pp);
    if (!e) return fail(io.err, kBadInput, e.error().message);
    const std::int64_t context = o.sequence.value_or(e->config.maxModelLen);
    if (context < 1 || context > e->config.maxModelLen)
        return fail(io.err, kUsage,
                    "--seq " + std::to_string(context) + " is beyond --max-model-len " +
                        std::to_string(e->config.maxModelLen));
    const std::int64_t sequences = o.batchGiven ? o.batch : 1;
    const auto levers = servingLevers(*model, o.serving, *o.gpu, p.tp, p.pp, context);
    const std::int64_t now =
        e->failure == ServingEstimate::Failure::None ? maxConcurrentSequences(*model, *e, context) : 0;
    const CliReplay replay = hfReplay(*model, *e, sequences, context);
    io.out << (o.json ? servingJson(*model, *e, *o.gpu, context, sequences, levers,
                                    replay.replay ? &*replay.replay : nullptr, replay.prompt)
                      : servingText(*model, *e, *o.gpu, context, sequences) +
                            leversText(levers, context, now) + hfReplayText(replay, sequences));
    if (!o.out.empty()) {
        if (!report) return fail(io.err, kUsage, "--out needs the Qt build (the report library)");
        if (auto st = report(o, *model, sequences, context); !st) return fail(io.err, 4, st.error().message);
        io.err << "wrote " << o.out << "\n";
    }
    const bool fits = e->failure == ServingEstimate::Failure::None &&
                      servingCell(*model, *e, sequences, context).fits &&
                      !(replay.replay && replay.replay->result.oom);
    return fits ? kOk : kNoFit;
}

} // namespace batchfit
