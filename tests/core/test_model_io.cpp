#include "batchfit/hf_import.h"
#include "batchfit/measurement.h"
#include "batchfit/onnx_import.h"
#include "test_util.h"

#include <filesystem>
#include <fstream>
#include <sys/stat.h>

using namespace batchfit;
using namespace batchfit::test;

TEST_CASE("every preset survives save -> load -> save byte-identically", "[model_io]") {
    for (const auto& p : presetList()) {
        INFO(p.id);
        Model m = preset(p.id);
        const std::string once = serializeModel(m);
        auto again = parseModel(once, p.id);
        REQUIRE(again);
        CHECK(*again == m);
        CHECK(serializeModel(*again) == once);
    }
}

TEST_CASE("model file keeps blocks, shortcuts, inputs and attributes", "[model_io]") {
    const std::string json = R"({
      "format": "batchfit-model", "version": 1, "name": "blocks",
      "input": {"shape": [8], "dtype": "float32"},
      "layers": [
        {"name": "b", "repeat": 3, "first_index": 1, "checkpoint": true,
         "layers": [{"name": "fc", "op": "linear", "out_features": 8, "bias": false}],
         "shortcut": [{"name": "sc", "op": "identity"}], "merge": "concat", "merge_dim": 0,
         "after": [{"name": "act", "op": "gelu", "approximate": "tanh"}]},
        {"name": "proj", "op": "linear", "out_features": 2, "inputs": ["b"], "scale": 0.5},
        {"name": "loss", "op": "cross_entropy"}
      ]})";
    Model m = parseOrFail(json);
    REQUIRE(m.layers.size() == 3);
    const Layer& b = m.layers[0];
    CHECK(b.isBlock());
    CHECK(b.repeat == 3);
    CHECK(b.firstIndex == 1);
    CHECK(b.checkpointUnit);
    CHECK(b.shortcut == ShortcutKind::Layers);
    CHECK(b.merge == MergeKind::Concat);
    CHECK(b.after.at(0).attrs.getString("approximate") == std::optional<std::string>("tanh"));
    CHECK(m.layers[1].inputs == std::vector<std::string>{"b"});
    CHECK(m.layers[1].attrs.getDouble("scale") == 0.5);
    CHECK(b.layers[0].attrs.getBool("bias") == false);
    CHECK(parseOrFail(serializeModel(m)) == m);
}

TEST_CASE("errors name the file, the JSON path and what was expected", "[model_io][bad-input]") {
    auto bad = [](const std::string& json) {
        auto m = parseModel(json, "broken.json");
        REQUIRE_FALSE(m);
        return m.error().message;
    };
    CHECK(bad("{").find("broken.json: not valid JSON") == 0);
    // a syntax error in words, with its line and column, never the library's code
    const std::string syntax =
        bad("{\"format\": \"batchfit-model\",\n \"version\": 1,\n \"input\": {\"shape\": [4]]\n}");
    CHECK(syntax.find("broken.json: not valid JSON: line 3, column 24: unexpected ']'") == 0);
    CHECK(syntax.find("json.exception") == std::string::npos);
    CHECK(syntax.find("(in an object)") != std::string::npos);
    CHECK(bad("{").find("json.exception") == std::string::npos);
    CHECK(bad("").find("line 1, column 1") != std::string::npos);
    CHECK(bad(R"({"format":"other","version":1})").find("$.format") != std::string::npos);
    CHECK(bad(R"({"format":"batchfit-model","version":7,"input":{"shape":[1]},"layers":[]})")
              .find("unsupported version 7") != std::string::npos);
    const std::string head = R"({"format":"batchfit-model","version":1,"input":{"shape":[4]},"layers":)";
    CHECK(bad(head + R"([{"name":"a","op":"linear","out_features":{"x":1}}]})")
              .find("$.layers[0].out_features: expected") != std::string::npos);
    CHECK(bad(head + R"([{"name":"a","layers":[{"name":"b","op":"relu"}],"repeat":0}]})")
              .find("$.layers[0].repeat") != std::string::npos);
    CHECK(bad(head + R"([{"name":"a","layers":[],"repeat":5000000000}]})").find("too large") !=
          std::string::npos);
    CHECK(bad(head + R"([{"name":"a","op":"relu"},{"name":"a","op":"relu"}]})").find("duplicate name 'a'") !=
          std::string::npos);
    CHECK(bad(head + R"([{"name":"a.b","op":"relu"}]})").find("must not contain") != std::string::npos);
    CHECK(
        bad(R"({"format":"batchfit-model","version":1,"input":{"shape":[0]},"layers":[{"name":"a","op":"relu"}]})")
            .find("$.input.shape") != std::string::npos);
}

TEST_CASE("deeply nested blocks are refused, not recursed into", "[model_io][bad-input]") {
    std::string json = R"({"format":"batchfit-model","version":1,"input":{"shape":[4]},"layers":[)";
    const int depth = 5000;
    for (int i = 0; i < depth; ++i) json += R"({"name":"b","layers":[)";
    json += R"({"name":"r","op":"relu"})";
    for (int i = 0; i < depth; ++i) json += "]}";
    json += "]}";
    auto m = parseModel(json, "deep.json");
    REQUIRE_FALSE(m);
    CHECK(m.error().message.find("nested deeper") != std::string::npos);
}

TEST_CASE("saving is atomic: a failed save leaves the old file intact", "[model_io]") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "batchfit-save-test";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string path = (dir / "m.json").string();
    Model m = preset("resnet50");
    REQUIRE(saveModelFile(m, path));
    const std::string before = readFile(path);
    CHECK(before == serializeModel(m));
    auto loaded = loadModelFile(path);
    REQUIRE(loaded);
    CHECK(*loaded == m);
    if (::geteuid() != 0) { // root ignores permissions
        fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
        Model other = preset("vgg16");
        auto st = saveModelFile(other, path);
        CHECK_FALSE(st);
        CHECK(readFile(path) == before);
        fs::permissions(dir, fs::perms::owner_all);
    }
    auto st = saveModelFile(m, (dir / "missing-dir" / "m.json").string());
    REQUIRE_FALSE(st);
    CHECK(st.error().message.find("missing-dir") != std::string::npos);
    fs::remove_all(dir);
}

TEST_CASE("oversized files are refused before parsing", "[model_io][bad-input]") {
    std::string huge(kMaxModelFileBytes + 1, ' ');
    auto m = parseModel(huge, "huge.json");
    REQUIRE_FALSE(m);
    CHECK(m.error().message.find("huge.json") == 0);
}

TEST_CASE("every file loader refuses a huge file from its size, before reading it", "[model_io][bad-input]") {
    namespace fs = std::filesystem;
    // A sparse 3 GiB file: no disk space used, but reading it would take seconds and 3 GiB of memory.
    const fs::path dir = fs::temp_directory_path() / "batchfit-huge-file-test";
    fs::create_directories(dir);
    const std::string huge = (dir / "huge.bin").string();
    {
        std::ofstream out(huge, std::ios::binary | std::ios::trunc);
        REQUIRE(out);
    }
    const std::uint64_t size = std::uint64_t{3} << 30;
    fs::resize_file(huge, size);
    REQUIRE(fs::file_size(huge) == size);
    const std::string bytes = std::to_string(size) + " bytes, more than the ";

    auto model = loadModelFile(huge);
    REQUIRE_FALSE(model);
    CHECK(model.error().message ==
          huge + ": file is " + bytes + std::to_string(kMaxModelFileBytes) + " a model file may have");
    auto measured = loadMeasurementFile(huge);
    REQUIRE_FALSE(measured);
    CHECK(measured.error().message == huge + ": file is " + bytes + std::to_string(kMaxMeasurementFileBytes) +
                                          " a measurement file may have");
    auto hf = importHfConfigFile(huge);
    REQUIRE_FALSE(hf);
    CHECK(hf.error().message ==
          huge + ": file is " + bytes + std::to_string(kMaxHfConfigBytes) + " a config.json may have");
    if (onnxImportAvailable()) {
        auto onnx = importOnnxFile(huge);
        REQUIRE_FALSE(onnx);
        CHECK(onnx.error().message.find(huge + ": file is " + bytes) == 0);
    }
    // A folder is not a file.
    auto folder = loadModelFile(dir.string());
    REQUIRE_FALSE(folder);
    CHECK(folder.error().message == dir.string() + ": cannot read: it is a folder");
    fs::remove_all(dir);
}
