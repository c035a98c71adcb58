#include "cli_options.h"

#include "batchfit/allocator_config.h"
#include "batchfit/settings.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace batchfit {
namespace {

Result<std::int64_t> parseInt(const std::string& s, const std::string& opt, std::int64_t min,
                              std::int64_t max) {
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size())
        return makeError(opt + " expects an integer, got '" + s + "'");
    if (v < min || v > max)
        return makeError(opt + " must be between " + std::to_string(min) + " and " + std::to_string(max) +
                         ", got " + s);
    return v;
}

Result<double> parseDouble(const std::string& s, const std::string& opt) {
    try {
        std::size_t used = 0;
        double v = std::stod(s, &used);
        if (used != s.size() || !std::isfinite(v)) throw std::invalid_argument(s);
        return v;
    } catch (...) {
        return makeError(opt + " expects a number, got '" + s + "'");
    }
}

Result<GpuSpec> parseGpu(const std::string& s) {
    if (auto known = findGpu(s)) return known; // catalogue ids such as a100-80gb end in "gb" too
    for (const char* suffix : {"GiB", "gib", "GB", "gb", "G", "g"}) {
        const std::string suf(suffix);
        if (s.size() > suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0) {
            auto v = parseDouble(s.substr(0, s.size() - suf.size()), "--gpu");
            if (!v || *v <= 0 || *v > 1.0e6)
                return makeError("--gpu: capacity must be a positive number of GiB, got '" + s + "'");
            return customGpu(*v);
        }
    }
    return findGpu(s);
}

// "24GiB", "512MiB", "1048576" (bytes).
Result<std::uint64_t> parseCapacity(const std::string& s, const std::string& opt) {
    for (auto [suffix, shift] : {std::pair{"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"G", 30}, {"M", 20}}) {
        const std::string suf(suffix);
        if (s.size() > suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0) {
            auto v = parseDouble(s.substr(0, s.size() - suf.size()), opt);
            if (!v || *v <= 0 || *v * static_cast<double>(std::uint64_t{1} << shift) > 4.6e18)
                return makeError(opt + ": expected a positive size such as 24GiB, got '" + s + "'");
            return static_cast<std::uint64_t>(*v * static_cast<double>(std::uint64_t{1} << shift));
        }
    }
    auto v = parseInt(s, opt, 1, std::int64_t{1} << 62);
    if (!v) return makeError(opt + ": expected a size such as 24GiB or a number of bytes, got '" + s + "'");
    return static_cast<std::uint64_t>(*v);
}

} // namespace

namespace {

/// A flag of the settings table (batchfit/settings.h) given its text; false when `a` is not one.
Result<bool> settingFlag(CliOptions& o, const std::string& a, const std::vector<std::string>& args,
                         std::size_t& i) {
    const SettingInfo* s = findSettingByFlag(a);
    if (!s || a == "--gpu") return false;
    SettingValue v;
    if (s->form == FlagForm::Value) {
        if (i + 1 >= args.size()) return makeError(a + " needs a value");
        auto parsed = parseSettingText(*s, args[++i]);
        if (!parsed) return parsed.error();
        v = std::move(*parsed);
    } else {
        v = s->form == FlagForm::SetsTrue;
    }
    TrainingSetup setup;
    setup.batch = o.batch;
    setup.config = o.config;
    setup.serving = o.serving;
    s->set(setup, v);
    o.batch = setup.batch;
    o.config = std::move(setup.config);
    o.serving = setup.serving;
    if (a == "--batch") o.batchGiven = true;
    if (a == "--alloc-conf") o.allocConfGiven = true;
    return true;
}

} // namespace

Result<CliOptions> parseCliOptions(const std::vector<std::string>& args, const CliOptions& base) {
    CliOptions o = base;
    bool checkpointingGiven = false, quantGiven = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto next = [&]() -> Result<std::string> {
            if (i + 1 >= args.size()) return makeError(a + " needs a value");
            return args[++i];
        };
#define BF_NEXT(var)                                                                                         \
    auto var##_r = next();                                                                                   \
    if (!var##_r) return var##_r.error();                                                                    \
    const std::string& var = *var##_r;
        auto setting = settingFlag(o, a, args, i);
        if (!setting) return setting.error();
        if (*setting) {
            checkpointingGiven |= a == "--checkpointing" || a == "--checkpoint-mode";
            quantGiven |= a == "--quant";
            continue;
        }
        if (a == "--help" || a == "-h")
            o.help = true;
        else if (a == "--version")
            o.version = true;
        else if (a == "--json")
            o.json = true;
        else if (a == "--fit")
            o.fit = true;
        else if (a == "--timeline")
            o.timeline = true;
        else if (a == "--log")
            o.logScale = true;
        else if (a == "--preset") {
            BF_NEXT(v);
            o.preset = v;
        } else if (a == "--model") {
            BF_NEXT(v);
            o.modelFile = v;
        } else if (a == "--out") {
            BF_NEXT(v);
            o.out = v;
        } else if (a == "--save") {
            BF_NEXT(v);
            o.saveFile = v;
        } else if (a == "--measured") {
            BF_NEXT(v);
            o.measuredFile = v;
        } else if (a == "--hf-config") {
            BF_NEXT(v);
            o.hfConfig = v;
        } else if (a == "--onnx") {
            BF_NEXT(v);
            o.onnxFile = v;
        } else if (a == "--onnx-allow-opaque")
            o.onnxAllowOpaque = true;
        else if (a == "--onnx-loss") {
            BF_NEXT(v);
            if (v != "cross-entropy" && v != "mse" && v != "none")
                return makeError("--onnx-loss must be cross-entropy, mse or none, got '" + v + "'");
            o.onnxLoss = v;
        } else if (a == "--attention") {
            BF_NEXT(v);
            if (v != "eager" && v != "mem_efficient" && v != "flash" && v != "math")
                return makeError("--attention must be eager, mem_efficient, flash or math, got '" + v + "'");
            o.attention = v;
        } else if (a == "--moe-load") {
            BF_NEXT(v);
            if (v != "balanced" && v != "worst")
                return makeError("--moe-load must be balanced or worst, got '" + v + "'");
            o.moeLoad = v;
        } else if (a == "--moe-impl") {
            BF_NEXT(v);
            if (v != "grouped_mm" && v != "loop")
                return makeError("--moe-impl must be grouped_mm or loop, got '" + v + "'");
            o.moeImpl = v;
        } else if (a == "--seq") {
            BF_NEXT(v);
            auto r = parseInt(v, a, 1, std::int64_t{1} << 24);
            if (!r) return r.error();
            o.sequence = *r;
        } else if (a == "--lang") {
            BF_NEXT(v);
            o.lang = v;
        } else if (a == "--gpu") {
            BF_NEXT(v);
            auto g = parseGpu(v);
            if (!g) return g.error();
            o.gpu = *g;
        } else if (a == "--trace-out") {
            BF_NEXT(v);
            o.traceOut = v;
        } else if (a == "--capacity") {
            BF_NEXT(v);
            auto r = parseCapacity(v, a);
            if (!r) return r.error();
            o.capacity = *r;
        } else if (a == "--memory-fraction") {
            BF_NEXT(v);
            auto r = parseDouble(v, a);
            if (!r) return r.error();
            if (!(*r > 0 && *r <= 1)) return makeError("--memory-fraction must be in (0, 1], got " + v);
            o.memoryFraction = *r;
        } else if (a == "--top") {
            BF_NEXT(v);
            auto r = parseInt(v, a, 0, 100000);
            if (!r) return r.error();
            o.top = static_cast<int>(*r);
        } else if (a == "--seq-from" || a == "--seq-to" || a == "--seq-step") {
            BF_NEXT(v);
            auto r = parseInt(v, a, 1, std::int64_t{1} << 24);
            if (!r) return r.error();
            if (a == "--seq-from")
                o.seqFrom = *r;
            else if (a == "--seq-to")
                o.seqTo = *r;
            else
                o.seqStep = *r;
        } else if (a == "--from" || a == "--to" || a == "--step") {
            BF_NEXT(v);
            auto r = parseInt(v, a, 1, std::int64_t{1} << 31);
            if (!r) return r.error();
            if (a == "--from")
                o.from = *r;
            else if (a == "--to")
                o.to = *r;
            else {
                o.step = *r;
                o.logScale = false;
            }
        } else if (!a.empty() && a[0] == '-') {
            return makeError("unknown option '" + a + "' (see --help)");
        } else if (o.command.empty()) {
            o.command = a;
        } else if (o.command == "allocator-replay" && o.trace.empty()) {
            o.trace = a;
        } else {
            return makeError("unexpected argument '" + a + "'");
        }
#undef BF_NEXT
    }
    if (quantGiven) applyQuantDefaults(o.config, checkpointingGiven);
    // A served model's GPUs are its tensor x pipeline ranks unless --gpus says more (replicas).
    if (o.command == "serve" && o.config.parallel.gpus == 1)
        o.config.parallel.gpus = o.config.parallel.tp * o.config.parallel.pp;
    TrainingSetup setup;
    setup.config = o.config;
    // The one check of the whole set-up (a model file's training section has the same): named by flag.
    if (auto st = validateSetup(setup,
                                [](const std::string& key) {
                                    const SettingInfo* s = findSetting(key);
                                    return s && !s->flag.empty() ? s->flag : key;
                                });
        !st)
        return st.error();
    return o;
}

} // namespace batchfit
