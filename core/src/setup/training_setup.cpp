// The training section of a model file, read and written through the settings table.
#include "batchfit/training_setup.h"

#include "batchfit/settings.h"
#include "json_text.h"
#include "training_setup_json.h"

#include <cmath>
#include <limits>

namespace batchfit {

TrainingSetup makeTrainingSetup(const GpuSpec& gpu, std::int64_t batch, const TrainingConfig& config) {
    TrainingSetup s;
    s.gpuId = gpu.id;
    s.customGpuBytes = gpu.id == "custom" ? gpu.memoryBytes : 0;
    s.batch = batch;
    s.config = config;
    return s;
}

Result<GpuSpec> setupGpu(const TrainingSetup& setup) {
    if (setup.gpuId != "custom") return findGpu(setup.gpuId);
    return customGpuOfBytes(setup.customGpuBytes);
}

namespace setupjson {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

/// The setting's value in a file: the JSON value's type must be the setting's; the range is checked after.
Result<SettingValue> fromJson(const SettingInfo& s, const json& j) {
    auto expected = [&](const std::string& what) {
        return makeError("expected " + what + ", got " + jsontext::kind(j));
    };
    switch (s.type) {
    case SettingType::Switch:
        if (!j.is_boolean()) return expected("true or false");
        return SettingValue(j.get<bool>());
    case SettingType::Integer:
    case SettingType::Bytes: {
        if (!j.is_number_integer() && !j.is_number_unsigned())
            return expected(s.type == SettingType::Bytes ? "a number of bytes" : "an integer");
        if (j.is_number_unsigned() &&
            j.get<std::uint64_t>() > std::uint64_t{std::numeric_limits<std::int64_t>::max()})
            return makeError("expected at most " + std::to_string(static_cast<long long>(s.max)) + ", got " +
                             jsontext::describe(j));
        return SettingValue(j.get<std::int64_t>());
    }
    case SettingType::Number:
        if (!j.is_number()) return expected("a number");
        return SettingValue(j.get<double>());
    case SettingType::Choice:
    case SettingType::Text: {
        if (!j.is_string()) return expected("a string");
        if (!s.canonical) return SettingValue(j.get<std::string>());
        auto c = s.canonical(j.get<std::string>());
        if (!c) return c.error();
        return SettingValue(*c);
    }
    case SettingType::List: {
        if (!j.is_array()) return expected("an array of layer path patterns");
        if (j.size() > s.maxItems)
            return makeError("expected at most " + std::to_string(s.maxItems) + " patterns, got " +
                             std::to_string(j.size()));
        std::vector<std::string> items;
        for (std::size_t i = 0; i < j.size(); ++i) {
            if (!j[i].is_string() || j[i].get<std::string>().empty() || j[i].get<std::string>().size() > 1000)
                return makeError("[" + std::to_string(i) +
                                 "]: expected a non-empty layer path pattern (e.g. \"layer1*\"), got " +
                                 jsontext::describe(j[i]));
            items.push_back(j[i].get<std::string>());
        }
        return SettingValue(std::move(items));
    }
    case SettingType::Lengths: {
        if (!j.is_array()) return expected("an array of sequence lengths");
        if (j.size() > s.maxItems)
            return makeError("expected at most " + std::to_string(s.maxItems) + " lengths, got " +
                             std::to_string(j.size()));
        std::vector<std::int64_t> items;
        for (std::size_t i = 0; i < j.size(); ++i) {
            if (!j[i].is_number_integer())
                return makeError("[" + std::to_string(i) + "]: expected an integer, got " +
                                 jsontext::kind(j[i]));
            if (j[i].get<std::int64_t>() < s.min || j[i].get<std::int64_t>() > s.max)
                return makeError("[" + std::to_string(i) + "]: expected an integer from " +
                                 std::to_string(static_cast<long long>(s.min)) + " to " +
                                 std::to_string(static_cast<long long>(s.max)) + ", got " +
                                 jsontext::describe(j[i]));
            items.push_back(j[i].get<std::int64_t>());
        }
        return SettingValue(std::move(items));
    }
    }
    return makeError("unknown setting type");
}

ojson toJson(const SettingValue& v) {
    return std::visit(
        [](const auto& x) -> ojson {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::monostate>)
                return nullptr;
            else
                return x;
        },
        v);
}

/// The keys of a group ("rank, alpha, dropout, targets") or of the top level (groups by name).
std::string expectedKeys(const std::string& group) {
    std::string out, last;
    for (const SettingInfo& s : settingsTable()) {
        const std::string k = group.empty() ? (s.group().empty() ? s.key : s.group()) : s.name();
        if ((group.empty() || s.group() == group) && k != last) {
            out += (out.empty() ? "" : ", ") + k;
            last = k;
        }
    }
    return out;
}

bool isGroup(const std::string& name) {
    for (const SettingInfo& s : settingsTable())
        if (s.group() == name) return true;
    return false;
}

class Reader {
public:
    Reader(std::string source, std::string path) : m_source(std::move(source)), m_path(std::move(path)) {}

    Error fail(const std::string& key, const std::string& msg) const {
        return makeError(m_source + ": " + m_path + "." + key + ": " + msg);
    }

    Status value(const std::string& key, const json& j, TrainingSetup& out) const {
        const SettingInfo* s = findSetting(key);
        auto v = fromJson(*s, j);
        if (!v) {
            const std::string& m = v.error().message;
            return m.starts_with("[") ? fail(key + m.substr(0, m.find(':')), m.substr(m.find(':') + 2))
                                      : fail(key, m);
        }
        if (auto st = checkSettingValue(*s, *v); !st)
            return fail(key, st.error().message + ", got " + jsontext::describe(j));
        s->set(out, *v);
        return Ok{};
    }

    Status group(const std::string& name, const json& j, TrainingSetup& out) const {
        if (!j.is_object())
            return fail(name, "expected an object (" + expectedKeys(name) + "), got " + jsontext::kind(j));
        for (auto it = j.begin(); it != j.end(); ++it) {
            const std::string key = name + "." + it.key();
            if (!findSetting(key)) return fail(key, "unknown key (expected " + expectedKeys(name) + ")");
            if (auto st = value(key, it.value(), out); !st) return st;
        }
        // A group needs its key setting: LoRA its rank, quantization its type.
        if (name == "lora" && !j.contains("rank"))
            return fail("lora.rank", "missing (the LoRA rank r, e.g. 16)");
        if (name == "quant" && !j.contains("type"))
            return fail("quant.type", "missing (nf4, fp4, int8 or none)");
        return Ok{};
    }

private:
    std::string m_source;
    std::string m_path;
};

/// A group is written when it is in use: LoRA with a rank, quantization of a kind, parallelism not the
/// defaults.
bool groupInUse(const std::string& group, const TrainingSetup& s) {
    if (group == "lora") return s.config.lora.rank > 0;
    if (group == "quant") return s.config.quant.enabled();
    if (group == "parallel") return s.config.parallel != ParallelConfig{};
    if (group == "serving") return s.serving != ServingConfig{};
    return true;
}

} // namespace

Result<TrainingSetup> read(const json& j, const std::string& source, const std::string& path,
                           std::vector<std::string>* warnings) {
    if (!j.is_object())
        return makeError(source + ": " + path + ": expected an object, got " + jsontext::kind(j));
    const Reader r(source, path);
    TrainingSetup s;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& key = it.key();
        Status st = Ok{};
        if (isGroup(key))
            st = r.group(key, it.value(), s);
        else if (findSetting(key) && key != "gpu")
            st = r.value(key, it.value(), s);
        else if (key == "gpu") {
            if (!it.value().is_string())
                return r.fail(key, "expected a GPU id, got " + jsontext::kind(it.value()));
            const std::string id = it.value().get<std::string>();
            if (auto c = findSetting("gpu")->canonical(id)) {
                s.gpuId = *c;
            } else if (warnings) { // open it on the default GPU and say so, rather than refuse the file
                warnings->push_back(source + ": " + path + ".gpu: " + c.error().message + "; showing " +
                                    s.gpuId + " instead");
            } else {
                return r.fail(key, c.error().message);
            }
        } else
            return r.fail(key, "unknown key (expected one of: " + expectedKeys("") + ")");
        if (!st) return st.error();
    }
    if (s.gpuId == "custom" && !j.contains("gpu_memory_bytes"))
        return r.fail("gpu_memory_bytes", "missing (a \"custom\" GPU needs its capacity in bytes)");
    if (s.gpuId != "custom") s.customGpuBytes = 0;
    if (auto st = validateSetup(s, [&](const std::string& key) { return source + ": " + path + "." + key; });
        !st)
        return st.error();
    return s;
}

ojson write(const TrainingSetup& s, bool unsetAsNull) {
    ojson o;
    for (const SettingInfo& info : settingsTable()) {
        const std::string group = info.group();
        if (!group.empty() && !groupInUse(group, s)) continue;
        if (info.key == "gpu_memory_bytes" && s.gpuId != "custom") continue;
        const SettingValue v = info.get(s);
        const bool empty = std::holds_alternative<std::monostate>(v) ||
                           (info.type == SettingType::List && std::get<std::vector<std::string>>(v).empty());
        if (empty && !unsetAsNull) continue;
        ojson& target = group.empty() ? o : o[group];
        target[info.name()] = toJson(v);
    }
    return o;
}

ojson quantJson(const QuantConfig& quant) {
    TrainingSetup s;
    s.config.quant = quant;
    return write(s, false)["quant"];
}

} // namespace setupjson
} // namespace batchfit
