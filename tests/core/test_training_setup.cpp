// The training set-up saved in a model file (model format version 2).
#include "batchfit/model_io.h"
#include "batchfit/presets.h"
#include "test_util.h"

using namespace batchfit;
using namespace batchfit::test;

namespace {

TrainingSetup sampleSetup() {
    TrainingSetup s;
    s.gpuId = "a100-80gb";
    s.batch = 48;
    s.config.optimizer = OptimizerKind::AdamW;
    s.config.impl = OptimizerImpl::Fused;
    s.config.precision = Precision::AmpBf16;
    s.config.checkpointing = Checkpointing::EveryKthBlock;
    s.config.checkpointEvery = 3;
    s.config.accumulationSteps = 4;
    s.config.zeroGradSetToNone = false;
    s.config.cudaContextBytes = 400u << 20;
    s.config.marginFraction = 0.1;
    return s;
}

std::string withTraining(const std::string& training, int version = 2) {
    return R"({"format":"batchfit-model","version":)" + std::to_string(version) +
           R"(,"input":{"shape":[4]},"training":)" + training + R"(,"layers":[{"name":"a","op":"relu"}]})";
}

std::string error(const std::string& text) {
    auto d = parseModelDocument(text, "run.json");
    REQUIRE_FALSE(d);
    return d.error().message;
}

} // namespace

TEST_CASE("a saved set-up survives save -> load -> save and makes the file version 3", "[model_io][setup]") {
    const Model m = preset("resnet50");
    const TrainingSetup s = sampleSetup();
    const std::string text = serializeModelDocument(m, s);
    CHECK(text.find("\"version\": 3") != std::string::npos);
    auto back = parseModelDocument(text, "run.json");
    REQUIRE(back);
    CHECK(back->model == m);
    REQUIRE(back->setup);
    CHECK(*back->setup == s);
    CHECK(serializeModelDocument(back->model, back->setup) == text);
    // Without a set-up the file stays version 1, readable by BatchFit versions that only know 1.
    CHECK(serializeModelDocument(m, std::nullopt).find("\"version\": 1") != std::string::npos);
    CHECK(serializeModelDocument(m, std::nullopt) == serializeModel(m));
    // The model-only reader accepts the file and drops the section.
    auto modelOnly = parseModel(text, "run.json");
    REQUIRE(modelOnly);
    CHECK(*modelOnly == m);
}

TEST_CASE("a custom GPU keeps its exact capacity", "[model_io][setup]") {
    TrainingSetup s = makeTrainingSetup(customGpu(13.5), 7, TrainingConfig{});
    CHECK(s.gpuId == "custom");
    CHECK(s.customGpuBytes == 14495514624ull);
    auto back = parseModelDocument(serializeModelDocument(preset("resnet50"), s), "x.json");
    REQUIRE(back);
    REQUIRE(back->setup);
    auto gpu = setupGpu(*back->setup);
    REQUIRE(gpu);
    CHECK(gpu->memoryBytes == 14495514624ull);
    CHECK(back->setup->batch == 7);
}

TEST_CASE("missing keys take the defaults; ids are case-insensitive", "[model_io][setup]") {
    auto d = parseModelDocument(withTraining(R"({"gpu":"RTX-4090","batch":3})"), "x.json");
    REQUIRE(d);
    REQUIRE(d->setup);
    CHECK(d->setup->gpuId == "rtx-4090");
    CHECK(d->setup->batch == 3);
    CHECK(d->setup->config == TrainingConfig{});
    auto none = parseModelDocument(withTraining("{}"), "x.json");
    REQUIRE(none);
    REQUIRE(none->setup);
    CHECK(none->setup->batch == 1);
}

TEST_CASE("a bad training section names the file, the JSON path and what was expected",
          "[model_io][setup][bad-input]") {
    CHECK(
        error(withTraining("{}", 1)).find("run.json: $.training: a training section needs \"version\": 2") ==
        0);
    CHECK(error(withTraining("[]")).find("run.json: $.training: expected an object") == 0);
    // an unknown GPU id opens with a warning (test_settings_table.cpp); a GPU that is not a name does not
    CHECK(error(withTraining(R"({"gpu":5})")).find("run.json: $.training.gpu: expected a GPU id") == 0);
    CHECK(error(withTraining(R"({"gpu":"custom"})")).find("$.training.gpu_memory_bytes: missing") !=
          std::string::npos);
    CHECK(error(withTraining(R"({"batch":2147483649})")).find("$.training.batch: expected") !=
          std::string::npos);
    CHECK(error(withTraining(R"({"batch":0})")).find("$.training.batch") != std::string::npos);
    CHECK(
        error(withTraining(R"({"batch":"8"})")).find("$.training.batch: expected an integer, got a string") !=
        std::string::npos);
    CHECK(
        error(withTraining(R"({"batch":18446744073709551615})")).find("$.training.batch: expected at most") !=
        std::string::npos);
    CHECK(error(withTraining(R"({"optimizer":"adamx"})"))
              .find("$.training.optimizer: unknown optimizer 'adamx'") != std::string::npos);
    CHECK(error(withTraining(R"({"margin_fraction":1.0})"))
              .find("$.training.margin_fraction: expected a number in [0, 1)") != std::string::npos);
    CHECK(error(withTraining(R"({"gpu_memory_bytes":1e300,"gpu":"custom"})"))
              .find("$.training.gpu_memory_bytes") != std::string::npos);
    CHECK(error(withTraining(R"({"batchsize":8})"))
              .find("$.training.batchsize: unknown key (expected one of:") != std::string::npos);
    CHECK(error(withTraining(R"({"first_step":1})")).find("$.training.first_step: expected true or false") !=
          std::string::npos);
    CHECK(error(R"({"format":"batchfit-model","version":4,"input":{"shape":[1]},"layers":[]})")
              .find("unsupported version 4 (this BatchFit reads 1 to 3)") != std::string::npos);
}

TEST_CASE("the allocator settings: alloc_conf round-trips, version 2's default fragmentation is dropped",
          "[model_io][setup]") {
    auto conf = parseModelDocument(
        withTraining(R"({"alloc_conf":"max_split_size_mb:128, expandable_segments:True"})", 3), "run.json");
    REQUIRE(conf);
    REQUIRE(conf->setup);
    CHECK(conf->setup->config.allocConf == "expandable_segments:True,max_split_size_mb:128");
    CHECK(serializeModelDocument(conf->model, conf->setup)
              .find("\"alloc_conf\": \"expandable_segments:True,") != std::string::npos);
    CHECK(error(withTraining(R"({"alloc_conf":"expandable:True"})", 3))
              .find("run.json: $.training.alloc_conf: PYTORCH_CUDA_ALLOC_CONF: Unrecognized CachingAllocator "
                    "option: expandable") == 0);
    // Version 2 files always wrote the old default 0.05: not a choice, so the replay decides.
    auto old = parseModelDocument(withTraining(R"({"fragmentation_fraction":0.05})", 2), "run.json");
    REQUIRE(old);
    CHECK_FALSE(old->setup->config.fragmentationFraction.has_value());
    auto chosen = parseModelDocument(withTraining(R"({"fragmentation_fraction":0.12})", 2), "run.json");
    REQUIRE(chosen);
    CHECK(chosen->setup->config.fragmentationFraction == 0.12);
    auto v3 = parseModelDocument(withTraining(R"({"fragmentation_fraction":0.05})", 3), "run.json");
    REQUIRE(v3);
    CHECK(v3->setup->config.fragmentationFraction == 0.05);
}

TEST_CASE("epoch_samples round-trips; a bad value names its path", "[model_io][setup][epoch]") {
    auto doc = parseModelDocument(withTraining(R"({"epoch_samples":50003})", 3), "run.json");
    REQUIRE(doc);
    REQUIRE(doc->setup);
    REQUIRE(doc->setup->config.epochSamples);
    CHECK(*doc->setup->config.epochSamples == 50003);
    const std::string text = serializeModelDocument(doc->model, doc->setup);
    CHECK(text.find("\"epoch_samples\": 50003") != std::string::npos);
    auto again = parseModelDocument(text, "again.json");
    REQUIRE(again);
    CHECK(again->setup->config.epochSamples == doc->setup->config.epochSamples);
    CHECK(error(withTraining(R"({"epoch_samples":-2})", 3))
              .find("run.json: $.training.epoch_samples: expected an integer from 1 to") == 0);
    CHECK(error(withTraining(R"({"epoch_samples":"50k"})", 3))
              .find("run.json: $.training.epoch_samples: expected an integer, got") == 0);
    // Not set: not written.
    auto none = parseModelDocument(withTraining("{}", 3), "run.json");
    REQUIRE(none);
    CHECK(serializeModelDocument(none->model, none->setup).find("epoch_samples") == std::string::npos);
}

TEST_CASE("replay_sequences round-trips; a bad list names its element", "[model_io][setup][sequences]") {
    auto doc = parseModelDocument(withTraining(R"({"replay_sequences":[256,1024,512]})", 3), "run.json");
    REQUIRE(doc);
    REQUIRE(doc->setup);
    CHECK(doc->setup->config.replaySequences == std::vector<std::int64_t>{256, 1024, 512});
    auto again = parseModelDocument(serializeModelDocument(doc->model, doc->setup), "again.json");
    REQUIRE(again);
    CHECK(again->setup->config.replaySequences == doc->setup->config.replaySequences);
    CHECK(error(withTraining(R"({"replay_sequences":512})", 3)) ==
          "run.json: $.training.replay_sequences: expected an array of sequence lengths, got an integer");
    CHECK(error(withTraining(R"({"replay_sequences":[256,0]})", 3))
              .find("run.json: $.training.replay_sequences[1]: expected an integer from 1 to") == 0);
    CHECK(error(withTraining(R"({"replay_sequences":[256,"x"]})", 3))
              .find("run.json: $.training.replay_sequences[1]: expected an integer, got") == 0);
    std::string many = "[";
    for (int i = 0; i < 65; ++i) many += (i ? ",1" : "1");
    CHECK(error(withTraining(R"({"replay_sequences":)" + many + "]}", 3))
              .find("expected at most 64 lengths, got 65") != std::string::npos);
}

TEST_CASE("replay sequence lists: parsed from text and written back", "[setup][sequences]") {
    auto ok = parseReplaySequences(" 256, 1024,512 ");
    REQUIRE(ok);
    CHECK(*ok == std::vector<std::int64_t>{256, 1024, 512});
    CHECK(replaySequencesText(*ok) == "256,1024,512");
    auto none = parseReplaySequences("  ");
    REQUIRE(none);
    CHECK(none->empty());
    CHECK(parseReplaySequences("512,,256").error().message ==
          "expected comma-separated sequence lengths, got '512,,256'");
    CHECK(parseReplaySequences("512, 2x").error().message.find("got '512, 2x'") != std::string::npos);
    CHECK(parseReplaySequences("0").error().message == "sequence length 0 is out of range 1..16777216");
    CHECK(parseReplaySequences("99999999999999999999").error().message.find("expected comma-separated") == 0);
    std::string many;
    for (int i = 0; i <= 64; ++i) many += (i ? ",8" : "8");
    CHECK(parseReplaySequences(many).error().message == "at most 64 sequence lengths");
}
