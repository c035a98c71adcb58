#pragma once
// The lowered model: ops in forward order over tensors, with what each op saves for backward.
#include "graph/affine.h"
#include "graph/tensor_info.h"

#include <string>
#include <vector>

namespace batchfit {

enum class GradKind { Allocate, Passthrough, None };

struct GTensor {
    TensorInfo info;
    int producer = -1; ///< op index; -1 for the model input and targets
    int base = -1;     ///< tensor whose storage this one shares (views, in-place results); -1 = own storage
    bool requiresGrad = false;
    bool autocastCopy = false; ///< a half copy of a weight made by autocast (cached until the forward ends)
    int param = -1;            ///< >= 0: this tensor is parameter/buffer `param` itself (lives for ever)
    bool persistent = false;   ///< a framework buffer made once and kept (Megatron's global memory buffer)
    /// Held by what the forward returns until it ends (transformers' DynamicCache in the outputs): alive at
    /// least that long, saved for the backward or not.
    bool heldToForwardEnd = false;
    /// A leaf that requires a gradient (PEFT's enable_input_require_grads): its AccumulateGrad holds it and
    /// its .grad until the backward ends.
    bool peftLeaf = false;
    std::string role;          ///< "output", "mask", "indices", "mean", ...
};

struct GParam {
    std::string path; ///< "layer1[0].conv1.weight"
    std::uint64_t numel = 0;
    Shape shape;
    DType dtype = DType::Float32;
    std::uint64_t storedBytes = 0; ///< > 0: packed storage (4-bit, int8 weights), else numel * dtype size
    bool trainable = true;
    bool buffer = false; ///< running stats, masks: not trained, no gradient
    int tiedTo = -1;     ///< shares the storage of another parameter (counted once)
    int tensor = -1;     ///< the GTensor standing for it
};

struct GOp {
    std::string type;
    std::string path; ///< "layer1[0].conv1" or, inside a composite, "h[0].attn.softmax"
    int layer = -1;   ///< index into Graph::layers (for the per-layer table)
    std::vector<int> inputs;
    std::vector<int> outputs;
    std::vector<int> created; ///< extra tensors the op makes (masks, statistics, indices, weight copies)
    /// Tensors the model's Python code holds until this op has run, though no op needs them (transformers'
    /// inputs_embeds until the inner model's last norm): a layer's `keeps_alive`
    std::vector<int> keepAlive;
    std::vector<int> params;  ///< parameters it uses (tied ones resolved)
    std::vector<int> saved;   ///< tensors saved for backward (their storages stay alive)
    std::vector<int> savedPacks;       ///< per saved tensor: SavedDecl::packs
    std::vector<bool> gradPassthrough; ///< per input: its gradient is the output gradient itself (no alloc)
    GradKind grad = GradKind::Allocate;
    int gradInputs = -1; ///< >= 0: only the first gradInputs inputs get a gradient from this op
    int inputGradTensor = -1;  ///< OpPlan::inputGradCreated's tensor: input 0's gradient, made in the forward
    int weightGradTensor = -1; ///< OpPlan::weightGradCreated's tensor: the first parameter's gradient
    Affine fwdWorkspace;
    Affine bwdWorkspace;
    Affine bwdParamWorkspace; ///< more backward workspace when the op's first parameter trains
    Affine bwdTail;           ///< OpPlan::bwdTail
    Affine cudnnWorkspace[3]; ///< elastic: forward, dgrad, wgrad (OpPlan::cudnnWorkspace)
    int checkpointUnit = -1; ///< >= 0: inside this recomputed unit
    bool isLoss = false;
    bool adapter = false; ///< a LoRA adapter's op (not its base layer): skipped with the adapters disabled
};

struct GLayer {
    std::string path;
    std::string op;
    int output = -1;
};

struct Graph {
    std::vector<GTensor> tensors;
    std::vector<GParam> params;
    std::vector<GOp> ops;
    std::vector<GLayer> layers;
    std::vector<int> batchTensors; ///< the input batch and the targets
    /// GRPO: the keys and values (MLA: latents and rotary keys) each attention layer would put in its
    /// DynamicCache, in layer order; generate()'s cache holds them for every generated sequence.
    std::vector<int> generationCache;
    std::int64_t sequenceLength = 0; ///< GRPO: the model's tokens per sequence (prompt and completion)
    int loss = -1;
    int checkpointUnits = 0;

    /// The tensor that owns t's storage.
    int storageOf(int t) const {
        while (tensors[t].base >= 0) t = tensors[t].base;
        return t;
    }
};

} // namespace batchfit
