// DoRA (--lora-dora, PEFT's use_dora=True): core/src/ops/rules_dora.cpp and graph/lora_linear.cpp; the
// tensors a module's Python code holds (a block's keep_input, a layer's keeps_alive). Against PEFT itself on
// the CPU: tools/accuracy_real.py's DoRA rows (the "real: config route" ctest, docs/accuracy-real.md).
#include "batchfit/model_io.h"
#include "batchfit/settings.h"
#include "batchfit/what_if.h"
#include "test_util.h"

#include <algorithm>

using namespace batchfit;
using namespace batchfit::test;

namespace {

TrainingConfig lora(bool dora, Precision p = Precision::Fp32, double dropout = 0) {
    TrainingConfig c;
    c.precision = p;
    c.optimizer = OptimizerKind::AdamW;
    c.lora.rank = 8;
    c.lora.targets = {"q_proj", "v_proj"};
    c.lora.dropout = dropout;
    c.lora.dora = dora;
    return c;
}

/// Qwen3-0.6B with two layers and a 1,024-token vocabulary: the logits no longer make the peak.
Model smallVocabulary(std::int64_t seq) {
    std::string text = readFile(std::string(BATCHFIT_TEST_DATA) + "/hf/qwen3-0.6b.json");
    for (const auto& [from, to] :
         {std::pair<std::string, std::string>{R"("num_hidden_layers": 28)", R"("num_hidden_layers": 2)"},
          {R"("vocab_size": 151936)", R"("vocab_size": 1024)"}}) {
        REQUIRE(text.find(from) != std::string::npos);
        text.replace(text.find(from), from.size(), to);
    }
    HfImportOptions o;
    o.sequenceLength = seq;
    auto m = importHfConfig(text, "qwen3.json", o);
    if (!m) FAIL(m.error().message);
    return *m;
}

constexpr std::int64_t kSeq = 256;
constexpr std::uint64_t kQ = 2048, kV = 1024; // Qwen3-0.6B: 16 x 128 query heads, 8 x 128 key/value heads

} // namespace

TEST_CASE("DoRA trains one magnitude per output row of each adapted linear", "[dora]") {
    const Model m = qwen3TwoLayers(kSeq);
    const Estimate plain = estimateAt(m, 1, lora(false));
    const Estimate dora = estimateAt(m, 1, lora(true));
    CHECK(dora.parameterCount == plain.parameterCount + 2 * (kQ + kV));
    CHECK(dora.trainableParameterCount == plain.trainableParameterCount + 2 * (kQ + kV));
    CHECK(plain.trainableParameterCount == 2 * (8 * (1024 + kQ) + 8 * (1024 + kV)));
}

TEST_CASE("DoRA keeps the base output and the adapter output of each adapted linear", "[dora]") {
    // fp32, no bias, no dropout: result_dora = (m/n - 1) * base + (m/n) * lora_B(...) * s keeps base and
    // lora_B's output ([tokens, out] each), the detached norm n and m/n ([out] each); m/n - 1 too where the
    // base output needs a gradient (the second layer: the first layer's adapters are upstream of it).
    const Model m = qwen3TwoLayers(kSeq);
    const std::uint64_t plain = estimateAt(m, 1, lora(false)).savedActivationBytes;
    const std::uint64_t dora = estimateAt(m, 1, lora(true)).savedActivationBytes;
    const std::uint64_t rows = (kQ + kV) * 4;
    CHECK(dora - plain == 2 * (2 * kSeq * rows) + 2 * (2 * rows) + rows);
}

TEST_CASE("DoRA's weight norm makes the forward's peak when the widest layer is adapted", "[dora]") {
    // A 1,024-token vocabulary: the logits no longer dominate. down_proj (3,072 -> 1,024) makes eye(3072),
    // the [3072, 1024] product, a copy of its bf16 weight in fp32 and two weight-sized sums.
    const Model m = smallVocabulary(kSeq);
    TrainingConfig c = lora(true, Precision::PureBf16, 0.05);
    c.lora.targets = {"all-linear"};
    const Estimate e = estimateAt(m, 2, c);
    CHECK(e.peakLabel.find("down_proj.lora_magnitude_vector (dora_norm)") != std::string::npos);
    c.lora.dora = false;
    const Estimate plain = estimateAt(m, 2, c);
    const std::uint64_t w = 3072 * 1024 * 4;
    CHECK(e.peakAllocatedBytes > plain.peakAllocatedBytes + 3072 * 3072 * 4 + 4 * w);
}

TEST_CASE("DoRA over quantized base weights dequantizes a copy for the norm", "[dora]") {
    const Model m = smallVocabulary(kSeq);
    TrainingConfig c = lora(true, Precision::AmpBf16);
    c.quant.kind = QuantKind::Nf4;
    c.quant.computeDtype = DType::BFloat16;
    c.quant.prepare = true;
    const Estimate q = estimateAt(m, 1, c);
    c.lora.dora = false;
    const Estimate plain = estimateAt(m, 1, c);
    CHECK(q.trainableParameterCount == plain.trainableParameterCount + 2 * (kQ + kV));
    CHECK(q.peakAllocatedBytes > plain.peakAllocatedBytes);
}

TEST_CASE("The advisor offers plain LoRA for a DoRA set-up, and it fits more", "[dora]") {
    const Model m = smallVocabulary(1024);
    TrainingConfig c = lora(true, Precision::PureBf16, 0.05);
    c.lora.targets = {"all-linear"};
    // a capacity where DoRA fits batch 2
    const auto capacity = estimator(m, c).requiredBytes(2);
    REQUIRE(capacity);
    const auto levers = rankLevers(m, c, *capacity, 0);
    const auto it =
        std::find_if(levers.begin(), levers.end(), [](const Lever& l) { return l.id == "lora-no-dora"; });
    REQUIRE(it != levers.end());
    CHECK_FALSE(it->config.lora.dora);
    CHECK(leverChangesTraining(*it)); // the magnitudes no longer train: ranked with LoRA and freezing
    CHECK(it->maxBatch > it->baselineMaxBatch);
    const auto plain = rankLevers(m, lora(false), *capacity, 0);
    CHECK(std::none_of(plain.begin(), plain.end(), [](const Lever& l) { return l.id == "lora-no-dora"; }));
}

TEST_CASE("The DoRA setting reads, writes and round-trips through a model file", "[dora][settings]") {
    TrainingSetup s;
    for (const auto& [key, text] : {std::pair{"lora.rank", "16"}, std::pair{"lora.dora", "true"}}) {
        const SettingInfo* info = findSetting(key);
        REQUIRE(info);
        auto v = parseSettingText(*info, text);
        REQUIRE(v);
        info->set(s, *v);
    }
    CHECK(s.config.lora.dora);
    CHECK(findSettingByFlag("--lora-dora") == findSetting("lora.dora"));
    Model m = qwen3TwoLayers(64);
    const std::string saved = serializeModelDocument(m, s);
    CHECK(saved.find("\"dora\": true") != std::string::npos);
    auto back = parseModelDocument(saved, "dora.json");
    REQUIRE(back);
    REQUIRE(back->setup);
    CHECK(back->setup->config.lora == s.config.lora);
}

TEST_CASE("A block's keep_input holds each repetition's input to its last op", "[dora][model]") {
    // relu keeps its output and the linears their inputs: nothing keeps the block's input, which dies after
    // relu unless the block holds it (a module's argument, while the module runs)
    const auto model = [](const char* keep) {
        return parseOrFail(
            std::string(R"({"format":"batchfit-model","version":1,"name":"keep","input":{"shape":[64]},
          "layers":[{"name":"fc0","op":"linear","out_features":512},
                    {"name":"blk","repeat":2)") +
            keep + R"(,"layers":[{"name":"act","op":"relu"},
                        {"name":"fc1","op":"linear","out_features":512},{"name":"fc2","op":"linear","out_features":512}]},
                    {"name":"loss","op":"mse_loss"}]})");
    };
    const Model held = model(R"(,"keep_input":true)");
    const Model plain = model("");
    auto saved = serializeModel(held);
    auto back = parseModel(saved, "keep.json");
    REQUIRE(back);
    CHECK(*back == held);
    const auto timeline = [](const Model& m) {
        auto e = estimator(m).estimate(4, true);
        REQUIRE(e);
        return e->timeline;
    };
    const auto a = timeline(held), b = timeline(plain);
    REQUIRE(a.size() == b.size());
    const auto at = [](const std::vector<TimelinePoint>& t, const std::string& label) {
        const auto it = std::find_if(t.begin(), t.end(), [&](const TimelinePoint& p) {
            return p.phase == Phase::Forward && p.label.rfind(label, 0) == 0;
        });
        REQUIRE(it != t.end());
        return it->live[Component::Activations];
    };
    constexpr std::uint64_t input = 4 * 512 * 4;
    CHECK(at(a, "blk[0].fc2") == at(b, "blk[0].fc2") + input);
    CHECK(at(a, "blk[1].fc2") == at(b, "blk[1].fc2") + input);
    CHECK(at(a, "blk[0].act") == at(b, "blk[0].act"));
}

TEST_CASE("keeps_alive names earlier layers, and an unknown name is refused", "[dora][model]") {
    const auto model = [](const char* keeps) {
        return std::string(R"({"format":"batchfit-model","version":1,"name":"k","input":{"shape":[64]},
          "layers":[{"name":"fc0","op":"linear","out_features":512},{"name":"act","op":"relu"},
                    {"name":"fc1","op":"linear","out_features":512},
                    {"name":"fc2","op":"linear","out_features":512,"keeps_alive":")") +
               keeps + R"("},{"name":"loss","op":"mse_loss"}]})";
    };
    auto e = estimator(parseOrFail(model("act"))).estimate(4, true);
    REQUIRE(e);
    auto bad = Estimator::create(parseOrFail(model("nothing")), {}, 0);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("fc2: keeps_alive: input 'nothing' names no earlier layer") !=
          std::string::npos);
    std::string number = model("act");
    number.replace(number.find(R"("act"},{"name":"loss")"), 5, "7");
    auto notText = Estimator::create(parseOrFail(number), {}, 0);
    REQUIRE_FALSE(notText);
    CHECK(notText.error().message.find("fc2: keeps_alive: expected a layer name") != std::string::npos);
}
