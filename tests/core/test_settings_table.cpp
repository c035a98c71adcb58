// The settings table (batchfit/settings.h): every setting declared once, and every value at its extremes
// survives the model file, the command-line text and the CLI command, unchanged.
#include "batchfit/cli_command.h"
#include "batchfit/model_io.h"
#include "batchfit/settings.h"
#include "test_util.h"

#include <cmath>
#include <set>

using namespace batchfit;
using namespace batchfit::test;

namespace {

bool numeric(const SettingInfo& s) {
    return s.type == SettingType::Integer || s.type == SettingType::Number || s.type == SettingType::Bytes;
}

// The smallest and the largest value the setting accepts (a real just below an excluded end).
std::vector<SettingValue> extremes(const SettingInfo& s) {
    if (s.type == SettingType::Number) {
        const double lo = s.minExcluded ? std::nextafter(s.min, s.max) : s.min;
        const double hi = s.maxExcluded ? std::nextafter(s.max, s.min) : s.max;
        return {lo, hi, (lo + hi) / 3.0};
    }
    const auto lo = static_cast<std::int64_t>(s.min), hi = static_cast<std::int64_t>(s.max);
    return {lo, hi, lo + (hi - lo) / 3};
}

TrainingSetup withValue(const SettingInfo& s, const SettingValue& v) {
    TrainingSetup t;
    // What some settings need around them to be valid as a whole (validateSetup).
    if (s.group() == "lora" && s.key != "lora.rank") t.config.lora.rank = 8;
    if (s.key == "gpu_memory_bytes") t.gpuId = "custom";
    if (s.group() == "parallel" && s.key != "parallel.gpus") {
        t.config.parallel.gpus = 2;
        t.config.parallel.strategy = ParallelStrategy::Ddp;
    }
    if (s.key == "parallel.tp" || s.key == "parallel.pp") {
        // tp x pp must divide the GPUs
        t.config.parallel.gpus = static_cast<int>(std::get<std::int64_t>(v));
    }
    if (s.key == "parallel.gpus" && std::get<std::int64_t>(v) > 1)
        t.config.parallel.strategy = ParallelStrategy::Ddp;
    s.set(t, v);
    return t;
}

} // namespace

TEST_CASE("every setting is declared once: keys and flags are unique, defaults are the struct's",
          "[settings]") {
    std::set<std::string> keys, flags;
    const TrainingSetup defaults;
    for (const SettingInfo& s : settingsTable()) {
        INFO(s.key);
        CHECK(keys.insert(s.key).second);
        if (!s.flag.empty()) {
            CHECK(flags.insert(s.flag).second);
            CHECK(s.flag.rfind("--", 0) == 0);
            CHECK(findSettingByFlag(s.flag) == &s);
        }
        CHECK(findSetting(s.key) == &s);
        CHECK_FALSE(s.label.empty());
        CHECK_FALSE(s.help.empty());
        CHECK(s.get(defaults) == s.defaultValue);
        CHECK(isDefaultSetting(s, s.defaultValue));
        if (numeric(s)) CHECK(s.min <= s.max);
        if (s.type == SettingType::Choice) {
            CHECK_FALSE(s.choices.empty());
            for (const auto& c : s.choices) CHECK(s.canonical(c).value() == c);
        }
    }
    CHECK(keys.size() > 40);
    // The ranges the GUI once clamped to are the table's now.
    CHECK(findSetting("checkpoint_every")->max == 1000000);
    CHECK(findSetting("accumulation_steps")->max == 1000000);
    CHECK(findSetting("margin_fraction")->max == 1);
    CHECK(findSetting("cuda_context_bytes")->max >= double(std::int64_t{1} << 40));
    CHECK(findSetting("gpu_memory_bytes")->max >= double(std::int64_t{16} << 40));
}

TEST_CASE("every numeric setting at its extremes round-trips through the file, the text and the CLI command",
          "[settings][roundtrip]") {
    const Model m = preset("resnet50");
    int checked = 0;
    for (const SettingInfo& s : settingsTable()) {
        if (!numeric(s) || s.key == "batch") continue;
        for (const SettingValue& v : extremes(s)) {
            const std::string text = settingText(s, v);
            INFO(s.key << " = " << text);
            REQUIRE(checkSettingValue(s, v));
            // the command-line text reads back exactly
            auto parsed = parseSettingText(s, text);
            REQUIRE(parsed);
            CHECK(*parsed == v);
            const TrainingSetup t = withValue(s, v);
            REQUIRE(validateSetup(t, [](const std::string& k) { return k; }));
            CHECK(s.get(t) == v);
            // the model file: save, load, save again
            const std::string file = serializeModelDocument(m, t);
            auto back = parseModelDocument(file, "extremes.json");
            REQUIRE(back);
            REQUIRE(back->setup);
            CHECK(s.get(*back->setup) == v);
            CHECK(*back->setup == t);
            CHECK(serializeModelDocument(back->model, back->setup) == file);
            // the CLI command carries the flag and the same text
            if (!s.flag.empty() && !isDefaultSetting(s, v) && s.group() != "serving") { // estimate's flags
                const GpuSpec gpu = *findGpu(t.gpuId);
                const std::string cmd = cliCommand("--model", "m.json", t.config, gpu, t.batch).line;
                const bool switchFlag = s.type == SettingType::Switch;
                CHECK(cmd.find(switchFlag ? s.flag : s.flag + " " + text) != std::string::npos);
            }
            ++checked;
        }
    }
    CHECK(checked > 40);
}

TEST_CASE("values out of range are refused with the range, never clamped", "[settings]") {
    const SettingInfo& every = *findSetting("checkpoint_every");
    auto over = parseSettingText(every, "1000001");
    REQUIRE_FALSE(over);
    CHECK(over.error().message.find("--checkpoint-every") != std::string::npos);
    CHECK(over.error().message.find("1000000") != std::string::npos);
    const SettingInfo& margin = *findSetting("margin_fraction");
    CHECK(std::get<double>(*parseSettingText(margin, "60%")) == 0.6);
    CHECK(std::get<double>(*parseSettingText(margin, "0.6")) == 0.6);
    CHECK_FALSE(parseSettingText(margin, "1"));
    // A file with checkpoint-every 100, accumulation 5000, margin 0.6, a 1 TiB context and a 16 TiB custom
    // GPU (the review's file) loads exactly.
    const std::string file = R"({"format":"batchfit-model","version":3,"input":{"shape":[4]},
      "training":{"gpu":"custom","gpu_memory_bytes":17592186044416,"checkpointing":"every-k",
      "checkpoint_every":100,"accumulation_steps":5000,"margin_fraction":0.6,
      "cuda_context_bytes":1099511627776},"layers":[{"name":"a","op":"relu"}]})";
    auto d = parseModelDocument(file, "review.json");
    REQUIRE(d);
    REQUIRE(d->setup);
    CHECK(d->setup->config.checkpointEvery == 100);
    CHECK(d->setup->config.accumulationSteps == 5000);
    CHECK(d->setup->config.marginFraction == 0.6);
    CHECK(d->setup->config.cudaContextBytes == std::uint64_t{1} << 40);
    CHECK(d->setup->customGpuBytes == std::uint64_t{16} << 40);
}

TEST_CASE("an unknown GPU id opens with a warning and the default GPU", "[settings][model_io]") {
    const std::string file = R"({"format":"batchfit-model","version":3,"input":{"shape":[4]},
      "training":{"gpu":"rtx-9090","batch":4},"layers":[{"name":"a","op":"relu"}]})";
    auto d = parseModelDocument(file, "future.json");
    REQUIRE(d);
    REQUIRE(d->setup);
    CHECK(d->setup->gpuId == TrainingSetup{}.gpuId);
    CHECK(d->setup->batch == 4);
    REQUIRE(d->warnings.size() == 1);
    CHECK(d->warnings[0].find("future.json") != std::string::npos);
    CHECK(d->warnings[0].find("rtx-9090") != std::string::npos);
}

TEST_CASE("the set-up section of --help lists every flag of the table", "[settings]") {
    const std::string help = settingsHelp();
    for (const SettingInfo& s : settingsTable())
        if (!s.flag.empty()) {
            INFO(s.flag);
            CHECK(help.find(s.flag) != std::string::npos);
        }
}

TEST_CASE("docs/model-format.md names every key of the training section", "[settings][docs]") {
    const std::string doc = readFile(std::string(BATCHFIT_TEST_DATA) + "/../../docs/model-format.md");
    REQUIRE_FALSE(doc.empty());
    for (const SettingInfo& s : settingsTable()) {
        const std::string key = s.group().empty() ? s.key : s.group();
        INFO(key);
        CHECK(doc.find("`" + key + "`") != std::string::npos);
    }
}
