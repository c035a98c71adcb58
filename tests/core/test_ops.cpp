// Each op rule against PyTorch: one-layer models vs tests/data/reference/ops.json (tools/measure_ops.py,
// torch 1.13 on CPU; saved_tensors_hooks, unique storages, parameters excluded, input included).
#include "test_util.h"

#include <nlohmann/json.hpp>

using namespace batchfit;
using namespace batchfit::test;

namespace {

struct OpCase {
    const char* name;  ///< case in ops.json
    const char* input; ///< per-sample input shape
    const char* dtype;
    const char* layers; ///< BatchFit layers (JSON array body)
    Precision precision = Precision::Fp32;
    std::int64_t adjust = 0; ///< known per-sample difference, explained where used
};

// "g" makes the input require grad, as in the measurement (a learned add saves nothing).
#define G R"({"name":"g","op":"learned_add"},)"

const OpCase kCases[] = {
    {"linear_2d_bias", "[768]", "float32", R"({"name":"l","op":"linear","out_features":3072})"},
    {"linear_2d_nobias", "[768]", "float32",
     R"({"name":"l","op":"linear","out_features":3072,"bias":false})"},
    {"linear_3d_bias", "[128,768]", "float32", R"({"name":"l","op":"linear","out_features":3072})"},
    {"linear_3d_noncontig_input", "[64,32]", "float32",
     G R"({"name":"t","op":"transpose","dim0":0,"dim1":1},{"name":"l","op":"linear","out_features":64})"},
    {"linear_first_token_view", "[128,768]", "float32",
     G R"({"name":"s","op":"select","dim":0,"index":0},{"name":"l","op":"linear","out_features":768})"},
    {"conv1d", "[64,100]", "float32",
     R"({"name":"c","op":"conv1d","out_channels":128,"kernel":3,"padding":1})"},
    {"conv2d_3x3", "[64,56,56]", "float32",
     R"({"name":"c","op":"conv2d","out_channels":64,"kernel":3,"padding":1,"bias":false})"},
    {"conv2d_stem_input_nograd", "[3,224,224]", "float32",
     R"({"name":"c","op":"conv2d","out_channels":64,"kernel":7,"stride":2,"padding":3,"bias":false})"},
    {"conv2d_stride2_bias", "[32,56,56]", "float32",
     R"({"name":"c","op":"conv2d","out_channels":64,"kernel":3,"stride":2,"padding":1})"},
    {"conv2d_dilation2", "[32,28,28]", "float32",
     R"({"name":"c","op":"conv2d","out_channels":32,"kernel":3,"padding":2,"dilation":2})"},
    {"conv2d_depthwise", "[32,56,56]", "float32",
     R"({"name":"c","op":"conv2d","out_channels":32,"kernel":3,"padding":1,"groups":32,"bias":false})"},
    {"conv2d_groups4", "[64,28,28]", "float32",
     R"({"name":"c","op":"conv2d","out_channels":64,"kernel":3,"padding":1,"groups":4})"},
    {"conv2d_1x1", "[256,56,56]", "float32",
     R"({"name":"c","op":"conv2d","out_channels":64,"kernel":1,"bias":false})"},
    {"conv2d_patchify_vit", "[3,224,224]", "float32",
     R"({"name":"c","op":"conv2d","out_channels":768,"kernel":16,"stride":16})"},
    {"conv3d", "[8,8,16,16]", "float32",
     R"({"name":"c","op":"conv3d","out_channels":16,"kernel":3,"padding":1})"},
    {"conv_transpose2d", "[64,28,28]", "float32",
     R"({"name":"c","op":"conv_transpose2d","out_channels":32,"kernel":4,"stride":2,"padding":1})"},
    // ShuffleNetV2's branch: the conv saves the channel slice as is, which keeps the whole [64,28,28] alive.
    {"conv2d_channel_slice_input", "[64,28,28]", "float32",
     G
     R"({"name":"s","op":"slice","dim":0,"start":32},{"name":"c","op":"conv2d","out_channels":32,"kernel":1,"bias":false})"},
    {"batchnorm1d", "[256]", "float32", G R"({"name":"b","op":"batchnorm1d"})"},
    {"batchnorm1d_3d", "[64,100]", "float32", G R"({"name":"b","op":"batchnorm1d"})"},
    {"batchnorm2d", "[64,56,56]", "float32", G R"({"name":"b","op":"batchnorm2d"})"},
    {"layernorm", "[128,768]", "float32", G R"({"name":"n","op":"layernorm"})"},
    {"groupnorm", "[256,28,28]", "float32", G R"({"name":"n","op":"groupnorm","groups":32})"},
    // torch 1.13's mean() saves its input (the x² tensor), which the rule keeps under --torch 1.13.
    {"rmsnorm_llama", "[128,768]", "float32", G R"({"name":"n","op":"rmsnorm"})"},
    {"embedding", "[128]", "int64",
     R"({"name":"e","op":"embedding","num_embeddings":30522,"embedding_dim":768})"},
    {"relu", "[3072]", "float32", G R"({"name":"a","op":"relu"})"},
    {"linear_relu_inplace", "[768]", "float32",
     R"({"name":"l","op":"linear","out_features":3072},{"name":"a","op":"relu","inplace":true})"},
    {"linear_relu", "[768]", "float32",
     R"({"name":"l","op":"linear","out_features":3072},{"name":"a","op":"relu"})"},
    {"relu6", "[3072]", "float32", G R"({"name":"a","op":"relu6"})"},
    {"leaky_relu", "[3072]", "float32", G R"({"name":"a","op":"leaky_relu"})"},
    {"gelu", "[3072]", "float32", G R"({"name":"a","op":"gelu"})"},
    {"gelu_tanh", "[3072]", "float32", G R"({"name":"a","op":"gelu","approximate":"tanh"})"},
    {"silu", "[3072]", "float32", G R"({"name":"a","op":"silu"})"},
    {"sigmoid", "[3072]", "float32", G R"({"name":"a","op":"sigmoid"})"},
    {"tanh", "[3072]", "float32", G R"({"name":"a","op":"tanh"})"},
    {"hardswish", "[3072]", "float32", G R"({"name":"a","op":"hardswish"})"},
    {"softmax", "[12,128,128]", "float32", G R"({"name":"a","op":"softmax"})"},
    {"native_dropout", "[128,768]", "float32", G R"({"name":"d","op":"dropout","p":0.1})"},
    {"maxpool2d", "[64,112,112]", "float32",
     G R"({"name":"p","op":"maxpool2d","kernel":3,"stride":2,"padding":1})"},
    {"avgpool2d", "[64,56,56]", "float32", G R"({"name":"p","op":"avgpool2d","kernel":2})"},
    {"adaptive_avgpool2d_1", "[2048,7,7]", "float32",
     G R"({"name":"p","op":"adaptive_avgpool2d","output_size":1})"},
    {"adaptive_avgpool2d_7", "[512,14,14]", "float32",
     G R"({"name":"p","op":"adaptive_avgpool2d","output_size":7})"},
    {"flatten", "[512,7,7]", "float32", G R"({"name":"f","op":"flatten"})"},
    {"flatten_linear", "[2048,1,1]", "float32",
     G R"({"name":"f","op":"flatten"},{"name":"l","op":"linear","out_features":1000})"},
    {"add", "[128,768]", "float32",
     R"({"name":"a","op":"learned_add","inputs":["@input"]},{"name":"b","op":"learned_add","inputs":["@input"]},{"name":"s","op":"add","inputs":["a","b"]})"},
    {"mul", "[128,768]", "float32",
     R"({"name":"a","op":"learned_add","inputs":["@input"]},{"name":"b","op":"learned_add","inputs":["@input"]},{"name":"m","op":"mul","inputs":["a","b"]})"},
    // The measured input batch is saved once; b needs no gradient, so a is not saved.
    {"mul_one_requires_grad", "[128,768]", "float32",
     R"({"name":"a","op":"learned_add","inputs":["@input"]},{"name":"m","op":"mul","inputs":["a","@input"]})"},
    {"concat", "[96,28,28]", "float32",
     G
     R"({"name":"x","op":"slice","dim":0,"end":64,"inputs":["g"]},{"name":"y","op":"slice","dim":0,"start":64,"inputs":["g"]},{"name":"c","op":"concat","inputs":["x","y"]})"},
    {"matmul_3d", "[128,64]", "float32",
     R"({"name":"a","op":"learned_add","inputs":["@input"]},{"name":"b0","op":"learned_add","inputs":["@input"]},{"name":"b","op":"transpose","dim0":0,"dim1":1,"inputs":["b0"]},{"name":"m","op":"matmul","inputs":["a","b"]})"},
    {"matmul_4d", "[12,128,64]", "float32",
     R"({"name":"a","op":"learned_add","inputs":["@input"]},{"name":"b0","op":"learned_add","inputs":["@input"]},{"name":"b","op":"transpose","dim0":1,"dim1":2,"inputs":["b0"]},{"name":"m","op":"matmul","inputs":["a","b"]})"},
    {"cross_entropy_2d", "[1000]", "float32", G R"({"name":"loss","op":"cross_entropy"})"},
    {"cross_entropy_3d_positions", "[64,1000]", "float32", G R"({"name":"loss","op":"cross_entropy"})"},
    {"mse_loss", "[1000]", "float32", G R"({"name":"loss","op":"mse_loss"})"},
    // autocast: the casts are what the ops save; the weight's bf16 copy is cached and counted once.
    {"ac_linear_3d_bias", "[128,768]", "float32", G R"({"name":"l","op":"linear","out_features":3072})",
     Precision::AmpBf16},
    {"ac_linear_2d_bias", "[768]", "float32", G R"({"name":"l","op":"linear","out_features":3072})",
     Precision::AmpBf16},
    {"ac_conv2d", "[64,56,56]", "float32",
     G R"({"name":"c","op":"conv2d","out_channels":64,"kernel":3,"padding":1,"bias":false})",
     Precision::AmpBf16},
    {"ac_layernorm", "[128,768]", "float32", G R"({"name":"n","op":"layernorm"})", Precision::AmpBf16},
    {"ac_gelu", "[3072]", "float32", G R"({"name":"a","op":"gelu"})", Precision::AmpBf16},
    {"ac_gelu_bf16_input", "[768]", "float32",
     G R"({"name":"l","op":"linear","out_features":3072},{"name":"a","op":"gelu"})", Precision::AmpBf16},
    {"ac_cross_entropy", "[1000]", "float32", G R"({"name":"loss","op":"cross_entropy"})",
     Precision::AmpBf16},
    {"ac_cross_entropy_bf16_logits", "[768]", "float32",
     G R"({"name":"l","op":"linear","out_features":1000},{"name":"loss","op":"cross_entropy"})",
     Precision::AmpBf16},
    // The elementwise and masking vocabulary of hand-written models (rules_pointwise.cpp).
    {"pw_pow2", "[128,64]", "float32", G R"({"name":"p","op":"pow","exponent":2})"},
    {"pw_rsqrt", "[128,64]", "float32", G R"({"name":"p","op":"rsqrt"})"},
    {"pw_sqrt", "[128,64]", "float32", G R"({"name":"p","op":"sqrt"})"},
    {"pw_exp", "[128,64]", "float32", G R"({"name":"p","op":"exp"})"},
    {"pw_log", "[128,64]", "float32", G R"({"name":"p","op":"log"})"},
    {"pw_clamp", "[128,64]", "float32", G R"({"name":"p","op":"clamp","min":-1,"max":1})"},
    {"pw_clamp_min", "[128,64]", "float32", G R"({"name":"p","op":"clamp","min":1e-6})"},
    {"pw_abs", "[128,64]", "float32", G R"({"name":"p","op":"abs"})"},
    {"pw_neg", "[128,64]", "float32", G R"({"name":"p","op":"neg"})"},
    {"pw_reciprocal", "[128,64]", "float32", G R"({"name":"p","op":"reciprocal"})"},
    {"pw_sin", "[128,64]", "float32", G R"({"name":"p","op":"sin"})"},
    {"pw_cos", "[128,64]", "float32", G R"({"name":"p","op":"cos"})"},
    {"pw_mean_last_keepdim", "[128,64]", "float32", G R"({"name":"p","op":"mean","dims":-1,"keepdim":true})"},
    {"pw_sum_last", "[128,64]", "float32", G R"({"name":"p","op":"sum","dims":-1})"},
    {"pw_tril", "[128,64]", "float32", G R"({"name":"p","op":"scale","factor":1.0})"},
    {"pw_compare_masked_fill", "[128,64]", "float32",
     G R"({"name":"c","op":"compare","inputs":["g"]},{"name":"m","op":"masked_fill","inputs":["g","c"]})"},
    {"pw_masked_fill_buffer_eq0", "[4,128,128]", "float32",
     G
     R"({"name":"m","op":"masked_fill","mask_shape":[1,1,128,128],"buffer_shape":[1,1,256,256],"buffer_dtype":"float32"})"},
    {"pw_where_bool_buffer", "[4,128,128]", "float32",
     G
     R"({"name":"m","op":"masked_fill","mask":"buffer","mask_shape":[1,1,128,128],"buffer_shape":[1,1,256,256]})"},
    {"pw_learned_mul", "[128,64]", "float32", G R"({"name":"w","op":"learned_mul"})"},
    {"pw_learned_mul_channels", "[32,8,8]", "float32",
     G R"({"name":"w","op":"learned_mul","shape":[32,1,1]})"},
// F.scaled_dot_product_attention on CPU (torch 2.x only): the CPU flash kernel saves q, k, v, out and an
// unpadded fp32 logsumexp; a bool mask is saved as a float bias.
#define QKV                                                                                                       \
    R"({"name":"q","op":"learned_add","inputs":["@input"]},{"name":"k","op":"learned_add","inputs":["@input"]},)" \
    R"({"name":"v","op":"learned_add","inputs":["@input"]},)"
    {"sdpa_cpu_flash", "[4,40,16]", "float32",
     QKV R"({"name":"a","op":"scaled_dot_product_attention","inputs":["q","k","v"],"impl":"cpu_flash"})"},
    {"sdpa_cpu_flash_causal", "[4,40,16]", "float32",
     QKV
     R"({"name":"a","op":"scaled_dot_product_attention","inputs":["q","k","v"],"impl":"cpu_flash","causal":true})"},
    {"sdpa_cpu_flash_bool_mask", "[4,40,16]", "float32",
     QKV
     R"({"name":"a","op":"scaled_dot_product_attention","inputs":["q","k","v"],"impl":"cpu_flash","mask_shape":[40,40]})"},
// grouped-query attention (torch >= 2.5): q has 4 heads, k and v 2 (slices of the input, made to need a grad)
#define GQA                                                                                                        \
    R"({"name":"q","op":"learned_add","inputs":["@input"]},)"                                                      \
    R"({"name":"k0","op":"slice","inputs":["@input"],"dim":0,"start":0,"end":2},{"name":"k","op":"learned_add"},)" \
    R"({"name":"v0","op":"slice","inputs":["@input"],"dim":0,"start":0,"end":2},{"name":"v","op":"learned_add"},)"
    {"sdpa_gqa_math", "[4,40,16]", "float32",
     GQA R"({"name":"a","op":"scaled_dot_product_attention","inputs":["q","k","v"],"impl":"cpu_flash",)"
         R"("causal":true,"enable_gqa":true})"},
    {"sdpa_gqa_math_bf16", "[4,40,16]", "bfloat16",
     GQA R"({"name":"a","op":"scaled_dot_product_attention","inputs":["q","k","v"],"impl":"cpu_flash",)"
         R"("enable_gqa":true})",
     Precision::PureBf16},
    {"rmsnorm_nn", "[128,768]", "float32", G R"({"name":"n","op":"rmsnorm","eps":1e-6})"}, // torch >= 2.4
    {"rmsnorm_nn_noaffine", "[128,768]", "float32",
     G R"({"name":"n","op":"rmsnorm","elementwise_affine":false})"},
    // Not checked: ac_layernorm_bf16_input. CPU autocast (1.13 refuses it, 2.6 keeps layer_norm in bf16) is
    // not CUDA's, which lists layer_norm as fp32 (autocast_mode.cpp) and saves the fp32 cast the rule counts.
};

/// tests/data/reference/ops.json (torch 1.13) or ops-torch2.json (torch 2.6), made by tools/measure_ops.py.
const nlohmann::json& opsReference(TorchRules t) {
    static const nlohmann::json j113 =
        nlohmann::json::parse(readFile(std::string(BATCHFIT_TEST_DATA) + "/reference/ops.json"));
    static const nlohmann::json j2 =
        nlohmann::json::parse(readFile(std::string(BATCHFIT_TEST_DATA) + "/reference/ops-torch2.json"));
    return t == TorchRules::Torch113 ? j113 : j2;
}

/// The measured case (nullptr where that torch could not run it: nn.RMSNorm is 2.4+, 1.13's CPU autocast
/// refuses a bf16 input to layer_norm).
const nlohmann::json* findCase(const std::string& name, TorchRules t) {
    for (const auto& c : opsReference(t)["cases"])
        if (c["name"] == name) return c.contains("saved") ? &c : nullptr;
    return nullptr;
}

} // namespace

TEST_CASE("every op rule saves what PyTorch saves, under torch 2.6 and 1.13", "[ops][accuracy][torch2]") {
    for (TorchRules t : {TorchRules::Torch2, TorchRules::Torch113}) {
        int checked = 0;
        for (const auto& oc : kCases) {
            INFO(oc.name << " under torch " << torchRulesName(t));
            const nlohmann::json* ref = findCase(oc.name, t);
            if (!ref) continue;
            const std::string json = R"({"format":"batchfit-model","version":1,"name":")" +
                                     std::string(oc.name) + R"(","input":{"shape":)" + oc.input +
                                     R"(,"dtype":")" + oc.dtype + R"("},"layers":[)" + oc.layers + "]}";
            TrainingConfig c;
            c.precision = oc.precision;
            c.torch = t;
            Estimator est = estimator(parseOrFail(json), c);
            for (const auto& [batch, bytes] : (*ref)["saved"].items()) {
                const std::int64_t b = std::stoll(batch);
                auto e = est.estimate(b);
                REQUIRE(e);
                const auto expected = static_cast<std::int64_t>(bytes.get<std::uint64_t>()) + oc.adjust * b;
                INFO("batch " << b);
                CHECK(static_cast<std::int64_t>(e->savedActivationBytes) == expected);
            }
            ++checked;
        }
        CHECK(checked >= 75);
    }
}

TEST_CASE("an embedding indexed by a tensor the model builds has the shape of its index",
          "[ops][embedding]") {
    // A hand-written BERT: token types from zeros_like(ids) (2 rows, 128 positions), positions from a buffer.
    auto model = [](const char* indices, int rows) {
        return parseOrFail(
            std::string(R"({"format":"batchfit-model","version":1,"input":{"shape":[128],"dtype":"int64"},
          "layers":[{"name":"tok","op":"embedding","num_embeddings":1000,"embedding_dim":64},
                    {"name":"tt","op":"embedding","inputs":["@input"],"num_embeddings":)") +
            std::to_string(rows) + R"(,"embedding_dim":64,"indices":")" + indices + R"("},
                    {"name":"sum","op":"add","inputs":["tok","tt"]},
                    {"name":"loss","op":"mse_loss"}]})");
    };
    // One index tensor per sample (zeros_like): int64 [B, 128] saved, output batched.
    const Estimate z1 = estimateAt(model("zeros", 2), 1), z4 = estimateAt(model("zeros", 2), 4);
    // One for the batch (a buffer of ids): any length, saved once.
    const Estimate c1 = estimateAt(model("constant", 2), 1), c4 = estimateAt(model("constant", 2), 4);
    const auto saved = [](const Estimate& e) { return e.savedActivationBytes; };
    CHECK(saved(z4) - saved(z1) > saved(c4) - saved(c1)); // the per-sample ids grow with the batch
    CHECK((saved(c4) - saved(c1)) + 3 * 128 * 8 == saved(z4) - saved(z1));
    // positions are arange(S): S may not exceed the table.
    auto bad = validateModel(model("positions", 2));
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("sequence length 128 exceeds num_embeddings 2") != std::string::npos);
    CHECK(validateModel(model("positions", 128)));
    auto unknown = validateModel(model("buffer", 2));
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().message.find("\"constant\"") != std::string::npos);
}

TEST_CASE("a global average pool keeps its input under torch 1.13, nothing under 2.x", "[ops][torch2]") {
    // Measured with saved_tensors_hooks on CPU (tests/torch/mean_saved.py): F.adaptive_avg_pool2d(x, 1) and
    // x.mean([2, 3]) on [2,8,16,16] fp32 save the 16,384-byte input under 1.13.0, nothing under 2.6.0.
    const Model m = parseOrFail(R"({"format":"batchfit-model","version":1,"input":{"shape":[8,16,16]},
      "layers":[{"name":"conv","op":"conv2d","out_channels":8,"kernel":1},
                {"name":"gap","op":"adaptive_avgpool2d","output_size":1},{"name":"loss","op":"mse_loss"}]})");
    TrainingConfig torch2, torch113;
    torch113.torch = TorchRules::Torch113;
    const auto saved = [&](const TrainingConfig& c, std::int64_t b) {
        return estimateAt(m, b, c).savedActivationBytes;
    };
    CHECK(saved(torch113, 2) - saved(torch2, 2) == 16384); // the pool's [2,8,16,16] fp32 input
    CHECK(saved(torch113, 4) - saved(torch2, 4) == 32768);
    // Another output size is _adaptive_avg_pool2d, which keeps its input under both.
    const Model m2 = parseOrFail(R"({"format":"batchfit-model","version":1,"input":{"shape":[8,16,16]},
      "layers":[{"name":"conv","op":"conv2d","out_channels":8,"kernel":1},
                {"name":"pool","op":"adaptive_avgpool2d","output_size":2},{"name":"loss","op":"mse_loss"}]})");
    CHECK(estimateAt(m2, 2, torch2).savedActivationBytes == estimateAt(m2, 2, torch113).savedActivationBytes);
}

TEST_CASE("cast: a new tensor of the dtype, nothing saved; the input itself when it has the dtype",
          "[ops][cast]") {
    // [8, 64] bf16 batch -> linear -> cast float32 -> softmax (fp32, keeps its output) -> cast back as the
    // linear's output (type_as) -> linear -> mse. The casts save nothing (derivatives.yaml _to_copy).
    auto model = [](const std::string& cast1, const std::string& cast2) {
        return parseOrFail(
            R"({"format":"batchfit-model","version":1,"name":"c","input":{"shape":[8,64],"dtype":"bfloat16"},
          "layers":[{"name":"fc","op":"linear","out_features":64},)" +
            cast1 + R"({"name":"sm","op":"softmax"},)" + cast2 +
            R"({"name":"out","op":"linear","out_features":4},{"name":"loss","op":"mse_loss"}]})");
    };
    TrainingConfig bf16;
    bf16.precision = Precision::PureBf16;
    const auto withCasts = estimateAt(model(R"({"name":"up","op":"cast","dtype":"float32"},)",
                                            R"({"name":"down","op":"cast","inputs":["sm","fc"]},)"),
                                      1, bf16);
    const auto plain = estimateAt(model("", ""), 1, bf16);
    // softmax keeps its fp32 output (8*64*4) instead of a bf16 one (8*64*2); out keeps the bf16 copy made by
    // "down" (8*64*2) instead of softmax's output, which it shared before.
    CHECK(withCasts.savedActivationBytes == plain.savedActivationBytes + 8 * 64 * 2 + 8 * 64 * 2);
    // Casting to the dtype a tensor has is free.
    const auto noop = estimateAt(model(R"({"name":"up","op":"cast","dtype":"bfloat16"},)", ""), 1, bf16);
    CHECK(noop.savedActivationBytes == plain.savedActivationBytes);
    auto bad = Estimator::create(model(R"({"name":"up","op":"cast","dtype":"float33"},)", ""), bf16, 0);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("up: unknown dtype 'float33'") != std::string::npos);
}

TEST_CASE("SDPA's kernel follows the GPU: flash on sm_80+ and MI200/MI300, memory-efficient on a T4 or V100",
          "[ops][sdpa]") {
    // One attention layer over 500 positions in fp16: the memory-efficient kernel pads the logsumexp to 512
    // rows (12 more per head), flash does not (sdp_utils.cpp check_flash_attention_hardware_support).
    const Model m =
        parseOrFail(R"({"format":"batchfit-model","version":1,"name":"a","input":{"shape":[500,64]},
      "layers":[{"name":"attn","op":"attention","heads":4,"impl":"flash"},{"name":"loss","op":"mse_loss"}]})");
    TrainingConfig c;
    c.precision = Precision::PureFp16;
    auto saved = [&](const char* gpu) {
        auto g = findGpu(gpu);
        REQUIRE(g);
        auto e = Estimator::create(m, c, *g);
        REQUIRE(e);
        return e->estimate(2)->savedActivationBytes;
    };
    const auto a100 = saved("a100-80gb");
    CHECK(saved("rtx-4090") == a100);
    CHECK(saved("mi300x") == a100);
    CHECK(saved("t4") == a100 + 2 * 4 * 12 * 4);
    CHECK(saved("v100-16gb") == a100 + 2 * 4 * 12 * 4);
    CHECK(findGpu("t4")->arch == "sm_75");
}
