// LoRA (PEFT's LoraConfig on nn.Linear): which linears get adapters, and what an adapted linear runs.
// Source: peft/tuners/lora/layer.py Linear.forward and LoraLayer.update_layer, tuners_utils.py
// (_cast_input_dtype, cast_adapter_dtype, check_target_module_exists), utils/constants.py
// (TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING); read at peft 0.20.1.dev0 (commit 5d602fd).
#include "batchfit/lora_targets.h"
#include "graph/graph_builder.h"

#include <algorithm>

namespace batchfit {
namespace {

/// LoRA on a mixture of experts' expert projections is refused: PEFT (>= 0.18, with transformers 5;
/// utils/transformers_weight_conversion.py _convert_peft_config_moe) turns the targets gate_proj, up_proj,
/// down_proj, gate (and Mixtral's w1, w2, w3), and all-linear, into target_parameters on the fused expert
/// weights and the router (ParamWrapper: each forward builds every expert's weight plus its delta), and the
/// dense and shared MLPs of those names are then not adapted at all; transformers 4's per-expert linears get
/// one adapter each. BatchFit models neither yet, and an answer without them would be low. Empty: allowed.
std::string expertTargets(const std::string& model, const LoraTargetInfo& info,
                          const std::vector<std::string>& targets) {
    if (!info.experts) return {};
    static const char* const expertNames[] = {"gate", "gate_proj", "up_proj", "down_proj", "w1", "w2", "w3"};
    for (const auto& t : targets) {
        const std::string name = lastNameComponent(t);
        const bool expert = std::any_of(std::begin(expertNames), std::end(expertNames),
                                        [&](const char* n) { return name == n; });
        if (expert || t == "all-linear")
            return model + ": --lora-targets '" + t +
                   "' on a mixture of experts: PEFT adapts the experts' own weights and the router for it "
                   "(with transformers 5 it turns gate_proj, up_proj, down_proj, gate and all-linear into "
                   "target_parameters on the fused experts, and no longer adapts the dense and shared MLPs "
                   "of those names), which BatchFit does not model yet; target the attention projections "
                   "(for example q_proj,k_proj,v_proj,o_proj, or DeepSeek's q_a_proj,q_b_proj,"
                   "kv_a_proj_with_mqa,kv_b_proj,o_proj)";
    }
    return {};
}

/// `* scaling`, alpha / r (a Python float: nothing saved), in LoRA's and DoRA's sums alike.
Attributes scaling(const LoraConfig& lora) {
    Attributes s;
    s.set("factor", lora.alpha / static_cast<double>(lora.rank));
    return s;
}

} // namespace

Status GraphBuilder::resolveLoraTargets(const Model& model) {
    const LoraConfig& lora = m_config.lora;
    if (lora.rank <= 0) return Ok{};
    // a pipeline stage: the families' default targets and the head are the whole model's
    const LoraTargetInfo info = loraTargetInfo(m_wholeModel ? *m_wholeModel : model);
    m_loraHead = info.head;
    std::vector<std::string> targets = lora.targets.empty() ? info.defaults : lora.targets;
    if (targets.empty()) {
        std::string list;
        for (const auto& n : info.names) list += (list.empty() ? "" : ", ") + n;
        return makeError(model.name +
                         ": PEFT has no default LoRA targets for this model (its family is not one of "
                         "llama, mistral, qwen, gemma, gpt2, bert, roberta, gpt_neox): give --lora-targets "
                         "(its linear layers: " +
                         (list.empty() ? std::string("none") : list) + "), or all-linear");
    }
    if (auto refused = expertTargets(model.name, info, targets); !refused.empty()) return makeError(refused);
    m_loraAllLinear = targets.size() == 1 && targets[0] == "all-linear";
    m_loraTargets = m_loraAllLinear ? std::vector<std::string>{} : targets;
    m_loraTargetUsed.assign(m_loraTargets.size(), false);
    return Ok{};
}

bool GraphBuilder::loraTargets(const std::string& path) {
    if (m_config.lora.rank <= 0 || m_inLora) return false;
    if (m_loraAllLinear) return path != m_loraHead; // every linear but the output head
    const auto matches = [](const std::string& key, const std::string& t) {
        return key == t || (key.size() > t.size() && key.compare(key.size() - t.size(), t.size(), t) == 0 &&
                            key[key.size() - t.size() - 1] == '.');
    };
    // the op's path, and for a layer exported from torch its module name ("layers.0.wq")
    const bool ownModule = path == m_layerPath && !m_layerModule.empty();
    bool any = false;
    for (std::size_t i = 0; i < m_loraTargets.size(); ++i) {
        const std::string& t = m_loraTargets[i];
        const bool match = matches(path, t) || (ownModule && matches(m_layerModule, t));
        if (match) {
            m_loraTargetUsed[i] = true;
            any = true;
        }
    }
    return any;
}

std::vector<std::string> GraphBuilder::unusedLoraTargets() const {
    // a pipeline stage holds part of the model: a target another stage's linears match is used
    const LoraTargetInfo whole = m_wholeModel ? loraTargetInfo(*m_wholeModel) : LoraTargetInfo{};
    std::vector<std::string> out;
    for (std::size_t i = 0; i < m_loraTargets.size(); ++i) {
        const std::string& t = m_loraTargets[i];
        const std::string name = lastNameComponent(t);
        const bool elsewhere = std::find(whole.names.begin(), whole.names.end(), name) != whole.names.end();
        if (!m_loraTargetUsed[i] && !elsewhere) out.push_back(t);
    }
    return out;
}

Result<int> GraphBuilder::addLoraLinear(const std::string& path, const Attributes& attrs, int x) {
    const LoraConfig& lora = m_config.lora;
    struct Restore {
        GraphBuilder& b;
        bool trainable;
        ~Restore() {
            b.m_inLora = false;
            b.m_trainable = trainable;
            b.m_paramDtypeOverride.reset();
        }
    } restore{*this, m_trainable};
    m_inLora = true;

    // result = self.base_layer(x): the frozen pretrained linear.
    m_trainable = false;
    auto base = addOp("linear", path + ".base_layer", attrs, {x});
    if (!base) return base.error();
    const DType resultDtype = info(*base).dtype;

    // The adapters train, in fp32 when the base weights are half (get_peft_model's
    // autocast_adapter_dtype=True).
    m_trainable = true;
    const DType adapter =
        isFloating(m_paramDtype) && dtypeSize(m_paramDtype) == 2 ? DType::Float32 : m_paramDtype;
    // x = self._cast_input_dtype(x, lora_A.weight.dtype): a copy when the dtypes differ (no autocast check).
    int cast = x;
    if (isFloating(info(x).dtype) && info(x).dtype != adapter) {
        Attributes c;
        c.set("dtype", std::string(dtypeName(adapter)));
        auto copy = addOp("cast", path + ".lora_A.cast", c, {x});
        if (!copy) return copy.error();
        cast = *copy;
    }
    int h = cast;
    // lora_dropout: nn.Dropout(p), or nn.Identity when p == 0; one per adapted module.
    if (lora.dropout > 0) {
        Attributes d;
        d.set("p", lora.dropout);
        auto drop = addOp("dropout", path + ".lora_dropout", d, {h});
        if (!drop) return drop.error();
        h = *drop;
    }
    m_paramDtypeOverride = adapter;
    std::vector<int> dora; // DoRA's norm: mag_norm_scale, then what lives until its forward returns
    if (lora.dora) {
        Attributes n;
        n.set("in_features", info(h).shape.back());
        n.set("out_features", attrs.getInt("out_features").value_or(1));
        n.set("rank", lora.rank);
        // weight.to(x.dtype): a copy unless the base weight is already in the adapters' dtype
        n.set("copy_weight", quantizes(path + ".base_layer", attrs) || m_paramDtype != adapter);
        auto outs = addOpMulti("dora_norm", path + ".lora_magnitude_vector", n, {h});
        if (!outs) return outs.error();
        dora = *outs;
    }
    Attributes a;
    a.set("out_features", lora.rank);
    a.set("bias", false);
    auto loraA = addOp("linear", path + ".lora_A", a, {h});
    if (!loraA) return loraA.error();
    Attributes b;
    b.set("out_features", attrs.getInt("out_features").value_or(1));
    b.set("bias", false);
    auto loraB = addOp("linear", path + ".lora_B", b, {*loraA});
    if (!loraB) return loraB.error();
    m_paramDtypeOverride.reset();
    // Python keeps the adapted linear's input (the caller's argument) and its cast (Linear.forward's x) until
    // the forward returns: they live through the adapters' forward whatever was saved of them
    const std::vector<int> inputs = cast != x ? std::vector<int>{x, cast} : std::vector<int>{x};
    auto sum = lora.dora ? addDoraOutput(path, attrs, *base, h, *loraB, dora, inputs)
                         : addLoraSum(path, *base, *loraB, inputs);
    if (!sum) return sum.error();
    if (info(*sum).dtype == resultDtype) return *sum;
    Attributes back;
    back.set("dtype", std::string(dtypeName(resultDtype)));
    return addOp("cast", path + ".cast", back, {*sum});
}

Result<int> GraphBuilder::addLoraSum(const std::string& path, int base, int loraB,
                                     const std::vector<int>& keep) {
    // result = result + lora_B(...) * scaling (a Python float: nothing saved); then
    // result.to(torch_result_dtype). Linear.forward's x (the input's cast) lives until then.
    auto scaled = addOp("scale", path + ".scaling", scaling(m_config.lora), {loraB});
    if (!scaled) return scaled.error();
    std::vector<int> in{base, *scaled};
    in.insert(in.end(), keep.begin(), keep.end());
    return addOp("held_add", path + ".add", {}, in);
}

Result<int> GraphBuilder::addDoraOutput(const std::string& path, const Attributes& attrs, int base, int x,
                                        int loraB, const std::vector<int>& norm,
                                        const std::vector<int>& keep) {
    // DoraLinearLayer.forward: base_result is the base layer's output less its bias, or, with dropout, the
    // base matmul again on the dropped input with the weight in the adapters' dtype (norm[4] when copied)
    int baseResult = base;
    if (m_config.lora.dropout > 0) {
        Attributes l;
        l.set("out_features", attrs.getInt("out_features").value_or(1));
        std::vector<int> in{x};
        if (norm.size() > 4) in.push_back(norm[4]);
        auto r = addOp("dora_base", path + ".lora_magnitude_vector.base", l, in);
        if (!r) return r.error();
        baseResult = *r;
    } else if (attrs.getBool("bias").value_or(true)) {
        Attributes sub;
        sub.set("factor", 1.0); // base_result - bias: a new tensor, nothing saved
        auto r = addOp("scale", path + ".lora_magnitude_vector.minus_bias", sub, {base});
        if (!r) return r.error();
        baseResult = *r;
    }
    // result_dora = (mag_norm_scale - 1) * base_result + mag_norm_scale * lora_result * scaling
    Attributes minus;
    minus.set("factor", 1.0);
    minus.set("offset", -1.0);
    auto t1 = addOp("scale", path + ".lora_magnitude_vector.minus_one", minus, {norm[0]});
    if (!t1) return t1.error();
    auto t2 = addOp("mul", path + ".lora_magnitude_vector.mul_base", {}, {*t1, baseResult});
    if (!t2) return t2.error();
    auto t3 = addOp("mul", path + ".lora_magnitude_vector.mul_lora", {}, {norm[0], loraB});
    if (!t3) return t3.error();
    auto t4 = addOp("scale", path + ".lora_magnitude_vector.scaling", scaling(m_config.lora), {*t3});
    if (!t4) return t4.error();
    std::vector<int> in{*t2, *t4};
    in.insert(in.end(), norm.begin() + 1, norm.end()); // freed when the DoRA forward returns
    in.insert(in.end(), keep.begin(), keep.end());
    auto dora = addOp("held_add", path + ".lora_magnitude_vector.add", {}, in);
    if (!dora) return dora.error();
    // result = result + result_dora (DoraLinearVariant.forward)
    return addOp("add", path + ".add", {}, {base, *dora});
}

} // namespace batchfit
