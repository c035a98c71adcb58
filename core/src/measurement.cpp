#include "batchfit/measurement.h"

#include "bounded_file.h"
#include "json_text.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace batchfit {
namespace {

using json = nlohmann::json;

class Parser {
public:
    explicit Parser(std::string source) : m_source(std::move(source)) {}

    Error fail(const std::string& path, const std::string& msg) const {
        return makeError(m_source + ": " + path + ": " + msg);
    }

    static std::string kind(const json& j) { return jsontext::kind(j); }
    static std::string describe(const json& j) { return jsontext::describe(j); }

    Result<Measurement> measurement(const json& root) const {
        if (!root.is_object()) return fail("$", "expected a JSON object, got " + kind(root));
        if (!root.contains("format") || root["format"] != "batchfit-measurement")
            return fail("$.format",
                        "expected \"batchfit-measurement\" (a file written by tools/torch_measure.py)");
        if (!root.contains("version") || !root["version"].is_number_integer())
            return fail("$.version", "expected an integer format version");
        if (root["version"].get<std::int64_t>() != kMeasurementFormatVersion)
            return fail("$.version", "unsupported version " + describe(root["version"]) +
                                         " (this BatchFit reads " +
                                         std::to_string(kMeasurementFormatVersion) + ")");
        Measurement m;
        for (auto [key, field] :
             {std::pair{"model", &m.model}, std::pair{"device", &m.device},
              std::pair{"torch_version", &m.torchVersion}, std::pair{"optimizer", &m.optimizer}}) {
            if (!root.contains(key) || root[key].is_null()) continue;
            if (!root[key].is_string())
                return fail(std::string("$.") + key, "expected a string, got " + kind(root[key]));
            *field = root[key].get<std::string>();
        }
        if (!root.contains("points"))
            return fail("$.points", "missing: expected an array of measured points");
        const json& points = root["points"];
        if (!points.is_array()) return fail("$.points", "expected an array, got " + kind(points));
        if (points.empty()) return fail("$.points", "expected at least one measured point");
        if (points.size() > kMaxMeasuredPoints)
            return fail("$.points", "has " + std::to_string(points.size()) + " points, more than the " +
                                        std::to_string(kMaxMeasuredPoints) + " a measurement file may have");
        for (std::size_t i = 0; i < points.size(); ++i) {
            auto p = point(points[i], "$.points[" + std::to_string(i) + "]");
            if (!p) return p.error();
            m.points.push_back(*p);
        }
        return m;
    }

private:
    Result<MeasuredStep> point(const json& j, const std::string& path) const {
        if (!j.is_object()) return fail(path, "expected an object {\"batch\": ..., ...}, got " + kind(j));
        MeasuredStep s;
        if (!j.contains("batch")) return fail(path + ".batch", "missing: expected the batch size");
        const json& b = j["batch"];
        const bool inRange =
            b.is_number_unsigned()
                ? b.get<std::uint64_t>() >= 1 &&
                      b.get<std::uint64_t>() <= static_cast<std::uint64_t>(kMaxBatch)
                : b.is_number_integer() && b.get<std::int64_t>() >= 1 && b.get<std::int64_t>() <= kMaxBatch;
        if (!inRange)
            return fail(path + ".batch", "expected an integer between 1 and " + std::to_string(kMaxBatch) +
                                             ", got " + describe(b));
        s.batch = b.get<std::int64_t>();
        for (auto [key, field] :
             {std::pair{"parameter_bytes", &s.parameterBytes}, std::pair{"gradient_bytes", &s.gradientBytes},
              std::pair{"optimizer_state_bytes", &s.optimizerStateBytes},
              std::pair{"saved_activation_bytes", &s.savedActivationBytes}}) {
            if (!j.contains(key)) return fail(path + "." + key, "missing: expected a byte count");
            auto v = bytes(j[key], path + "." + key);
            if (!v) return v.error();
            *field = *v;
        }
        // Optional: null (CPU) or absent means not measured.
        if (j.contains("max_memory_allocated") && !j["max_memory_allocated"].is_null()) {
            auto v = bytes(j["max_memory_allocated"], path + ".max_memory_allocated");
            if (!v) return v.error();
            s.maxMemoryAllocated = *v;
        }
        return s;
    }

    Result<std::uint64_t> bytes(const json& v, const std::string& path) const {
        const std::string expected =
            "expected a byte count (an integer from 0 to " + std::to_string(kMaxMeasuredBytes) + ")";
        if (!v.is_number_integer()) return fail(path, expected + ", got " + kind(v) + " " + describe(v));
        if (!v.is_number_unsigned() && v.get<std::int64_t>() < 0)
            return fail(path, expected + ", got the negative " + describe(v));
        if (v.get<std::uint64_t>() > kMaxMeasuredBytes) return fail(path, expected + ", got " + describe(v));
        return v.get<std::uint64_t>();
    }

    std::string m_source;
};

} // namespace

std::uint64_t MeasuredStep::componentSum() const {
    return parameterBytes + gradientBytes + optimizerStateBytes + savedActivationBytes; // each <= 2^50
}

Result<Measurement> parseMeasurement(const std::string& jsonText, const std::string& source) {
    return jsontext::parseFileText<Measurement>(
        jsonText, source, kMaxMeasurementFileBytes, "a measurement file",
        [&](const json& root) { return Parser(source).measurement(root); });
}

Result<Measurement> loadMeasurementFile(const std::string& path) {
    auto text = readBoundedFile(path, kMaxMeasurementFileBytes, "a measurement file");
    if (!text) return text.error();
    return parseMeasurement(*text, path);
}

double relativeError(std::uint64_t estimated, std::uint64_t measured) {
    if (measured == 0) return estimated == 0 ? 0.0 : 1.0;
    return (static_cast<double>(estimated) - static_cast<double>(measured)) / static_cast<double>(measured);
}

Result<std::vector<MeasurementComparison>> compareMeasurement(const Estimator& estimator,
                                                              const Measurement& measurement) {
    std::vector<MeasurementComparison> out;
    out.reserve(measurement.points.size());
    for (const MeasuredStep& m : measurement.points) {
        auto e = estimator.estimate(m.batch);
        if (!e) return makeError("measured batch " + std::to_string(m.batch) + ": " + e.error().message);
        MeasurementComparison c;
        c.measured = m;
        c.estimatedParameterBytes = e->parameterBytes - e->bufferBytes; // model.parameters(): no buffers
        c.estimatedGradientBytes = e->gradientBytes;
        c.estimatedOptimizerStateBytes = e->optimizerStateBytes;
        c.estimatedSavedActivationBytes = e->savedActivationBytes;
        c.estimatedPeakAllocatedBytes = e->peakAllocatedBytes;
        c.comparesPeak = m.maxMemoryAllocated.has_value();
        c.measuredBytes = m.chartBytes();
        c.estimatedBytes = c.comparesPeak ? e->peakAllocatedBytes
                                          : c.estimatedParameterBytes + e->gradientBytes +
                                                e->optimizerStateBytes + e->savedActivationBytes;
        c.error = relativeError(c.estimatedBytes, c.measuredBytes);
        out.push_back(std::move(c));
    }
    return out;
}

std::string comparisonJson(const std::vector<MeasurementComparison>& comparisons) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (const auto& c : comparisons) {
        const MeasuredStep& m = c.measured;
        nlohmann::ordered_json o;
        o["batch"] = m.batch;
        o["compared"] = c.comparesPeak ? "peak_allocated" : "component_sum";
        o["measured_bytes"] = c.measuredBytes;
        o["estimated_bytes"] = c.estimatedBytes;
        o["relative_error"] = c.error;
        o["measured"] = {{"parameter_bytes", m.parameterBytes},
                         {"gradient_bytes", m.gradientBytes},
                         {"optimizer_state_bytes", m.optimizerStateBytes},
                         {"saved_activation_bytes", m.savedActivationBytes},
                         {"max_memory_allocated", m.maxMemoryAllocated
                                                      ? nlohmann::ordered_json(*m.maxMemoryAllocated)
                                                      : nlohmann::ordered_json(nullptr)}};
        o["estimated"] = {{"parameter_bytes", c.estimatedParameterBytes},
                          {"gradient_bytes", c.estimatedGradientBytes},
                          {"optimizer_state_bytes", c.estimatedOptimizerStateBytes},
                          {"saved_activation_bytes", c.estimatedSavedActivationBytes},
                          {"peak_allocated_bytes", c.estimatedPeakAllocatedBytes}};
        a.push_back(std::move(o));
    }
    return a.dump(2);
}

std::optional<std::string> measurementMismatch(const Measurement& measurement,
                                               const std::vector<MeasurementComparison>& comparisons,
                                               const std::string& modelName) {
    for (const MeasurementComparison& c : comparisons) {
        const std::uint64_t measured = c.measured.parameterBytes;
        const std::uint64_t estimated = c.estimatedParameterBytes;
        if (measured == 0 && estimated == 0) continue;
        if (std::abs(relativeError(estimated, measured)) <= 0.02) return std::nullopt;
        char buf[400];
        std::snprintf(
            buf, sizeof buf,
            "the file's parameters take %.1f MiB, %s's %.1f MiB (%+.1f%%): these points were measured on %s"
            "another model, or at another precision",
            static_cast<double>(measured) / (1 << 20), modelName.c_str(),
            static_cast<double>(estimated) / (1 << 20), 100.0 * relativeError(estimated, measured),
            measurement.model.empty() ? "" : ("'" + measurement.model + "', ").c_str());
        return std::string(buf);
    }
    return std::nullopt;
}

} // namespace batchfit
