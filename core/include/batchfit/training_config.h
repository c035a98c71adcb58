#pragma once
// The training set-up: optimizer, precision, checkpointing, accumulation and overheads.
#include "batchfit/dtype.h"
#include "batchfit/parallel_config.h"
#include "batchfit/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace batchfit {

enum class OptimizerKind {
    Sgd,
    SgdMomentum,
    SgdNesterov,
    Adam,
    AdamW,
    RmsProp,
    Adagrad,
    Adafactor,
    Lion,
    Adam8bit,
    PagedAdamW,    ///< bitsandbytes PagedAdamW (32-bit states in CUDA managed memory)
    PagedAdamW8bit ///< bitsandbytes PagedAdamW8bit
};
/// Default: what torch picks when neither foreach nor fused is passed (resolvedImpl()): foreach on CUDA
/// in 2.x for torch.optim's SGD/Adam/AdamW/RMSprop/Adagrad, for-loop in 1.13 and for other libraries'
/// optimizers.
enum class OptimizerImpl { ForLoop, Foreach, Fused, Default };
/// fp32; autocast AMP (fp32 weights); pure half (everything in half); half weights + fp32 master (ZeRO
/// style).
enum class Precision { Fp32, AmpFp16, AmpBf16, PureFp16, PureBf16, MixedFp16Master, MixedBf16Master };
enum class Checkpointing { None, EveryBlock, EveryKthBlock, Selective };
/// torch.utils.checkpoint's use_reentrant: True (torch 2.6's default when not given, and what Hugging Face's
/// gradient_checkpointing_enable() passes unless told otherwise) keeps the recomputed block's output until
/// the block's backward ends; False (torch's recommended mode) stops recomputing after the last saved tensor
/// and keeps nothing else (docs/memory-model.md, "Checkpointing").
enum class CheckpointMode { Reentrant, NonReentrant };
/// Whose autograd formulas decide what is saved: PyTorch 2.x (the reference) or 1.13, where some formulas
/// kept more (a mean over dims kept its input: docs/memory-model.md, "PyTorch 1.13").
enum class TorchRules { Torch2, Torch113 };
/// How a language model's head and loss run (docs/memory-model.md, "The language-model loss"): transformers'
/// ForCausalLMLoss over the whole [S, vocab] logits (Full); TRL's SFTTrainer as of 1.16, a fused head that
/// folds [4096, 32768] tiles of the logits and accumulates the gradients in fp32 (TrlFused); or TRL's earlier
/// chunked_nll, the head and cross-entropy per chunk of 256 tokens under non-reentrant checkpointing
/// (TrlChunked, the SFT default of TRL 1.9 to 1.14); or Liger's fused linear cross-entropy (use_liger_kernel),
/// which computes the head's gradients in the forward, chunk by chunk (Liger).
enum class LmLoss { Full, TrlFused, TrlChunked, Liger };
/// Where autograd's saved tensors live between the forward and the backward (docs/memory-model.md,
/// "Activation offload"): on the GPU (Off); in host memory through torch.autograd.graph.save_on_cpu around
/// the whole forward and loss, every saved tensor including the weights, pageable (All) or pinned
/// (AllPinned); or transformers 5's activation_checkpointing_enable(offload=True), each checkpointed layer's
/// call under save_on_cpu(pin_memory=True), so only what the checkpoint keeps, its inputs, goes to the host
/// (Checkpoints).
enum class ActivationOffload { Off, All, AllPinned, Checkpoints };
/// What one step trains on (docs/memory-model.md, "Preference training" and "GRPO"): supervised fine-tuning
/// (Sft); TRL's DPOTrainer (Dpo): each sample a chosen and a rejected sequence run as one batch of twice the
/// size, log-probabilities from TRL's fused head, and a reference forward without gradients after the
/// policy's; TRL's GRPOTrainer (Grpo): each sample one completion of promptTokens + the rest, generated at
/// the start of the step (Generation), scored by TRL's fused head, the reference's log-probabilities
/// computed without gradients before the policy's forward.
enum class Recipe { Sft, Dpo, Grpo };
/// The reference's log-probabilities: computed in every step (Live: the base model with the adapters
/// disabled under LoRA, else a frozen copy of the model kept on the GPU), once before training (DPO's
/// precompute_ref_log_probs=True: no reference forward and no copy during the steps), or not at all (None:
/// GRPO's beta=0.0, TRL's default, loads no reference).
enum class RefLogps { Live, Precomputed, None };
/// Where GRPO's completions are generated: transformers' generate() on the training GPU, between steps
/// (Transformers, use_vllm=False); a vLLM engine inside the training process that keeps
/// vllm_gpu_memory_utilization of the GPU (VllmColocate); a vLLM server on other GPUs (VllmServer).
enum class Generation { Transformers, VllmColocate, VllmServer };

/// LoRA adapters (PEFT's LoraConfig): each targeted linear gets lora_A (in -> rank) and lora_B (rank -> out);
/// everything else is frozen (plus TrainingConfig::trainOnly, PEFT's modules_to_save).
struct LoraConfig {
    std::int64_t rank = 0; ///< r; 0: no LoRA
    double alpha = 8;      ///< lora_alpha (PEFT's default 8): the output is scaled by alpha / r
    double dropout = 0;    ///< lora_dropout (PEFT's default 0: nn.Identity, nothing saved)
    /// use_dora: DoRA (a trainable magnitude per output row; each forward recomputes the row norms of
    /// W + scaling * B A and keeps the base output and the adapter's output for the backward)
    bool dora = false;
    /// target_modules: names matched as PEFT does (a linear whose path is the name or ends with "." + name),
    /// or {"all-linear"} (every linear but the output head); empty: the default of the model's family,
    /// found by its layer names (q_proj + v_proj, c_attn, query + value, query_key_value, qkv_proj).
    std::vector<std::string> targets;
    bool operator==(const LoraConfig&) const = default;
};

/// bitsandbytes quantization of the base model's linear layers (transformers' BitsAndBytesConfig).
enum class QuantKind { None, Nf4, Fp4, Int8 };

/// QLoRA-style loading: the linears (but the output head and tied weights) keep packed 4-bit or int8
/// weights that the matmul dequantizes on the fly (docs/memory-model.md, "Quantized base weights").
struct QuantConfig {
    QuantKind kind = QuantKind::None;
    bool doubleQuant = false; ///< bnb_4bit_use_double_quant: 8-bit absmax per 64 + fp32 per 256 of those
    /// bnb_4bit_compute_dtype (transformers' default float32); bitsandbytes uses it only when the input is
    /// fp16 (fp32 and bf16 inputs are computed in their own dtype: Linear4bit.set_compute_type).
    DType computeDtype = DType::Float32;
    /// PEFT's prepare_model_for_kbit_training: every fp16/bf16 parameter that is not quantized becomes
    /// fp32 (embeddings, norms, the head). Its checkpointing default is applied by applyQuantDefaults().
    bool prepare = true;
    bool enabled() const { return kind != QuantKind::None; }
    bool operator==(const QuantConfig&) const = default;
};

struct TrainingConfig {
    OptimizerKind optimizer = OptimizerKind::Adam;
    OptimizerImpl impl = OptimizerImpl::Default;
    bool amsgrad = false;         ///< Adam/AdamW: keeps max_exp_avg_sq
    bool rmspropMomentum = false; ///< RMSprop: momentum buffer
    bool rmspropCentered = false; ///< RMSprop: grad_avg
    Precision precision = Precision::Fp32;
    Checkpointing checkpointing = Checkpointing::None;
    std::int64_t checkpointEvery = 2; ///< k for EveryKthBlock
    CheckpointMode checkpointMode = CheckpointMode::Reentrant;
    std::int64_t accumulationSteps = 1; ///< micro-batches per optimizer step (batch = micro-batch size)
    bool zeroGradSetToNone = true;
    bool optimizerOffload = false; ///< optimizer states and master weights in host memory
    /// Parameter offload (DeepSpeed ZeRO-3 offload_param, "ZeRO-Infinity"; FSDP CPUOffload(offload_params=True)):
    /// each GPU's parameter and gradient shards live in host memory and the optimizer steps there (implies
    /// optimizerOffload); a unit's parameters come to the GPU only while it runs. Needs a strategy that
    /// shards parameters (docs/memory-model.md, "Parameter offload").
    bool paramOffload = false;
    /// CUDA_MODULE_LOADING=EAGER (or torch < 1.13, CUDA < 11.7): every kernel image loads at start-up
    /// (docs/memory-model.md 6.3).
    bool eagerModuleLoading = false;
    bool firstStep = false; ///< simulate step 1 (states created lazily) instead of the steady state
    TorchRules torch = TorchRules::Torch2;
    LmLoss lmLoss = LmLoss::Full;
    ActivationOffload activationOffload = ActivationOffload::Off;
    Recipe recipe = Recipe::Sft;
    RefLogps refLogps = RefLogps::Live; ///< Recipe::Dpo (live, precomputed) and Grpo (live, none)
    /// Tokens at the start of each sequence whose labels are -100 (the prompt): TRL's fused head scores only
    /// the others (on a GPU), S - max(promptTokens, 1) per sequence. GRPO's completions are the rest; 0 under
    /// GRPO: the sequence less TRL's default max_completion_length (kGrpoDefaultCompletion).
    std::int64_t promptTokens = 0;
    Generation generation = Generation::Transformers; ///< Recipe::Grpo only
    double vllmMemoryFraction = 0.3; ///< vllm_gpu_memory_utilization (Generation::VllmColocate)
    /// GRPO's steps_per_generation: one generation batch (batch x this many sequences) per this many
    /// micro-batches; 0: the gradient accumulation (TRL's default)
    std::int64_t stepsPerGeneration = 0;
    std::int64_t numIterations = 1; ///< GRPO's num_iterations: optimization passes over each generation batch
    /// The GPU's memory (GpuSpec::memoryBytes, set by Estimator::create with a GPU): what a colocated vLLM
    /// engine takes its fraction of. 0: no GPU given.
    std::uint64_t gpuBytes = 0;

    // Fine-tuning: which layers train (glob patterns over layer paths, or PyTorch module names; a pattern
    // matching a block covers what it contains). Empty: every layer the model file does not mark
    // "trainable": false.
    std::vector<std::string> freeze;    ///< --freeze: these layers are frozen
    std::vector<std::string> trainOnly; ///< --train-only: only these layers train
    LoraConfig lora;                    ///< --lora-rank > 0: LoRA fine-tuning
    QuantConfig quant;                  ///< --quant: 4-bit / int8 base weights (QLoRA)
    ParallelConfig parallel;            ///< --gpus, --strategy: the step of one GPU of the group

    /// The GPU's architecture (GpuSpec::arch, set by Estimator::create with a GPU): which SDPA kernel torch
    /// picks. Empty: assume one that runs flash attention (sm_80 or newer).
    std::string gpuArch;

    // Overheads (outside the four components).
    std::optional<std::uint64_t> cudaContextBytes; ///< override of the GPU's default CUDA context
    /// CUDNN_CONV_WSCAP_DBG: each cuDNN convolution workspace at most this many bytes (unset: uncapped).
    std::optional<std::uint64_t> cudnnWorkspaceCapBytes;
    std::optional<std::uint64_t>
        cublasWorkspaceBytes; ///< override of the GPU's cuBLAS workspace (per handle)
    /// PYTORCH_CUDA_ALLOC_CONF for the caching-allocator replay that gives reserved memory and the verdict
    /// (e.g. "expandable_segments:True"; "" is torch's default). See docs/memory-model.md section 6.
    std::string allocConf;
    /// Sequence lengths of the steps before the one estimated, replayed in order through the caching
    /// allocator: the first is the first step (its step() creates the optimizer states), each further one a
    /// steady-state step; then the step estimated, at the model's own length. Variable-length batches
    /// (dynamic padding) fragment the cache. Empty: every replayed step has the model's length. Needs a
    /// token-sequence model; each length 1 .. the model's (at most kMaxReplaySequences of them).
    std::vector<std::int64_t> replaySequences;
    /// Training samples in one epoch (len(dataset)). The last batch of an epoch then holds what is left
    /// (torch.utils.data.DataLoader with drop_last=False; with data parallelism each GPU gets
    /// ceil(samples / data-parallel GPUs), as DistributedSampler pads), and the replay runs that smaller
    /// step before the one estimated: the next epoch's first batch meets the cache it left. Unset: every
    /// batch is full (drop_last=True, or a sampler that fills the last batch). 1 .. kMaxEpochSamples.
    std::optional<std::int64_t> epochSamples;
    /// An explicit override: reserved = peak x (1 + f), rounded to 2 MiB, instead of the replay.
    std::optional<double> fragmentationFraction;
    double marginFraction = 0.05; ///< user's safety margin, of the capacity

    bool operator==(const TrainingConfig&) const = default;

    /// GRPO: micro-batches per generation batch (steps_per_generation, else the accumulation).
    std::int64_t generationSteps() const {
        return stepsPerGeneration > 0 ? stepsPerGeneration : accumulationSteps;
    }
    /// GRPO (trl grpo_trainer.py _generate_and_score_completions): the policy runs again without gradients
    /// for the old log-probabilities when generations and optimizer steps are not aligned (accumulation %
    /// (steps per generation x num_iterations) != 0), and always with vLLM
    /// (vllm_importance_sampling_correction).
    bool grpoOldLogps() const {
        return accumulationSteps % (generationSteps() * numIterations) != 0 ||
               generation != Generation::Transformers;
    }
    /// GRPO: a generation comes at a micro-batch after the first of an optimizer step (gradients held) when
    /// the generation period (steps per generation x num_iterations) is not a multiple of the accumulation.
    bool grpoGeneratesMidStep() const {
        return accumulationSteps > 1 && (generationSteps() * numIterations) % accumulationSteps != 0;
    }
};

/// GRPOConfig's default max_completion_length (TRL 1.16): GRPO's completion when no prompt length is given.
inline constexpr std::int64_t kGrpoDefaultCompletion = 512;
inline constexpr std::size_t kMaxReplaySequences = 64;                  ///< TrainingConfig::replaySequences
inline constexpr std::int64_t kMaxEpochSamples = 1'000'000'000'000'000; ///< TrainingConfig::epochSamples

std::string_view optimizerName(OptimizerKind k);     ///< "adam", "sgd-momentum", "adam8bit", ...
std::string_view optimizerImplName(OptimizerImpl i); ///< "for-loop", "foreach", "fused", "default"
/// The implementation that runs: impl itself, or for Default what torch would pick on a GPU
/// (torch/optim/optimizer.py, _default_to_fused_or_foreach: foreach when every parameter is on CUDA; 1.13's
/// optimizers set foreach = False when it is None).
OptimizerImpl resolvedImpl(const TrainingConfig& c);
/// "foreach", or "default: foreach" when the implementation was left to torch.
std::string optimizerImplLabel(const TrainingConfig& c);
std::string_view precisionName(Precision p);           ///< "fp32", "amp-bf16", "pure-bf16", "mixed-fp16", ...
std::string_view checkpointingName(Checkpointing c);   ///< "none", "every-block", "every-k", "selective"
std::string_view torchRulesName(TorchRules t);         ///< "2", "1.13"
std::string_view checkpointModeName(CheckpointMode m); ///< "reentrant", "non-reentrant"
std::string_view lmLossName(LmLoss l); ///< "full", "trl-fused", "trl-chunked", "liger"
Result<LmLoss> parseLmLoss(std::string_view s);
std::string_view activationOffloadName(ActivationOffload o); ///< "off", "all", "all-pinned", "checkpoints"
Result<ActivationOffload> parseActivationOffload(std::string_view s);
std::string_view recipeName(Recipe r); ///< "sft", "dpo", "grpo"
Result<Recipe> parseRecipe(std::string_view s);
std::string_view refLogpsName(RefLogps r); ///< "live", "precomputed", "none"
Result<RefLogps> parseRefLogps(std::string_view s);
std::string_view generationName(Generation g); ///< "transformers", "vllm-colocate", "vllm-server"
Result<Generation> parseGeneration(std::string_view s);
Result<OptimizerKind> parseOptimizer(std::string_view s);
Result<OptimizerImpl> parseOptimizerImpl(std::string_view s);
Result<Precision> parsePrecision(std::string_view s);
Result<Checkpointing> parseCheckpointing(std::string_view s);
Result<TorchRules> parseTorchRules(std::string_view s); ///< "2" (also "2.x"), "1.13"
/// "256, 1024,512" -> {256, 1024, 512} (TrainingConfig::replaySequences; "" -> none): each 1 .. 2^24, at
/// most kMaxReplaySequences. Whether they suit the model is checked when it is lowered.
Result<std::vector<std::int64_t>> parseReplaySequences(std::string_view text);
std::string replaySequencesText(const std::vector<std::int64_t>& seqs); ///< "256,1024,512"
/// "50,000" or "50000" -> 50000 (TrainingConfig::epochSamples; blank -> unset): 1 .. kMaxEpochSamples;
/// spaces, commas, underscores and apostrophes between digits are ignored.
Result<std::optional<std::int64_t>> parseEpochSamples(std::string_view text);
Result<CheckpointMode> parseCheckpointMode(std::string_view s);
std::string_view quantKindName(QuantKind k); ///< "none", "nf4", "fp4", "int8"
Result<QuantKind> parseQuantKind(std::string_view s);
/// True for bitsandbytes' paged optimizers (states in CUDA managed memory).
bool isPagedOptimizer(OptimizerKind k);
/// What --quant turns on unless the user said otherwise: prepare_model_for_kbit_training's gradient
/// checkpointing (every block, reentrant, as its gradient_checkpointing_enable() call does) when
/// `checkpointingGiven` is false and the quantization prepares the model.
void applyQuantDefaults(TrainingConfig& c, bool checkpointingGiven);
std::vector<OptimizerKind> allOptimizers();
std::vector<Precision> allPrecisions();

} // namespace batchfit
