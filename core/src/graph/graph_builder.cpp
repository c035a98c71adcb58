#include "graph/graph_builder.h"

#include "batchfit/fit_map.h"
#include "batchfit/lora_targets.h"
#include "graph/lm_loss_rewrite.h"
#include "ops/op_rule.h"

#include <algorithm>

namespace batchfit {
namespace {

// Lowering costs ~10 us and ~1 KB per op: 50,000 ops (blocks' repetitions count too) take well under a
// second. The largest real models need a few thousand (Llama-3-405B, 126 layers, eager attention under AMP:
// ~3,800).
constexpr std::uint64_t kMaxOps = 50'000;
// Parameter elements of the whole model: 2^56 (7.2e16) keeps every byte count derived from them (weights,
// gradients, optimizer states with master weights: at most 24 bytes per element) far below 2^62.
constexpr std::uint64_t kMaxParameterElements = std::uint64_t{1} << 56;

std::string joinPath(const std::string& prefix, const std::string& seg) {
    if (prefix.empty()) return seg;
    if (seg.empty()) return prefix;
    if (seg[0] == '[') return prefix + seg;
    return prefix + "." + seg;
}

bool isHalfPrecision(Precision p) {
    return p != Precision::Fp32;
}

/// A lower bound of what walking `layers` counts against the op budget (one per op layer, per block
/// repetition and per merge), saturating just past `limit`: over-budget models are refused before anything is
/// built.
std::uint64_t minimumOps(const std::vector<Layer>& layers, std::uint64_t limit) {
    std::uint64_t n = 0;
    for (const auto& l : layers) {
        if (!l.isBlock()) {
            ++n;
        } else {
            const std::uint64_t perRepetition =
                1 + (l.shortcut != ShortcutKind::None ? 1 : 0) + minimumOps(l.layers, limit) +
                minimumOps(l.shortcutLayers, limit) + minimumOps(l.after, limit);
            const auto repeat = static_cast<std::uint64_t>(std::max<std::int64_t>(l.repeat, 1));
            n += perRepetition > (limit + 1) / repeat ? limit + 1 : perRepetition * repeat;
        }
        if (n > limit) return limit + 1;
    }
    return n;
}

} // namespace

Result<Graph> buildGraph(const Model& given, const TrainingConfig& config) {
    std::optional<Model> rewritten;
    // TRL's DPOTrainer and GRPOTrainer always ask for log-probabilities from the fused head (fused_lm_head)
    TrainingConfig lossConfig = config;
    if (config.recipe != Recipe::Sft && config.lmLoss == LmLoss::Full) lossConfig.lmLoss = LmLoss::TrlFused;
    if (lossConfig.lmLoss != LmLoss::Full) {
        auto r = applyLmLoss(given, lossConfig);
        if (!r) return r.error();
        rewritten = std::move(*r);
    }
    const Model& model = rewritten ? *rewritten : given;
    GraphBuilder b(config);
    if (config.parallel.pp > 1) {
        if (config.parallel.gpus % (config.parallel.pp * config.parallel.tp))
            return makeError("--pp " + std::to_string(config.parallel.pp) + " (x --tp " +
                             std::to_string(config.parallel.tp) + ") must divide --gpus " +
                             std::to_string(config.parallel.gpus));
        if (config.parallel.stage > 0) return buildLastPipelineStage(model, config);
        auto stage = firstPipelineStage(model, config.parallel.pp);
        if (!stage) return stage.error();
        b.setPipelineStage(&model, false);
        return b.build(*stage);
    }
    auto graph = b.build(model);
    if (graph && config.recipe == Recipe::Grpo)
        if (auto seq = modelSequenceLength(given)) graph->sequenceLength = *seq;
    return graph;
}

TensorInfo GraphBuilder::inputInfo(const Model& model) const {
    TensorInfo in{model.inputShape, model.inputDtype, true, true};
    if (isHalfPrecision(m_config.precision) && !autocast() && isFloating(in.dtype) &&
        dtypeSize(m_paramDtype) == 2)
        in.dtype = halfDtype();
    return in;
}

GraphBuilder::GraphBuilder(const TrainingConfig& config)
    : m_config(config), m_freezeRules(config.freeze, config.trainOnly) {
    switch (config.precision) {
    case Precision::PureFp16:
    case Precision::MixedFp16Master:
        m_paramDtype = DType::Float16;
        break;
    case Precision::PureBf16:
    case Precision::MixedBf16Master:
        m_paramDtype = DType::BFloat16;
        break;
    default:
        m_paramDtype = DType::Float32;
    }
    // prepare_model_for_kbit_training: every fp16/bf16 parameter that bitsandbytes did not quantize
    // becomes fp32 (peft/utils/other.py; Int8Params and Params4bit stay packed).
    if (config.quant.enabled() && config.quant.prepare) m_paramDtype = DType::Float32;
}

bool GraphBuilder::autocast() const {
    return m_config.precision == Precision::AmpFp16 || m_config.precision == Precision::AmpBf16;
}

DType GraphBuilder::halfDtype() const {
    switch (m_config.precision) {
    case Precision::AmpFp16:
    case Precision::PureFp16:
    case Precision::MixedFp16Master:
        return DType::Float16;
    case Precision::AmpBf16:
    case Precision::PureBf16:
    case Precision::MixedBf16Master:
        return DType::BFloat16;
    default:
        return DType::Float32;
    }
}

bool GraphBuilder::selectiveCheckpointing() const {
    return m_config.checkpointing == Checkpointing::Selective;
}

void GraphBuilder::beginSelectiveUnit() {
    if (selectiveCheckpointing() && m_currentUnit < 0) m_selectiveUnit = m_graph.checkpointUnits++;
}

void GraphBuilder::endSelectiveUnit() {
    m_selectiveUnit = -1;
}

int GraphBuilder::newTensor(const TensorInfo& info, int producer, const std::string& role) {
    GTensor t;
    t.info = info;
    t.producer = producer;
    t.role = role;
    m_graph.tensors.push_back(std::move(t));
    return static_cast<int>(m_graph.tensors.size()) - 1;
}

int GraphBuilder::sharedConstant(const std::string& key, const TensorInfo& info) {
    auto it = m_shared.find(key);
    if (it != m_shared.end()) return it->second;
    int t = newTensor(info, m_graph.ops.empty() ? -1 : static_cast<int>(m_graph.ops.size()), key);
    m_shared[key] = t;
    return t;
}

int GraphBuilder::paramTensor(const std::string& path, const ParamDecl& decl, int tiedTo) {
    GParam p;
    p.path = path + "." + decl.name;
    p.numel = shapeNumel(decl.shape).value_or(0);
    p.shape = decl.shape;
    p.dtype = decl.dtype.value_or(m_paramDtypeOverride.value_or(m_paramDtype));
    p.buffer = decl.buffer;
    p.storedBytes = decl.storedBytes;
    bool frozenByName = false;
    if (m_frozenParams)
        for (const auto& n : *m_frozenParams) frozenByName = frozenByName || n == decl.name;
    p.trainable = !decl.buffer && m_trainable && !frozenByName && decl.storedBytes == 0;
    p.tiedTo = tiedTo;
    int idx = static_cast<int>(m_graph.params.size());
    if (tiedTo >= 0) {
        // one tensor: it trains as the layer that owns it (its first use) says, as requires_grad does
        p.trainable = m_graph.params[static_cast<std::size_t>(tiedTo)].trainable;
        p.tensor = m_graph.params[static_cast<std::size_t>(tiedTo)].tensor;
    } else {
        TensorInfo info{decl.shape, p.dtype, false, true};
        p.tensor = newTensor(info, -1, decl.buffer ? "buffer" : "parameter");
        m_graph.tensors.back().param = idx;
        m_graph.tensors.back().requiresGrad = p.trainable;
    }
    m_graph.params.push_back(p);
    if (decl.name == "weight" && !m_weightByLayer.count(path))
        m_weightByLayer[path] = tiedTo >= 0 ? tiedTo : idx;
    return idx;
}

Result<int> GraphBuilder::castTo(int tensor, DType dtype, const std::string& path) {
    Attributes a;
    a.set("dtype", std::string(dtypeName(dtype)));
    return addOp("cast", path + ".cast", a, {tensor});
}

Status GraphBuilder::countOp(const std::string& path) {
    if (++m_opBudget > kMaxOps)
        return makeError(path + ": the model expands to more than " + std::to_string(kMaxOps) +
                         " ops; refusing to build it (check repeat counts)");
    return Ok{};
}

Result<int> GraphBuilder::addCopy(const std::string& path, int tensor) {
    Attributes a;
    a.set("copy", true);
    return addOp("contiguous", path, a, {tensor});
}

Result<int> GraphBuilder::addCast(const std::string& path, int tensor, DType dtype) {
    Attributes a;
    a.set("dtype", std::string(dtypeName(dtype)));
    return addOp("cast", path, a, {tensor});
}

Result<int> GraphBuilder::addOp(const std::string& type, const std::string& path, const Attributes& attrs,
                                const std::vector<int>& inputs) {
    const OpRule* rule = findOpRule(type);
    if (rule && rule->composite()) {
        if (static_cast<int>(inputs.size()) < rule->minInputs() ||
            static_cast<int>(inputs.size()) > rule->maxInputs())
            return makeError(path + ": " + type + " takes " + std::to_string(rule->minInputs()) +
                             (rule->maxInputs() != rule->minInputs() ? "+" : "") + " input(s), got " +
                             std::to_string(inputs.size()));
        return rule->expand(*this, path, attrs, inputs);
    }
    if (type == "linear" && inputs.size() == 1 && loraTargets(path))
        return addLoraLinear(path, attrs, inputs[0]);
    if (type == "linear" && inputs.size() == 1 && quantizes(path, attrs)) {
        auto outs = addOpMulti("quant_linear", path, quantAttributes(attrs), inputs);
        if (!outs) return outs.error();
        return outs->front();
    }
    auto outs = addOpMulti(type, path, attrs, inputs);
    if (!outs) return outs.error();
    return outs->front();
}

Result<std::vector<int>> GraphBuilder::addOpMulti(const std::string& type, const std::string& path,
                                                  const Attributes& attrs, const std::vector<int>& inputsIn) {
    const OpRule* rule = findOpRule(type);
    if (!rule) {
        std::string known;
        for (const auto& t : opTypes()) known += (known.empty() ? "" : ", ") + t;
        return makeError(path + ": unknown op '" + type + "' (known ops: " + known + ")");
    }
    if (auto st = countOp(path); !st) return st.error();
    const int n = static_cast<int>(inputsIn.size());
    if (n < rule->minInputs() || n > rule->maxInputs())
        return makeError(
            path + ": " + type + " takes " + std::to_string(rule->minInputs()) +
            (rule->maxInputs() > rule->minInputs() ? " to " + std::to_string(rule->maxInputs()) : "") +
            " input(s), got " + std::to_string(n));

    std::vector<int> inputs = inputsIn;
    const bool ac = autocast();
    if (ac && type != "cast") {
        const DType target = rule->precision() == PrecisionClass::Lower ? halfDtype() : DType::Float32;
        if (rule->precision() != PrecisionClass::Promote) {
            for (auto& t : inputs) {
                const DType dt = info(t).dtype;
                if (isFloating(dt) && dt != target) {
                    auto c = castTo(t, target, path);
                    if (!c) return c.error();
                    t = *c;
                }
            }
        }
    }

    const DType paramDtype = m_paramDtypeOverride.value_or(m_paramDtype);
    auto makeCtx = [&](const std::vector<int>& ins) {
        OpContext ctx{path,
                      attrs,
                      {},
                      paramDtype,
                      ac && rule->precision() == PrecisionClass::Lower ? halfDtype() : paramDtype};
        for (int t : ins) ctx.inputs.push_back(info(t));
        ctx.torch = m_config.torch;
        ctx.gpuArch = m_config.gpuArch;
        if (ac) ctx.autocast = halfDtype();
        return ctx;
    };
    auto planned = rule->plan(makeCtx(inputs));
    if (!planned) return planned.error();
    if (planned->needsContiguous) {
        bool copied = false;
        for (auto& t : inputs) {
            if (!info(t).contiguous) {
                auto c = addOp("contiguous", path + ".contiguous", {}, {t});
                if (!c) return c.error();
                t = *c;
                copied = true;
            }
        }
        if (copied) {
            planned = rule->plan(makeCtx(inputs));
            if (!planned) return planned.error();
        }
    }
    OpPlan& plan = *planned;
    for (const auto& o : plan.outputs)
        if (!o.bytes()) return makeError(path + ": output " + shapeToString(o.shape) + " is too large");
    for (const auto& c : plan.created)
        if (!c.bytes()) return makeError(path + ": tensor " + shapeToString(c.shape) + " is too large");

    const int opIndex = static_cast<int>(m_graph.ops.size());
    GOp op;
    op.type = type;
    op.path = path;
    op.layer = m_currentLayer;
    op.inputs = inputs;
    op.grad = plan.grad;
    op.gradInputs = plan.gradInputs;
    op.fwdWorkspace = plan.fwdWorkspace;
    op.bwdWorkspace = plan.bwdWorkspace;
    op.bwdParamWorkspace = plan.bwdParamWorkspace;
    op.bwdTail = plan.bwdTail;
    for (int i = 0; i < 3; ++i) op.cudnnWorkspace[i] = plan.cudnnWorkspace[i];
    op.isLoss = plan.isLoss;
    const std::string baseLayer = ".base_layer";
    op.adapter =
        m_inLora && !(path.size() >= baseLayer.size() &&
                      path.compare(path.size() - baseLayer.size(), baseLayer.size(), baseLayer) == 0);
    op.checkpointUnit = m_selectiveUnit >= 0 ? m_selectiveUnit : m_currentUnit;

    bool requiresGrad = false;
    for (int t : inputs)
        requiresGrad = requiresGrad || m_graph.tensors[static_cast<std::size_t>(t)].requiresGrad;

    // Parameters (and autocast's half copies of weights).
    std::vector<int> paramTensors; // per ParamDecl: the tensor the op computes with
    for (const auto& decl : plan.params) {
        const auto numel = shapeNumel(decl.shape);
        if (!numel) return makeError(path + ": parameter " + decl.name + " is too large");
        if (!plan.tiedTo || decl.name != "weight") {
            m_parameterElements += *numel; // each is at most 2^62: no wrap before the check
            if (m_parameterElements > kMaxParameterElements)
                return makeError(path + ": parameter " + decl.name +
                                 " makes the model too large (more than 2^56 = " +
                                 std::to_string(kMaxParameterElements) + " parameter elements)");
        }
        int tied = -1;
        if (plan.tiedTo && decl.name == "weight") {
            auto it = m_weightByLayer.find(*plan.tiedTo);
            if (it == m_weightByLayer.end())
                return makeError(path + ": tied_to '" + *plan.tiedTo +
                                 "' names no earlier layer with a weight");
            tied = it->second;
            const auto& src = m_graph.params[static_cast<std::size_t>(tied)];
            if (src.numel != shapeNumel(decl.shape).value_or(0))
                return makeError(path + ": tied_to '" + *plan.tiedTo + "' has " + std::to_string(src.numel) +
                                 " weight elements, this layer needs " + shapeToString(decl.shape));
        }
        if (decl.share == ParamDecl::Share::Use) {
            if (auto it = m_sharedParams.find(decl.name); it != m_sharedParams.end()) tied = it->second;
        }
        int p = paramTensor(path, decl, tied);
        if (decl.share != ParamDecl::Share::None && tied < 0) m_sharedParams[decl.name] = p;
        const GParam& gp = m_graph.params[static_cast<std::size_t>(p)];
        const int root = gp.tiedTo >= 0 ? gp.tiedTo : p;
        op.params.push_back(root);
        requiresGrad = requiresGrad || gp.trainable;
        int use = gp.tensor;
        if (ac && rule->precision() == PrecisionClass::Lower && !gp.buffer && isFloating(gp.dtype)) {
            TensorInfo ci{decl.shape, halfDtype(), false, true};
            use = newTensor(ci, opIndex, "autocast weight copy");
            m_graph.tensors.back().autocastCopy = true;
            op.created.push_back(use);
        }
        paramTensors.push_back(use);
    }

    for (std::size_t i = 0; i < plan.outputs.size(); ++i) {
        int t = newTensor(plan.outputs[i], opIndex, "output");
        auto& gt = m_graph.tensors.back();
        if ((i == 0 || plan.alias == Alias::View) && plan.alias != Alias::None && !inputs.empty())
            gt.base = m_graph.storageOf(inputs[0]);
        gt.requiresGrad = requiresGrad && isFloating(plan.outputs[i].dtype);
        op.outputs.push_back(t);
    }
    // PEFT with checkpointing (peft_model.py, _prepare_model_for_gradient_checkpointing) calls
    // enable_input_require_grads: a forward hook on the input embeddings does output.requires_grad_(True), so
    // the checkpointed blocks' outputs require a gradient. The frozen embedding's output becomes a leaf that
    // requires one: the first block then computes its input's gradient like every other, and the leaf's
    // AccumulateGrad keeps it, and its .grad, until the backward ends (GTensor::peftLeaf).
    if (type == "embedding" && !requiresGrad && m_config.lora.rank > 0 &&
        m_config.checkpointing != Checkpointing::None &&
        attrs.getString("indices").value_or("input") == "input")
        for (int t : op.outputs) {
            m_graph.tensors[static_cast<std::size_t>(t)].requiresGrad = true;
            m_graph.tensors[static_cast<std::size_t>(t)].peftLeaf = true;
        }
    std::vector<int> created;
    for (std::size_t i = 0; i < plan.created.size(); ++i) {
        int t = newTensor(plan.created[i], opIndex,
                          i < plan.createdRoles.size() ? plan.createdRoles[i] : "tensor");
        created.push_back(t);
        op.created.push_back(t);
        if (static_cast<int>(i) == plan.inputGradCreated) op.inputGradTensor = t;
        if (static_cast<int>(i) == plan.weightGradCreated) op.weightGradTensor = t;
    }
    // A gradient made in the forward for the first parameter (Liger) exists only when that parameter trains
    // and the input needs a gradient (fused_linear_cross_entropy_forward: `if input_requires_grad:
    // grad_weight = ... if weight_needs_grad`)
    int dropped = -1;
    if (op.weightGradTensor >= 0) {
        bool inputGrad = false;
        for (int t : inputs) inputGrad = inputGrad || m_graph.tensors[static_cast<std::size_t>(t)].requiresGrad;
        const bool trains =
            !op.params.empty() && m_graph.params[static_cast<std::size_t>(op.params.front())].trainable;
        if (!trains || !inputGrad) {
            op.created.erase(std::remove(op.created.begin(), op.created.end(), op.weightGradTensor),
                             op.created.end());
            dropped = op.weightGradTensor;
            op.weightGradTensor = -1;
        }
    }
    int target = -1;
    if (plan.target) {
        target = newTensor(*plan.target, -1, "targets");
        m_graph.batchTensors.push_back(target);
    }
    if (requiresGrad) {
        for (const auto& s : plan.saved) {
            const auto idx = static_cast<std::size_t>(s.index);
            if (s.ifGrad >= 0 &&
                (static_cast<std::size_t>(s.ifGrad) >= inputs.size() ||
                 !m_graph.tensors[static_cast<std::size_t>(inputs[static_cast<std::size_t>(s.ifGrad)])]
                      .requiresGrad))
                continue;
            // saved only for the gradient of a parameter: not when it is frozen (or absent)
            if (s.ifParam >= 0 &&
                (static_cast<std::size_t>(s.ifParam) >= op.params.size() ||
                 !m_graph.params[static_cast<std::size_t>(op.params[static_cast<std::size_t>(s.ifParam)])]
                      .trainable))
                continue;
            int t = -1;
            switch (s.kind) {
            case SavedDecl::Kind::Input:
                t = idx < inputs.size() ? inputs[idx] : -1;
                break;
            case SavedDecl::Kind::Output:
                t = idx < op.outputs.size() ? op.outputs[idx] : -1;
                break;
            case SavedDecl::Kind::Param:
                t = idx < paramTensors.size() ? paramTensors[idx] : -1;
                break;
            case SavedDecl::Kind::Created:
                t = idx < created.size() ? created[idx] : -1;
                break;
            case SavedDecl::Kind::Target:
                t = target;
                break;
            }
            if (t >= 0 && t != dropped) {
                op.saved.push_back(savedAs(t));
                op.savedPacks.push_back(s.packs);
            }
        }
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        bool pass = plan.grad == GradKind::Passthrough;
        if (plan.passthroughSameShape) {
            const auto& a = info(inputs[i]);
            const auto& o = plan.outputs[0];
            pass = a.shape == o.shape && a.batched == o.batched && a.dtype == o.dtype;
        }
        op.gradPassthrough.push_back(pass);
    }
    if (plan.isLoss) m_graph.loss = op.outputs[0];
    if (sequenceParallel()) noteSequenceParallel(type, inputs, op.outputs);
    m_graph.ops.push_back(std::move(op));
    return m_graph.ops.back().outputs;
}

Result<int> GraphBuilder::resolve(const std::string& name, const Scope& scope, int prev,
                                  const std::string& path) const {
    if (name == "@prev") return prev;
    if (name == "@input") return scope.blockInput;
    for (const Scope* s = &scope; s; s = s->parent) {
        auto it = s->names.find(name);
        if (it != s->names.end()) return it->second;
    }
    return makeError(path + ": input '" + name +
                     "' names no earlier layer in this block or an enclosing one");
}

Status GraphBuilder::keepAlive(const Layer& layer, const Scope& scope, int prev, const std::string& path) {
    if (!layer.attrs.has("keeps_alive")) return Ok{};
    const auto names = layer.attrs.getString("keeps_alive");
    if (!names)
        return makeError(path + ": keeps_alive: expected a layer name or comma-separated names, got " +
                         attrToString(*layer.attrs.find("keeps_alive")));
    std::size_t from = 0;
    while (from <= names->size()) {
        const std::size_t comma = std::min(names->find(',', from), names->size());
        const std::string name = names->substr(from, comma - from);
        from = comma + 1;
        if (name.empty()) continue;
        auto t = resolve(name, scope, prev, path + ": keeps_alive");
        if (!t) {
            if (m_wholeModel) continue; // a pipeline stage without that layer: another stage holds it
            return t.error();
        }
        m_graph.ops.back().keepAlive.push_back(*t);
    }
    return Ok{};
}

Result<int> GraphBuilder::walkList(const std::vector<Layer>& layers, int input, Scope& scope,
                                   const std::string& prefix) {
    int x = input;
    for (const auto& l : layers) {
        auto out = l.isBlock() ? walkBlock(l, x, scope, prefix) : walkLayer(l, x, scope, prefix, x);
        if (!out) return out.error();
        x = *out;
    }
    return x;
}

Result<int> GraphBuilder::walkLayer(const Layer& layer, int input, Scope& scope, const std::string& prefix,
                                    int prev) {
    const std::string path = joinPath(prefix, layer.name);
    std::vector<int> inputs;
    if (layer.inputs.empty()) inputs.push_back(input);
    for (const auto& name : layer.inputs) {
        auto t = resolve(name, scope, prev, path);
        if (!t) return t.error();
        inputs.push_back(*t);
    }
    if (!isPublicOpType(layer.op)) {
        // Internal ops (cast, split, attn_scores, ...) exist only inside composites, which give them inputs
        // of the ranks they expect; a model file naming one gets the same answer as for any unknown op.
        std::string known;
        for (const auto& t : opTypes()) known += (known.empty() ? "" : ", ") + t;
        return makeError(path + ": unknown op '" + layer.op + "' (known ops: " + known + ")");
    }
    m_graph.layers.push_back(GLayer{path, layer.op, -1});
    m_currentLayer = static_cast<int>(m_graph.layers.size()) - 1;
    // A tensor the model's inner forward also returns (transformers' last_hidden_state, read by the head
    // while the loss is computed): alive until the forward ends even when the layer does not save it
    if (layer.attrs.getBool("input_held_to_forward_end").value_or(false))
        for (int t : inputs) holdToForwardEnd(t);
    const int layerIndex = m_currentLayer;
    const bool outerTrainable = m_trainable;
    const std::string module = layer.attrs.getString("module").value_or("");
    m_layerPath = path;
    m_layerModule = module;
    bool byPatterns = m_freezeRules.trains(path, module); // first: it records which patterns matched
    if (m_config.lora.rank > 0) // LoRA: the base model is frozen; --train-only names modules_to_save
        byPatterns = byPatterns && !m_config.trainOnly.empty();
    m_trainable = byPatterns && m_trainable && layer.trainable;
    m_frozenParams = &layer.frozenParams;
    Result<int> out = makeError("");
    if (m_config.parallel.tp > 1) {
        if (sequenceParallel()) {
            auto gathered = sequenceParallelInputs(layer, path, std::move(inputs));
            if (!gathered) return gathered.error();
            inputs = std::move(*gathered);
        }
        const Shape& in = info(inputs.front()).shape;
        auto attrs = tensorParallelAttributes(layer, path, in.empty() ? 0 : in.back());
        if (!attrs) return attrs.error();
        out = addOp(layer.op, path, *attrs, inputs);
        if (out && sequenceParallel()) out = sequenceParallelOutput(layer, path, *out);
    } else {
        out = addOp(layer.op, path, layer.attrs, inputs);
    }
    m_trainable = outerTrainable;
    m_frozenParams = nullptr;
    if (!out) return out.error();
    if (auto st = keepAlive(layer, scope, prev, path); !st) return st.error();
    m_graph.layers[static_cast<std::size_t>(layerIndex)].output = *out;
    scope.names[layer.name] = *out;
    return *out;
}

Result<int> GraphBuilder::walkBlock(const Layer& block, int input, Scope& scope, const std::string& prefix) {
    int x = input;
    const bool indexed = block.repeat > 1 || block.firstIndex >= 0;
    const std::int64_t first = block.firstIndex >= 0 ? block.firstIndex : 0;
    const bool unitMode = m_config.checkpointing == Checkpointing::EveryBlock ||
                          m_config.checkpointing == Checkpointing::EveryKthBlock;
    struct Restore {
        bool& flag;
        bool value;
        ~Restore() { flag = value; }
    } restore{m_trainable, m_trainable};
    m_trainable = m_trainable && block.trainable;
    for (std::int64_t r = 0; r < block.repeat; ++r) {
        const std::string seg = block.name + (indexed ? "[" + std::to_string(first + r) + "]" : "");
        const std::string path = joinPath(prefix, seg);
        // Repetitions count against the budget too: nested blocks with no ops would otherwise loop for ever.
        if (auto st = countOp(path); !st) return st.error();
        if (indexed && m_repeatDepth == 0 && sequenceParallel() && !m_spShards.count(x)) {
            // Megatron splits the sequence where the transformer layers start (after the embedding)
            auto split = scatterSequence(x, joinPath(prefix, block.name));
            if (!split) return split.error();
            x = *split;
        }
        const int savedUnit = m_currentUnit;
        if (unitMode && m_currentUnit < 0 && (block.repeat > 1 || block.checkpointUnit)) {
            const std::int64_t k = std::max<std::int64_t>(1, m_config.checkpointEvery);
            const std::int64_t c = m_unitCandidates++;
            if (m_config.checkpointing == Checkpointing::EveryBlock || c % k == 0)
                m_currentUnit = m_graph.checkpointUnits++;
        }
        Scope inner{{}, x, &scope};
        // Megatron's split inside a transformer layer: the block's last linear is row-parallel
        const Layer* savedRow = m_rowLinear;
        for (const Layer& l : block.layers)
            if (!l.isBlock() && l.op == "linear") m_rowLinear = &l;
        if (indexed) ++m_repeatDepth; // a transformer layer
        auto main = walkList(block.layers, x, inner, path);
        if (indexed) --m_repeatDepth;
        m_rowLinear = savedRow;
        if (!main) return main.error();
        int out = *main;
        if (block.shortcut != ShortcutKind::None) {
            int sc = x;
            if (block.shortcut == ShortcutKind::Layers) {
                Scope scScope{{}, x, &scope};
                auto s = walkList(block.shortcutLayers, x, scScope, path);
                if (!s) return s.error();
                sc = *s;
            }
            m_graph.layers.push_back(
                GLayer{path + ".merge", block.merge == MergeKind::Add ? "add" : "concat", -1});
            m_currentLayer = static_cast<int>(m_graph.layers.size()) - 1;
            Attributes a;
            if (block.merge == MergeKind::Concat) a.set("dim", block.mergeDim);
            auto merged =
                addOp(block.merge == MergeKind::Add ? "add" : "concat", path + ".merge", a, {out, sc});
            if (!merged) return merged.error();
            m_graph.layers.back().output = *merged;
            out = *merged;
        }
        if (!block.after.empty()) {
            auto af = walkList(block.after, out, inner, path);
            if (!af) return af.error();
            out = *af;
        }
        if (block.keepInput && !m_graph.ops.empty()) m_graph.ops.back().keepAlive.push_back(x);
        m_currentUnit = savedUnit;
        x = out;
    }
    if (!block.name.empty()) scope.names[block.name] = x;
    return x;
}

Result<Graph> GraphBuilder::build(const Model& model) {
    if (model.inputShape.empty()) return makeError(model.name + ": the input needs a per-sample shape");
    for (auto d : model.inputShape)
        if (d <= 0)
            return makeError(model.name + ": input shape " + shapeToString(model.inputShape) +
                             " has a non-positive dimension");
    const TensorInfo in = inputInfo(model);
    if (!in.bytes()) return makeError("input: shape " + shapeToString(model.inputShape) + " is too large");
    if (minimumOps(model.layers, kMaxOps) > kMaxOps)
        return makeError(model.name + ": the model expands to more than " + std::to_string(kMaxOps) +
                         " ops; refusing to build it (check repeat counts)");
    if (auto st = resolveLoraTargets(model); !st) return st.error();
    if (m_config.quant.enabled()) m_quantHead = loraTargetInfo(model).head;
    if (auto st = prepareTensorParallel(model); !st) return st.error();
    auto x = newInputTensor(in);
    if (!x) return x.error();
    Scope root{{}, *x, nullptr};
    auto out = walkList(model.layers, *x, root, "");
    if (!out) return out.error();
    if (m_graph.loss < 0) {
        m_graph.layers.push_back(GLayer{"loss", "sum", -1});
        m_currentLayer = static_cast<int>(m_graph.layers.size()) - 1;
        auto l = addOp("sum_loss", "loss", {}, {*out});
        if (!l) return l.error();
    } else if (m_graph.ops.back().isLoss == false) {
        return makeError(m_graph.ops.back().path + ": layers after the loss are not supported");
    }
    // a pipeline stage: the patterns apply to the whole model
    if (auto unused = m_wholeModel ? unmatchedInWholeModel() : m_freezeRules.unmatched(); !unused.empty()) {
        std::string list;
        for (const auto& u : unused) list += (list.empty() ? "" : ", ") + u;
        const std::string example = m_graph.layers.empty() ? std::string() : m_graph.layers.front().path;
        return makeError(model.name + ": " + list + (unused.size() == 1 ? " matches" : " match") +
                         " no layer (patterns match layer paths such as '" + example +
                         "', or PyTorch module names; '*' matches any characters)");
    }
    if (auto unused = unusedLoraTargets(); !unused.empty()) {
        std::string list;
        for (const auto& u : unused) list += (list.empty() ? "'" : "', '") + u;
        std::string names; // what this model has, so that the user can pick
        for (const auto& n : loraTargetInfo(model).names) names += (names.empty() ? "" : ", ") + n;
        return makeError(model.name + ": --lora-targets " + list + "' " +
                         (unused.size() == 1 ? "matches" : "match") +
                         " no linear layer (a target is a linear's name or the end of its path after a '.', "
                         "as PEFT's target_modules; this model's linears: " +
                         names + ")");
    }
    bool anyTrainable = false;
    for (const auto& p : m_graph.params) anyTrainable = anyTrainable || p.trainable;
    if (!anyTrainable && !m_receivesHidden) { // a later stage still sends its input's gradient back
        const bool byOptions = !m_config.freeze.empty() || !m_config.trainOnly.empty();
        if (m_wholeModel)
            return makeError(model.name + ": the first pipeline stage has no trainable parameters (the "
                                          "embedding and its layers are all frozen); BatchFit does not model "
                                          "a stage that runs no backward");
        return makeError(model.name + ": the model has no trainable parameters" +
                         (byOptions
                              ? std::string(" (every layer is frozen by --freeze/--train-only or the model "
                                            "file: torch's backward would fail, nothing requires grad)")
                              : std::string()));
    }
    return std::move(m_graph);
}

} // namespace batchfit
