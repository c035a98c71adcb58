#include "batchfit/fit_map.h"
#include "batchfit/hf_import.h"
#include "test_util.h"

using namespace batchfit;
using namespace batchfit::test;

namespace {

GpuSpec gpu(const std::string& id) {
    auto g = findGpu(id);
    if (!g) FAIL(g.error().message);
    return *g;
}

Model hf(const std::string& file, std::optional<std::int64_t> seq = std::nullopt) {
    auto m = importHfConfigFile(std::string(BATCHFIT_TEST_DATA) + "/hf/" + file, HfImportOptions{seq, {}});
    if (!m) FAIL(m.error().message);
    return *m;
}

} // namespace

TEST_CASE("fit map: the largest batch falls as the sequence grows, each row checked by the solver",
          "[fit-map]") {
    const Model model = preset("gpt2-small");
    TrainingConfig config;
    config.precision = Precision::AmpBf16;
    config.accumulationSteps = 4;
    const GpuSpec g = gpu("rtx-4090");
    FitMapOptions options;
    options.range = {128, 1024, 0};
    auto map = computeFitMap(model, config, g, options);
    REQUIRE(map);
    REQUIRE(map->rows.size() == 4);
    CHECK(map->accumulationSteps == 4);
    CHECK(map->batches.empty());
    const std::int64_t expected[] = {128, 256, 512, 1024};
    for (std::size_t i = 0; i < map->rows.size(); ++i) {
        const FitMapRow& row = map->rows[i];
        INFO("sequence " << row.sequence);
        CHECK(row.sequence == expected[i]);
        REQUIRE(row.largest.largest > 0);
        CHECK(row.tokensPerStep == static_cast<std::uint64_t>(row.largest.largest * row.sequence * 4));
        if (i > 0) CHECK(row.largest.largest <= map->rows[i - 1].largest.largest);
        // Cross-check with the exact solver on the model built at that length.
        auto at = withSequenceLength(model, row.sequence);
        REQUIRE(at);
        CHECK(at->inputShape == Shape{row.sequence});
        auto est = Estimator::create(*at, config, g);
        REQUIRE(est);
        CHECK(est->usableBytes(g.memoryBytes) == map->usableBytes);
        auto fits = est->verdict(row.largest.largest, g.memoryBytes);
        auto over = est->verdict(row.largest.largest + 1, g.memoryBytes);
        REQUIRE(fits);
        REQUIRE(over);
        CHECK(fits->fits);
        CHECK_FALSE(over->fits);
        CHECK(row.peakAllocatedAtLargest == *est->peakAllocatedBytes(row.largest.largest));
        CHECK(row.largest.requiredAtLargest <= map->usableBytes);
    }
    CHECK(map->rows.front().largest.largest > 2 * map->rows.back().largest.largest);
}

TEST_CASE("fit map: heat-map cells agree with the largest batch of their row", "[fit-map]") {
    FitMapOptions options;
    options.range = {256, 1024, 256};
    options.heatMapColumns = true;
    auto map = computeFitMap(preset("gpt2-small"), TrainingConfig{}, gpu("a100-80gb"), options);
    REQUIRE(map);
    REQUIRE(map->rows.size() == 4); // 256, 512, 768, 1024
    CHECK(map->rows[2].sequence == 768);
    REQUIRE(map->batches.size() >= 5);
    CHECK(map->batches.size() <= kMaxFitMapColumns);
    CHECK(map->batches.front() == 1);
    CHECK(map->batches.back() > map->rows.front().largest.largest); // some cells do not fit
    for (const FitMapRow& row : map->rows) {
        REQUIRE(row.cells.size() == map->batches.size());
        for (const FitMapCell& cell : row.cells) {
            INFO("sequence " << row.sequence << " batch " << cell.batch);
            CHECK(cell.fits == (cell.batch <= row.largest.largest));
            if (cell.requiredBytes > 0)
                CHECK(cell.usedFraction == Approx(static_cast<double>(cell.requiredBytes) /
                                                  static_cast<double>(map->usableBytes)));
            CHECK((cell.fits ? cell.usedFraction <= 1.0 : true));
        }
    }
}

TEST_CASE("fit map: each row is one fixed length, whatever earlier-batch history the set-up has",
          "[fit-map][sequences]") {
    FitMapOptions options;
    options.range = {256, 1024, 0}; // 256, 512, 1024: shorter than the history's 768 at first
    TrainingConfig history;
    history.replaySequences = {768, 128};
    auto with = computeFitMap(preset("gpt2-small"), history, gpu("a100-80gb"), options);
    auto without = computeFitMap(preset("gpt2-small"), TrainingConfig{}, gpu("a100-80gb"), options);
    REQUIRE(with);
    REQUIRE(without);
    REQUIRE(with->rows.size() == without->rows.size());
    for (std::size_t i = 0; i < with->rows.size(); ++i)
        CHECK(with->rows[i].largest.largest == without->rows[i].largest.largest);
}

TEST_CASE("fit map: a Hugging Face import rebuilt at each length matches the reshaped model", "[fit-map]") {
    const GpuSpec g = gpu("rtx-4090");
    FitMapOptions options;
    options.range = {256, 1024, 0};
    auto reimported = computeFitMap(
        [](std::int64_t seq) {
            return importHfConfigFile(std::string(BATCHFIT_TEST_DATA) + "/hf/gpt2.json", {seq, {}});
        },
        TrainingConfig{}, g, options);
    REQUIRE(reimported);
    auto reshaped = computeFitMap(hf("gpt2.json"), TrainingConfig{}, g, options);
    REQUIRE(reshaped);
    REQUIRE(reimported->rows.size() == reshaped->rows.size());
    for (std::size_t i = 0; i < reshaped->rows.size(); ++i)
        CHECK(reimported->rows[i].largest.largest == reshaped->rows[i].largest.largest);
    // GPT-2 has 1024 positions: the import refuses 2048, and so does the reshape, naming the position table.
    options.range = {1024, 2048, 0};
    auto beyond = computeFitMap(hf("gpt2.json"), TrainingConfig{}, g, options);
    REQUIRE_FALSE(beyond);
    CHECK(beyond.error().message.find("exceeds the 1024 positions") != std::string::npos);
    CHECK(maxSequenceLength(hf("gpt2.json")) == 1024);
    // Rotary models have no table: their context is the config's max_position_embeddings, and the suggested
    // heat map stops there, not at four times the imported length (issue 30).
    CHECK(maxSequenceLength(hf("llama-3-8b.json", 512)) == 8192);
    CHECK(maxSequenceLength(hf("pythia-160m.json", 512)) == 2048);
    CHECK(maxSequenceLength(preset("llama-2-7b")) == 4096);
    CHECK(suggestedFitMapRange(hf("llama-3-8b.json", 4096)).to == 8192);
    CHECK(suggestedFitMapRange(preset("llama-2-7b")).to == 4096);
    auto past = withSequenceLength(hf("llama-3-8b.json", 512), 16384);
    REQUIRE_FALSE(past);
    CHECK(past.error().message.find("exceeds the 8192 positions") != std::string::npos);
}

TEST_CASE("fit map: models whose input is not a token sequence are refused", "[fit-map]") {
    auto map = computeFitMap(preset("resnet50"), TrainingConfig{}, gpu("rtx-4090"), FitMapOptions{});
    REQUIRE_FALSE(map);
    CHECK(map.error().message.find("not a token sequence") != std::string::npos);
    CHECK(map.error().message.find("[3,224,224]") != std::string::npos);
    CHECK_FALSE(modelSequenceLength(preset("vit_b_16")));
    CHECK(*modelSequenceLength(preset("llama-2-7b")) == 4096);
}

TEST_CASE("fit map: a layer with a shape pinned to the sequence length is refused by name", "[fit-map]") {
    Model m = preset("transformer-12"); // [128] ids
    Layer pin;
    pin.name = "pinned";
    pin.op = "reshape";
    pin.attrs.set("shape", std::vector<std::int64_t>{128, 768});
    m.layers.insert(m.layers.end() - 1, pin);
    auto same = withSequenceLength(m, 128);
    CHECK(same); // nothing changes at its own length
    auto other = withSequenceLength(m, 256);
    REQUIRE_FALSE(other);
    CHECK(other.error().message.find("'pinned' has its 'shape'") != std::string::npos);
}

TEST_CASE("fit map: the sequence range is bounded", "[fit-map]") {
    CHECK(*fitMapSequences({512, 8192, 0}) == std::vector<std::int64_t>{512, 1024, 2048, 4096, 8192});
    CHECK(*fitMapSequences({100, 300, 100}) == std::vector<std::int64_t>{100, 200, 300});
    CHECK(fitMapSequences({1, kMaxFitMapSequence, 0})->back() == kMaxFitMapSequence);
    CHECK_FALSE(fitMapSequences({0, 128, 0}));
    CHECK_FALSE(fitMapSequences({256, 128, 0}));
    CHECK_FALSE(fitMapSequences({1, kMaxFitMapSequence + 1, 0}));
    CHECK_FALSE(fitMapSequences({128, 256, -1}));
    auto tooMany = fitMapSequences({1, 65, 1});
    REQUIRE_FALSE(tooMany);
    CHECK(tooMany.error().message.find("more than 64 points") != std::string::npos);
    CHECK(fitMapSequences({1, 64, 1})->size() == kMaxFitMapRows);
    FitMapOptions wide;
    wide.range = {128, 128, 0};
    wide.batchColumns.assign(kMaxFitMapColumns + 1, 1);
    CHECK_FALSE(computeFitMap(preset("gpt2-small"), TrainingConfig{}, gpu("rtx-4090"), wide));
    const FitMapRange suggested = suggestedFitMapRange(preset("gpt2-small"));
    CHECK(suggested.from == 128);
    CHECK(suggested.to == 1024);
    CHECK(fitMapSequences(suggested)->size() <= 8);
}
