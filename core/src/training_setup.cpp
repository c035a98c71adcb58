#include "batchfit/training_setup.h"

#include "batchfit/allocator_config.h"
#include "json_text.h"
#include "training_setup_json.h"

#include <cmath>
#include <functional>
#include <map>

namespace batchfit {

TrainingSetup makeTrainingSetup(const GpuSpec& gpu, std::int64_t batch, const TrainingConfig& config) {
    TrainingSetup s;
    s.gpuId = gpu.id;
    s.customGpuBytes = gpu.id == "custom" ? gpu.memoryBytes : 0;
    s.batch = batch;
    s.config = config;
    return s;
}

Result<GpuSpec> setupGpu(const TrainingSetup& setup) {
    if (setup.gpuId != "custom") return findGpu(setup.gpuId);
    GpuSpec g = customGpu(static_cast<double>(setup.customGpuBytes) / double(1ull << 30));
    g.memoryBytes = setup.customGpuBytes; // exact, not through a double
    return g;
}

namespace setupjson {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

constexpr std::int64_t kMaxBatch = std::int64_t{1} << 31;
constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 50; // 1 PiB: far above any device

class Reader {
public:
    Reader(std::string source, std::string path) : m_source(std::move(source)), m_path(std::move(path)) {}

    Error fail(const std::string& key, const std::string& msg) const {
        return makeError(m_source + ": " + m_path + "." + key + ": " + msg);
    }

    Status integer(const json& j, const std::string& key, std::int64_t min, std::int64_t max,
                   std::int64_t& out) const {
        if (!j.is_number_integer() && !j.is_number_unsigned())
            return fail(key, "expected an integer, got " + jsontext::kind(j));
        if (j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(max))
            return fail(key, "expected at most " + std::to_string(max) + ", got " + jsontext::describe(j));
        const auto v = j.get<std::int64_t>();
        if (v < min || v > max)
            return fail(key, "expected an integer from " + std::to_string(min) + " to " +
                                 std::to_string(max) + ", got " + jsontext::describe(j));
        out = v;
        return Ok{};
    }

    /// [256, 1024, 512]: sequence lengths (TrainingConfig::replaySequences).
    Status sequences(const json& j, const std::string& key, std::vector<std::int64_t>& out) const {
        if (!j.is_array())
            return fail(key, "expected an array of sequence lengths, got " + jsontext::kind(j));
        if (j.size() > kMaxReplaySequences)
            return fail(key, "expected at most " + std::to_string(kMaxReplaySequences) + " lengths, got " +
                                 std::to_string(j.size()));
        std::vector<std::int64_t> seqs;
        for (std::size_t i = 0; i < j.size(); ++i) {
            std::int64_t v = 0;
            if (auto s = integer(j[i], key + "[" + std::to_string(i) + "]", 1, std::int64_t{1} << 24, v); !s)
                return s;
            seqs.push_back(v);
        }
        out = std::move(seqs);
        return Ok{};
    }

    Status bytes(const json& j, const std::string& key, std::uint64_t min, std::uint64_t& out) const {
        std::int64_t v = 0;
        if (auto s = integer(j, key, static_cast<std::int64_t>(min), static_cast<std::int64_t>(kMaxBytes), v);
            !s)
            return s;
        out = static_cast<std::uint64_t>(v);
        return Ok{};
    }

    Status fraction(const json& j, const std::string& key, double& out) const {
        if (!j.is_number()) return fail(key, "expected a number in [0, 1), got " + jsontext::kind(j));
        const double v = j.get<double>();
        if (!std::isfinite(v) || v < 0 || v >= 1)
            return fail(key, "expected a number in [0, 1), got " + jsontext::describe(j));
        out = v;
        return Ok{};
    }

    Status boolean(const json& j, const std::string& key, bool& out) const {
        if (!j.is_boolean()) return fail(key, "expected true or false, got " + jsontext::kind(j));
        out = j.get<bool>();
        return Ok{};
    }

    /// An array of glob patterns (--freeze, --train-only).
    Status patterns(const json& j, const std::string& key, std::vector<std::string>& out) const {
        if (!j.is_array())
            return fail(key, "expected an array of layer path patterns, got " + jsontext::kind(j));
        if (j.size() > 4096) return fail(key, "expected at most 4096 patterns");
        out.clear();
        for (std::size_t i = 0; i < j.size(); ++i) {
            const std::string k = key + "[" + std::to_string(i) + "]";
            if (!j[i].is_string() || j[i].get<std::string>().empty() || j[i].get<std::string>().size() > 1000)
                return fail(k, "expected a non-empty layer path pattern (e.g. \"layer1*\"), got " +
                                   jsontext::describe(j[i]));
            out.push_back(j[i].get<std::string>());
        }
        return Ok{};
    }

    /// {"rank": 16, "alpha": 32, "dropout": 0.05, "targets": ["q_proj", "v_proj"]}
    Status lora(const json& j, const std::string& key, LoraConfig& out) const {
        if (!j.is_object())
            return fail(key, "expected an object (rank, alpha, dropout, targets), got " + jsontext::kind(j));
        LoraConfig l;
        for (auto it = j.begin(); it != j.end(); ++it) {
            const std::string k = key + "." + it.key();
            if (it.key() == "rank") {
                if (auto s = integer(it.value(), k, 1, 65536, l.rank); !s) return s;
            } else if (it.key() == "alpha" || it.key() == "dropout") {
                const json& v = it.value();
                if (!v.is_number() || !std::isfinite(v.get<double>()))
                    return fail(k, "expected a number, got " + jsontext::describe(v));
                const double d = v.get<double>();
                if (it.key() == "alpha" && !(d > 0 && d <= 1e6)) return fail(k, "expected a positive number");
                if (it.key() == "dropout" && !(d >= 0 && d < 1))
                    return fail(k, "expected a number in [0, 1)");
                (it.key() == "alpha" ? l.alpha : l.dropout) = d;
            } else if (it.key() == "targets") {
                if (auto s = patterns(it.value(), k, l.targets); !s) return s;
            } else {
                return fail(k, "unknown key (expected rank, alpha, dropout, targets)");
            }
        }
        if (l.rank == 0) return fail(key + ".rank", "missing (the LoRA rank r, e.g. 16)");
        out = std::move(l);
        return Ok{};
    }

    /// {"type": "nf4", "double_quant": true, "compute_dtype": "bfloat16", "prepare": true}
    Status quant(const json& j, const std::string& key, QuantConfig& out) const {
        if (!j.is_object())
            return fail(key, "expected an object (type, double_quant, compute_dtype, prepare), got " +
                                 jsontext::kind(j));
        QuantConfig q;
        bool typed = false;
        for (auto it = j.begin(); it != j.end(); ++it) {
            const std::string k = key + "." + it.key();
            if (it.key() == "type") {
                if (auto s = name(it.value(), k, &parseQuantKind, q.kind); !s) return s;
                typed = true;
            } else if (it.key() == "double_quant") {
                if (auto s = boolean(it.value(), k, q.doubleQuant); !s) return s;
            } else if (it.key() == "prepare") {
                if (auto s = boolean(it.value(), k, q.prepare); !s) return s;
            } else if (it.key() == "compute_dtype") {
                const json& v = it.value();
                const auto d = v.is_string() ? parseDType(v.get<std::string>()) : std::nullopt;
                if (!d || !isFloating(*d) || *d == DType::Float64)
                    return fail(k, "expected float32, bfloat16 or float16, got " + jsontext::describe(v));
                q.computeDtype = *d;
            } else {
                return fail(k, "unknown key (expected type, double_quant, compute_dtype, prepare)");
            }
        }
        if (!typed) return fail(key + ".type", "missing (nf4, fp4, int8 or none)");
        out = q;
        return Ok{};
    }

    /// {"gpus": 8, "strategy": "fsdp", "gpus_per_node": 8, ...}: ParallelConfig's fields
    Status parallel(const json& j, const std::string& key, ParallelConfig& out) const {
        if (!j.is_object())
            return fail(key, "expected an object (gpus, strategy, ...), got " + jsontext::kind(j));
        ParallelConfig p;
        for (auto it = j.begin(); it != j.end(); ++it) {
            const std::string k = key + "." + it.key();
            const std::string& f = it.key();
            Status st = Ok{};
            if (f == "gpus" || f == "gpus_per_node") {
                st = integer(it.value(), k, 1, 100000, f == "gpus" ? p.gpus : p.gpusPerNode);
            } else if (f == "tp" || f == "pp") {
                st = integer(it.value(), k, 1, f == "tp" ? 1024 : 4096, f == "tp" ? p.tp : p.pp);
            } else if (f == "microbatches") {
                st = integer(it.value(), k, 1, 1000000, p.microbatches);
            } else if (f == "strategy") {
                st = name(it.value(), k, &parseParallelStrategy, p.strategy);
            } else if (f == "zero_impl") {
                st = name(it.value(), k, &parseZeroImpl, p.zeroImpl);
            } else if (f == "bucket_cap_mb") {
                const json& v = it.value();
                if (!v.is_number() || !(v.get<double>() > 0 && v.get<double>() <= 1e6))
                    return fail(k, "expected a positive number of MiB, got " + jsontext::describe(v));
                p.bucketCapMb = v.get<double>();
            } else if (f == "gradient_as_bucket_view") {
                st = boolean(it.value(), k, p.gradientAsBucketView);
            } else if (f == "sequence_parallel") {
                st = boolean(it.value(), k, p.sequenceParallel);
            } else if (f == "reduce_bucket_size" || f == "stage3_param_persistence_threshold") {
                st = integer(it.value(), k, 0, std::int64_t{1} << 50,
                             f == "reduce_bucket_size" ? p.reduceBucketSize
                                                       : p.stage3ParamPersistenceThreshold);
            } else if (f == "overlap_comm") {
                bool on = false;
                st = boolean(it.value(), k, on);
                p.overlapComm = on ? 1 : 0;
            } else if (f == "limit_all_gathers") {
                st = boolean(it.value(), k, p.limitAllGathers);
            } else if (f == "reshard_after_forward") {
                st = boolean(it.value(), k, p.reshardAfterForward);
            } else if (f == "backward_prefetch") {
                const json& v = it.value();
                if (!v.is_string() || (v.get<std::string>() != "pre" && v.get<std::string>() != "post"))
                    return fail(k, "expected \"pre\" or \"post\", got " + jsontext::describe(v));
                p.backwardPrefetchPre = v.get<std::string>() == "pre";
            } else {
                return fail(k,
                            "unknown key (expected gpus, tp, sequence_parallel, pp, microbatches, strategy, "
                            "gpus_per_node, zero_impl, bucket_cap_mb, "
                            "gradient_as_bucket_view, reduce_bucket_size, overlap_comm, "
                            "stage3_param_persistence_threshold, limit_all_gathers, backward_prefetch, "
                            "reshard_after_forward)");
            }
            if (!st) return st;
        }
        if (p.gpus % (p.tp * p.pp))
            return fail(key + ".tp", "tp x pp must divide gpus (" + std::to_string(p.gpus) + ")");
        if (auto problem = sequenceParallelProblem(p); !problem.empty())
            return fail(key + ".sequence_parallel", problem);
        if (p.dataParallel() > 1 && p.strategy == ParallelStrategy::None)
            return fail(key + ".strategy",
                        "missing (several replicas need a strategy: ddp, zero1, ..., fsdp2)");
        out = p;
        return Ok{};
    }

    template <class E>
    Status name(const json& j, const std::string& key, Result<E> (*parse)(std::string_view), E& out) const {
        if (!j.is_string()) return fail(key, "expected a string, got " + jsontext::kind(j));
        auto r = parse(j.get<std::string>());
        if (!r) return fail(key, r.error().message);
        out = *r;
        return Ok{};
    }

private:
    std::string m_source;
    std::string m_path;
};

} // namespace

Result<TrainingSetup> read(const json& j, const std::string& source, const std::string& path) {
    if (!j.is_object())
        return makeError(source + ": " + path + ": expected an object, got " + jsontext::kind(j));
    const Reader r(source, path);
    TrainingSetup s;
    TrainingConfig& c = s.config;
    std::uint64_t context = 0, cublas = 0;
    const std::map<std::string, std::function<Status(const json&, const std::string&)>> fields = {
        {"gpu",
         [&](const json& v, const std::string& k) -> Status {
             if (!v.is_string()) return r.fail(k, "expected a GPU id, got " + jsontext::kind(v));
             s.gpuId = v.get<std::string>();
             return Ok{};
         }},
        {"gpu_memory_bytes",
         [&](const json& v, const std::string& k) { return r.bytes(v, k, 1, s.customGpuBytes); }},
        {"batch",
         [&](const json& v, const std::string& k) { return r.integer(v, k, 1, kMaxBatch, s.batch); }},
        {"optimizer",
         [&](const json& v, const std::string& k) { return r.name(v, k, &parseOptimizer, c.optimizer); }},
        {"optimizer_impl",
         [&](const json& v, const std::string& k) { return r.name(v, k, &parseOptimizerImpl, c.impl); }},
        {"amsgrad", [&](const json& v, const std::string& k) { return r.boolean(v, k, c.amsgrad); }},
        {"rmsprop_momentum",
         [&](const json& v, const std::string& k) { return r.boolean(v, k, c.rmspropMomentum); }},
        {"rmsprop_centered",
         [&](const json& v, const std::string& k) { return r.boolean(v, k, c.rmspropCentered); }},
        {"precision",
         [&](const json& v, const std::string& k) { return r.name(v, k, &parsePrecision, c.precision); }},
        {"checkpointing",
         [&](const json& v, const std::string& k) {
             return r.name(v, k, &parseCheckpointing, c.checkpointing);
         }},
        {"checkpoint_mode",
         [&](const json& v, const std::string& k) {
             return r.name(v, k, &parseCheckpointMode, c.checkpointMode);
         }},
        {"checkpoint_every",
         [&](const json& v, const std::string& k) { return r.integer(v, k, 1, 1000000, c.checkpointEvery); }},
        {"accumulation_steps",
         [&](const json& v, const std::string& k) {
             return r.integer(v, k, 1, 1000000, c.accumulationSteps);
         }},
        {"zero_grad_set_to_none",
         [&](const json& v, const std::string& k) { return r.boolean(v, k, c.zeroGradSetToNone); }},
        {"optimizer_offload",
         [&](const json& v, const std::string& k) { return r.boolean(v, k, c.optimizerOffload); }},
        {"first_step", [&](const json& v, const std::string& k) { return r.boolean(v, k, c.firstStep); }},
        {"torch",
         [&](const json& v, const std::string& k) { return r.name(v, k, &parseTorchRules, c.torch); }},
        {"freeze", [&](const json& v, const std::string& k) { return r.patterns(v, k, c.freeze); }},
        {"train_only", [&](const json& v, const std::string& k) { return r.patterns(v, k, c.trainOnly); }},
        {"lora", [&](const json& v, const std::string& k) { return r.lora(v, k, c.lora); }},
        {"quant", [&](const json& v, const std::string& k) { return r.quant(v, k, c.quant); }},
        {"parallel", [&](const json& v, const std::string& k) { return r.parallel(v, k, c.parallel); }},
        {"cuda_context_bytes",
         [&](const json& v, const std::string& k) {
             auto st = r.bytes(v, k, 0, context);
             if (st) c.cudaContextBytes = context;
             return st;
         }},
        {"cublas_workspace_bytes",
         [&](const json& v, const std::string& k) {
             auto st = r.bytes(v, k, 0, cublas);
             if (st) c.cublasWorkspaceBytes = cublas;
             return st;
         }},
        {"fragmentation_fraction",
         [&](const json& v, const std::string& k) {
             double f = 0;
             auto st = r.fraction(v, k, f);
             if (st) c.fragmentationFraction = f;
             return st;
         }},
        {"alloc_conf",
         [&](const json& v, const std::string& k) {
             if (!v.is_string())
                 return Status(
                     r.fail(k, "expected a PYTORCH_CUDA_ALLOC_CONF string, got " + jsontext::kind(v)));
             auto conf = parseAllocConf(v.get<std::string>());
             if (!conf) return Status(r.fail(k, conf.error().message));
             c.allocConf = allocConfText(*conf);
             return Status(Ok{});
         }},
        {"replay_sequences",
         [&](const json& v, const std::string& k) { return r.sequences(v, k, c.replaySequences); }},
        {"epoch_samples",
         [&](const json& v, const std::string& k) {
             std::int64_t n = 0;
             auto st = r.integer(v, k, 1, kMaxEpochSamples, n);
             if (st) c.epochSamples = n;
             return st;
         }},
        {"margin_fraction",
         [&](const json& v, const std::string& k) { return r.fraction(v, k, c.marginFraction); }},
    };
    for (auto it = j.begin(); it != j.end(); ++it) {
        auto f = fields.find(it.key());
        if (f == fields.end()) {
            std::string known;
            for (const auto& [k, unused] : fields) known += (known.empty() ? "" : ", ") + k;
            return r.fail(it.key(), "unknown key (expected one of: " + known + ")");
        }
        if (auto st = f->second(it.value(), it.key()); !st) return st.error();
    }
    if (s.gpuId == "custom") {
        if (!j.contains("gpu_memory_bytes"))
            return r.fail("gpu_memory_bytes", "missing (a \"custom\" GPU needs its capacity in bytes)");
    } else if (auto g = findGpu(s.gpuId); !g) {
        return r.fail("gpu", g.error().message);
    } else {
        s.gpuId = g->id; // ids are case-insensitive: keep the catalogue's spelling
    }
    return s;
}

ojson quantJson(const QuantConfig& quant) {
    ojson q;
    q["type"] = std::string(quantKindName(quant.kind));
    q["double_quant"] = quant.doubleQuant;
    q["compute_dtype"] = std::string(dtypeName(quant.computeDtype));
    q["prepare"] = quant.prepare;
    return q;
}

ojson write(const TrainingSetup& s) {
    const TrainingConfig& c = s.config;
    ojson o;
    o["gpu"] = s.gpuId;
    if (s.gpuId == "custom") o["gpu_memory_bytes"] = s.customGpuBytes;
    o["batch"] = s.batch;
    o["optimizer"] = std::string(optimizerName(c.optimizer));
    o["optimizer_impl"] = std::string(optimizerImplName(c.impl));
    o["amsgrad"] = c.amsgrad;
    o["rmsprop_momentum"] = c.rmspropMomentum;
    o["rmsprop_centered"] = c.rmspropCentered;
    o["precision"] = std::string(precisionName(c.precision));
    o["checkpointing"] = std::string(checkpointingName(c.checkpointing));
    o["checkpoint_every"] = c.checkpointEvery;
    o["checkpoint_mode"] = std::string(checkpointModeName(c.checkpointMode));
    o["accumulation_steps"] = c.accumulationSteps;
    o["zero_grad_set_to_none"] = c.zeroGradSetToNone;
    o["optimizer_offload"] = c.optimizerOffload;
    o["first_step"] = c.firstStep;
    o["torch"] = std::string(torchRulesName(c.torch));
    if (!c.freeze.empty()) o["freeze"] = c.freeze;
    if (!c.trainOnly.empty()) o["train_only"] = c.trainOnly;
    if (c.lora.rank > 0) {
        ojson l;
        l["rank"] = c.lora.rank;
        l["alpha"] = c.lora.alpha;
        l["dropout"] = c.lora.dropout;
        if (!c.lora.targets.empty()) l["targets"] = c.lora.targets;
        o["lora"] = l;
    }
    if (c.quant.enabled()) o["quant"] = quantJson(c.quant);
    if (c.parallel != ParallelConfig{}) {
        const ParallelConfig& p = c.parallel;
        ojson q;
        q["gpus"] = p.gpus;
        q["tp"] = p.tp;
        if (p.sequenceParallel) q["sequence_parallel"] = true;
        q["pp"] = p.pp;
        if (p.microbatches > 0) q["microbatches"] = p.microbatches;
        q["strategy"] = std::string(parallelStrategyName(p.strategy));
        q["gpus_per_node"] = p.gpusPerNode;
        q["zero_impl"] = std::string(zeroImplName(p.zeroImpl));
        q["bucket_cap_mb"] = p.bucketCapMb;
        q["gradient_as_bucket_view"] = p.gradientAsBucketView;
        q["reduce_bucket_size"] = p.reduceBucketSize;
        if (p.overlapComm >= 0) q["overlap_comm"] = p.overlapComm == 1;
        q["stage3_param_persistence_threshold"] = p.stage3ParamPersistenceThreshold;
        q["limit_all_gathers"] = p.limitAllGathers;
        q["backward_prefetch"] = p.backwardPrefetchPre ? "pre" : "post";
        q["reshard_after_forward"] = p.reshardAfterForward;
        o["parallel"] = q;
    }
    if (c.cudaContextBytes) o["cuda_context_bytes"] = *c.cudaContextBytes;
    if (c.cublasWorkspaceBytes) o["cublas_workspace_bytes"] = *c.cublasWorkspaceBytes;
    if (c.fragmentationFraction) o["fragmentation_fraction"] = *c.fragmentationFraction;
    if (!c.allocConf.empty()) o["alloc_conf"] = c.allocConf;
    if (!c.replaySequences.empty()) o["replay_sequences"] = c.replaySequences;
    if (c.epochSamples) o["epoch_samples"] = *c.epochSamples;
    o["margin_fraction"] = c.marginFraction;
    return o;
}

} // namespace setupjson
} // namespace batchfit
