// The serving set-up's names (batchfit/serving_config.h).
#include "batchfit/serving_config.h"

#include "enum_names.h"

namespace batchfit {
namespace {

constexpr EnumNames<ServingEngine, 5> kEngines{{{"vllm", ServingEngine::Vllm},
                                                {"vllm-v0", ServingEngine::VllmV0},
                                                {"sglang", ServingEngine::Sglang},
                                                {"hf", ServingEngine::Hf},
                                                {"hf-static", ServingEngine::HfStatic}}};
constexpr EnumNames<WeightQuant, 8> kQuants{{{"auto", WeightQuant::Auto},
                                             {"none", WeightQuant::None},
                                             {"fp8", WeightQuant::Fp8},
                                             {"int8", WeightQuant::Int8},
                                             {"awq", WeightQuant::Awq},
                                             {"gptq", WeightQuant::Gptq},
                                             {"nf4", WeightQuant::Nf4},
                                             {"bitsandbytes", WeightQuant::Nf4}}};
constexpr EnumNames<KvCacheDtype, 5> kKvDtypes{{{"auto", KvCacheDtype::Auto},
                                                {"fp8", KvCacheDtype::Fp8},
                                                {"fp8_e4m3", KvCacheDtype::Fp8},
                                                {"fp8_e5m2", KvCacheDtype::Fp8},
                                                {"bf16", KvCacheDtype::Auto}}};

} // namespace

std::string_view servingEngineName(ServingEngine e) {
    return nameFrom(kEngines, e);
}
Result<ServingEngine> parseServingEngine(std::string_view text) {
    return parseFrom(kEngines, text, "engine");
}
std::vector<ServingEngine> allServingEngines() {
    return {ServingEngine::Vllm, ServingEngine::VllmV0, ServingEngine::Sglang, ServingEngine::Hf,
            ServingEngine::HfStatic};
}
std::string_view weightQuantName(WeightQuant q) {
    return nameFrom(kQuants, q);
}
Result<WeightQuant> parseWeightQuant(std::string_view text) {
    return parseFrom(kQuants, text, "quantization");
}
std::vector<WeightQuant> allWeightQuants() {
    return {WeightQuant::Auto, WeightQuant::None, WeightQuant::Fp8, WeightQuant::Int8,
            WeightQuant::Awq,  WeightQuant::Gptq, WeightQuant::Nf4};
}
std::string_view kvCacheDtypeName(KvCacheDtype d) {
    return nameFrom(kKvDtypes, d);
}
Result<KvCacheDtype> parseKvCacheDtype(std::string_view text) {
    return parseFrom(kKvDtypes, text, "KV cache dtype");
}

} // namespace batchfit
