// The settings table's serving group ("serving."): the engine and its memory settings, read by
// `batchfit-cli serve` (batchfit/serving_config.h, docs/serving.md). Written to a model file when not at
// their defaults.
#include "setting_builders.h"

namespace batchfit::settingdef {
namespace {

constexpr double kMaxLength = static_cast<double>(std::int64_t{1} << 26);
constexpr double kMaxBytes = static_cast<double>(std::int64_t{1} << 50);

SettingInfo lengthSetting(Names n, std::int64_t ServingConfig::*member, double max) {
    SettingInfo s = base(std::move(n), SettingType::Integer);
    bindIntOrUnset(
        s, [member](auto& t) -> auto& { return t.serving.*member; }, 0);
    range(s, 1, max);
    return s;
}

SettingInfo bytesSetting(Names n, std::uint64_t ServingConfig::*member) {
    SettingInfo s = base(std::move(n), SettingType::Bytes);
    s.unit = "MiB";
    bindIntOrUnset(
        s, [member](auto& t) -> auto& { return t.serving.*member; }, 0);
    range(s, 1, kMaxBytes);
    return s;
}

void addEngine(std::vector<SettingInfo>& out) {
    SettingInfo engine =
        base({"serving.engine", "--engine", "vllm|vllm-v0|sglang|hf|hf-static", "Serving engine",
              "serve: the engine whose KV-cache rules apply: vLLM's V1 engine (at "
              "--engine-version), its V0 engine, SGLang, or Hugging Face generate() with "
              "DynamicCache or StaticCache"},
             SettingType::Choice);
    bindChoice(
        engine, [](auto& t) -> auto& { return t.serving.engine; }, servingEngineName, parseServingEngine,
        allServingEngines());
    out.push_back(std::move(engine));

    SettingInfo version =
        base({"serving.engine_version", "--engine-version", "0.N", "vLLM version",
              "serve: the vLLM release whose rules apply, 0.7 to 0.34 (default 0.34): sliding windows "
              "kept whole before 0.10, CUDA graphs "
              "subtracted from 0.20, the printed token count from concurrency from 0.22, block 64 "
              "and the KV cache sized after capture from 0.34"},
             SettingType::Text);
    version.get = [](const TrainingSetup& t) -> SettingValue {
        return "0." + std::to_string(t.serving.engineVersion);
    };
    version.set = [](TrainingSetup& t, const SettingValue& v) {
        t.serving.engineVersion = std::stoi(std::get<std::string>(v).substr(2));
    };
    version.canonical = [](std::string_view text) -> Result<std::string> {
        const std::string s(text);
        int minor = -1;
        if (s.size() > 2 && s.size() <= 4 && s.rfind("0.", 0) == 0 &&
            s.find_first_not_of("0123456789", 2) == std::string::npos)
            minor = std::stoi(s.substr(2));
        if (minor < 7 || minor > 34)
            return makeError("expected a vLLM version from 0.7 to 0.34, got '" + s + "'");
        return "0." + std::to_string(minor);
    };
    out.push_back(std::move(version));

    SettingInfo fraction =
        base({"serving.gpu_memory_utilization", "--gpu-memory-utilization", "F", "GPU memory utilization",
              "serve: vLLM's gpu_memory_utilization (default 0.9; 0.92 from 0.20; 1.0 in 0.34), "
              "SGLang's mem_fraction_static (default: SGLang's rule for the GPU)"},
             SettingType::Number);
    fraction.minExcluded = true;
    bindOptional(
        fraction, [](auto& t) -> auto& { return t.serving.memoryFraction; });
    out.push_back(std::move(range(fraction, 0, 1)));
}

void addLimits(std::vector<SettingInfo>& out) {
    out.push_back(lengthSetting({"serving.max_model_len", "--max-model-len", "L", "Max model length",
                                 "serve: the longest request (default: max_position_embeddings)"},
                                &ServingConfig::maxModelLen, kMaxLength));
    out.push_back(lengthSetting({"serving.max_num_seqs", "--max-num-seqs", "N", "Max sequences",
                                 "serve: sequences at once (default: the engine's for the GPU)"},
                                &ServingConfig::maxNumSeqs, 1 << 20));
    out.push_back(lengthSetting(
        {"serving.max_num_batched_tokens", "--max-num-batched-tokens", "T", "Max batched tokens",
         "serve: tokens per step, the profile run's batch (default: the engine's for the "
         "GPU)"},
        &ServingConfig::maxNumBatchedTokens, kMaxLength));
    out.push_back(
        lengthSetting({"serving.block_size", "--block-size", "B", "KV block size",
                       "serve: tokens per KV block (default 16; 64 from vLLM 0.34; SGLang's page 1)"},
                      &ServingConfig::blockSize, 4096));
}

void addStorage(std::vector<SettingInfo>& out) {
    SettingInfo kv = base({"serving.kv_cache_dtype", "--kv-cache-dtype", "auto|fp8", "KV cache dtype",
                           "serve: the KV cache in the model's dtype, or fp8 (1 byte per element)"},
                          SettingType::Choice);
    bindChoice(
        kv, [](auto& t) -> auto& { return t.serving.kvCacheDtype; }, kvCacheDtypeName, parseKvCacheDtype,
        std::vector<KvCacheDtype>{KvCacheDtype::Auto, KvCacheDtype::Fp8});
    out.push_back(std::move(kv));

    SettingInfo quant = base({"serving.quantization", "--quantization", "Q", "Served weights",
                              "serve: auto (the config's quantization_config), none, fp8, int8 (w8a8), awq, "
                              "gptq (4-bit, --quant-group-size) or nf4 (bitsandbytes)"},
                             SettingType::Choice);
    bindChoice(
        quant, [](auto& t) -> auto& { return t.serving.quant; }, weightQuantName, parseWeightQuant,
        allWeightQuants());
    out.push_back(std::move(quant));

    SettingInfo group = base({"serving.quant_group_size", "--quant-group-size", "G", "Quantization group",
                              "serve: AWQ/GPTQ group size (default 128; the config's when it has one)"},
                             SettingType::Integer);
    bindInt(
        group, [](auto& t) -> auto& { return t.serving.quantGroupSize; });
    out.push_back(std::move(range(group, 1, 65536)));

    SettingInfo eager = base({"serving.enforce_eager", "--enforce-eager", "", "No CUDA graphs",
                              "serve: vLLM's enforce_eager (no CUDA-graph memory)"},
                             SettingType::Switch);
    eager.form = FlagForm::SetsTrue;
    bindBool(
        eager, [](auto& t) -> auto& { return t.serving.enforceEager; });
    out.push_back(std::move(eager));
}

void addMeasured(std::vector<SettingInfo>& out) {
    out.push_back(
        bytesSetting({"serving.activation_bytes", "--activation-mib", "N", "Activation peak (measured)",
                      "serve: the engine's own \"PyTorch activation peak memory\", in MiB, instead of "
                      "BatchFit's"},
                     &ServingConfig::activationBytes));
    out.push_back(
        bytesSetting({"serving.non_torch_bytes", "--non-torch-mib", "N", "Non-torch memory (measured)",
                      "serve: the engine's own \"non_torch_memory\", in MiB, instead of BatchFit's"},
                     &ServingConfig::nonTorchBytes));
    out.push_back(bytesSetting({"serving.cuda_graph_bytes", "--cuda-graph-mib", "N", "CUDA graphs (measured)",
                                "serve: the engine's own CUDA-graph memory estimate, in MiB (vLLM >= 0.20)"},
                               &ServingConfig::cudaGraphBytes));
    out.push_back(
        bytesSetting({"serving.kv_cache_memory_bytes", "--kv-cache-memory", "N", "KV cache memory",
                      "serve: vLLM's --kv-cache-memory, in MiB: the KV cache's size, taken as it is"},
                     &ServingConfig::kvCacheMemoryBytes));
}

} // namespace

void addServingSettings(std::vector<SettingInfo>& out) {
    addEngine(out);
    addLimits(out);
    addStorage(out);
    addMeasured(out);
}

} // namespace batchfit::settingdef
