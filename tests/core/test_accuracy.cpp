// Accuracy gate: estimates against what PyTorch measures (tests/data/reference, made by tools/measure_saved.py
// with Debian's python3-torch 1.13 on CPU; dropout routed through native_dropout as on CUDA).
#include "test_util.h"

#include <cmath>
#include <nlohmann/json.hpp>

using namespace batchfit;
using namespace batchfit::test;

namespace {

nlohmann::json reference(const std::string& model) {
    const std::string text = readFile(std::string(BATCHFIT_TEST_DATA) + "/reference/" + model + ".json");
    REQUIRE_FALSE(text.empty());
    return nlohmann::json::parse(text);
}

double relError(std::uint64_t estimate, std::uint64_t measured) {
    return std::fabs(static_cast<double>(estimate) - static_cast<double>(measured)) / static_cast<double>(measured);
}

void checkModel(const std::string& id, OptimizerKind opt) {
    INFO(id);
    const auto ref = reference(id);
    TrainingConfig c;
    c.optimizer = opt;
    Estimator est = estimator(preset(id), c);
    auto e1 = est.estimate(1);
    REQUIRE(e1);
    CHECK(e1->parameterCount == ref["params"].get<std::uint64_t>());
    CHECK(e1->parameterBytes == ref["param_bytes"].get<std::uint64_t>() + ref["buffer_bytes"].get<std::uint64_t>());
    CHECK(e1->gradientBytes == ref["param_bytes"].get<std::uint64_t>());
    CHECK(e1->optimizerStateBytes == ref["optimizer_state_bytes"].get<std::uint64_t>());
    for (const auto& [batch, bytes] : ref["saved"].items()) {
        auto e = est.estimate(std::stoll(batch));
        REQUIRE(e);
        INFO("batch " << batch << ": estimate " << e->savedActivationBytes << " vs measured " << bytes);
        CHECK(relError(e->savedActivationBytes, bytes.get<std::uint64_t>()) < 0.01);
    }
}

} // namespace

TEST_CASE("reference data matches the numbers the issue was filed with", "[accuracy]") {
    CHECK(reference("resnet50")["saved"]["1"] == 86338476);
    CHECK(reference("resnet50")["saved"]["4"] == 344079012);
    CHECK(reference("resnet50")["optimizer_state_bytes"] == 204456900);
    CHECK(reference("transformer-12")["saved"]["1"] == 100010768);
    CHECK(reference("transformer-12")["params"] == 109483778);
    CHECK(reference("gpt2-small")["saved"]["1"] == 2207551488);
    CHECK(reference("gpt2-small")["optimizer_state_bytes"] == 995519056);
}

TEST_CASE("resnet50 matches PyTorch exactly", "[accuracy]") {
    checkModel("resnet50", OptimizerKind::Adam);
    const auto ref = reference("resnet50");
    Estimator est = estimator(preset("resnet50"));
    for (const auto& [batch, bytes] : ref["saved"].items())
        CHECK(est.estimate(std::stoll(batch))->savedActivationBytes == bytes.get<std::uint64_t>());
}

TEST_CASE("transformer-12 within 1% of PyTorch", "[accuracy]") { checkModel("transformer-12", OptimizerKind::Adam); }

TEST_CASE("gpt2-small within 1% of PyTorch", "[accuracy]") { checkModel("gpt2-small", OptimizerKind::AdamW); }

TEST_CASE("vgg16, mobilenet_v2 and vit_b_16 within 1% of PyTorch", "[accuracy]") {
    checkModel("vgg16", OptimizerKind::Adam);
    checkModel("mobilenet_v2", OptimizerKind::Adam);
    checkModel("vit_b_16", OptimizerKind::Adam);
}
