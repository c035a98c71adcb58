#include "cli_options.h"

#include "batchfit/allocator_config.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace batchfit {
namespace {

Result<std::int64_t> parseInt(const std::string& s, const std::string& opt, std::int64_t min,
                              std::int64_t max) {
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size())
        return makeError(opt + " expects an integer, got '" + s + "'");
    if (v < min || v > max)
        return makeError(opt + " must be between " + std::to_string(min) + " and " + std::to_string(max) +
                         ", got " + s);
    return v;
}

Result<double> parseDouble(const std::string& s, const std::string& opt) {
    try {
        std::size_t used = 0;
        double v = std::stod(s, &used);
        if (used != s.size() || !std::isfinite(v)) throw std::invalid_argument(s);
        return v;
    } catch (...) {
        return makeError(opt + " expects a number, got '" + s + "'");
    }
}

Result<GpuSpec> parseGpu(const std::string& s) {
    if (auto known = findGpu(s)) return known; // catalogue ids such as a100-80gb end in "gb" too
    for (const char* suffix : {"GiB", "gib", "GB", "gb", "G", "g"}) {
        const std::string suf(suffix);
        if (s.size() > suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0) {
            auto v = parseDouble(s.substr(0, s.size() - suf.size()), "--gpu");
            if (!v || *v <= 0 || *v > 1.0e6)
                return makeError("--gpu: capacity must be a positive number of GiB, got '" + s + "'");
            return customGpu(*v);
        }
    }
    return findGpu(s);
}

// "24GiB", "512MiB", "1048576" (bytes).
Result<std::uint64_t> parseCapacity(const std::string& s, const std::string& opt) {
    for (auto [suffix, shift] : {std::pair{"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"G", 30}, {"M", 20}}) {
        const std::string suf(suffix);
        if (s.size() > suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0) {
            auto v = parseDouble(s.substr(0, s.size() - suf.size()), opt);
            if (!v || *v <= 0 || *v * static_cast<double>(std::uint64_t{1} << shift) > 4.6e18)
                return makeError(opt + ": expected a positive size such as 24GiB, got '" + s + "'");
            return static_cast<std::uint64_t>(*v * static_cast<double>(std::uint64_t{1} << shift));
        }
    }
    auto v = parseInt(s, opt, 1, std::int64_t{1} << 62);
    if (!v) return makeError(opt + ": expected a size such as 24GiB or a number of bytes, got '" + s + "'");
    return static_cast<std::uint64_t>(*v);
}

} // namespace

Result<CliOptions> parseCliOptions(const std::vector<std::string>& args, const CliOptions& base) {
    CliOptions o = base;
    bool checkpointingGiven = false, quantGiven = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto next = [&]() -> Result<std::string> {
            if (i + 1 >= args.size()) return makeError(a + " needs a value");
            return args[++i];
        };
#define BF_NEXT(var)                                                                                         \
    auto var##_r = next();                                                                                   \
    if (!var##_r) return var##_r.error();                                                                    \
    const std::string& var = *var##_r;
        if (a == "--help" || a == "-h")
            o.help = true;
        else if (a == "--version")
            o.version = true;
        else if (a == "--json")
            o.json = true;
        else if (a == "--fit")
            o.fit = true;
        else if (a == "--timeline")
            o.timeline = true;
        else if (a == "--amsgrad")
            o.config.amsgrad = true;
        else if (a == "--no-set-to-none")
            o.config.zeroGradSetToNone = false;
        else if (a == "--offload")
            o.config.optimizerOffload = true;
        else if (a == "--first-step")
            o.config.firstStep = true;
        else if (a == "--log")
            o.logScale = true;
        else if (a == "--preset") {
            BF_NEXT(v);
            o.preset = v;
        } else if (a == "--model") {
            BF_NEXT(v);
            o.modelFile = v;
        } else if (a == "--out") {
            BF_NEXT(v);
            o.out = v;
        } else if (a == "--measured") {
            BF_NEXT(v);
            o.measuredFile = v;
        } else if (a == "--hf-config") {
            BF_NEXT(v);
            o.hfConfig = v;
        } else if (a == "--onnx") {
            BF_NEXT(v);
            o.onnxFile = v;
        } else if (a == "--onnx-allow-opaque")
            o.onnxAllowOpaque = true;
        else if (a == "--onnx-loss") {
            BF_NEXT(v);
            if (v != "cross-entropy" && v != "mse" && v != "none")
                return makeError("--onnx-loss must be cross-entropy, mse or none, got '" + v + "'");
            o.onnxLoss = v;
        } else if (a == "--attention") {
            BF_NEXT(v);
            if (v != "eager" && v != "mem_efficient" && v != "flash")
                return makeError("--attention must be eager, mem_efficient or flash, got '" + v + "'");
            o.attention = v;
        } else if (a == "--moe-load") {
            BF_NEXT(v);
            if (v != "balanced" && v != "worst")
                return makeError("--moe-load must be balanced or worst, got '" + v + "'");
            o.moeLoad = v;
        } else if (a == "--seq") {
            BF_NEXT(v);
            auto r = parseInt(v, a, 1, std::int64_t{1} << 24);
            if (!r) return r.error();
            o.sequence = *r;
        } else if (a == "--lang") {
            BF_NEXT(v);
            o.lang = v;
        } else if (a == "--batch") {
            BF_NEXT(v);
            auto b = parseInt(v, a, 1, std::int64_t{1} << 31);
            if (!b) return b.error();
            o.batch = *b;
            o.batchGiven = true;
        } else if (a == "--gpu") {
            BF_NEXT(v);
            auto g = parseGpu(v);
            if (!g) return g.error();
            o.gpu = *g;
        } else if (a == "--optimizer") {
            BF_NEXT(v);
            auto r = parseOptimizer(v);
            if (!r) return r.error();
            o.config.optimizer = *r;
        } else if (a == "--impl") {
            BF_NEXT(v);
            auto r = parseOptimizerImpl(v);
            if (!r) return r.error();
            o.config.impl = *r;
        } else if (a == "--precision") {
            BF_NEXT(v);
            auto r = parsePrecision(v);
            if (!r) return r.error();
            o.config.precision = *r;
        } else if (a == "--checkpointing") {
            BF_NEXT(v);
            auto r = parseCheckpointing(v);
            if (!r) return r.error();
            o.config.checkpointing = *r;
            checkpointingGiven = true;
        } else if (a == "--quant") {
            BF_NEXT(v);
            auto r = parseQuantKind(v);
            if (!r) return makeError("--quant: " + r.error().message);
            o.config.quant.kind = *r;
            quantGiven = true;
        } else if (a == "--double-quant") {
            o.config.quant.doubleQuant = true;
        } else if (a == "--no-kbit-prepare") {
            o.config.quant.prepare = false;
        } else if (a == "--compute-dtype") {
            BF_NEXT(v);
            const auto d = parseDType(v);
            if (!d || !isFloating(*d) || *d == DType::Float64)
                return makeError("--compute-dtype expects fp32, bf16 or fp16, got '" + v + "'");
            o.config.quant.computeDtype = *d;
        } else if (a == "--gpus" || a == "--gpus-per-node") {
            BF_NEXT(v);
            auto r = parseInt(v, a, 1, 100000);
            if (!r) return r.error();
            (a == "--gpus" ? o.config.parallel.gpus : o.config.parallel.gpusPerNode) = *r;
        } else if (a == "--strategy") {
            BF_NEXT(v);
            auto r = parseParallelStrategy(v);
            if (!r) return makeError("--strategy: " + r.error().message);
            o.config.parallel.strategy = *r;
        } else if (a == "--zero-impl") {
            BF_NEXT(v);
            auto r = parseZeroImpl(v);
            if (!r) return makeError("--zero-impl: " + r.error().message);
            o.config.parallel.zeroImpl = *r;
        } else if (a == "--bucket-cap-mb") {
            BF_NEXT(v);
            auto r = parseDouble(v, a);
            if (!r) return r.error();
            if (!(*r > 0 && *r <= 1e6)) return makeError("--bucket-cap-mb must be positive, got " + v);
            o.config.parallel.bucketCapMb = *r;
        } else if (a == "--gradient-as-bucket-view") {
            o.config.parallel.gradientAsBucketView = true;
        } else if (a == "--reduce-bucket-size" || a == "--stage3-param-persistence-threshold") {
            BF_NEXT(v);
            auto r = parseInt(v, a, 0, std::int64_t{1} << 50);
            if (!r) return r.error();
            (a == "--reduce-bucket-size" ? o.config.parallel.reduceBucketSize
                                         : o.config.parallel.stage3ParamPersistenceThreshold) = *r;
        } else if (a == "--overlap-comm") {
            BF_NEXT(v);
            if (v != "on" && v != "off")
                return makeError("--overlap-comm must be on or off, got '" + v + "'");
            o.config.parallel.overlapComm = v == "on" ? 1 : 0;
        } else if (a == "--no-limit-all-gathers") {
            o.config.parallel.limitAllGathers = false;
        } else if (a == "--backward-prefetch") {
            BF_NEXT(v);
            if (v != "pre" && v != "post")
                return makeError("--backward-prefetch must be pre or post, got '" + v + "'");
            o.config.parallel.backwardPrefetchPre = v == "pre";
        } else if (a == "--no-reshard-after-forward") {
            o.config.parallel.reshardAfterForward = false;
        } else if (a == "--tp") {
            BF_NEXT(v);
            auto r = parseInt(v, a, 1, 1024);
            if (!r) return r.error();
            o.config.parallel.tp = *r;
        } else if (a == "--pp" || a == "--microbatches") {
            BF_NEXT(v);
            auto r = parseInt(v, a, 1, 4096);
            if (!r) return r.error();
            (a == "--pp" ? o.config.parallel.pp : o.config.parallel.microbatches) = *r;
        } else if (a == "--sequence-parallel") {
            o.config.parallel.sequenceParallel = true;
        } else if (a == "--torch") {
            BF_NEXT(v);
            auto r = parseTorchRules(v);
            if (!r) return r.error();
            o.config.torch = *r;
        } else if (a == "--checkpoint-mode") {
            BF_NEXT(v);
            auto r = parseCheckpointMode(v);
            if (!r) return r.error();
            o.config.checkpointMode = *r;
            checkpointingGiven = true;
        } else if (a == "--lora-rank") {
            BF_NEXT(v);
            auto r = parseInt(v, a, 1, 65536);
            if (!r) return r.error();
            o.config.lora.rank = *r;
        } else if (a == "--lora-alpha" || a == "--lora-dropout") {
            BF_NEXT(v);
            auto r = parseDouble(v, a);
            if (!r) return r.error();
            if (a == "--lora-alpha") {
                if (!(*r > 0 && *r <= 1e6)) return makeError("--lora-alpha must be positive, got " + v);
                o.config.lora.alpha = *r;
            } else {
                if (!(*r >= 0 && *r < 1)) return makeError("--lora-dropout must be in [0, 1), got " + v);
                o.config.lora.dropout = *r;
            }
        } else if (a == "--freeze" || a == "--train-only" || a == "--lora-targets") {
            BF_NEXT(v);
            std::vector<std::string> globs;
            std::size_t start = 0;
            while (start <= v.size()) {
                const auto comma = v.find(',', start);
                std::string g =
                    v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
                const auto b = g.find_first_not_of(' '), e = g.find_last_not_of(' ');
                g = b == std::string::npos ? std::string() : g.substr(b, e - b + 1);
                if (g.empty())
                    return makeError(a + " expects comma-separated layer path patterns, got '" + v + "'");
                globs.push_back(std::move(g));
                if (comma == std::string::npos) break;
                start = comma + 1;
            }
            (a == "--freeze"       ? o.config.freeze
             : a == "--train-only" ? o.config.trainOnly
                                   : o.config.lora.targets) = std::move(globs);
        } else if (a == "--checkpoint-every") {
            BF_NEXT(v);
            auto r = parseInt(v, a, 1, 1000000);
            if (!r) return r.error();
            o.config.checkpointEvery = *r;
        } else if (a == "--accumulation") {
            BF_NEXT(v);
            auto r = parseInt(v, a, 1, 1000000);
            if (!r) return r.error();
            o.config.accumulationSteps = *r;
        } else if (a == "--margin") {
            BF_NEXT(v);
            const bool pct = !v.empty() && v.back() == '%';
            auto r = parseDouble(pct ? v.substr(0, v.size() - 1) : v, a);
            if (!r) return r.error();
            const double f = pct ? *r / 100.0 : *r;
            if (!(f >= 0 && f < 1)) return makeError("--margin must be in [0, 1) or [0%, 100%), got " + v);
            o.config.marginFraction = f;
        } else if (a == "--context-mib") {
            BF_NEXT(v);
            auto r = parseInt(v, a, 0, 1 << 20);
            if (!r) return r.error();
            o.config.cudaContextBytes = static_cast<std::uint64_t>(*r) << 20;
        } else if (a == "--cublas-workspace-kib") {
            BF_NEXT(v);
            auto r = parseInt(v, a, 0, 1 << 22);
            if (!r) return r.error();
            o.config.cublasWorkspaceBytes = static_cast<std::uint64_t>(*r) << 10;
        } else if (a == "--alloc-conf") {
            BF_NEXT(v);
            auto c = parseAllocConf(v);
            if (!c) return makeError("--alloc-conf: " + c.error().message);
            o.config.allocConf = allocConfText(*c);
            o.allocConfGiven = true;
        } else if (a == "--replay-seqs") {
            BF_NEXT(v);
            auto seqs = parseReplaySequences(v);
            if (!seqs) return makeError(a + ": " + seqs.error().message);
            if (seqs->empty()) return makeError(a + ": expected comma-separated sequence lengths, got ''");
            o.config.replaySequences = std::move(*seqs);
        } else if (a == "--epoch-samples") {
            BF_NEXT(v);
            auto r = parseInt(v, a, 1, kMaxEpochSamples);
            if (!r) return r.error();
            o.config.epochSamples = *r;
        } else if (a == "--fragmentation") {
            BF_NEXT(v);
            auto r = parseDouble(v, a);
            if (!r) return r.error();
            if (!(*r >= 0 && *r < 1)) return makeError("--fragmentation must be in [0, 1), got " + v);
            o.config.fragmentationFraction = *r;
        } else if (a == "--trace-out") {
            BF_NEXT(v);
            o.traceOut = v;
        } else if (a == "--capacity") {
            BF_NEXT(v);
            auto r = parseCapacity(v, a);
            if (!r) return r.error();
            o.capacity = *r;
        } else if (a == "--memory-fraction") {
            BF_NEXT(v);
            auto r = parseDouble(v, a);
            if (!r) return r.error();
            if (!(*r > 0 && *r <= 1)) return makeError("--memory-fraction must be in (0, 1], got " + v);
            o.memoryFraction = *r;
        } else if (a == "--top") {
            BF_NEXT(v);
            auto r = parseInt(v, a, 0, 100000);
            if (!r) return r.error();
            o.top = static_cast<int>(*r);
        } else if (a == "--seq-from" || a == "--seq-to" || a == "--seq-step") {
            BF_NEXT(v);
            auto r = parseInt(v, a, 1, std::int64_t{1} << 24);
            if (!r) return r.error();
            if (a == "--seq-from")
                o.seqFrom = *r;
            else if (a == "--seq-to")
                o.seqTo = *r;
            else
                o.seqStep = *r;
        } else if (a == "--from" || a == "--to" || a == "--step") {
            BF_NEXT(v);
            auto r = parseInt(v, a, 1, std::int64_t{1} << 31);
            if (!r) return r.error();
            if (a == "--from")
                o.from = *r;
            else if (a == "--to")
                o.to = *r;
            else {
                o.step = *r;
                o.logScale = false;
            }
        } else if (!a.empty() && a[0] == '-') {
            return makeError("unknown option '" + a + "' (see --help)");
        } else if (o.command.empty()) {
            o.command = a;
        } else if (o.command == "allocator-replay" && o.trace.empty()) {
            o.trace = a;
        } else {
            return makeError("unexpected argument '" + a + "'");
        }
#undef BF_NEXT
    }
    if (quantGiven) applyQuantDefaults(o.config, checkpointingGiven);
    const ParallelConfig& par = o.config.parallel;
    if (auto problem = sequenceParallelProblem(par); !problem.empty())
        return makeError("--sequence-parallel: " + problem);
    if (par.gpus % (par.tp * par.pp))
        return makeError((par.pp > 1 ? "--tp x --pp " + std::to_string(par.tp * par.pp)
                                     : "--tp " + std::to_string(par.tp)) +
                         " must divide --gpus " + std::to_string(par.gpus));
    if (par.dataParallel() > 1 && par.strategy == ParallelStrategy::None)
        return makeError("--gpus " + std::to_string(par.gpus) +
                         (par.tp > 1 ? " with --tp " + std::to_string(par.tp) : std::string()) +
                         " needs a --strategy (ddp, zero1, zero2, zero3, fsdp, fsdp-grad-op, hsdp, fsdp2)");
    if (par.dataParallel() == 1 && par.strategy != ParallelStrategy::None)
        return makeError("--strategy " + std::string(parallelStrategyName(par.strategy)) +
                         " needs --gpus N with more than one data-parallel replica (N / --tp > 1)");
    return o;
}

} // namespace batchfit
