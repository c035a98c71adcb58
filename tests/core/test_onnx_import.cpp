// ONNX import (issue 5, part 3). The fixtures in tests/data/onnx/ come from tools/export_onnx_fixture.py
// tiny; the resnet18 comparison with torch is the ctest "onnx: resnet18 exported by torch". Built with and
// without libonnx-dev: without it only the "no ONNX support" behaviour is checked.
#include "batchfit/onnx_import.h"
#include "test_util.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

using namespace batchfit;
using namespace batchfit::test;

namespace {

std::string onnxPath(const std::string& file) {
    return std::string(BATCHFIT_TEST_DATA) + "/onnx/" + file;
}

Model importOrFail(const std::string& file, const OnnxImportOptions& o = {}) {
    auto m = importOnnxFile(onnxPath(file), o);
    if (!m) FAIL(m.error().message);
    return *m;
}

const Layer* findLayer(const Model& m, const std::string& name) {
    for (const auto& l : m.layers)
        if (l.name == name) return &l;
    return nullptr;
}

std::vector<std::string> ops(const Model& m) {
    std::vector<std::string> out;
    for (const auto& l : m.layers) out.push_back(l.op);
    return out;
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

/// The import either fails with a message or gives a model that validates and can be estimated (or refused).
void importSafely(const std::string& bytes, const std::string& what) {
    INFO(what);
    auto m = importOnnx(bytes, "mutated.onnx");
    if (!m) {
        CHECK_FALSE(m.error().message.empty());
        return;
    }
    CHECK(validateModel(*m).ok());
    CHECK(parseModel(serializeModel(*m), "saved.json").ok());
    auto est = Estimator::create(*m, TrainingConfig{}, 0);
    if (est) (void)est->estimate(2);
}

} // namespace

TEST_CASE("the ONNX importer's options", "[onnx]") {
    CHECK(*parseOnnxLoss("cross-entropy") == OnnxLoss::CrossEntropy);
    CHECK(*parseOnnxLoss("mse") == OnnxLoss::Mse);
    CHECK(*parseOnnxLoss("none") == OnnxLoss::None);
    CHECK_FALSE(parseOnnxLoss("nll").ok());
    const auto supported = onnxSupportedOperators();
    for (const char* t :
         {"Conv", "Gemm", "MatMul", "BatchNormalization", "LayerNormalization", "Relu", "Softmax"})
        CHECK(std::find(supported.begin(), supported.end(), t) != supported.end());
}

TEST_CASE("a build without ONNX says which packages enable it", "[onnx]") {
    if (onnxImportAvailable()) {
        WARN("this build has ONNX support: the no-ONNX error is not reachable");
        return;
    }
    for (auto m : {importOnnxFile(onnxPath("tiny_cnn.onnx")),
                   importOnnx(readFile(onnxPath("tiny_cnn.onnx")), "tiny_cnn.onnx")}) {
        REQUIRE_FALSE(m.ok());
        INFO(m.error().message);
        CHECK(has(m.error().message, "tiny_cnn.onnx"));
        CHECK(has(m.error().message, "no ONNX support"));
        CHECK(has(m.error().message, "libonnx-dev"));
        CHECK(has(m.error().message, "libprotobuf-dev"));
    }
}

TEST_CASE("a small CNN maps layer for layer", "[onnx]") {
    if (!onnxImportAvailable()) return;
    const Model m = importOrFail("tiny_cnn.onnx");
    CHECK(m.name == "tiny_cnn");
    CHECK(m.inputShape == Shape{3, 16, 16});
    CHECK(ops(m) == std::vector<std::string>{"conv2d", "batchnorm2d", "relu", "maxpool2d", "conv2d", "relu6",
                                             "adaptive_avgpool2d", "flatten", "linear", "cross_entropy"});
    const Layer* conv1 = findLayer(m, "conv1");
    REQUIRE(conv1);
    CHECK(conv1->attrs.getInt("out_channels") == 8);
    CHECK(conv1->attrs.getInt("kernel") == 3);
    CHECK(conv1->attrs.getInt("padding") == 1);
    CHECK(conv1->attrs.getBool("bias") == false);
    CHECK(conv1->inputs.empty());
    const Layer* conv2 = findLayer(m, "conv2");
    REQUIRE(conv2);
    CHECK(conv2->attrs.getInt("stride") == 2);
    CHECK(conv2->attrs.getBool("bias") == true);
    REQUIRE(findLayer(m, "fc"));
    CHECK(findLayer(m, "fc")->attrs.getInt("out_features") == 10);
    REQUIRE(findLayer(m, "bn1"));
    CHECK(findLayer(m, "bn1")->attrs.getDouble("eps") == 1e-5);
    REQUIRE(findLayer(m, "pool"));
    CHECK(findLayer(m, "pool")->attrs.getInt("stride") == 2);

    // The same network written by hand gives the same estimate.
    const Model hand = parseOrFail(
        R"({"format":"batchfit-model","version":1,"name":"t","input":{"shape":[3,16,16],"dtype":"float32"},
      "layers":[{"name":"conv1","op":"conv2d","out_channels":8,"kernel":3,"padding":1,"bias":false},
                {"name":"bn1","op":"batchnorm2d"},{"name":"relu","op":"relu"},
                {"name":"pool","op":"maxpool2d","kernel":2,"stride":2},
                {"name":"conv2","op":"conv2d","out_channels":16,"kernel":3,"padding":1,"stride":2},
                {"name":"act","op":"relu6"},{"name":"avgpool","op":"adaptive_avgpool2d","output_size":1},
                {"name":"flatten","op":"flatten"},{"name":"fc","op":"linear","out_features":10},
                {"name":"loss","op":"cross_entropy"}]})");
    CHECK(estimator(m).parameterCount() == 1570);
    const Estimate a = estimateAt(m, 4), b = estimateAt(hand, 4);
    CHECK(a.parameterCount == b.parameterCount);
    CHECK(a.savedActivationBytes == b.savedActivationBytes);
    CHECK(a.peakAllocatedBytes == b.peakAllocatedBytes);
}

TEST_CASE("MatMul + Add becomes a linear, torch's erf GELU a gelu, a Shape-computed reshape a reshape",
          "[onnx]") {
    if (!onnxImportAvailable()) return;
    const Model m = importOrFail("token_mlp.onnx");
    CHECK(m.inputShape == Shape{4, 8});
    CHECK(ops(m) == std::vector<std::string>{"linear", "gelu", "linear", "layernorm", "reshape", "dropout",
                                             "linear", "cross_entropy"});
    REQUIRE(findLayer(m, "fc1"));
    CHECK(findLayer(m, "fc1")->attrs.getInt("out_features") == 16);
    CHECK(findLayer(m, "fc1")->attrs.getBool("bias") == true);
    REQUIRE(findLayer(m, "act"));
    CHECK(findLayer(m, "act")->inputs.empty()); // reads fc1, the previous layer
    const Layer& reshape = m.layers[4];
    CHECK(reshape.attrs.getInts("shape", 1) == std::vector<std::int64_t>{32});
    CHECK(m.layers[5].attrs.getDouble("p") == 0.25);
    CHECK(estimator(m).parameterCount() == 8 * 16 + 16 + 16 * 8 + 8 + 2 * 8 + 32 * 5 + 5);
}

TEST_CASE("eager self-attention maps to matmul, scale and softmax with explicit inputs", "[onnx]") {
    if (!onnxImportAvailable()) return;
    OnnxImportOptions o;
    o.loss = OnnxLoss::Mse;
    const Model m = importOrFail("attention.onnx", o);
    CHECK(m.inputShape == Shape{6, 8});
    CHECK(m.layers.back().op == "mse_loss");
    const auto o2 = ops(m);
    CHECK(std::count(o2.begin(), o2.end(), "linear") == 4);
    CHECK(std::count(o2.begin(), o2.end(), "matmul") == 2);
    CHECK(std::count(o2.begin(), o2.end(), "softmax") == 1);
    const Layer* scores = findLayer(m, "attn");
    REQUIRE(scores);
    CHECK(scores->op == "matmul");
    CHECK(scores->inputs.size() == 2);
    const Layer* scale = findLayer(m, "attn_div"); // the Div by sqrt(head_dim)
    REQUIRE(scale);
    CHECK(scale->op == "scale");
    CHECK(scale->attrs.getDouble("factor") == 0.5);
    const Layer* residual = findLayer(m, "residual");
    REQUIRE(residual);
    CHECK(residual->op == "add");
    CHECK(std::find(residual->inputs.begin(), residual->inputs.end(), "@input") != residual->inputs.end());
    CHECK(estimator(m).parameterCount() == 4 * (8 * 8 + 8));

    o.loss = OnnxLoss::None;
    const Model none = importOrFail("attention.onnx", o);
    CHECK(none.layers.back().op == "add");
    // Cross-entropy takes [S, C] logits too.
    CHECK(importOrFail("attention.onnx").layers.back().op == "cross_entropy");
}

TEST_CASE("torch's decomposed layer_norm (before opset 17) becomes one layernorm", "[onnx]") {
    if (!onnxImportAvailable()) return;
    const Model m = importOrFail("layernorm_opset14.onnx");
    CHECK(ops(m) == std::vector<std::string>{"layernorm", "linear", "cross_entropy"});
    CHECK(m.layers[0].name == "ln");
    CHECK(m.layers[0].attrs.getDouble("eps") == 1e-5);
    CHECK(m.layers[0].attrs.getBool("bias") == true);
    CHECK(estimator(m).parameterCount() == 2 * 8 + 8 * 3 + 3);
}

TEST_CASE("class token, learned position embedding, SiLU and a token select", "[onnx]") {
    if (!onnxImportAvailable()) return;
    const Model m = importOrFail("vit_tiny.onnx");
    CHECK(ops(m) == std::vector<std::string>{"conv2d", "reshape", "transpose", "class_token", "learned_add",
                                             "silu", "select", "linear", "cross_entropy"});
    CHECK(estimator(m).parameterCount() == 16 * 3 * 16 + 16 + 16 + 5 * 16 + 10 * 16 + 10);
    (void)estimateAt(m, 2);
}

TEST_CASE("operators BatchFit cannot map are named, or become opaque when allowed", "[onnx]") {
    if (!onnxImportAvailable()) return;
    auto m = importOnnxFile(onnxPath("unknown_ops.onnx"));
    REQUIRE_FALSE(m.ok());
    const std::string& msg = m.error().message;
    INFO(msg);
    CHECK(has(msg, "unknown_ops.onnx"));
    CHECK(has(msg, "2 node(s)"));
    CHECK(has(msg, "'/odd/Erf' (Erf)"));
    CHECK(has(msg, "'/odd/Softplus' (Softplus)"));
    CHECK(has(msg, "opaque"));

    OnnxImportOptions o;
    o.allowOpaque = true;
    const Model opaque = importOrFail("unknown_ops.onnx", o);
    CHECK(ops(opaque) == std::vector<std::string>{"conv2d", "opaque", "opaque", "adaptive_avgpool2d",
                                                  "flatten", "cross_entropy"});
    const Layer& erf = opaque.layers[1];
    CHECK(erf.attrs.getInts("output_shape", 1) == std::vector<std::int64_t>{4, 4, 4});
    CHECK(erf.attrs.getInt("params") == 0);
    CHECK(erf.attrs.getInt("saved_bytes_per_sample") == 0);
    CHECK(has(opaque.description, "opaque"));
    (void)estimateAt(opaque, 2);
}

TEST_CASE("hostile ONNX files give errors that say what is wrong", "[onnx]") {
    if (!onnxImportAvailable()) return;
    const std::pair<const char*, const char*> cases[] = {
        {"huge_dim.onnx", "too large"},
        {"negative_dim.onnx", "negative dimension"},
        {"symbolic_dim.onnx", "symbolic ('S')"},
        {"cycle.onnx", "cycle"},
        {"missing_initializer.onnx", "reads 'conv.weight', which is neither"},
        {"short_initializer.onnx", "raw data of 10 bytes"},
        {"huge_initializer.onnx", "too large"},
        {"two_inputs.onnx", "one input"},
        {"bad_attribute.onnx", "invalid for opset 17"},
    };
    for (const auto& [file, expected] : cases) {
        auto m = importOnnxFile(onnxPath(file));
        INFO(file << ": " << (m ? std::string("imported") : m.error().message));
        REQUIRE_FALSE(m.ok());
        CHECK(has(m.error().message, file));
        CHECK(has(m.error().message, expected));
    }
    CHECK(has(importOnnx(std::string(), "empty.onnx").error().message, "empty"));
    CHECK(has(importOnnx(std::string("{\"format\": \"batchfit-model\"}"), "x.onnx").error().message,
              "not an ONNX model"));
    CHECK(has(importOnnxFile(onnxPath("does-not-exist.onnx")).error().message, "cannot read"));
}

TEST_CASE("truncated and corrupted ONNX files never crash the importer", "[onnx]") {
    if (!onnxImportAvailable()) return;
    for (const char* file : {"tiny_cnn.onnx", "token_mlp.onnx", "attention.onnx", "vit_tiny.onnx",
                             "layernorm_opset14.onnx", "unknown_ops.onnx"}) {
        const std::string bytes = readFile(onnxPath(file));
        REQUIRE(bytes.size() > 100);
        for (std::size_t cut = 0; cut < bytes.size(); cut += 1 + cut / 16)
            importSafely(bytes.substr(0, cut), std::string(file) + " truncated at " + std::to_string(cut));
        std::uint32_t rng = 12345;
        for (int k = 0; k < 300; ++k) {
            std::string b = bytes;
            for (int flips = 0; flips < 1 + k % 3; ++flips) {
                rng = rng * 1664525u + 1013904223u;
                const std::size_t pos = (rng >> 8) % b.size();
                rng = rng * 1664525u + 1013904223u;
                b[pos] = static_cast<char>(k % 2 ? b[pos] ^ (1 << ((rng >> 24) % 8)) : (rng >> 24));
            }
            importSafely(b, std::string(file) + " corrupted, case " + std::to_string(k));
        }
    }
}

TEST_CASE("importOnnx on bytes and importOnnxFile agree", "[onnx]") {
    if (!onnxImportAvailable()) return;
    const std::string bytes = readFile(onnxPath("tiny_cnn.onnx"));
    auto a = importOnnx(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(),
                        onnxPath("tiny_cnn.onnx"));
    REQUIRE(a);
    CHECK(serializeModel(*a) == serializeModel(importOrFail("tiny_cnn.onnx")));
}

TEST_CASE("a cancelled ONNX import stops between nodes with 'import cancelled'", "[onnx][cancel]") {
    if (!onnxImportAvailable()) return;
    int polls = 0;
    OnnxImportOptions counting;
    counting.cancelled = [&polls] {
        ++polls;
        return false;
    };
    const Model full = importOrFail("vit_tiny.onnx", counting);
    CHECK(full == importOrFail("vit_tiny.onnx")); // a hook that never fires changes nothing
    REQUIRE(polls > 10);                          // polled per node, not once per import
    for (int at : {1, 2, polls / 2, polls - 1, polls}) {
        INFO("cancelled at poll " << at);
        int n = 0;
        OnnxImportOptions o;
        o.cancelled = [&n, at] { return ++n >= at; };
        auto m = importOnnxFile(onnxPath("vit_tiny.onnx"), o);
        REQUIRE_FALSE(m);
        CHECK(has(m.error().message, "vit_tiny.onnx: import cancelled"));
        CHECK(n == at); // nothing ran on after the hook said stop
    }
}
