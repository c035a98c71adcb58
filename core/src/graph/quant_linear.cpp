// Which linears bitsandbytes quantizes when transformers loads a model with a BitsAndBytesConfig.
// Source: transformers integrations/bitsandbytes.py replace_with_bnb_linear (every nn.Linear not in
// modules_to_not_convert) and get_keys_to_not_convert (the output embedding, tied weights and the last
// module stay in 16 bits).
#include "graph/graph_builder.h"

namespace batchfit {

bool GraphBuilder::quantizes(const std::string& path, const Attributes& attrs) const {
    if (!m_config.quant.enabled()) return false;
    if (attrs.getString("tied_to")) return false; // a tied weight stays unquantized
    if (!m_quantHead.empty() && (path == m_quantHead || path == m_quantHead + ".base_layer")) return false;
    // inside an adapted linear only the base layer is quantized (lora_A and lora_B train)
    return !m_inLora || (path.size() > 11 && path.compare(path.size() - 11, 11, ".base_layer") == 0);
}

Attributes GraphBuilder::quantAttributes(const Attributes& linear) const {
    Attributes a = linear;
    const QuantConfig& q = m_config.quant;
    a.set("quant", std::string(quantKindName(q.kind)));
    a.set("double_quant", q.doubleQuant);
    a.set("compute_dtype", std::string(dtypeName(q.computeDtype)));
    // quant_state.dtype: the dtype the model was loaded in (transformers loads bitsandbytes models in
    // fp16 when no torch_dtype is given); a half precision names the one the user loads in.
    const DType half = halfDtype();
    a.set("load_dtype", std::string(dtypeName(half == DType::Float32 ? DType::Float16 : half)));
    return a;
}

} // namespace batchfit
