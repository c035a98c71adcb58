#include "program/scheduler.h"

#include "batchfit/checked.h"
#include "program/optimizer_model.h"

#include <algorithm>

namespace batchfit {

Scheduler::Scheduler(const Graph& graph, const TrainingConfig& config, StepProgram& program)
    : m_graph(graph), m_config(config), m_program(program) {}

int Scheduler::newStep(Phase phase, std::string label) {
    m_program.steps.push_back(ProgramStep{phase, std::move(label), {}, {}, {}, {}, {}});
    return static_cast<int>(m_program.steps.size()) - 1;
}

int Scheduler::newInstance(Affine bytes, Component component, int step) {
    m_program.instances.push_back(Instance{bytes, component, -1});
    m_lastUse.push_back(step);
    m_allocStep.push_back(step);
    m_creatorLayer.push_back(-1);
    m_weightInst.push_back(false);
    const int id = static_cast<int>(m_program.instances.size()) - 1;
    m_program.steps[static_cast<std::size_t>(step)].allocs.push_back(id);
    return id;
}

void Scheduler::transient(Affine bytes, Component component, int step) {
    if (bytes.isZero()) return;
    m_program.instances.push_back(Instance{bytes, component, -1});
    m_lastUse.push_back(-1); // not freed through frees[]
    m_allocStep.push_back(step);
    m_creatorLayer.push_back(-1);
    m_weightInst.push_back(false);
    m_program.steps[static_cast<std::size_t>(step)].transients.push_back(
        static_cast<int>(m_program.instances.size()) - 1);
}

void Scheduler::workspace(Affine bytes, int step) {
    if (bytes.isZero()) return;
    m_program.instances.push_back(Instance{bytes, Component::Temporaries, -1});
    m_lastUse.push_back(-1);
    m_allocStep.push_back(step);
    m_creatorLayer.push_back(-1);
    m_weightInst.push_back(false);
    m_program.steps[static_cast<std::size_t>(step)].workspaces.push_back(
        static_cast<int>(m_program.instances.size()) - 1);
}

void Scheduler::use(int instance, int step) {
    if (instance < 0) return;
    auto& l = m_lastUse[static_cast<std::size_t>(instance)];
    if (l != kForever) l = std::max(l, step);
}

int Scheduler::forwardInstance(int tensor) const {
    return m_fwdInst[static_cast<std::size_t>(m_graph.storageOf(tensor))];
}

Affine Scheduler::tensorBytes(int tensor) const {
    return m_graph.tensors[static_cast<std::size_t>(tensor)].info.bytes().value_or(Affine{});
}

int Scheduler::instanceOf(int tensor, int step, bool recompute) {
    const int s = m_graph.storageOf(tensor);
    const auto idx = static_cast<std::size_t>(s);
    if (recompute && m_recompInst[idx] >= 0) return m_recompInst[idx];
    if (m_fwdInst[idx] >= 0) return m_fwdInst[idx];
    // First use of a tensor nobody allocated yet (model-wide constants such as rotary tables).
    const int inst = newInstance(tensorBytes(s), Component::Activations, step);
    m_fwdInst[idx] = inst;
    return inst;
}

Status Scheduler::run() {
    m_shard = makeShardPlan(m_graph, m_config);
    m_gathered.assign(m_shard.unitNames.size(), -1);
    m_gradSharded.assign(m_graph.params.size(), false);
    m_unitParams.assign(m_shard.unitNames.size(), {});
    for (std::size_t p = 0; p < m_graph.params.size(); ++p)
        if (m_graph.params[p].tiedTo < 0)
            m_unitParams[static_cast<std::size_t>(m_shard.paramUnit[p])].push_back(static_cast<int>(p));
    const std::size_t nt = m_graph.tensors.size();
    m_fwdInst.assign(nt, -1);
    m_recompInst.assign(nt, -1);
    m_gradOf.assign(nt, -1);
    m_paramGrad.assign(m_graph.params.size(), -1);
    m_gradIsWeightView.assign(m_graph.params.size(), 0);
    m_paramLayer.assign(m_graph.params.size(), -1);
    m_unitOps.assign(static_cast<std::size_t>(m_graph.checkpointUnits), {});
    for (std::size_t i = 0; i < m_graph.ops.size(); ++i) {
        const auto& op = m_graph.ops[i];
        if (op.checkpointUnit >= 0)
            m_unitOps[static_cast<std::size_t>(op.checkpointUnit)].push_back(static_cast<int>(i));
        if (op.type == "linear" || op.type == "quant_linear" || op.type == "matmul" ||
            op.type == "attn_scores" || op.type == "sdpa")
            m_hasMatmul = true;
        for (int p : op.params)
            if (m_paramLayer[static_cast<std::size_t>(p)] < 0)
                m_paramLayer[static_cast<std::size_t>(p)] = op.layer;
    }
    findUnitInputs();
    m_layerCount = static_cast<int>(m_graph.layers.size());
    m_program.layers.clear();
    LayerInfo input;
    input.path = "(input batch)";
    input.op = "input";
    m_program.layers.push_back(std::move(input));
    for (const auto& l : m_graph.layers) {
        LayerInfo info;
        info.path = l.path;
        info.op = l.op;
        if (l.output >= 0) {
            info.output = tensorBytes(l.output);
            const auto& ti = m_graph.tensors[static_cast<std::size_t>(l.output)].info;
            info.outputShape = ti.shape;
            info.outputBatched = ti.batched;
            info.outputDType = ti.dtype;
        }
        m_program.layers.push_back(std::move(info));
    }
    for (std::size_t p = 0; p < m_graph.params.size(); ++p) {
        const auto& gp = m_graph.params[p];
        const int layer = m_paramLayer[p];
        if (gp.tiedTo >= 0 || gp.buffer || layer < 0) continue;
        auto& row = m_program.layers[static_cast<std::size_t>(layer) + 1]; // row 0: input
        row.parameterCount = checkedAdd(row.parameterCount, gp.numel).value_or(row.parameterCount);
        if (gp.trainable)
            row.trainableParameterCount =
                checkedAdd(row.trainableParameterCount, gp.numel).value_or(row.trainableParameterCount);
    }
    setup();
    const int micro = m_config.accumulationSteps > 1 ? 2 : 1;
    for (int m = 0; m < micro; ++m) microStep(m == 0);
    optimizerStep();
    // Frees.
    for (std::size_t i = 0; i < m_program.instances.size(); ++i) {
        const int l = m_lastUse[i];
        if (l < 0 || l == kForever) continue;
        m_program.steps[static_cast<std::size_t>(std::max(l, m_allocStep[i]))].frees.push_back(
            static_cast<int>(i));
    }
    orderGradientFrees();
    return Ok{};
}

// zero_grad(set_to_none=True) walks the parameter groups in parameter order (torch/optim/optimizer.py,
// Optimizer.zero_grad: `for group in self.param_groups: for p in group["params"]: p.grad = None`), so the
// gradients go back to the allocator first layer first, not in the order the backward made them.
void Scheduler::orderGradientFrees() {
    std::vector<int> rank(m_program.instances.size(), -1);
    int next = 0;
    for (int g : m_paramGrad)
        if (g >= 0 && rank[static_cast<std::size_t>(g)] < 0) rank[static_cast<std::size_t>(g)] = next++;
    for (auto& st : m_program.steps) {
        if (st.phase != Phase::OptimizerStep) continue;
        std::stable_sort(st.frees.begin(), st.frees.end(), [&](int a, int b) {
            return rank[static_cast<std::size_t>(a)] < rank[static_cast<std::size_t>(b)];
        });
    }
}

void Scheduler::setup() {
    const int s =
        newStep(Phase::Setup, m_config.firstStep ? "start of step 1" : "start of step (steady state)");
    auto& t = m_program.m_totals;
    const bool offload = m_config.optimizerOffload || m_config.paramOffload;
    std::uint64_t stateTotal = optimizerSharedBytes(m_config);
    for (std::size_t p = 0; p < m_graph.params.size(); ++p) {
        const auto& gp = m_graph.params[p];
        if (gp.tiedTo >= 0) continue;
        const bool host = m_shard.offloaded[p]; // parameter offload: the shard and its gradient's are there
        // all of it, or this GPU's shard; with parameter offload none (an empty instance the ops refer to)
        const std::uint64_t bytes = host ? 0 : m_shard.paramBytes[p];
        if (host)
            t.hostParameterBytes += m_shard.paramBytes[p] + (gp.trainable ? m_shard.gradBytes[p] : 0);
        const int inst = newInstance(Affine{bytes, 0}, Component::Parameters, s);
        m_lastUse[static_cast<std::size_t>(inst)] = kForever;
        m_weightInst[static_cast<std::size_t>(inst)] = !gp.buffer; // frozen or not: never an activation
        m_creatorLayer[static_cast<std::size_t>(inst)] = m_paramLayer[p];
        m_fwdInst[static_cast<std::size_t>(gp.tensor)] = inst;
        t.parameterBytes += bytes;
        if (gp.buffer) t.bufferBytes += bytes;
        if (!gp.buffer) t.parameterCount += gp.numel; // frozen parameters count, buffers do not
        if (gp.storedBytes) {
            t.quantizedParameterCount += gp.numel;
            t.quantizedBytes += fullParamBytes(gp);
        }
        if (gp.trainable) {
            t.trainableParameterCount += gp.numel;
            if (!host) t.gradientBytes += m_shard.gradBytes[p];
            if (stateElems(p) > 0) {
                const auto cost = optimizerCost(m_config, gp.shape, stateElems(p), dtypeSize(gp.dtype));
                stateTotal += cost.stateBytes;
                t.pagedStateBytes += cost.pagedBytes;
            }
            if (!m_config.zeroGradSetToNone && !m_shard.gradsInBuckets && !host) {
                const int g = newInstance(Affine{m_shard.gradBytes[p], 0}, Component::Gradients, s);
                m_lastUse[static_cast<std::size_t>(g)] = kForever;
                m_paramGrad[p] = g;
            }
        }
    }
    addReferenceCopy(s);
    t.optimizerStateBytes = stateTotal;
    if (offload) t.hostBytes = stateTotal;
    if (!m_config.firstStep && !offload && stateTotal > 0) {
        // One allocation per state tensor, as torch makes them (exp_avg and exp_avg_sq apart): a block of
        // both would round and split differently in the caching allocator.
        for (std::size_t p = 0; p < m_graph.params.size(); ++p) {
            const auto& gp = m_graph.params[p];
            if (gp.tiedTo >= 0 || !gp.trainable || stateElems(p) == 0) continue;
            addStateInstances(optimizerCost(m_config, gp.shape, stateElems(p), dtypeSize(gp.dtype)), s);
        }
        if (optimizerSharedBytes(m_config)) {
            const int inst =
                newInstance(Affine{optimizerSharedBytes(m_config), 0}, Component::OptimizerStates, s);
            m_lastUse[static_cast<std::size_t>(inst)] = kForever;
        }
    }
    for (std::size_t i = 0; i < m_graph.tensors.size(); ++i) {
        // Framework buffers made once and kept (Megatron's global memory buffer for sequence parallelism)
        if (!m_graph.tensors[i].persistent) continue;
        const int inst = newInstance(tensorBytes(static_cast<int>(i)), Component::Temporaries, s);
        m_lastUse[static_cast<std::size_t>(inst)] = kForever;
        m_weightInst[static_cast<std::size_t>(inst)] = true; // never saved as an activation
        m_fwdInst[i] = inst;
    }
    if (m_shard.bucketBytes > 0) {
        // DDP's buckets are made with the DDP module; DeepSpeed's reduce buffers with the engine: both
        // before the first step, and kept.
        m_bucketInst = newInstance(Affine{m_shard.bucketBytes, 0}, Component::Gradients, s);
        m_lastUse[static_cast<std::size_t>(m_bucketInst)] = kForever;
        t.bucketBytes = m_shard.bucketBytes;
    }
    t.parallelGroup = m_shard.group;
    t.parallelGpus = m_config.parallel.gpus;
    t.parallelRank = m_shard.rank;
    for (std::size_t u = 0; u < m_shard.unitBytes.size(); ++u)
        if (m_shard.shardParams && m_shard.unitBytes[u] > t.largestUnitBytes) {
            t.largestUnitBytes = m_shard.unitBytes[u];
            t.largestUnit = m_shard.unitNames[u];
        }
    // cuBLAS workspaces come from the caching allocator, one per (handle, stream): the forward runs on the
    // Python thread and the backward on autograd's device thread, each with its own handle, so two.
    const std::uint64_t ws = m_config.cublasWorkspaceBytes.value_or(8519680);
    if (m_hasMatmul && ws > 0) {
        for (int i = 0; i < (m_config.firstStep ? 1 : 2); ++i) {
            const int inst = newInstance(Affine{ws, 0}, Component::Temporaries, s);
            m_lastUse[static_cast<std::size_t>(inst)] = kForever;
        }
        m_backwardWorkspace = m_config.firstStep ? ws : 0;
    }
}

void Scheduler::microStep(bool first) {
    m_firstMicroStep = first;
    const std::size_t nt = m_graph.tensors.size();
    for (std::size_t i = 0; i < nt; ++i) {
        if (m_graph.tensors[i].param < 0 && !m_graph.tensors[i].persistent) m_fwdInst[i] = -1;
        m_recompInst[i] = -1;
        m_gradOf[i] = -1;
    }
    m_savedBy.assign(m_graph.ops.size(), {});
    m_packedBy.assign(m_graph.ops.size(), {});
    m_unitPacked.assign(static_cast<std::size_t>(m_graph.checkpointUnits), {});
    m_unitUnpacked.assign(static_cast<std::size_t>(m_graph.checkpointUnits), {});
    m_unitHeld.assign(static_cast<std::size_t>(m_graph.checkpointUnits), {});
    m_unitOutputs.assign(static_cast<std::size_t>(m_graph.checkpointUnits), {});
    m_recomputed.assign(static_cast<std::size_t>(m_graph.checkpointUnits), false);
    m_autocastPending.clear();
    m_heldToForwardEnd.clear();

    const int load = newStep(Phase::Forward, first ? "batch loaded" : "next micro-batch loaded");
    std::vector<int> batchInst;
    for (int bt : m_graph.batchTensors) {
        const int inst = newInstance(tensorBytes(bt), Component::Activations, load);
        m_fwdInst[static_cast<std::size_t>(bt)] = inst;
        m_creatorLayer[static_cast<std::size_t>(inst)] = -1;
        batchInst.push_back(inst);
    }
    // GRPO generates at the first micro-batch of an optimizer step, when no gradient is held yet, unless its
    // generation period is not a multiple of the accumulation: then some generations come with gradients held
    // (the second micro-batch here, the worst case)
    if (m_config.recipe == Recipe::Grpo && first != m_config.grpoGeneratesMidStep()) grpoGeneration();
    m_curUnit = -1;
    for (std::size_t i = 0; i < m_graph.ops.size(); ++i) {
        if (m_shard.shardParams) enterForwardUnit(m_shard.opUnit[i]);
        forwardOp(static_cast<int>(i), false, -1);
    }
    int fwdEnd = static_cast<int>(m_program.steps.size()) - 1;
    if (m_config.recipe == Recipe::Dpo && m_config.refLogps == RefLogps::Live)
        fwdEnd = noGradForward(
            {.adaptersOff = true, .sequences = 1, .tokens = 1, .ofTokens = 1, .generation = false});
    for (int inst : m_autocastPending) use(inst, fwdEnd);
    for (int inst : m_heldToForwardEnd) use(inst, fwdEnd);
    if (first) accountSaved();
    // 1F1B: stage s holds the activations of min(M, P - s) micro-batches when its first backward runs;
    // the others' saved tensors are counted as one block from the end of this forward to the backward's end.
    int inFlight = -1;
    if (m_config.parallel.inFlight() > 1) {
        bool overflow = false;
        Affine more{};
        for (std::int64_t k = 1; k < m_config.parallel.inFlight(); ++k)
            more = addAffine(more, m_program.m_totals.savedActivations, overflow);
        if (!overflow) inFlight = newInstance(more, Component::Activations, fwdEnd);
    }

    // Backward.
    const int start = newStep(Phase::Backward, "backward starts (gradient of the loss)");
    if (m_backwardWorkspace) {
        const int inst = newInstance(Affine{m_backwardWorkspace, 0}, Component::Temporaries, start);
        m_lastUse[static_cast<std::size_t>(inst)] = kForever;
        m_backwardWorkspace = 0;
    }
    int ipg = -1;
    if (m_shard.backwardBucketBytes > 0) {
        ipg = newInstance(Affine{m_shard.backwardBucketBytes, 0}, Component::Gradients, start);
        m_program.m_totals.bucketBytes = m_shard.backwardBucketBytes;
    }
    if (m_graph.loss >= 0) {
        m_gradOf[static_cast<std::size_t>(m_graph.loss)] =
            newInstance(tensorBytes(m_graph.loss), Component::Temporaries, start);
        use(m_fwdInst[static_cast<std::size_t>(m_graph.storageOf(m_graph.loss))], start);
    }
    m_curUnit = -1;
    for (int i = static_cast<int>(m_graph.ops.size()) - 1; i >= 0; --i) {
        if (m_shard.shardParams || m_shard.shardGrads)
            enterBackwardUnit(m_shard.opUnit[static_cast<std::size_t>(i)]);
        const int u = m_graph.ops[static_cast<std::size_t>(i)].checkpointUnit;
        if (u >= 0 && !m_recomputed[static_cast<std::size_t>(u)]) recompute(u);
        backwardOp(i);
    }
    if (m_shard.shardParams || m_shard.shardGrads) endShardedBackward();
    m_lastBackwardStep = static_cast<int>(m_program.steps.size()) - 1;
    for (int inst : batchInst) use(inst, m_lastBackwardStep);
    holdPeftLeaves();
    use(ipg, m_lastBackwardStep);
    use(inFlight, m_lastBackwardStep);
}

void Scheduler::forwardOp(int opIndex, bool recompute, int unitLastOp) {
    const auto& op = m_graph.ops[static_cast<std::size_t>(opIndex)];
    const bool noGrad = !recompute && op.checkpointUnit >= 0;
    const int s = newStep(recompute ? Phase::Backward : Phase::Forward,
                          (recompute ? "recompute " : "") + op.path + " (" + op.type + ")");
    m_program.steps[static_cast<std::size_t>(s)].opPath = op.path;
    const int layerRow = op.layer + 1; // row 0 is the input batch
    for (int t : op.inputs) use(instanceOf(t, s, recompute), s);
    if (!recompute)
        for (int t : op.keepAlive) use(instanceOf(t, s, false), s);
    auto materialize = [&](int t) {
        const auto& gt = m_graph.tensors[static_cast<std::size_t>(t)];
        const auto idx = static_cast<std::size_t>(m_graph.storageOf(t));
        if (gt.base >= 0) return;
        // Liger's gradients made in the forward are gradients, not activations
        const Component comp = t == op.weightGradTensor  ? Component::Gradients
                               : t == op.inputGradTensor ? Component::Temporaries
                                                         : Component::Activations;
        const int inst = newInstance(tensorBytes(t), comp, s);
        m_creatorLayer[static_cast<std::size_t>(inst)] = layerRow;
        (recompute ? m_recompInst : m_fwdInst)[idx] = inst;
        if (gt.autocastCopy) {
            if (recompute)
                use(inst, unitLastOp);
            else
                m_autocastPending.push_back(inst);
        }
        if (gt.heldToForwardEnd && !recompute) m_heldToForwardEnd.push_back(inst);
    };
    for (int t : op.outputs) materialize(t);
    for (int t : op.created) materialize(t);
    transient(op.fwdWorkspace, Component::Temporaries, s);
    workspace(op.cudnnWorkspace[0], s);
    if (noGrad) {
        // Checkpointed: nothing saved; the unit keeps the inputs it receives from outside.
        const int u = op.checkpointUnit;
        for (int t : op.inputs) {
            const int prod = m_graph.tensors[static_cast<std::size_t>(m_graph.storageOf(t))].producer;
            const bool inside = prod >= 0 && m_graph.ops[static_cast<std::size_t>(prod)].checkpointUnit == u;
            const int inst = instanceOf(t, s, false);
            if (inside || m_weightInst[static_cast<std::size_t>(inst)]) continue;
            if (offloadsUnitInput(m_graph.storageOf(t)))
                packUnitInput(u, m_graph.storageOf(t), inst);
            else
                m_unitHeld[static_cast<std::size_t>(u)].push_back(inst);
        }
        return;
    }
    auto& saved = m_savedBy[static_cast<std::size_t>(opIndex)];
    for (std::size_t k = 0; k < op.saved.size(); ++k) {
        const int t = op.saved[k];
        const int inst = instanceOf(t, s, recompute);
        if (!recompute && offloadsSaved()) {
            // save_on_cpu's pack hook copies every saved tensor, weights included, each time it is saved
            for (int n = 0; n < op.savedPacks[k]; ++n) {
                m_packedBy[static_cast<std::size_t>(opIndex)].push_back(tensorBytes(t));
                pack(tensorBytes(t));
            }
        } else if (!m_weightInst[static_cast<std::size_t>(inst)]) {
            saved.push_back(inst);
        }
    }
}

void Scheduler::recompute(int unit) {
    m_recomputed[static_cast<std::size_t>(unit)] = true;
    unpackUnitInputs(unit);
    const auto& ops = m_unitOps[static_cast<std::size_t>(unit)];
    std::size_t end = ops.size();
    const bool reentrant = m_config.checkpointMode == CheckpointMode::Reentrant;
    if (!reentrant) {
        // torch/utils/checkpoint.py (2.x, _checkpoint_without_reentrant_generator with early stop, the
        // default): the recomputation stops once every saved tensor of the unit has been recomputed.
        end = 0;
        for (std::size_t i = 0; i < ops.size(); ++i)
            if (!m_graph.ops[static_cast<std::size_t>(ops[i])].saved.empty()) end = i + 1;
    }
    const int lastStep = static_cast<int>(m_program.steps.size()) + static_cast<int>(end) - 1;
    for (std::size_t i = 0; i < end; ++i) forwardOp(ops[i], true, lastStep);
    if (reentrant && !ops.empty()) {
        // CheckpointFunction.backward: outputs = ctx.run_function(*detached_inputs), then
        // torch.autograd.backward(outputs, ...): the recomputed outputs live until the unit's backward
        // returns.
        for (int t : m_graph.ops[static_cast<std::size_t>(ops.back())].outputs) {
            const int inst = m_recompInst[static_cast<std::size_t>(m_graph.storageOf(t))];
            if (inst >= 0) m_unitOutputs[static_cast<std::size_t>(unit)].push_back(inst);
        }
    }
}

void Scheduler::backwardOp(int opIndex) {
    const auto& op = m_graph.ops[static_cast<std::size_t>(opIndex)];
    bool hasGrad = false;
    for (int o : op.outputs) hasGrad = hasGrad || m_gradOf[static_cast<std::size_t>(o)] >= 0;
    const int u = op.checkpointUnit;
    const bool unitStart = u >= 0 && m_unitOps[static_cast<std::size_t>(u)].front() == opIndex;
    if (!hasGrad && !unitStart) return;
    const int s = newStep(Phase::Backward, "backward of " + op.path + " (" + op.type + ")");
    m_program.steps[static_cast<std::size_t>(s)].opPath = op.path;
    if (unitStart) {
        for (int inst : m_unitHeld[static_cast<std::size_t>(u)]) use(inst, s);
        for (int inst : m_unitOutputs[static_cast<std::size_t>(u)]) use(inst, s);
        for (int inst : m_unitUnpacked[static_cast<std::size_t>(u)]) use(inst, s);
    }
    if (!hasGrad) return;
    unpackSaved(opIndex, s);
    for (int o : op.outputs) use(m_gradOf[static_cast<std::size_t>(o)], s);
    for (int inst : m_savedBy[static_cast<std::size_t>(opIndex)]) use(inst, s);
    const int outGrad = m_gradOf[static_cast<std::size_t>(op.outputs[0])];
    if (op.grad != GradKind::None) {
        std::vector<int> done;
        for (std::size_t j = 0; j < op.inputs.size(); ++j) {
            const int t = op.inputs[j];
            if (op.gradInputs >= 0 && j >= static_cast<std::size_t>(op.gradInputs)) continue;
            if (!m_graph.tensors[static_cast<std::size_t>(t)].requiresGrad) continue;
            if (std::find(done.begin(), done.end(), t) != done.end()) continue;
            done.push_back(t);
            int& g = m_gradOf[static_cast<std::size_t>(t)];
            if (j == 0 && op.inputGradTensor >= 0) {
                // made in the forward and saved (Liger): handed on as this input's gradient
                const int made = forwardInstance(op.inputGradTensor);
                if (g < 0)
                    g = made;
                else
                    use(made, s); // added into the gradient already there
                continue;
            }
            if (op.gradPassthrough[j] && outGrad >= 0) {
                if (g < 0)
                    g = outGrad; // the same tensor flows on
                else
                    use(outGrad, s); // accumulated in place into the existing buffer
                continue;
            }
            if (g < 0)
                g = newInstance(tensorBytes(t), Component::Temporaries, s);
            else
                transient(tensorBytes(t), Component::Temporaries, s);
        }
    }
    for (int p : op.params) {
        const auto& gp = m_graph.params[static_cast<std::size_t>(p)];
        if (!gp.trainable) continue;
        const Affine bytes{fullParamBytes(gp), 0};
        int& g = m_paramGrad[static_cast<std::size_t>(p)];
        if (p == op.params.front() && op.weightGradTensor >= 0 && !m_shard.gradsInBuckets) {
            const int made = forwardInstance(op.weightGradTensor);
            if (g < 0) {
                g = made; // Liger's grad_weight becomes .grad (AccumulateGrad takes it)
            } else {
                use(made, s);
                transient(bytes, Component::Gradients, s); // the engine's sum with the first one
            }
            continue;
        }
        if (m_shard.gradsInBuckets) {
            g = m_bucketInst; // gradient_as_bucket_view: written into its bucket slot
            continue;
        }
        if (g < 0) {
            g = newInstance(bytes, Component::Gradients, s);
            // mm's backward gives a linear weight's gradient as the .t() view of its result
            m_gradIsWeightView[static_cast<std::size_t>(p)] = op.type == "linear" && p == op.params.front();
        } else {
            // A second gradient for the same parameter (a tied embedding and head): the engine's InputBuffer
            // reuses the first in place only when it holds its storage alone (input_buffer.cpp,
            // can_accumulate_inplace); a view's base holds it too, so `old + new` makes a third tensor.
            // Measured under torch 2.15 (docs/accuracy-real.md: GPT-2's tied head).
            transient(bytes, Component::Gradients, s);
            if (m_gradIsWeightView[static_cast<std::size_t>(p)]) transient(bytes, Component::Gradients, s);
        }
    }
    transient(op.bwdWorkspace, Component::Temporaries, s);
    if (!op.params.empty() && m_graph.params[static_cast<std::size_t>(op.params.front())].trainable)
        transient(op.bwdParamWorkspace, Component::Temporaries, s);
    // convolution_backward's output_mask: dgrad when the input needs a gradient, wgrad when a weight trains
    if (!op.inputs.empty() && m_graph.tensors[static_cast<std::size_t>(op.inputs[0])].requiresGrad)
        workspace(op.cudnnWorkspace[1], s);
    bool trains = false;
    for (int p : op.params) trains = trains || m_graph.params[static_cast<std::size_t>(p)].trainable;
    if (trains) workspace(op.cudnnWorkspace[2], s);
    if (!op.bwdTail.isZero()) {
        const int tail = newStep(Phase::Backward, "backward: " + op.path + " (index backward)");
        m_program.steps[static_cast<std::size_t>(tail)].opPath = op.path;
        transient(op.bwdTail, Component::Temporaries, tail);
    }
}

void Scheduler::addStateInstances(const OptimizerCost& cost, int step) {
    for (int i = 0; i < cost.tensorCount; ++i) {
        const int inst = newInstance(Affine{cost.tensors[i], 0}, Component::OptimizerStates, step);
        m_lastUse[static_cast<std::size_t>(inst)] = kForever;
    }
}

// The step's temporaries, one allocation per tensor as torch makes them. Foreach (torch/optim/adam.py
// _multi_tensor_adam: `exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)`) allocates one output per
// parameter, all live until the list is dropped after `_foreach_addcdiv_`. The for-loop (_single_tensor_adam:
// `(exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)`) holds at most `factor` temporaries of one
// parameter at a time, so its peak is that many of the largest. Fp32 copies of half gradients (master
// weights) follow the same pattern.
void Scheduler::stepTemporaries(const std::vector<std::uint64_t>& stateSizes,
                                const std::vector<std::uint64_t>& elems, int s) {
    const bool forLoop = resolvedImpl(m_config) == OptimizerImpl::ForLoop;
    const auto factor = static_cast<int>(stepTemporaryFactor(m_config));
    const bool gradCopies = (m_config.precision == Precision::MixedFp16Master ||
                             m_config.precision == Precision::MixedBf16Master) &&
                            !fsdpMixedPrecision(m_config);
    auto each = [&](std::uint64_t state, std::uint64_t n) {
        for (int k = 0; k < factor; ++k) transient(Affine{state, 0}, Component::Temporaries, s);
        if (gradCopies) transient(Affine{n * 4, 0}, Component::Temporaries, s);
    };
    if (!forLoop) {
        for (std::size_t i = 0; i < stateSizes.size(); ++i) each(stateSizes[i], elems[i]);
        return;
    }
    std::size_t big = 0;
    for (std::size_t i = 1; i < stateSizes.size(); ++i)
        if (stateSizes[i] > stateSizes[big]) big = i;
    if (!stateSizes.empty()) each(stateSizes[big], elems[big]);
}

void Scheduler::optimizerStep() {
    std::string label = "optimizer step (" + std::string(optimizerName(m_config.optimizer)) + ", " +
                        optimizerImplLabel(m_config) + ")";
    const int s = newStep(Phase::OptimizerStep, label);
    for (int g : m_paramGrad) use(g, s);
    const bool offload = m_config.optimizerOffload || m_config.paramOffload;
    std::vector<std::uint64_t> stateSizes, elems; // per parameter tensor, in parameter order
    for (std::size_t p = 0; p < m_graph.params.size(); ++p) {
        const auto& gp = m_graph.params[p];
        if (gp.tiedTo >= 0 || !gp.trainable || stateElems(p) == 0) continue;
        const std::uint64_t n = stateElems(p);
        const auto cost = optimizerCost(m_config, gp.shape, n, dtypeSize(gp.dtype));
        if (m_config.firstStep && !offload) addStateInstances(cost, s); // made lazily by the first step()
        stateSizes.push_back(n * static_cast<std::uint64_t>(stateDtypeSize(m_config, dtypeSize(gp.dtype))));
        elems.push_back(n);
    }
    if (m_config.firstStep && !offload && optimizerSharedBytes(m_config)) {
        const int inst =
            newInstance(Affine{optimizerSharedBytes(m_config), 0}, Component::OptimizerStates, s);
        m_lastUse[static_cast<std::size_t>(inst)] = kForever;
    }
    if (!offload) stepTemporaries(stateSizes, elems, s);
    if (m_config.zeroGradSetToNone)
        for (int g : m_paramGrad) use(g, s); // zero_grad(set_to_none=True) drops them after the step
}

void Scheduler::accountSaved() {
    std::set<int> held;
    for (const auto& v : m_savedBy) held.insert(v.begin(), v.end());
    for (const auto& v : m_unitHeld) held.insert(v.begin(), v.end());
    for (int inst : m_autocastPending) (void)inst;
    auto& t = m_program.m_totals;
    bool overflow = false;
    for (int inst : held) {
        const auto& in = m_program.instances[static_cast<std::size_t>(inst)];
        t.savedActivations = addAffine(t.savedActivations, in.bytes, overflow);
        const int row = m_creatorLayer[static_cast<std::size_t>(inst)];
        auto& layer = m_program.layers[static_cast<std::size_t>(std::max(row, 0))];
        layer.saved = addAffine(layer.saved, in.bytes, overflow);
    }
    for (int inst : m_autocastPending)
        if (held.count(inst))
            t.autocastCopies = addAffine(t.autocastCopies,
                                         m_program.instances[static_cast<std::size_t>(inst)].bytes, overflow);
}

} // namespace batchfit
