#pragma once
// Turns a Graph into a StepProgram: simulates one training step the way autograd and the caching allocator
// behave (see docs/memory-model.md, "The step simulation").
#include "graph/graph.h"
#include "program/optimizer_model.h"
#include "program/shard_plan.h"
#include "program/step_program.h"

#include <climits>
#include <set>

namespace batchfit {

class Scheduler {
public:
    Scheduler(const Graph& graph, const TrainingConfig& config, StepProgram& program);
    Status run();

private:
    static constexpr int kForever = INT_MAX;

    int newStep(Phase phase, std::string label);
    int newInstance(Affine bytes, Component component, int step);
    void transient(Affine bytes, Component component, int step);
    void use(int instance, int step);
    Affine tensorBytes(int tensor) const;
    /// The instance of `tensor`'s storage made in this micro-step's forward (-1 if none).
    int forwardInstance(int tensor) const;
    int instanceOf(int tensor, int step, bool recompute);

    void setup();
    void microStep(bool first);
    void forwardOp(int op, bool recompute, int unitLastOp);
    void backwardOp(int op);
    void recompute(int unit);
    void stepTemporaries(const std::vector<std::uint64_t>& stateSizes,
                         const std::vector<std::uint64_t>& elems, int step);
    void optimizerStep();
    void workspace(Affine bytes, int step);
    void orderGradientFrees();
    /// One optimizer-state instance per state tensor of `cost`, kept to the end, created at `step`.
    void addStateInstances(const OptimizerCost& cost, int step);
    void accountSaved();
    // Activation offload (scheduler_offload.cpp): saved tensors packed to the host in the forward, copied
    // back to the GPU when their backward runs.
    void findUnitInputs();
    bool offloadsSaved() const;
    bool offloadsUnitInput(int storage) const;
    void pack(Affine bytes);
    void packUnitInput(int unit, int storage, int instance);
    void unpackUnitInputs(int unit);
    void unpackSaved(int op, int step);
    void holdPeftLeaves();
    // Preference and RL training (scheduler_reference.cpp): the forwards without gradients (DPO's and
    // GRPO's reference, GRPO's generation), and the frozen reference copy of the model they may run on.
    struct NoGradPass {
        bool adaptersOff = true;     ///< PEFT's adapters disabled (the reference); on for generation
        std::uint64_t sequences = 1; ///< sequences per sample of the micro-batch
        /// Each tensor's per-sample bytes x tokens / ofTokens: the pass's tokens per sample of the graph's
        /// (generate()'s prefill: sequences x the prompt's tokens of the whole sequence's)
        std::uint64_t tokens = 1, ofTokens = 1;
        bool generation = false; ///< generate(): the cache grows to the whole length, the head samples
    };
    /// Returns the pass's last step.
    int noGradForward(const NoGradPass& how);
    int samplerStep(const GOp& head, std::uint64_t sequences);
    int growGenerationCache(std::vector<int>& inst, int last, const NoGradPass& how);
    /// GRPO's generation batch and reference log-probabilities, before the first micro-batch's forward.
    int grpoGeneration();
    void addReferenceCopy(int step);
    // Data parallelism (scheduler_shards.cpp): gathering units and reduce-scattering their gradients.
    void gather(int unit, Phase phase);
    void release(int unit, int step);
    void enterForwardUnit(int unit);
    void enterBackwardUnit(int unit);
    void reduceScatter(int unit, int step);
    void endShardedBackward();
    std::uint64_t stateElems(std::size_t param) const;

    const Graph& m_graph;
    const TrainingConfig& m_config;
    StepProgram& m_program;

    std::vector<int> m_lastUse;
    std::vector<int> m_allocStep;
    std::vector<int> m_creatorLayer; ///< per instance
    std::vector<bool> m_weightInst;  ///< per instance: a parameter (saved by reference, not an activation)
    std::vector<int> m_fwdInst;      ///< per storage tensor, this micro-step's forward
    std::vector<int> m_recompInst;   ///< per storage tensor, during a unit's recomputation
    std::vector<std::vector<int>> m_savedBy; ///< per op: instances saved for its backward
    std::vector<int> m_gradOf;               ///< per tensor: its gradient instance in this backward
    std::vector<int> m_paramGrad;            ///< per parameter: its .grad instance
    std::vector<char> m_gradIsWeightView; ///< per parameter: its first gradient came from a linear (backward)
    std::vector<int> m_paramLayer;
    std::vector<std::vector<int>> m_unitOps;
    std::vector<std::vector<int>> m_unitHeld;
    std::vector<std::vector<int>>
        m_unitOutputs; ///< reentrant: recomputed outputs held to the unit's backward end
    std::vector<bool> m_recomputed;
    std::vector<int> m_autocastPending; ///< copies alive until the forward ends
    std::vector<int> m_heldToForwardEnd; ///< GTensor::heldToForwardEnd instances of this micro-step
    int m_layerCount = 0;
    bool m_firstMicroStep = true;
    bool m_hasMatmul = false;
    int m_lastBackwardStep = 0;
    std::uint64_t m_backwardWorkspace = 0; ///< first step: the backward handle's workspace, made on first use
    ShardPlan m_shard;
    std::vector<int> m_gathered;                ///< per unit: its gathered parameters' instance, or -1
    std::vector<std::vector<int>> m_unitParams; ///< per unit: the parameters it gathers and reduces
    std::vector<bool> m_gradSharded;            ///< per parameter: its gradient is a shard already
    std::vector<std::vector<Affine>> m_packedBy; ///< per op: bytes of the saved tensors it packed
    std::vector<std::vector<std::pair<int, int>>> m_unitPacked; ///< per unit: (storage, instance) packed
    std::vector<std::vector<int>> m_unitUnpacked; ///< per unit: their GPU copies in the backward
    std::vector<int> m_inputUnits;                ///< per storage: units taking it from outside
    int m_curUnit = -1;
    int m_bucketInst = -1;
};

} // namespace batchfit
