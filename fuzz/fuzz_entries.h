#pragma once
// The fuzz entry points, shared by the libFuzzer targets (fuzz/fuzz_*.cpp) and the regression test
// (tests/core/test_fuzz_regressions.cpp), so a saved crasher replays through exactly the same code.
//
// Each entry takes the raw fuzzer input and returns "" when the core behaved (a clean error or a valid
// result), or a description of the violated property. The fuzz targets __builtin_trap() on a non-empty
// answer so libFuzzer records the input; the test CHECKs that the answer is empty. Crashes, sanitizer
// reports, hangs (-timeout) and memory blow-ups (-rss_limit_mb) are found by the fuzzer on their own.
//
// Input formats:
//   model_loader  model-file JSON text (parseModel)
//   hf_import     config.json text (importHfConfig)
//   estimate      kEstimateHeaderBytes bytes selecting the training set-up, batch sizes and capacity,
//                 then model-file JSON text (parseModel -> Estimator::create -> estimate/maxBatch/sweep)
//   onnx_import   a serialized ONNX ModelProto (importOnnx), when the core has the ONNX importer
//   setup         one byte choosing a setting of the table, then text: parseSettingText (the CLI's options),
//                 and the whole input as a model file with a training section (parseModelDocument)
//   trace         an allocator trace, JSON (parseAllocatorTrace: batchfit-cli allocator-replay --trace)
//   measurement   a measurement file, JSON (parseMeasurement: --measured)
#include "batchfit/allocator_trace.h"
#include "batchfit/checked.h"
#include "batchfit/estimate.h"
#include "batchfit/estimator.h"
#include "batchfit/hf_import.h"
#include "batchfit/json_report.h"
#include "batchfit/measurement.h"
#include "batchfit/model_io.h"
#include "batchfit/serving_plan.h"
#include "batchfit/settings.h"
#include "batchfit/training_config.h"
#include "batchfit/what_if.h"
#if __has_include("batchfit/onnx_import.h")
#include "batchfit/onnx_import.h"
#define BATCHFIT_FUZZ_HAVE_ONNX 1
#endif

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace batchfit::fuzz {

/// Step count above which the expensive checks (maxBatch, sweeps) are skipped to keep executions fast.
inline constexpr std::size_t kHeavyCheckMaxSteps = 2000;
inline constexpr std::size_t kEstimateHeaderBytes = 6;

namespace detail {

inline std::string str(std::uint64_t v) {
    return std::to_string(v);
}

/// Everything the estimate target varies besides the model, decoded from the header bytes.
struct Case {
    TrainingConfig config;
    std::uint64_t contextBytes = 0;
    std::int64_t smallBatch = 1; ///< 1 .. 64
    std::int64_t largeBatch = 1; ///< up to 2^31
    std::uint64_t capacity = 0;
};

inline Case decodeHeader(const std::uint8_t* h) {
    Case c;
    TrainingConfig& t = c.config;
    t.optimizer = static_cast<OptimizerKind>(h[0] % 10);
    t.impl = static_cast<OptimizerImpl>((h[0] / 10) % 3);
    t.precision = static_cast<Precision>(h[1] % 7);
    t.checkpointing = static_cast<Checkpointing>((h[1] / 7) % 4);
    t.checkpointEvery = 1 + (h[1] / 28) % 4;
    t.amsgrad = h[2] & 1;
    t.rmspropMomentum = h[2] & 2;
    t.rmspropCentered = h[2] & 4;
    t.zeroGradSetToNone = !(h[2] & 8);
    t.optimizerOffload = h[2] & 16;
    t.firstStep = h[2] & 32;
    t.accumulationSteps = (h[2] & 64) ? 4 : 1;
    if (h[2] & 128) {
        // Overheads at the edges: a huge CUDA context / cuBLAS workspace and no margin or full fragmentation.
        const std::uint64_t edges[] = {0, std::uint64_t{1} << 40, kMaxBytes,
                                       std::numeric_limits<std::uint64_t>::max()};
        t.cudaContextBytes = edges[h[5] & 3];
        t.cublasWorkspaceBytes = edges[(h[5] >> 2) & 3];
        t.marginFraction = (h[5] & 16) ? 0.0 : 0.5;
        t.fragmentationFraction = (h[5] & 32) ? 1.0 : 0.0;
    }
    c.contextBytes = (h[3] & 128) ? 536870912 : 0;
    c.smallBatch = 1 + (h[3] & 63);
    c.largeBatch = (std::int64_t{1} << (h[4] % 32)) + (h[4] / 32); // up to 2^31 + 7: past kMaxBatch too
    const std::uint64_t gib = std::uint64_t{1} << 30;
    switch (h[5] >> 6) {
    case 0:
        c.capacity = gib << (h[4] % 8);
        break; // 1 .. 128 GiB
    case 1:
        c.capacity = 24 * gib;
        break;
    case 2:
        c.capacity = (h[4] & 1) ? 0 : 4096;
        break; // nothing fits
    default:
        c.capacity = (h[4] & 1) ? kMaxBytes : std::numeric_limits<std::uint64_t>::max();
        break;
    }
    return c;
}

inline bool tooLargeMessage(const std::string& m) {
    return m.find("too large") != std::string::npos;
}

/// Properties of one full estimate at `batch`.
inline std::string checkEstimate(const Estimator& est, const Estimate& e, std::int64_t batch) {
    const std::string at = " at batch " + std::to_string(batch);
    if (e.batch != batch) return "estimate.batch differs" + at;
    std::uint64_t sum = 0;
    for (auto b : e.atPeak.bytes)
        if (__builtin_add_overflow(sum, b, &sum)) return "components at the peak overflow" + at;
    if (sum != e.peakAllocatedBytes)
        return "components at the peak sum to " + str(sum) + ", not the peak " + str(e.peakAllocatedBytes) +
               at;
    if (e.peakAllocatedBytes > kMaxBytes) return "peak " + str(e.peakAllocatedBytes) + " above 2^62" + at;
    if (e.requiredBytes < e.peakAllocatedBytes || e.requiredBytes < e.cudaContextBytes ||
        e.requiredBytes < e.reservedBytes)
        return "required below the peak, the reserve or the context (wrapped?)" + at;
    if (e.reservedBytes < e.peakAllocatedBytes) return "reserved below the peak" + at;
    if (e.reservedBytes + e.cudaContextBytes != e.requiredBytes) return "reserved + context != required" + at;
    if (e.allocatorReserveBytes + e.peakAllocatedBytes != e.reservedBytes)
        return "reserve + peak != reserved" + at;
    if (e.parameterBytes > e.peakAllocatedBytes) return "parameter bytes above the peak" + at;
    if (e.trainableParameterCount > e.parameterCount) return "more trainable parameters than parameters";
    // Every element takes at least a byte: fewer bytes than elements means a product wrapped.
    if (e.parameterBytes < e.parameterCount || e.gradientBytes < e.trainableParameterCount)
        return "parameter or gradient bytes below the parameter count (wrapped?)" + at;
    auto fast = est.peakAllocatedBytes(batch);
    if (!fast) return "estimate() works but peakAllocatedBytes() fails" + at + ": " + fast.error().message;
    if (*fast != e.peakAllocatedBytes)
        return "peakAllocatedBytes() " + str(*fast) + " != estimate() " + str(e.peakAllocatedBytes) + at;
    auto req = est.requiredBytes(batch);
    if (!req) return "estimate() works but requiredBytes() fails" + at;
    if (*req != e.requiredBytes) return "requiredBytes() differs from estimate()" + at;
    if (!e.timeline.empty()) {
        std::uint64_t best = 0;
        for (const auto& p : e.timeline) {
            std::uint64_t t = 0;
            for (auto b : p.live.bytes)
                if (__builtin_add_overflow(t, b, &t)) return "timeline components overflow" + at;
            best = std::max(best, t);
        }
        if (best != e.peakAllocatedBytes)
            return "timeline maximum " + str(best) + " != peak " + str(e.peakAllocatedBytes) + at;
    }
    return {};
}

/// Result of one batch size: peak and required, or failure.
struct Point {
    bool ok = false;
    std::uint64_t peak = 0, required = 0;
};

inline std::string evalPoint(const Estimator& est, std::int64_t batch, Point& out) {
    auto e = est.estimate(batch);
    auto p = est.peakAllocatedBytes(batch);
    if (e.ok() != p.ok())
        return "estimate() and peakAllocatedBytes() disagree on success at batch " + std::to_string(batch);
    if (!e) {
        if (e.error().message.empty()) return "empty error message at batch " + std::to_string(batch);
        if (batch >= 1 && batch <= kMaxBatch && !tooLargeMessage(e.error().message))
            return "estimate fails in range without saying 'too large': " + e.error().message;
        out = {};
        return {};
    }
    if (batch < 1 || batch > kMaxBatch) return "estimate accepted batch " + std::to_string(batch);
    if (auto v = checkEstimate(est, *e, batch); !v.empty()) return v;
    out = {true, e->peakAllocatedBytes, e->requiredBytes};
    return {};
}

inline std::string checkMonotone(std::int64_t b, const Point& a, const Point& next) {
    if (!a.ok) {
        if (next.ok)
            return "batch " + std::to_string(b) + " is too large but " + std::to_string(b + 1) + " is not";
        return {};
    }
    if (!next.ok) return {};
    if (next.peak < a.peak)
        return "peak decreases from batch " + std::to_string(b) + " to " + std::to_string(b + 1);
    // Required comes from the caching-allocator replay: reserved memory may drop at a larger batch
    // (fragmentation depends on the sizes), but it never falls below the allocated peak.
    if (next.required < next.peak) return "required below the peak at batch " + std::to_string(b + 1);
    return {};
}

inline std::string checkMaxBatch(const Estimator& est, std::uint64_t capacity) {
    const MaxBatch m = est.maxBatch(capacity);
    const std::uint64_t usable = est.usableBytes(capacity);
    if (usable > capacity) return "usable bytes above the capacity";
    auto fits = [&](std::int64_t b) {
        auto v = est.verdict(b, capacity);
        return v.ok() && v->fits;
    };
    if (m.largest < 0 || m.largest > kMaxBatch) return "maxBatch out of range: " + std::to_string(m.largest);
    if (m.largestMultipleOf8 != m.largest / 8 * 8) return "largestMultipleOf8 wrong";
    if (m.largest == 0) {
        if (fits(1)) return "maxBatch says 0 but batch 1 fits capacity " + str(capacity);
        return {};
    }
    if (!fits(m.largest))
        return "maxBatch answer " + std::to_string(m.largest) + " does not fit capacity " + str(capacity);
    if (est.verdict(m.largest, capacity)->requiredBytes != m.requiredAtLargest)
        return "requiredAtLargest differs from the verdict's required bytes";
    if (m.capped != (m.largest == kMaxBatch)) return "capped flag inconsistent";
    if (!m.capped && fits(m.largest + 1))
        return "maxBatch answer " + std::to_string(m.largest) + " + 1 also fits capacity " + str(capacity);
    return {};
}

inline std::string checkSweep(const Estimator& est, std::int64_t from, std::int64_t to, std::int64_t step,
                              bool log) {
    auto s = est.sweep(from, to, step, log);
    if (!s)
        return "sweep(" + std::to_string(from) + ", " + std::to_string(to) + ") failed: " + s.error().message;
    std::int64_t prev = 0;
    std::size_t i = 0;
    for (const auto& p : *s) {
        if (p.batch <= prev || p.batch < from || p.batch > to) return "sweep batches out of order or range";
        prev = p.batch;
        // The sweep's pruned evaluator must agree with the plain walk: the peak at every point (fast path),
        // the components at the first, the last and every fourth (a full estimate costs more).
        auto peak = est.peakAllocatedBytes(p.batch);
        if (!peak)
            return "sweep has a point where peakAllocatedBytes() fails: batch " + std::to_string(p.batch);
        if (p.peakAllocatedBytes != *peak)
            return "sweep peak " + str(p.peakAllocatedBytes) + " != estimate " + str(*peak) + " at batch " +
                   std::to_string(p.batch);
        if (i++ % 4 != 0 && i != s->size()) continue;
        auto e = est.estimate(p.batch);
        if (!e) return "sweep has a point where estimate() fails: batch " + std::to_string(p.batch);
        if (p.requiredBytes != e->requiredBytes)
            return "sweep required != estimate at batch " + std::to_string(p.batch);
        for (int c = 0; c < kComponentCount; ++c)
            if (p.atPeak.bytes[c] != e->atPeak.bytes[c])
                return "sweep components differ from estimate at batch " + std::to_string(p.batch);
    }
    // Every batch the estimator can count is in the sweep.
    if (!s->empty() && !log && step == 1 && s->back().batch != to && est.estimate(s->back().batch + 1).ok())
        return "sweep stopped early at " + std::to_string(s->back().batch);
    return {};
}

/// All estimator properties for one lowered model; maxBatch, the sweeps and the JSON report only when the
/// step has at most `heavySteps` steps.
inline std::string checkEstimator(const Estimator& est, const Case& c, const Model& model,
                                  std::size_t heavySteps = kHeavyCheckMaxSteps) {
    auto e1 = est.estimate(1, true);
    if (!e1) {
        if (!tooLargeMessage(e1.error().message))
            return "batch 1 fails without 'too large': " + e1.error().message;
    } else {
        if (auto v = checkEstimate(est, *e1, 1); !v.empty()) return v;
        if (e1->parameterCount != est.parameterCount()) return "parameterCount() differs from the estimate";
    }
    const bool heavy = e1.ok() && e1->timeline.size() <= heavySteps;

    // Monotonicity at a few adjacent pairs, and the far end of the range.
    const std::int64_t pairs[] = {1, c.smallBatch, std::min<std::int64_t>(c.largeBatch, kMaxBatch),
                                  kMaxBatch};
    for (std::int64_t b : pairs) {
        Point p, q;
        if (auto v = evalPoint(est, b, p); !v.empty()) return v;
        if (auto v = evalPoint(est, b + 1, q); !v.empty()) return v;
        if (b + 1 <= kMaxBatch)
            if (auto v = checkMonotone(b, p, q); !v.empty()) return v;
    }
    Point zero;
    if (auto v = evalPoint(est, 0, zero); !v.empty()) return v;

    auto verdict = est.verdict(c.smallBatch, c.capacity);
    auto req = est.requiredBytes(c.smallBatch);
    if (verdict.ok() != req.ok()) return "verdict() and requiredBytes() disagree";
    if (verdict) {
        if (verdict->fits != (*req <= verdict->usableBytes)) return "verdict.fits inconsistent";
        if (verdict->usableBytes != est.usableBytes(c.capacity)) return "verdict usable bytes differ";
        if (verdict->fits != (verdict->headroomBytes >= 0))
            return "verdict.fits and the headroom's sign disagree";
    }
    if (!heavy) return {};

    if (auto v = checkMaxBatch(est, c.capacity); !v.empty()) return v;
    if (auto v = checkSweep(est, 1, 24, 1 + (c.smallBatch % 3), false); !v.empty()) return v;
    if (auto v = checkSweep(est, c.smallBatch, kMaxBatch, 2, true); !v.empty()) return v;

    // The what-if levers lower the model five more times: only for small models, one input in four.
    if (e1->timeline.size() <= 400 && c.smallBatch % 4 == 0) {
        for (const auto& l : rankLevers(model, est.config(), c.capacity, c.contextBytes))
            if (l.maxBatch < 0 || l.baselineMaxBatch < 0) return "lever " + l.id + " with a negative batch";
    }

    ReportInput in;
    in.model = &model;
    in.config = &est.config();
    in.estimate = &*e1;
    in.topLayers = c.smallBatch % 3 == 0 ? 5 : -1;
    if (estimateJson(in).empty()) return "empty estimate JSON";
    return {};
}

} // namespace detail

/// parseModel, then the documented round trip: save -> load -> save is byte-identical.
inline std::string modelLoaderEntry(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    auto m = parseModel(text, "fuzz.json");
    if (!m) return m.error().message.empty() ? "parseModel: empty error message" : "";
    const std::string saved = serializeModel(*m);
    auto again = parseModel(saved, "saved.json");
    if (!again) return "a saved model does not load: " + again.error().message + "\n" + saved;
    if (serializeModel(*again) != saved) return "save -> load -> save is not byte-identical";
    return {};
}

/// A model an importer made: it must save and load back, and satisfy the estimator properties.
/// An imported model saves, loads back, and save -> load -> save is byte-identical.
inline std::string checkRoundTrip(const Model& m) {
    if (m.layers.empty() || m.inputShape.empty()) return "imported model has no layers or input";
    const std::string saved = serializeModel(m);
    auto again = parseModel(saved, "imported.json");
    if (!again) return "an imported model does not load back: " + again.error().message;
    if (serializeModel(*again) != saved) return "imported model: save -> load -> save is not byte-identical";
    return {};
}

inline std::string checkImported(const Model& m, std::uint32_t h) {
    if (auto v = checkRoundTrip(m); !v.empty()) return v;
    auto est = Estimator::create(m, TrainingConfig{}, 0);
    if (!est) return est.error().message.empty() ? "Estimator::create: empty error message" : "";
    detail::Case c;
    c.smallBatch = 1 + static_cast<std::int64_t>(h % 8);
    c.largeBatch = std::int64_t{1} << ((h >> 3) % 32);
    c.capacity = std::uint64_t{80} << 30;
    // Imported models are large; the estimate target covers the expensive checks on small ones.
    return detail::checkEstimator(*est, c, m, 800);
}

/// importHfConfig with default options and with options chosen from the input; a model it accepts must
/// round-trip through the model file, and (`estimate`) estimate.
inline std::string hfEntry(const std::uint8_t* data, std::size_t size, bool estimate) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    std::uint32_t h = 2166136261u; // FNV-1a of the input picks the second set of options
    for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 16777619u;
    HfImportOptions opts[2];
    opts[1].sequenceLength = (h & 1) ? std::int64_t{1} + (h >> 8) % 4096 : std::int64_t(h >> 1) - (1 << 20);
    const char* impls[] = {"eager", "flash", "mem_efficient", "bogus"};
    opts[1].attention = std::string(impls[(h >> 4) & 3]);
    for (const auto& o : opts) {
        auto m = importHfConfig(text, "config.json", o);
        if (!m) {
            if (m.error().message.empty()) return "importHfConfig: empty error message";
            continue;
        }
        if (auto v = estimate ? checkImported(*m, h) : checkRoundTrip(*m); !v.empty()) return v;
    }
    return {};
}

inline std::string hfImportEntry(const std::uint8_t* data, std::size_t size) {
    return hfEntry(data, size, true);
}

/// The parser alone ("hf_parse"): hf_import without the estimate, hundreds of times faster, so that the
/// config reader gets its millions of executions (issue 30).
inline std::string hfParseEntry(const std::uint8_t* data, std::size_t size) {
    return hfEntry(data, size, false);
}

#ifdef BATCHFIT_FUZZ_HAVE_ONNX
/// importOnnx on the raw bytes, with the loss and opaque options chosen from the input; a model it accepts must
/// round-trip through the model file, and (`estimate`) estimate.
inline std::string onnxEntry(const std::uint8_t* data, std::size_t size, bool estimate) {
    std::uint32_t h = 2166136261u;
    for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 16777619u;
    OnnxImportOptions o;
    o.loss = static_cast<OnnxLoss>(h % 3);
    o.allowOpaque = (h >> 2) & 1;
    auto m = importOnnx(data, size, "fuzz.onnx", o);
    if (!m) return m.error().message.empty() ? "importOnnx: empty error message" : "";
    return estimate ? checkImported(*m, h) : checkRoundTrip(*m);
}

inline std::string onnxImportEntry(const std::uint8_t* data, std::size_t size) {
    return onnxEntry(data, size, true);
}

/// The ONNX reader alone ("onnx_parse"): importOnnx and the model file round trip, no estimate.
inline std::string onnxParseEntry(const std::uint8_t* data, std::size_t size) {
    return onnxEntry(data, size, false);
}
#endif

/// Header bytes (training set-up, batches, capacity) + model JSON -> every estimator property.
inline std::string estimateEntry(const std::uint8_t* data, std::size_t size) {
    if (size < kEstimateHeaderBytes) return {};
    const detail::Case c = detail::decodeHeader(data);
    const std::string text(reinterpret_cast<const char*>(data + kEstimateHeaderBytes),
                           size - kEstimateHeaderBytes);
    auto m = parseModel(text, "fuzz.json");
    if (!m) return m.error().message.empty() ? "parseModel: empty error message" : "";
    auto est = Estimator::create(*m, c.config, c.contextBytes);
    if (!est) return est.error().message.empty() ? "Estimator::create: empty error message" : "";
    return detail::checkEstimator(*est, c, *m);
}

/// A setting's command-line text: a value it accepts reads back exactly from settingText(), sets without
/// throwing, and a model file's training section saves -> loads -> saves byte-identically.
inline std::string setupEntry(const std::uint8_t* data, std::size_t size) {
    if (size < 1) return {};
    const auto& table = settingsTable();
    const SettingInfo& s = table[data[0] % table.size()];
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    if (auto v = parseSettingText(s, text)) {
        auto again = parseSettingText(s, settingText(s, *v));
        if (!again)
            return s.key + ": '" + settingText(s, *v) + "' does not read back: " + again.error().message;
        if (!(*again == *v)) return s.key + ": '" + text + "' does not round-trip through settingText";
        TrainingSetup t;
        s.set(t, *v);
        if (!(s.get(t) == *v) && s.key != "gpu") return s.key + ": set then get changes the value";
        (void)validateSetup(t, [](const std::string& k) { return k; });
    } else if (v.error().message.empty()) {
        return s.key + ": empty error message";
    }
    const std::string whole(reinterpret_cast<const char*>(data), size);
    auto d = parseModelDocument(whole, "fuzz.json");
    if (!d) return d.error().message.empty() ? "parseModelDocument: empty error message" : "";
    const std::string saved = serializeModelDocument(d->model, d->setup);
    auto back = parseModelDocument(saved, "saved.json");
    if (!back) return "a saved document does not load: " + back.error().message;
    if (serializeModelDocument(back->model, back->setup) != saved)
        return "document save -> load -> save differs";
    return {};
}

/// parseAllocatorTrace: a clean error, or a trace that writes and reads back the same.
inline std::string traceEntry(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    auto t = parseAllocatorTrace(text, "trace.json");
    if (!t) return t.error().message.empty() ? "parseAllocatorTrace: empty error message" : "";
    const std::string saved = allocatorTraceJson(*t);
    auto back = parseAllocatorTrace(saved, "saved.json");
    if (!back) return "a written trace does not read back: " + back.error().message;
    if (allocatorTraceJson(*back) != saved) return "trace write -> read -> write differs";
    return {};
}

/// parseMeasurement: a clean error or a measurement.
inline std::string measurementEntry(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    auto m = parseMeasurement(text, "m.json");
    if (!m) return m.error().message.empty() ? "parseMeasurement: empty error message" : "";
    return {};
}

/// readServingModel, then every engine's start-up arithmetic on a 24 GiB and an 80 GiB GPU: a clean error or an
/// estimate whose answers agree: the most sequences at a context fit and one more does not (below the cap),
/// the longest context for them fits, the map's cells are the single answers, nothing above 2^62 bytes.
inline std::string servingEntry(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    auto m = readServingModel(text, "config.json");
    if (!m) return m.error().message.empty() ? "readServingModel: empty error message" : "";
    if (m->kv.empty() || m->kv.size() != m->layerWeights.size()) return "a model with no layers or mismatched layers";
    for (const char* id : {"rtx-4090", "h100-80gb"}) {
        const GpuSpec gpu = *findGpu(id);
        for (ServingEngine engine : allServingEngines()) {
            ServingConfig c;
            c.engine = engine;
            c.maxModelLen = std::min<std::int64_t>(m->maxPositions, 4096);
            auto e = estimateServing(*m, c, gpu, 1 + static_cast<std::int64_t>(size % 3), 1);
            if (!e) continue; // refused with a message (parallelism past the layers, a length past the model's)
            if (e->weightBytes > (1ull << 62) || e->bytesPerToken > (1ull << 62)) return "bytes past 2^62";
            if (e->failure != ServingEstimate::Failure::None) continue;
            const std::int64_t ctx = e->config.maxModelLen;
            const std::int64_t n = maxConcurrentSequences(*m, *e, ctx);
            if (n < 1 || !servingCell(*m, *e, n, ctx).fits) return "the most sequences at max_model_len do not fit";
            if (n != e->config.maxNumSeqs && servingCell(*m, *e, n + 1, ctx).fits) return "one more sequence fits";
            const std::int64_t longest = maxContextAt(*m, *e, n);
            if (longest < ctx || !servingCell(*m, *e, n, longest).fits) return "maxContextAt disagrees";
            auto map = servingFitMap(*m, *e, servingAxis(ctx), servingAxis(n + 1));
            if (!map) return "servingFitMap refused its own axes";
            for (std::size_t r = 0; r < map->contexts.size(); ++r)
                for (std::size_t k = 0; k < map->sequences.size(); ++k)
                    if (map->at(r, k).fits != servingCell(*m, *e, map->sequences[k], map->contexts[r]).fits)
                        return "a map cell disagrees with servingCell";
            (void)servingJson(*m, *e, gpu, ctx, n, servingLevers(*m, c, gpu, 1, 1, ctx));
        }
    }
    return {};
}

} // namespace batchfit::fuzz
