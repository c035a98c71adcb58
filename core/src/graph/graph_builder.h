#pragma once
// Lowers a Model under a TrainingConfig into a Graph: shape inference, casts, saved tensors, checkpoint
// units.
#include "batchfit/model.h"
#include "batchfit/result.h"
#include "batchfit/training_config.h"
#include "graph/freeze_rules.h"
#include "graph/graph.h"
#include "ops/op_rule.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace batchfit {

/// The graph of one GPU: with pipeline parallelism, of stage config.parallel.stage (0 or pp - 1).
Result<Graph> buildGraph(const Model& model, const TrainingConfig& config);
Result<Graph> buildLastPipelineStage(const Model& model, const TrainingConfig& config);
// Pipeline stages (pipeline_stage.cpp). The transformer layers are the run of repeated blocks, L layers.
/// The first of `pp` stages: the layers before the transformer layers and ceil(L / pp) of them.
Result<Model> firstPipelineStage(const Model& model, std::int64_t pp);
/// The layers before the transformer layers (what makes the last stage's input).
Result<Model> pipelinePrefix(const Model& model, std::int64_t pp);
/// The last stage: floor(L / pp) layers and everything after them, its input the hidden state the previous
/// stage sends (per-sample shape and dtype); a head tied to an earlier layer gets its own weight.
Result<Model> lastPipelineStage(const Model& model, std::int64_t pp, const Shape& inputShape,
                                DType inputDtype);

class GraphBuilder {
public:
    explicit GraphBuilder(const TrainingConfig& config);

    /// Adds one op (primitive or composite) at `path`; returns its output tensor.
    Result<int> addOp(const std::string& type, const std::string& path, const Attributes& attrs,
                      const std::vector<int>& inputs);
    /// `tensor.to(dtype)`: a cast op at `path` (a new tensor, nothing saved).
    Result<int> addCast(const std::string& path, int tensor, DType dtype);
    /// A copy of `tensor` at `path` even when it is contiguous (`x.clone()`, `torch.cat([empty, x])`).
    Result<int> addCopy(const std::string& path, int tensor);
    /// `tensor` stays alive until the forward ends (GTensor::heldToForwardEnd).
    void holdToForwardEnd(int tensor) {
        m_graph.tensors[static_cast<std::size_t>(m_graph.storageOf(tensor))].heldToForwardEnd = true;
    }
    /// Adds a primitive op and returns all its outputs.
    Result<std::vector<int>> addOpMulti(const std::string& type, const std::string& path,
                                        const Attributes& attrs, const std::vector<int>& inputs);
    const TensorInfo& info(int tensor) const {
        return m_graph.tensors[static_cast<std::size_t>(tensor)].info;
    }
    /// A tensor shared by the whole model (e.g. rotary cos/sin), created once on first use.
    int sharedConstant(const std::string& key, const TensorInfo& info);
    /// Marks ops added from now on as one recomputation unit (selective checkpointing); -1 ends it.
    void beginSelectiveUnit();
    void endSelectiveUnit();
    bool selectiveCheckpointing() const;
    /// True inside a block that activation checkpointing recomputes (torch.utils.checkpoint wraps it).
    bool inCheckpointUnit() const { return m_currentUnit >= 0; }
    /// Whether a transformers model fills its DynamicCache in this forward (use_cache): not inside a
    /// checkpointed block (GradientCheckpointingLayer drops it), and not under DPO or GRPO, whose fused head
    /// passes use_cache=False.
    bool fillsCache() const { return !inCheckpointUnit() && m_config.recipe == Recipe::Sft; }
    /// GRPO: `tensor` is what this attention layer keeps in generate()'s DynamicCache
    /// (Graph::generationCache).
    void noteGenerationCache(int tensor) {
        if (m_config.recipe == Recipe::Grpo) m_graph.generationCache.push_back(tensor);
    }

    Result<Graph> build(const Model& model);
    /// Pipeline stages: `whole` is the model the stage is cut from (tensor parallelism splits its
    /// vocabulary); `receivesHidden`: the input is the previous stage's hidden state (it requires a
    /// gradient).
    void setPipelineStage(const Model* whole, bool receivesHidden) {
        m_wholeModel = whole;
        m_receivesHidden = receivesHidden;
    }
    /// What walking `model` produces, without a loss or any check of what trains (pipeline_stage.cpp).
    Result<TensorInfo> outputInfo(const Model& model);

private:
    struct Scope {
        std::map<std::string, int> names;
        int blockInput = -1;
        const Scope* parent = nullptr;
    };

    Result<int> walkList(const std::vector<Layer>& layers, int input, Scope& scope,
                         const std::string& prefix);
    Result<int> walkLayer(const Layer& layer, int input, Scope& scope, const std::string& prefix, int prev);
    Result<int> walkBlock(const Layer& block, int input, Scope& scope, const std::string& prefix);
    Result<int> resolve(const std::string& name, const Scope& scope, int prev, const std::string& path) const;
    /// A layer's `keeps_alive` ("embed_tokens", comma-separated names): those layers' outputs live until the
    /// layer's last op has run.
    Status keepAlive(const Layer& layer, const Scope& scope, int prev, const std::string& path);
    Result<int> castTo(int tensor, DType dtype, const std::string& path);
    int newTensor(const TensorInfo& info, int producer, const std::string& role);
    Status countOp(const std::string& path);
    int paramTensor(const std::string& path, const ParamDecl& decl, int tiedTo);
    Status addTargets(GOp& op);
    // LoRA (lora_linear.cpp)
    Status resolveLoraTargets(const Model& model);
    bool loraTargets(const std::string& path);
    std::vector<std::string> unusedLoraTargets() const;
    Result<int> addLoraLinear(const std::string& path, const Attributes& attrs, int input);
    /// PEFT's `result + lora_B(lora_A(x)) * scaling`; `keep`: the tensors Linear.forward holds until then.
    Result<int> addLoraSum(const std::string& path, int base, int loraB, const std::vector<int>& keep);
    /// DoRA's `result + result_dora` (peft/tuners/lora/dora.py), from the outputs of its dora_norm op.
    /// `keep`: tensors Python holds until the adapted linear's forward returns.
    Result<int> addDoraOutput(const std::string& path, const Attributes& attrs, int base, int x, int loraB,
                              const std::vector<int>& norm, const std::vector<int>& keep);
    // Megatron tensor parallelism (tensor_parallel.cpp): the attributes of a layer on one rank.
    Status prepareTensorParallel(const Model& model);
    Result<Attributes> tensorParallelAttributes(const Layer& layer, const std::string& path,
                                                std::int64_t width) const;
    // Megatron sequence parallelism (sequence_parallel.cpp): along dim 0 of the per-sample shape.
    bool sequenceParallel() const { return m_config.parallel.splitsSequence(); }
    /// Before a layer: all-gathers the sequence-split inputs a linear or attention reads (or any layer
    /// outside the transformer layers that does not work token by token).
    Result<std::vector<int>> sequenceParallelInputs(const Layer& layer, const std::string& path,
                                                    std::vector<int> inputs);
    /// After a layer: reduce-scatters the output of attention and of the row-parallel linear.
    Result<int> sequenceParallelOutput(const Layer& layer, const std::string& path, int out);
    Result<int> scatterSequence(int x, const std::string& path); ///< entering the transformer layers
    Result<int> gatherSequence(int shard, const std::string& path, bool forLinear);
    /// Every op: outputs of split inputs are split; autocast copies of a gathered input stand for its shard.
    void noteSequenceParallel(const std::string& type, const std::vector<int>& inputs,
                              const std::vector<int>& outputs);
    /// What a linear saves for a tensor it reads: the shard of a gathered input (Megatron keeps that and
    /// gathers it again in the backward).
    int savedAs(int tensor) const;
    Result<int> newInputTensor(TensorInfo in);
    /// --freeze/--train-only patterns that match no layer of the whole model a stage is cut from.
    std::vector<std::string> unmatchedInWholeModel() const;
    TensorInfo inputInfo(const Model& model) const;
    // bitsandbytes quantization (quant_linear.cpp)
    bool quantizes(const std::string& path, const Attributes& attrs) const;
    Attributes quantAttributes(const Attributes& linear) const;
    bool autocast() const;
    DType halfDtype() const;

    TrainingConfig m_config;
    Graph m_graph;
    DType m_paramDtype = DType::Float32;
    int m_currentLayer = -1;
    int m_currentUnit = -1;
    int m_selectiveUnit = -1;
    std::int64_t m_unitCandidates = 0;
    std::map<std::string, int> m_shared;
    std::map<std::string, int> m_weightByLayer; ///< layer path -> its "weight" parameter (for tied_to)
    std::map<std::string, int> m_sharedParams;  ///< ParamDecl::Share key -> the parameter provided last
    FreezeRules m_freezeRules;
    std::vector<std::string> m_loraTargets; ///< resolved target_modules (empty with all-linear)
    std::vector<bool> m_loraTargetUsed;
    bool m_loraAllLinear = false;
    std::string m_loraHead;                    ///< the output head's path, which all-linear leaves out
    std::string m_quantHead;                   ///< the output head, which bitsandbytes does not quantize
    int m_repeatDepth = 0;                     ///< repeated blocks being lowered (transformer layers)
    const Layer* m_rowLinear = nullptr;        ///< the block's last linear: Megatron's row-parallel one
    std::string m_tpHead;                      ///< the output head (vocab-parallel with TP)
    std::int64_t m_vocab = 0;                  ///< its width
    const Model* m_wholeModel = nullptr;       ///< a pipeline stage's model before it was cut
    bool m_receivesHidden = false;             ///< a later pipeline stage: the input is a hidden state
    std::set<int> m_spShards;                  ///< tensors split along the sequence
    std::map<int, int> m_spGathered;           ///< a shard -> its all-gathered view in the buffer
    std::map<int, int> m_spSavedAs;            ///< a gathered view (or its autocast copy) -> the shard
    std::map<DType, int> m_spBuffers;          ///< Megatron's global memory buffer, one per dtype
    bool m_inLora = false;                     ///< lowering an adapted linear's parts
    std::string m_layerPath, m_layerModule;    ///< the layer being lowered, and its "module" attribute
    std::optional<DType> m_paramDtypeOverride; ///< the adapters' dtype while they are lowered
    bool m_trainable = true;                   ///< the layer being lowered trains
    const std::vector<std::string>* m_frozenParams = nullptr; ///< its parameters that do not
    std::uint64_t m_opBudget = 0;
    std::uint64_t m_parameterElements = 0;
};

} // namespace batchfit
