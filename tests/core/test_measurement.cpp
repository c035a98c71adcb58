#include "batchfit/measurement.h"
#include "test_util.h"

#include <cmath>

using namespace batchfit;
using namespace batchfit::test;

namespace {

const std::string kData = std::string(BATCHFIT_TEST_DATA) + "/measurements/";

std::string doc(const std::string& points, const std::string& extra = {}) {
    return R"({"format": "batchfit-measurement", "version": 1, )" + extra + R"("points": )" + points + "}";
}

std::string point(const std::string& batch = "2", const std::string& maxAllocated = "null") {
    return R"({"batch": )" + batch +
           R"(, "parameter_bytes": 100, "gradient_bytes": 100, )"
           R"("optimizer_state_bytes": 200, "saved_activation_bytes": 50, )"
           R"("max_memory_allocated": )" +
           maxAllocated + "}";
}

std::string parseError(const std::string& json) {
    auto m = parseMeasurement(json, "m.json");
    REQUIRE_FALSE(m);
    return m.error().message;
}

} // namespace

TEST_CASE("a measurement file parses into points", "[measurement]") {
    const std::string extra =
        R"j("model": "net", "device": "cuda (NVIDIA H100)", "torch_version": "2.3.1", "optimizer": "adam", )j";
    auto m = parseMeasurement(doc("[" + point("1") + ", " + point("4", "123456") + "]", extra), "m.json");
    REQUIRE(m);
    CHECK(m->model == "net");
    CHECK(m->device == "cuda (NVIDIA H100)");
    CHECK(m->torchVersion == "2.3.1");
    CHECK(m->optimizer == "adam");
    REQUIRE(m->points.size() == 2);
    CHECK(m->points[0].batch == 1);
    CHECK(m->points[0].parameterBytes == 100);
    CHECK(m->points[0].optimizerStateBytes == 200);
    CHECK(m->points[0].savedActivationBytes == 50);
    CHECK_FALSE(m->points[0].maxMemoryAllocated);
    CHECK(m->points[0].componentSum() == 450);
    CHECK(m->points[0].chartBytes() == 450);
    REQUIRE(m->points[1].maxMemoryAllocated);
    CHECK(*m->points[1].maxMemoryAllocated == 123456);
    CHECK(m->points[1].chartBytes() == 123456); // the CUDA peak, not the sum, when measured
}

TEST_CASE("malformed measurement files are rejected with the file, the JSON path and what was expected",
          "[measurement][bad-input]") {
    CHECK(parseError("{\"format\": ").find("m.json: not valid JSON") == 0);
    CHECK(parseError("[]") == "m.json: $: expected a JSON object, got an array");
    CHECK(parseError(R"({"format": "batchfit-model", "version": 1, "points": []})")
              .find("m.json: $.format: expected "
                    "\"batchfit-measurement\"") == 0);
    CHECK(parseError(R"({"format": "batchfit-measurement", "version": 2, "points": []})") ==
          "m.json: $.version: unsupported version 2 (this BatchFit reads 1)");
    CHECK(parseError(R"({"format": "batchfit-measurement", "version": "1", "points": []})") ==
          "m.json: $.version: expected an integer format version");
    CHECK(parseError(R"({"format": "batchfit-measurement", "version": 1})") ==
          "m.json: $.points: missing: expected an array of measured points");
    CHECK(parseError(doc("{}")) == "m.json: $.points: expected an array, got an object");
    CHECK(parseError(doc("[]")) == "m.json: $.points: expected at least one measured point");
    CHECK(parseError(doc("[" + point() + ", 7]")) ==
          "m.json: $.points[1]: expected an object {\"batch\": ..., ...}, got an integer");
    CHECK(parseError(doc("[1]", R"("model": 5, )")) == "m.json: $.model: expected a string, got an integer");

    // batch: missing, zero, negative, fractional, beyond kMaxBatch, a string
    CHECK(parseError(doc(R"([{"parameter_bytes": 1}])")) ==
          "m.json: $.points[0].batch: missing: expected the batch size");
    for (const char* bad : {"0", "-3", "2.5", "2147483649", "\"4\"", "18446744073709551615", "1e300"}) {
        INFO(bad);
        CHECK(parseError(doc("[" + point(bad) + "]"))
                  .find("m.json: $.points[0].batch: expected an integer between 1 "
                        "and 2147483648, got ") == 0);
    }
    // byte counts: missing, negative, fractional, huge, wrong types
    CHECK(parseError(doc(
              R"([{"batch": 1, "parameter_bytes": 1, "gradient_bytes": 1, "optimizer_state_bytes": 1}])")) ==
          "m.json: $.points[0].saved_activation_bytes: missing: expected a byte count");
    const std::string expected = "expected a byte count (an integer from 0 to 1125899906842624)";
    CHECK(parseError(doc("[" + point("1", "-5") + "]")) ==
          "m.json: $.points[0].max_memory_allocated: " + expected + ", got the negative -5");
    CHECK(parseError(doc("[" + point("1", "1.5") + "]")) ==
          "m.json: $.points[0].max_memory_allocated: " + expected + ", got a number 1.5");
    CHECK(parseError(doc("[" + point("1", "18446744073709551615") + "]")) ==
          "m.json: $.points[0].max_memory_allocated: " + expected + ", got 18446744073709551615");
    CHECK(parseError(doc("[" + point("1", "1e30") + "]")).find(expected + ", got a number") !=
          std::string::npos);
    CHECK(parseError(doc("[" + point("1", "[1]") + "]")).find(expected + ", got an array") !=
          std::string::npos);
    CHECK(parseError(doc("[" + point("1", "true") + "]")).find(expected + ", got a boolean") !=
          std::string::npos);
    CHECK(parseError(
              doc(R"([{"batch": 1, "parameter_bytes": "100", "gradient_bytes": 1, "optimizer_state_bytes": 1,
                               "saved_activation_bytes": 1}])")) ==
          "m.json: $.points[0].parameter_bytes: " + expected + ", got a string \"100\"");
    // numbers beyond double: nlohmann throws out_of_range while parsing
    CHECK(parseError(doc("[" + point("1", "1e999") + "]")).find("m.json: not valid JSON") == 0);

    // the largest legal values sum without overflow
    const std::string top = std::to_string(kMaxMeasuredBytes);
    auto big = parseMeasurement(doc(R"([{"batch": 2147483648, "parameter_bytes": )" + top +
                                    R"(, "gradient_bytes": )" + top + R"(, "optimizer_state_bytes": )" + top +
                                    R"(, "saved_activation_bytes": )" + top + "}]"),
                                "m.json");
    REQUIRE(big);
    CHECK(big->points[0].componentSum() == 4 * kMaxMeasuredBytes);
    CHECK_FALSE(big->points[0].maxMemoryAllocated); // absent is the same as null
}

TEST_CASE("measurement files: size limit, deep nesting, unreadable files", "[measurement][bad-input]") {
    const std::string huge =
        doc("[" + point() + "]", "\"pad\": \"" + std::string(kMaxMeasurementFileBytes, 'x') + "\", ");
    CHECK(parseError(huge).find("m.json: file is ") == 0);
    CHECK(parseError(huge).find("more than the 4194304 a measurement file may have") != std::string::npos);
    const std::string deep = doc(std::string(100000, '[') + std::string(100000, ']'));
    CHECK(parseError(deep).find("m.json: ") == 0);
    std::string many = "[";
    for (std::size_t i = 0; i <= kMaxMeasuredPoints; ++i) many += (i ? "," : "") + point();
    CHECK(parseError(doc(many + "]")) ==
          "m.json: $.points: has 4097 points, more than the 4096 a measurement "
          "file may have");
    auto missing = loadMeasurementFile(kData + "does-not-exist.json");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message.find(kData + "does-not-exist.json: cannot read") == 0);
    auto notMeasurement = loadMeasurementFile(kData + "resnet18.json"); // a model file, not a measurement
    REQUIRE_FALSE(notMeasurement);
    CHECK(notMeasurement.error().message.find("resnet18.json: $.format: expected \"batchfit-measurement\"") !=
          std::string::npos);
}

TEST_CASE("relative error", "[measurement]") {
    CHECK(relativeError(110, 100) == Approx(0.10));
    CHECK(relativeError(90, 100) == Approx(-0.10));
    CHECK(relativeError(0, 0) == 0.0);
    CHECK(relativeError(5, 0) == 1.0);
}

TEST_CASE("comparison pairs each point with the estimate of the same figure", "[measurement]") {
    const Model model = preset("resnet50");
    const Estimator est = estimator(model);
    Measurement m;
    MeasuredStep cpu; // no CUDA peak: the four components' sum is compared
    cpu.batch = 8;
    cpu.parameterBytes = 1000;
    cpu.gradientBytes = 1000;
    cpu.optimizerStateBytes = 2000;
    cpu.savedActivationBytes = 4000;
    MeasuredStep cuda = cpu; // a CUDA peak: compared with the estimated peak allocated
    cuda.batch = 16;
    cuda.maxMemoryAllocated = 5000000000ull;
    m.points = {cpu, cuda};
    auto cmp = compareMeasurement(est, m);
    REQUIRE(cmp);
    REQUIRE(cmp->size() == 2);
    const Estimate e8 = *est.estimate(8);
    const Estimate e16 = *est.estimate(16);
    const auto& a = (*cmp)[0];
    CHECK_FALSE(a.comparesPeak);
    CHECK(a.measuredBytes == 8000);
    CHECK(e8.bufferBytes > 0); // batch-norm running statistics: not in model.parameters()
    CHECK(a.estimatedParameterBytes == e8.parameterBytes - e8.bufferBytes);
    CHECK(a.estimatedSavedActivationBytes == e8.savedActivationBytes);
    CHECK(a.estimatedPeakAllocatedBytes == e8.peakAllocatedBytes);
    CHECK(a.estimatedBytes ==
          a.estimatedParameterBytes + e8.gradientBytes + e8.optimizerStateBytes + e8.savedActivationBytes);
    CHECK(a.error == Approx((static_cast<double>(a.estimatedBytes) - 8000.0) / 8000.0));
    const auto& b = (*cmp)[1];
    CHECK(b.comparesPeak);
    CHECK(b.measuredBytes == 5000000000ull);
    CHECK(b.estimatedBytes == e16.peakAllocatedBytes);
    CHECK(b.error == Approx(relativeError(e16.peakAllocatedBytes, 5000000000ull)));

    m.points[1].batch = kMaxBatch; // an estimate the core cannot make is an error naming the batch
    const Model huge = parseOrFail(
        oneLayer("[4000000000]", "float32", R"({"name":"fc","op":"linear","out_features":2})", true));
    auto tooLarge = compareMeasurement(estimator(huge), m);
    REQUIRE_FALSE(tooLarge);
    CHECK(tooLarge.error().message.find("measured batch 2147483648: ") == 0);
}

// Fixtures (torch 1.13, CPU): resnet18-cpu.json from `/usr/bin/python3 tools/torch_measure.py
// torchvision.models:resnet18 --input-shape 3,224,224 --batch 1 2 4`; resnet18.json from
// `tools/torch_export.py torchvision.models:resnet18 --input-shape 3,224,224` (the same model).
TEST_CASE("resnet18 measured by PyTorch: parameters, gradients and Adam states exact, saved within 2%",
          "[measurement][accuracy]") {
    auto model = loadModelFile(kData + "resnet18.json");
    REQUIRE(model);
    auto measured = loadMeasurementFile(kData + "resnet18-cpu.json");
    REQUIRE(measured);
    CHECK(measured->model == "resnet18");
    CHECK(measured->optimizer == "adam");
    REQUIRE(measured->points.size() == 3);
    const Estimator est = estimator(*model); // Adam, fp32, steady state: what torch_measure.py runs
    auto cmp = compareMeasurement(est, *measured);
    REQUIRE(cmp);
    for (const auto& c : *cmp) {
        const MeasuredStep& m = c.measured;
        INFO("batch " << m.batch << ": saved estimate " << c.estimatedSavedActivationBytes << " vs measured "
                      << m.savedActivationBytes);
        CHECK(c.estimatedParameterBytes == m.parameterBytes);
        CHECK(c.estimatedGradientBytes == m.gradientBytes);
        CHECK(c.estimatedOptimizerStateBytes == m.optimizerStateBytes);
        CHECK(std::fabs(relativeError(c.estimatedSavedActivationBytes, m.savedActivationBytes)) <= 0.02);
        CHECK_FALSE(c.comparesPeak);
        CHECK(std::fabs(c.error) <= 0.02);
    }
}

TEST_CASE("measurements of another model are named as such", "[measurement]") {
    Measurement m;
    m.model = "resnet18";
    MeasurementComparison same;
    same.measured.parameterBytes = 46'000'000;
    same.estimatedParameterBytes = 46'100'000; // within 2%
    CHECK_FALSE(measurementMismatch(m, {same}, "resnet18"));
    MeasurementComparison other = same;
    other.estimatedParameterBytes = 102'000'000;
    const auto why = measurementMismatch(m, {other}, "ResNet-50");
    REQUIRE(why);
    CHECK(why->find("'resnet18'") != std::string::npos);
    CHECK(why->find("ResNet-50") != std::string::npos);
    CHECK(why->find("another model") != std::string::npos);
    CHECK_FALSE(measurementMismatch(m, {}, "x")); // nothing to compare
}
