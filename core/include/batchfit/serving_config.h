#pragma once
// The serving set-up: which engine, its memory settings and the weights' quantization (the "serving." group
// of the settings table, batchfit/settings.h; docs/serving.md).
#include "batchfit/result.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace batchfit {

/// The inference engine whose memory rules apply.
enum class ServingEngine {
    Vllm,     ///< vLLM's V1 engine, at ServingConfig::engineVersion
    VllmV0,   ///< vLLM's V0 engine (last shipped in 0.10.2)
    Sglang,   ///< SGLang (mem_fraction_static)
    Hf,       ///< Hugging Face generate() with DynamicCache
    HfStatic, ///< Hugging Face generate() with StaticCache
};

/// The weights' storage as served.
enum class WeightQuant {
    Auto, ///< the config's quantization_config, else its torch_dtype (bf16 for fp32 checkpoints)
    None, ///< the model dtype (bf16/fp16)
    Fp8,  ///< fp8 e4m3, one fp32 scale per output channel
    Int8, ///< int8 w8a8, one fp32 scale per output channel
    Awq,  ///< 4-bit AWQ: int32-packed codes, fp16 scales and packed zeros per group
    Gptq, ///< 4-bit GPTQ: as AWQ plus g_idx (one int32 per input)
    Nf4,  ///< bitsandbytes 4-bit: 0.5 B + an fp32 absmax per 64
};

/// The KV cache's element type.
enum class KvCacheDtype { Auto, Fp8 };

struct ServingConfig {
    ServingEngine engine = ServingEngine::Vllm;
    /// The vLLM release whose rules apply, its minor number (0.11 -> 11; 8 to 34); ignored elsewhere.
    int engineVersion = 34;
    /// vLLM's gpu_memory_utilization, SGLang's mem_fraction_static; unset: the engine's default.
    std::optional<double> memoryFraction;
    std::int64_t maxModelLen = 0;         ///< 0: the config's max_position_embeddings
    std::int64_t maxNumSeqs = 0;          ///< 0: the engine's default for the GPU
    std::int64_t maxNumBatchedTokens = 0; ///< 0: the engine's default for the GPU
    std::int64_t blockSize = 0;           ///< 0: the engine's default (vLLM 16, 64 from 0.34; SGLang 1)
    KvCacheDtype kvCacheDtype = KvCacheDtype::Auto;
    WeightQuant quant = WeightQuant::Auto;
    std::int64_t quantGroupSize = 128; ///< AWQ/GPTQ group size
    bool enforceEager = false;         ///< no CUDA graphs
    /// Figures read off the engine's own start-up log, replacing BatchFit's (0: BatchFit's).
    std::uint64_t activationBytes = 0; ///< "PyTorch activation peak memory takes"
    std::uint64_t nonTorchBytes = 0;   ///< "non_torch_memory takes" (the increase after start-up)
    std::uint64_t cudaGraphBytes = 0;  ///< the CUDA-graph estimate vLLM >= 0.20 subtracts
    /// vLLM's --kv-cache-memory: the KV cache's bytes, taken as they are (the profile still runs).
    std::uint64_t kvCacheMemoryBytes = 0;

    bool operator==(const ServingConfig&) const = default;
};

std::string_view servingEngineName(ServingEngine e); ///< "vllm", "vllm-v0", "sglang", "hf", "hf-static"
Result<ServingEngine> parseServingEngine(std::string_view text);
std::vector<ServingEngine> allServingEngines();
std::string_view weightQuantName(WeightQuant q); ///< "auto", "none", "fp8", "int8", "awq", "gptq", "nf4"
Result<WeightQuant> parseWeightQuant(std::string_view text);
std::vector<WeightQuant> allWeightQuants();
std::string_view kvCacheDtypeName(KvCacheDtype d); ///< "auto", "fp8"
Result<KvCacheDtype> parseKvCacheDtype(std::string_view text);

} // namespace batchfit
