// Replays every input the fuzzers (fuzz/) once failed on, through the same entry points: each must give a
// clean error or a valid result that satisfies the fuzz properties (fuzz/fuzz_entries.h), and must do so
// quickly.
#include "../../fuzz/fuzz_entries.h"
#include "test_util.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <vector>

using namespace batchfit;

namespace {

using Entry = std::string (*)(const std::uint8_t*, std::size_t);

std::vector<std::filesystem::path> regressionFiles(const std::string& target) {
    std::vector<std::filesystem::path> out;
    const std::filesystem::path dir = std::filesystem::path(BATCHFIT_TEST_DATA) / "fuzz" / target;
    if (!std::filesystem::is_directory(dir)) return out;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.is_regular_file() && e.path().extension() != ".md") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

void replay(const std::string& target, Entry entry) {
    const auto files = regressionFiles(target);
    CHECK_FALSE(files.empty());
    for (const auto& f : files) {
        INFO(target << ": " << f.filename().string());
        const std::string bytes = test::readFile(f.string());
        const auto t0 = std::chrono::steady_clock::now();
        const std::string violation =
            entry(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        CHECK(violation == "");
        // Fuzzing runs with -timeout=10; a regression must stay far from it (generous for sanitizer builds).
        CHECK(seconds < 20.0);
    }
}

} // namespace

TEST_CASE("fuzz regressions: model loader", "[fuzz]") {
    replay("model_loader", fuzz::modelLoaderEntry);
}

TEST_CASE("fuzz regressions: Hugging Face importer", "[fuzz]") {
    replay("hf_import", fuzz::hfImportEntry);
}

TEST_CASE("fuzz regressions: estimate", "[fuzz]") {
    replay("estimate", fuzz::estimateEntry);
}

#ifdef BATCHFIT_FUZZ_HAVE_ONNX
TEST_CASE("fuzz regressions: ONNX importer", "[fuzz]") {
    if (!regressionFiles("onnx_import").empty()) replay("onnx_import", fuzz::onnxImportEntry);
}
#endif

TEST_CASE("fuzz entries accept the seeds: presets, model fixtures, HF configs and ONNX fixtures", "[fuzz]") {
    // The seed corpora scripts/fuzz.sh builds: every shipped model passes every property.
    std::vector<std::filesystem::path> models;
    for (const char* dir : {"/../../resources/presets", "/models"})
        for (const auto& e : std::filesystem::directory_iterator(std::string(BATCHFIT_TEST_DATA) + dir))
            if (e.path().extension() == ".json") models.push_back(e.path());
    std::sort(models.begin(), models.end());
    REQUIRE(models.size() >= 7);
    const std::uint8_t header[fuzz::kEstimateHeaderBytes] = {3, 0, 0,
                                                             7, 5, 0x40}; // adam, fp32, batch 8, 24 GiB
    for (const auto& f : models) {
        INFO(f.filename().string());
        const std::string text = test::readFile(f.string());
        CHECK(fuzz::modelLoaderEntry(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()) == "");
        std::string withHeader(reinterpret_cast<const char*>(header), sizeof header);
        withHeader += text;
        CHECK(fuzz::estimateEntry(reinterpret_cast<const std::uint8_t*>(withHeader.data()),
                                  withHeader.size()) == "");
    }
    for (const auto& e : std::filesystem::directory_iterator(std::string(BATCHFIT_TEST_DATA) + "/hf")) {
        INFO(e.path().filename().string());
        const std::string text = test::readFile(e.path().string());
        CHECK(fuzz::hfImportEntry(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()) == "");
    }
#ifdef BATCHFIT_FUZZ_HAVE_ONNX
    const auto onnxDir = std::filesystem::path(BATCHFIT_TEST_DATA) / "onnx";
    if (std::filesystem::is_directory(onnxDir))
        for (const auto& e : std::filesystem::directory_iterator(onnxDir)) {
            if (e.path().extension() != ".onnx") continue;
            INFO(e.path().filename().string());
            const std::string bytes = test::readFile(e.path().string());
            CHECK(fuzz::onnxImportEntry(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()) ==
                  "");
        }
#endif
}

TEST_CASE("fuzz regressions: settings text and model files with a training section", "[fuzz]") {
    replay("setup", fuzz::setupEntry);
}

TEST_CASE("fuzz regressions: allocator traces", "[fuzz]") {
    replay("trace", fuzz::traceEntry);
}

TEST_CASE("fuzz regressions: measurement files", "[fuzz]") {
    replay("measurement", fuzz::measurementEntry);
}

TEST_CASE("fuzz regressions: serving configs", "[fuzz]") {
    replay("serving", fuzz::servingEntry);
}
