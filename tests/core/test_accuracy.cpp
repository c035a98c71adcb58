// Accuracy gate: estimates against what PyTorch measures (tests/data/reference, made by
// tools/measure_saved.py with Debian's python3-torch 1.13 on CPU; dropout routed through native_dropout as on
// CUDA).
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
    return std::fabs(static_cast<double>(estimate) - static_cast<double>(measured)) /
           static_cast<double>(measured);
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
    // Buffers: BatchFit keeps those autograd or the step touch (BN statistics, masks); position ids are made
    // per step rather than stored, so the torch model may have up to its buffer_bytes more.
    CHECK(e1->parameterBytes >= ref["param_bytes"].get<std::uint64_t>());
    CHECK(e1->parameterBytes <=
          ref["param_bytes"].get<std::uint64_t>() + ref["buffer_bytes"].get<std::uint64_t>());
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

TEST_CASE("estimates match the numbers the issue was filed with", "[accuracy]") {
    // Measured with Debian's torch 1.13 (issue #2). The committed data differs from these by the 0-dim CPU
    // scalars some models save (see docs/accuracy-reference.md); both are checked.
    struct Row {
        const char* model;
        OptimizerKind opt;
        std::int64_t batch;
        std::uint64_t saved;
    };
    const Row rows[] = {{"resnet50", OptimizerKind::Adam, 1, 86338476ull},
                        {"resnet50", OptimizerKind::Adam, 2, 172251988ull},
                        {"resnet50", OptimizerKind::Adam, 4, 344079012ull},
                        {"transformer-12", OptimizerKind::Adam, 1, 100010768ull},
                        {"transformer-12", OptimizerKind::Adam, 2, 200020512ull},
                        {"transformer-12", OptimizerKind::Adam, 4, 400040000ull},
                        {"gpt2-small", OptimizerKind::AdamW, 1, 2207551488ull}};
    for (const auto& r : rows) {
        INFO(r.model << " batch " << r.batch);
        TrainingConfig c;
        c.optimizer = r.opt;
        auto e = estimator(preset(r.model), c).estimate(r.batch);
        REQUIRE(e);
        CHECK(relError(e->savedActivationBytes, r.saved) < 0.01);
        if (std::string(r.model) == "resnet50") CHECK(e->savedActivationBytes == r.saved);
    }
    TrainingConfig adam, adamw;
    adamw.optimizer = OptimizerKind::AdamW;
    CHECK(estimateAt(preset("resnet50"), 1, adam).parameterBytes - 212904 == 102228128ull);
    CHECK(estimateAt(preset("resnet50"), 1, adam).optimizerStateBytes == 204456900ull);
    CHECK(estimateAt(preset("transformer-12"), 1, adam).parameterCount == 109483778ull);
    CHECK(estimateAt(preset("gpt2-small"), 1, adamw).optimizerStateBytes == 995519056ull);
}

TEST_CASE("resnet50 matches PyTorch exactly", "[accuracy]") {
    checkModel("resnet50", OptimizerKind::Adam);
    const auto ref = reference("resnet50");
    Estimator est = estimator(preset("resnet50"));
    for (const auto& [batch, bytes] : ref["saved"].items())
        CHECK(est.estimate(std::stoll(batch))->savedActivationBytes == bytes.get<std::uint64_t>());
}

TEST_CASE("transformer-12 within 1% of PyTorch", "[accuracy]") {
    checkModel("transformer-12", OptimizerKind::Adam);
}

TEST_CASE("gpt2-small within 1% of PyTorch", "[accuracy]") {
    checkModel("gpt2-small", OptimizerKind::AdamW);
}

TEST_CASE("vgg16, mobilenet_v2 and vit_b_16 within 1% of PyTorch", "[accuracy]") {
    checkModel("vgg16", OptimizerKind::Adam);
    checkModel("mobilenet_v2", OptimizerKind::Adam);
    checkModel("vit_b_16", OptimizerKind::Adam);
}

TEST_CASE("optimizer states of every torch.optim optimizer match PyTorch exactly (resnet50)",
          "[accuracy][optimizer]") {
    const auto ref = reference("optimizers");
    struct Row {
        const char* key;
        OptimizerKind kind;
        bool amsgrad, momentum, centered;
    };
    const Row rows[] = {{"sgd", OptimizerKind::Sgd, false, false, false},
                        {"sgd-momentum", OptimizerKind::SgdMomentum, false, false, false},
                        {"adam", OptimizerKind::Adam, false, false, false},
                        {"adamw", OptimizerKind::AdamW, false, false, false},
                        {"adamw-amsgrad", OptimizerKind::AdamW, true, false, false},
                        {"rmsprop", OptimizerKind::RmsProp, false, false, false},
                        {"rmsprop-momentum", OptimizerKind::RmsProp, false, true, false},
                        {"rmsprop-centered", OptimizerKind::RmsProp, false, false, true},
                        {"adagrad", OptimizerKind::Adagrad, false, false, false}};
    for (const auto& r : rows) {
        INFO(r.key);
        REQUIRE(ref["optimizers"].contains(r.key));
        TrainingConfig c;
        c.optimizer = r.kind;
        c.amsgrad = r.amsgrad;
        c.rmspropMomentum = r.momentum;
        c.rmspropCentered = r.centered;
        CHECK(estimateAt(preset("resnet50"), 1, c).optimizerStateBytes ==
              ref["optimizers"][r.key]["state_bytes"].get<std::uint64_t>());
    }
}
