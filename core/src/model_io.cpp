#include "batchfit/model_io.h"

#include "bounded_file.h"
#include "graph/graph_builder.h"
#include "json_text.h"
#include "setup/training_setup_json.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

namespace batchfit {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

constexpr int kMaxDepth = 64;
constexpr std::int64_t kMaxRepeat = kMaxBlockRepeat;
const std::set<std::string> kLayerKeys = {"name", "op", "inputs", "comment", "trainable", "frozen_params"};
const std::set<std::string> kBlockKeys = {"name",       "layers",  "repeat",    "first_index",
                                          "shortcut",   "merge",   "merge_dim", "after",
                                          "checkpoint", "comment", "trainable", "keep_input"};

class Parser {
public:
    explicit Parser(std::string source) : m_source(std::move(source)) {}

    Error fail(const std::string& path, const std::string& msg) const {
        return makeError(m_source + ": " + path + ": " + msg);
    }

    static std::string kind(const json& j) { return jsontext::kind(j); }
    static std::string describe(const json& j) { return jsontext::describe(j); }

    Result<Model> model(const json& root) {
        if (!root.is_object()) return fail("$", "expected a JSON object, got " + kind(root));
        if (!root.contains("format") || root["format"] != "batchfit-model")
            return fail("$.format", "expected \"batchfit-model\"");
        if (!root.contains("version") || !root["version"].is_number_integer())
            return fail("$.version", "expected an integer format version");
        const auto version = root["version"].get<std::int64_t>();
        if (version < 1 || version > kModelFormatVersion)
            return fail("$.version", "unsupported version " + root["version"].dump() +
                                         " (this BatchFit reads 1 to " + std::to_string(kModelFormatVersion) +
                                         ")");
        if (root.contains("training")) {
            if (version < kModelSetupVersion)
                return fail("$.training",
                            "a training section needs \"version\": " + std::to_string(kModelSetupVersion) +
                                " (the file says " + root["version"].dump() + ")");
            auto setup = setupjson::read(root["training"], m_source, "$.training", &m_warnings);
            if (!setup) return setup.error();
            if (version < kModelAllocatorVersion && setup->config.fragmentationFraction == 0.05)
                setup->config.fragmentationFraction.reset(); // the old default, not a choice
            m_setup = std::move(*setup);
        }
        Model m;
        if (root.contains("name")) {
            if (!root["name"].is_string())
                return fail("$.name", "expected a string, got " + kind(root["name"]));
            m.name = root["name"].get<std::string>();
        }
        if (root.contains("description")) {
            if (!root["description"].is_string()) return fail("$.description", "expected a string");
            m.description = root["description"].get<std::string>();
        }
        if (!root.contains("input") || !root["input"].is_object())
            return fail("$.input", "expected an object {\"shape\": [...], \"dtype\": ...}");
        const json& in = root["input"];
        static const json kMissing; // a reference, not a copy: copying a deeply nested value recurses
        auto shape = ints(in.contains("shape") ? in["shape"] : kMissing, "$.input.shape", true);
        if (!shape) return shape.error();
        if (shape->empty()) return fail("$.input.shape", "expected at least one per-sample dimension");
        for (auto d : *shape)
            if (d <= 0)
                return fail("$.input.shape", "dimensions must be positive, got " + shapeToString(*shape));
        m.inputShape = *shape;
        if (in.contains("dtype")) {
            if (!in["dtype"].is_string()) return fail("$.input.dtype", "expected a dtype name");
            auto dt = parseDType(in["dtype"].get<std::string>());
            if (!dt) return fail("$.input.dtype", "unknown dtype '" + in["dtype"].get<std::string>() + "'");
            m.inputDtype = *dt;
        }
        if (!root.contains("layers")) return fail("$.layers", "missing (expected an array of layers)");
        auto layers = layerList(root["layers"], "$.layers", 1);
        if (!layers) return layers.error();
        if (layers->empty()) return fail("$.layers", "expected at least one layer");
        m.layers = std::move(*layers);
        return m;
    }

    /// The training section of the last model() call, if it had one.
    std::optional<TrainingSetup> m_setup;
    std::vector<std::string> m_warnings; ///< what was read but could not be used (an unknown GPU)

private:
    Result<std::vector<std::int64_t>> ints(const json& j, const std::string& path, bool required) {
        if (j.is_null() && !required) return std::vector<std::int64_t>{};
        if (!j.is_array()) return fail(path, "expected an array of integers, got " + kind(j));
        std::vector<std::int64_t> out;
        for (std::size_t i = 0; i < j.size(); ++i) {
            if (!j[i].is_number_integer() ||
                (j[i].is_number_unsigned() && j[i].get<std::uint64_t>() > INT64_MAX))
                return fail(path + "[" + std::to_string(i) + "]", "expected an integer, got " + kind(j[i]));
            out.push_back(j[i].get<std::int64_t>());
        }
        return out;
    }

    /// A repeated block split into runs (`first_index`: Qwen-MoE's dense and sparse layers), each run its own
    /// sibling of the same name: allowed when every run is indexed and their indices do not overlap.
    static bool disjointSegment(const std::vector<Layer>& earlier, const Layer& l) {
        if (!l.isBlock() || l.firstIndex < 0) return false;
        for (const Layer& e : earlier) {
            if (e.name != l.name) continue;
            if (!e.isBlock() || e.firstIndex < 0) return false;
            if (l.firstIndex < e.firstIndex + e.repeat && e.firstIndex < l.firstIndex + l.repeat)
                return false;
        }
        return true;
    }

    Result<std::vector<Layer>> layerList(const json& j, const std::string& path, int depth) {
        if (!j.is_array()) return fail(path, "expected an array of layers, got " + kind(j));
        std::vector<Layer> out;
        std::set<std::string> names;
        for (std::size_t i = 0; i < j.size(); ++i) {
            std::string p = path + "[" + std::to_string(i) + "]";
            auto l = layer(j[i], p, depth);
            if (!l) return l.error();
            if (!l->name.empty() && !names.insert(l->name).second && !disjointSegment(out, *l))
                return fail(p + ".name", "duplicate name '" + l->name + "' among siblings");
            out.push_back(std::move(*l));
        }
        return out;
    }

    Result<Layer> layer(const json& j, const std::string& path, int depth) {
        if (depth > kMaxDepth) return fail(path, "blocks nested deeper than " + std::to_string(kMaxDepth));
        if (!j.is_object()) return fail(path, "expected a layer object, got " + kind(j));
        Layer l;
        if (j.contains("name")) {
            if (!j["name"].is_string())
                return fail(path + ".name", "expected a string, got " + kind(j["name"]));
            l.name = j["name"].get<std::string>();
            if (l.name.find_first_of(".[]@") != std::string::npos)
                return fail(path + ".name", "'" + l.name + "' must not contain '.', '[', ']' or '@'");
        }
        const bool hasOp = j.contains("op");
        if (hasOp == j.contains("layers"))
            return fail(path, "expected either \"op\" (a layer) or \"layers\" (a block)");
        if (hasOp) {
            if (!j["op"].is_string() || j["op"].get<std::string>().empty())
                return fail(path + ".op", "expected an op name");
            l.op = j["op"].get<std::string>();
            if (l.name.empty()) return fail(path + ".name", "a layer needs a name");
            if (j.contains("inputs")) {
                const json& ins = j["inputs"];
                if (!ins.is_array()) return fail(path + ".inputs", "expected an array of layer names");
                for (std::size_t k = 0; k < ins.size(); ++k) {
                    if (!ins[k].is_string())
                        return fail(path + ".inputs[" + std::to_string(k) + "]", "expected a layer name");
                    l.inputs.push_back(ins[k].get<std::string>());
                }
            }
            if (auto st = trainable(j, path, l); !st) return st.error();
            if (j.contains("frozen_params")) {
                const json& fp = j["frozen_params"];
                if (!fp.is_array())
                    return fail(path + ".frozen_params", "expected an array of parameter names");
                for (std::size_t k = 0; k < fp.size(); ++k) {
                    if (!fp[k].is_string())
                        return fail(path + ".frozen_params[" + std::to_string(k) + "]",
                                    "expected a parameter name (\"weight\", \"bias\")");
                    l.frozenParams.push_back(fp[k].get<std::string>());
                }
            }
            for (auto it = j.begin(); it != j.end(); ++it) {
                if (kLayerKeys.count(it.key())) continue;
                auto v = attr(it.value(), path + "." + it.key());
                if (!v) return v.error();
                l.attrs.set(it.key(), std::move(*v));
            }
            return l;
        }
        for (auto it = j.begin(); it != j.end(); ++it)
            if (!kBlockKeys.count(it.key()))
                return fail(
                    path + "." + it.key(),
                    "unknown block key (a block takes: name, layers, repeat, "
                    "first_index, shortcut, merge, merge_dim, after, checkpoint, trainable, keep_input)");
        if (auto st = trainable(j, path, l); !st) return st.error();
        auto children = layerList(j["layers"], path + ".layers", depth + 1);
        if (!children) return children.error();
        l.layers = std::move(*children);
        if (j.contains("repeat")) {
            const json& r = j["repeat"];
            if (!r.is_number_integer() || r.get<std::int64_t>() < 1)
                return fail(path + ".repeat", "expected a positive integer, got " + describe(r));
            if (r.get<std::int64_t>() > kMaxRepeat)
                return fail(path + ".repeat", "repeat " + r.dump() + " is too large (at most " +
                                                  std::to_string(kMaxRepeat) + ")");
            l.repeat = r.get<std::int64_t>();
        }
        if (j.contains("first_index")) {
            const json& r = j["first_index"];
            if (!r.is_number_integer() || r.get<std::int64_t>() < 0 || r.get<std::int64_t>() > kMaxRepeat)
                return fail(path + ".first_index", "expected a small non-negative integer");
            l.firstIndex = r.get<std::int64_t>();
        }
        if (j.contains("keep_input")) {
            if (!j["keep_input"].is_boolean()) return fail(path + ".keep_input", "expected true or false");
            l.keepInput = j["keep_input"].get<bool>();
        }
        if (j.contains("checkpoint")) {
            if (!j["checkpoint"].is_boolean()) return fail(path + ".checkpoint", "expected true or false");
            l.checkpointUnit = j["checkpoint"].get<bool>();
        }
        if (j.contains("shortcut")) {
            const json& s = j["shortcut"];
            if (s.is_string() && s == "identity")
                l.shortcut = ShortcutKind::Identity;
            else if (s.is_array()) {
                auto sc = layerList(s, path + ".shortcut", depth + 1);
                if (!sc) return sc.error();
                l.shortcut = ShortcutKind::Layers;
                l.shortcutLayers = std::move(*sc);
            } else
                return fail(path + ".shortcut", "expected \"identity\" or an array of layers");
        }
        if (j.contains("merge")) {
            const json& mg = j["merge"];
            if (mg == "add")
                l.merge = MergeKind::Add;
            else if (mg == "concat")
                l.merge = MergeKind::Concat;
            else
                return fail(path + ".merge", "expected \"add\" or \"concat\", got " + describe(mg));
        }
        if (j.contains("merge_dim")) {
            if (!j["merge_dim"].is_number_integer()) return fail(path + ".merge_dim", "expected an integer");
            l.mergeDim = j["merge_dim"].get<std::int64_t>();
        }
        if (j.contains("after")) {
            auto af = layerList(j["after"], path + ".after", depth + 1);
            if (!af) return af.error();
            l.after = std::move(*af);
        }
        return l;
    }

    Status trainable(const json& j, const std::string& path, Layer& l) const {
        if (!j.contains("trainable")) return Ok{};
        if (!j["trainable"].is_boolean()) return fail(path + ".trainable", "expected true or false");
        l.trainable = j["trainable"].get<bool>();
        return Ok{};
    }

    Result<AttrValue> attr(const json& v, const std::string& path) {
        if (v.is_boolean()) return AttrValue(v.get<bool>());
        if (v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX)
            return fail(path, "integer " + v.dump() + " is too large");
        if (v.is_number_integer()) return AttrValue(v.get<std::int64_t>());
        if (v.is_number_float()) return AttrValue(v.get<double>());
        if (v.is_string()) return AttrValue(v.get<std::string>());
        if (v.is_array()) {
            auto l = ints(v, path, true);
            if (!l) return l.error();
            return AttrValue(std::move(*l));
        }
        return fail(path, "expected a number, boolean, string or integer list, got " + kind(v));
    }

    std::string m_source;
};

ojson attrJson(const AttrValue& v) {
    return std::visit([](const auto& x) { return ojson(x); }, v);
}

ojson layerJson(const Layer& l);

ojson layerListJson(const std::vector<Layer>& layers) {
    ojson arr = ojson::array();
    for (const auto& l : layers) arr.push_back(layerJson(l));
    return arr;
}

ojson layerJson(const Layer& l) {
    ojson o;
    o["name"] = l.name;
    if (!l.isBlock()) {
        o["op"] = l.op;
        for (const auto& [k, v] : l.attrs.values()) o[k] = attrJson(v);
        if (!l.inputs.empty()) o["inputs"] = l.inputs;
        if (!l.trainable) o["trainable"] = false;
        if (!l.frozenParams.empty()) o["frozen_params"] = l.frozenParams;
        return o;
    }
    if (l.repeat != 1) o["repeat"] = l.repeat;
    if (l.firstIndex >= 0) o["first_index"] = l.firstIndex;
    if (l.checkpointUnit) o["checkpoint"] = true;
    if (l.keepInput) o["keep_input"] = true;
    if (!l.trainable) o["trainable"] = false;
    o["layers"] = layerListJson(l.layers);
    if (l.shortcut == ShortcutKind::Identity)
        o["shortcut"] = "identity";
    else if (l.shortcut == ShortcutKind::Layers)
        o["shortcut"] = layerListJson(l.shortcutLayers);
    if (l.merge == MergeKind::Concat) {
        o["merge"] = "concat";
        o["merge_dim"] = l.mergeDim;
    }
    if (!l.after.empty()) o["after"] = layerListJson(l.after);
    return o;
}

} // namespace

Result<ModelDocument> parseModelDocument(const std::string& jsonText, const std::string& source) {
    return jsontext::parseFileText<ModelDocument>(
        jsonText, source, kMaxModelFileBytes, "a model file", [&](const json& root) -> Result<ModelDocument> {
            Parser parser(source);
            auto model = parser.model(root);
            if (!model) return model.error();
            return ModelDocument{std::move(*model), std::move(parser.m_setup), std::move(parser.m_warnings)};
        });
}

Result<ModelDocument> loadModelDocument(const std::string& path) {
    auto text = readBoundedFile(path, kMaxModelFileBytes, "a model file");
    if (!text) return text.error();
    return parseModelDocument(*text, path);
}

Result<Model> parseModel(const std::string& jsonText, const std::string& source) {
    auto doc = parseModelDocument(jsonText, source);
    if (!doc) return doc.error();
    return std::move(doc->model);
}

Result<Model> loadModelFile(const std::string& path) {
    auto doc = loadModelDocument(path);
    if (!doc) return doc.error();
    return std::move(doc->model);
}

std::string serializeModelDocument(const Model& model, const std::optional<TrainingSetup>& setup) {
    ojson root;
    root["format"] = "batchfit-model";
    // Version 1 where there is no set-up, so model-only files stay readable by older versions.
    root["version"] = setup ? kModelAllocatorVersion : 1;
    root["name"] = model.name;
    if (!model.description.empty()) root["description"] = model.description;
    root["input"] = {{"shape", model.inputShape}, {"dtype", std::string(dtypeName(model.inputDtype))}};
    if (setup) root["training"] = setupjson::write(*setup);
    root["layers"] = layerListJson(model.layers);
    return root.dump(2) + "\n";
}

std::string serializeModel(const Model& model) {
    return serializeModelDocument(model, std::nullopt);
}

namespace {

Status writeAtomically(const std::string& text, const std::string& path) {
    const std::string tmp = path + ".tmp-batchfit";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) return makeError(path + ": cannot write (cannot create " + tmp + ")");
        out << text;
        out.flush();
        out.close(); // a failed close (delayed write error) must not pass for a save
        if (!out) {
            std::remove(tmp.c_str());
            return makeError(path + ": write failed (disk full?)");
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::remove(tmp.c_str());
        return makeError(path + ": cannot replace the file: " + ec.message());
    }
    return Ok{};
}

} // namespace

Status saveModelFile(const Model& model, const std::string& path) {
    return writeAtomically(serializeModel(model), path);
}

Status saveModelDocument(const Model& model, const std::optional<TrainingSetup>& setup,
                         const std::string& path) {
    return writeAtomically(serializeModelDocument(model, setup), path);
}

Status validateModel(const Model& model) {
    auto g = buildGraph(model, TrainingConfig{});
    if (!g) return g.error();
    return Ok{};
}

} // namespace batchfit
