#pragma once
// Shared helpers for core tests.
#include "batchfit/estimator.h"
#include "batchfit/hf_import.h"
#include "batchfit/model_io.h"
#include "batchfit/presets.h"
#include "catch_compat.h"

#include <fstream>
#include <sstream>
#include <string>

namespace batchfit::test {

inline Model parseOrFail(const std::string& json) {
    auto m = parseModel(json, "test.json");
    INFO(json);
    if (!m) FAIL(m.error().message);
    return *m;
}

inline Model preset(const std::string& id) {
    auto m = loadPreset(id);
    if (!m) FAIL(m.error().message);
    return *m;
}

/// A Hugging Face config of tests/data/hf ("llama-3.2-3b.json") imported at `seq` tokens.
inline Model hfModel(const std::string& file, std::int64_t seq) {
    HfImportOptions o;
    o.sequenceLength = seq;
    auto m = importHfConfigFile(std::string(BATCHFIT_TEST_DATA) + "/hf/" + file, o);
    if (!m) FAIL(m.error().message);
    return *m;
}

inline std::string readFile(const std::string& path);

/// Qwen3-0.6B's widths (tests/data/hf/qwen3-0.6b.json) with two decoder layers and `extra` config members
/// (", \"use_cache\": false"), imported at `seq` tokens: the model the TRL trainers are measured with.
inline Model qwen3TwoLayers(std::int64_t seq, const std::string& extra = "") {
    std::string text = readFile(std::string(BATCHFIT_TEST_DATA) + "/hf/qwen3-0.6b.json");
    const std::string layers = R"("num_hidden_layers": 28)";
    REQUIRE(text.find(layers) != std::string::npos);
    text.replace(text.find(layers), layers.size(), R"("num_hidden_layers": 2)" + extra);
    HfImportOptions o;
    o.sequenceLength = seq;
    auto m = importHfConfig(text, "qwen3.json", o);
    if (!m) FAIL(m.error().message);
    return *m;
}

/// The error a set-up is refused with, when creating the estimator or estimating batch 1.
inline std::string refusal(const Model& m, const TrainingConfig& c) {
    auto e = Estimator::create(m, c, 0);
    if (e) {
        auto r = e->estimate(1);
        REQUIRE_FALSE(r);
        return r.error().message;
    }
    return e.error().message;
}

inline Estimator estimator(const Model& m, const TrainingConfig& c = {}) {
    auto e = Estimator::create(m, c, 0);
    if (!e) FAIL(e.error().message);
    return *e;
}

inline Estimate estimateAt(const Model& m, std::int64_t batch, const TrainingConfig& c = {}) {
    auto e = estimator(m, c).estimate(batch);
    if (!e) FAIL(e.error().message);
    return *e;
}

inline std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// A model of one layer (plus an optional loss) over an input.
inline std::string oneLayer(const std::string& input, const std::string& dtype, const std::string& layer,
                            bool withLoss = false) {
    return R"({"format":"batchfit-model","version":1,"name":"t","input":{"shape":)" + input +
           R"(,"dtype":")" + dtype + R"("},"layers":[)" + layer +
           (withLoss ? R"(,{"name":"loss","op":"mse_loss"})" : "") + "]}";
}

} // namespace batchfit::test
