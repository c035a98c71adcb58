#pragma once
// Serving: how many sequences of what length fit next to the weights, as vLLM, SGLang or Hugging Face
// generate() size their KV cache (docs/serving.md cites each rule's source file and function).
#include "batchfit/dtype.h"
#include "batchfit/gpu.h"
#include "batchfit/result.h"
#include "batchfit/serving_config.h"

#include <cstdint>
#include <string>
#include <vector>

namespace batchfit {

/// What one decoder layer keeps per token.
struct KvLayer {
    enum class Kind { Full, Sliding, Mla } kind = Kind::Full;
    std::int64_t kvHeads = 0; ///< Full/Sliding: key-value heads (all of them, before tensor parallelism)
    std::int64_t headDim = 0; ///< Full/Sliding: elements per head; Mla: kv_lora_rank + qk_rope_head_dim
    std::int64_t window = 0;  ///< Sliding: the window in tokens
};

/// One decoder layer's weights, in elements (all ranks together).
struct LayerWeights {
    std::uint64_t splitLinear = 0;   ///< linears split over tensor parallelism (q, o, MLP, experts)
    std::uint64_t kvLinear = 0;      ///< k and v projections: split, but replicated once kv_heads < tp
    std::uint64_t linearOutputs = 0; ///< sum of the linears' output features (per-channel scales)
    std::uint64_t linearInputs = 0;  ///< sum of their input features (GPTQ's g_idx)
    std::uint64_t other = 0;         ///< norms, biases, routers: kept in the model dtype, replicated
    /// The attention's linears (part of splitLinear and all of kvLinear), which quantization_config's
    /// modules_to_not_convert may keep in the model dtype.
    std::uint64_t attentionLinear = 0;
    bool attentionKept = false; ///< modules_to_not_convert names the attention: not quantized
    /// MLA: the elements of vLLM 0.7's absorbed decode matrices (W_QR, W_Q_UK, W_UV_O), act dtype.
    std::uint64_t mlaAbsorbed = 0;
};

/// A decoder-only model as a serving engine loads it, read from its Hugging Face config.json.
struct ServingModel {
    std::string name;      ///< _name_or_path, else the architecture
    std::string modelType; ///< model_type
    std::int64_t hidden = 0, heads = 0, kvHeads = 0, headDim = 0, vocab = 0;
    std::int64_t intermediate = 0;    ///< the dense MLP's width (0: none)
    std::int64_t experts = 0;         ///< routed experts (0: dense)
    std::int64_t topK = 0;            ///< experts per token
    std::int64_t moeIntermediate = 0; ///< one expert's width
    std::int64_t maxPositions = 0;    ///< max_position_embeddings
    std::int64_t rotaryDim = 0;       ///< the rotary cache's width (vLLM keeps cos/sin per position)
    bool tiedEmbeddings = false;
    DType dtype = DType::BFloat16;          ///< torch_dtype as served (fp32 checkpoints serve as bf16)
    WeightQuant quant = WeightQuant::None;  ///< from quantization_config
    std::int64_t quantGroupSize = 128;      ///< from quantization_config
    bool nf4DoubleQuant = false;            ///< bnb_4bit_use_double_quant: 8-bit absmax per 64
    std::vector<KvLayer> kv;                ///< one per decoder layer
    std::vector<LayerWeights> layerWeights; ///< one per decoder layer
    std::uint64_t finalNormParams = 0;      ///< the final norm

    /// Every parameter, the embedding once when tied.
    std::uint64_t parameterCount() const;
};

/// model_type values read: llama, mistral, qwen2, qwen3, gemma, gemma2, gemma3_text, phi3, mixtral,
/// qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3.
std::vector<std::string> servingModelTypes();
/// The model a config.json describes; errors name `source`, the JSON path and what was expected.
Result<ServingModel> readServingModel(const std::string& jsonText, const std::string& source);
Result<ServingModel> readServingModelFile(const std::string& path);

/// Where a serving set-up stands at one GPU of the engine (the most loaded rank).
struct ServingEstimate {
    ServingConfig config;              ///< with every default resolved (fraction, lengths, block size, quant)
    std::int64_t tp = 1, pp = 1;       ///< tensor and pipeline parallelism
    std::int64_t firstLayer = 0;       ///< the rank's first decoder layer
    std::int64_t stageLayers = 0;      ///< decoder layers on the rank (the stage with the fewest KV blocks)
    std::vector<KvLayer> groups;       ///< vLLM V1: one spec per KV-cache group
    std::int64_t layersPerGroup = 0;   ///< vLLM V1: layers sharing one block of the pool
    std::uint64_t totalBytes = 0;      ///< the GPU's memory
    std::uint64_t contextBytes = 0;    ///< the CUDA context and libraries before the engine starts
    std::uint64_t requestedBytes = 0;  ///< total x fraction (vLLM), what the engine may use
    std::uint64_t weightBytes = 0;     ///< weights and persistent buffers on the rank
    std::uint64_t activationBytes = 0; ///< the profile run's peak (forward or sampler)
    std::uint64_t nonTorchBytes = 0;   ///< non-torch memory after start-up (cuBLAS, attention, NCCL)
    std::uint64_t cudaGraphBytes = 0;  ///< subtracted before the KV cache (vLLM >= 0.20), else 0
    std::uint64_t marginBytes = 0;     ///< vLLM 0.34's safety margin after capture
    std::int64_t kvAvailableBytes =
        0; ///< memory for the KV cache (negative: the weights or profile do not fit)
    std::uint64_t bytesPerToken = 0;       ///< KV bytes per token on the rank, every layer
    std::uint64_t bytesPerBlock = 0;       ///< one block of every layer (vLLM), one token (SGLang, HF)
    std::int64_t blocks = 0;               ///< KV blocks (vLLM); tokens (SGLang)
    std::int64_t kvTokens = 0;             ///< "GPU KV cache size: N tokens" as the engine prints it
    double maxConcurrency = 0;             ///< "Maximum concurrency for max_model_len tokens per request: Cx"
    std::uint64_t neededForOneRequest = 0; ///< KV bytes one max_model_len request needs
    /// What fails first: empty when the engine starts.
    enum class Failure { None, Weights, Profile, KvTooSmall } failure = Failure::None;
    std::string message; ///< the engine's own words for the failure, or empty
};

/// One figure of the memory of one GPU, for the front ends to name in their own words.
struct ServingPart {
    enum class Kind {
        Total,
        Context,
        Weights,
        Activation,
        NonTorch,
        CudaGraphs,
        Margin,
        KvCache,
        KvPerToken
    } kind;
    std::uint64_t bytes;
};
/// The parts in order: the GPU, what the engine holds before the cache, the cache and its bytes per token;
/// CUDA graphs and the margin only when the engine has them.
std::vector<ServingPart> servingParts(const ServingEstimate& e);

/// Where the KV cache ends on the GPU: what the engine holds before it (context, non-torch memory, weights,
/// activation peak and margin, CUDA graphs) plus the cache itself (vLLM and SGLang allocate it whole at
/// start-up; generate() grows into it).
std::uint64_t servingKvEndBytes(const ServingEstimate& e);

/// The engine's start-up arithmetic for `model` on `gpu` with tensor x pipeline parallelism.
Result<ServingEstimate> estimateServing(const ServingModel& model, const ServingConfig& config,
                                        const GpuSpec& gpu, std::int64_t tp = 1, std::int64_t pp = 1);

/// How many sequences of `context` tokens each fit at once (capped by max_num_seqs for vLLM and SGLang).
std::int64_t maxConcurrentSequences(const ServingModel& model, const ServingEstimate& e,
                                    std::int64_t context);
/// The longest context at which `sequences` fit at once (0: none; at most max_model_len).
std::int64_t maxContextAt(const ServingModel& model, const ServingEstimate& e, std::int64_t sequences);
/// Whether `sequences` of `context` tokens fit, and the KV share they take of what the engine has.
struct ServingCell {
    bool fits = false;
    double usedFraction = 0; ///< KV needed / KV available (> 1: does not fit)
};
ServingCell servingCell(const ServingModel& model, const ServingEstimate& e, std::int64_t sequences,
                        std::int64_t context);

/// The KV cache's bytes for `sequences` of `context` tokens on the rank, at rest: the blocks they take
/// (vLLM), their tokens (SGLang), what generate()'s cache tensors hold (Hugging Face). Sequences at most
/// 2^31.
std::uint64_t servingCacheBytes(const ServingModel& model, const ServingEstimate& e, std::int64_t sequences,
                                std::int64_t context);

/// The weights' bytes on one rank for the quantization given (Auto: the model's own).
std::uint64_t servingWeightBytes(const ServingModel& model, WeightQuant quant, std::int64_t groupSize,
                                 std::int64_t tp, std::int64_t firstLayer, std::int64_t layers,
                                 bool firstStage, bool lastStage);
/// KV bytes per token of layers [firstLayer, firstLayer + layers) on one rank, every token stored; an MLA
/// latent rounded up to a multiple of `mlaAlign` elements (vLLM V0's MLA cache: 576 -> 640).
std::uint64_t kvBytesPerToken(const ServingModel& model, KvCacheDtype dtype, std::int64_t tp,
                              std::int64_t firstLayer, std::int64_t layers, std::int64_t mlaAlign = 1);
/// The layers of each pipeline stage as vLLM's get_pp_indices assigns them.
std::vector<std::int64_t> pipelineStageLayers(std::int64_t layers, std::int64_t pp);

} // namespace batchfit
