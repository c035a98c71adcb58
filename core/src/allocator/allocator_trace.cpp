#include "batchfit/allocator_trace.h"

#include "json_text.h"

#include <map>

namespace batchfit {

namespace {
using json = nlohmann::json;

class Reader {
public:
    explicit Reader(std::string source) : m_source(std::move(source)) {}

    Result<AllocatorTrace> trace(const json& root) {
        if (!root.is_object()) return fail("$", "expected a JSON object, got " + jsontext::kind(root));
        if (!root.contains("format") || root["format"] != "batchfit-allocator-trace")
            return fail("$.format", "expected \"batchfit-allocator-trace\"");
        if (!root.contains("version") || root["version"] != 1)
            return fail("$.version", "expected 1 (the trace format this BatchFit reads)");
        AllocatorTrace t;
        if (root.contains("device_total_bytes")) {
            auto v = bytes(root["device_total_bytes"], "$.device_total_bytes");
            if (!v) return v.error();
            t.deviceTotalBytes = *v;
        }
        if (root.contains("alloc_conf")) {
            if (!root["alloc_conf"].is_string()) return fail("$.alloc_conf", "expected a string");
            t.allocConf = root["alloc_conf"].get<std::string>();
        }
        if (!root.contains("events") || !root["events"].is_array())
            return fail("$.events", "expected an array of {\"op\": \"alloc\"|\"free\"|\"empty_cache\", ...}");
        const json& ev = root["events"];
        t.events.reserve(ev.size());
        std::map<std::string, int> tags;
        for (std::size_t i = 0; i < ev.size(); ++i) {
            const std::string at = "$.events[" + std::to_string(i) + "]";
            const json& e = ev[i];
            if (!e.is_object() || !e.contains("op") || !e["op"].is_string())
                return fail(at, "expected an object with \"op\"");
            const std::string op = e["op"].get<std::string>();
            AllocatorEvent a;
            if (op == "empty_cache") {
                a.kind = AllocatorEvent::Kind::EmptyCache;
                t.events.push_back(a);
                continue;
            }
            if (op != "alloc" && op != "free")
                return fail(at + ".op", "expected \"alloc\", \"free\" or \"empty_cache\", got " +
                                            jsontext::describe(e["op"]));
            a.kind = op == "alloc" ? AllocatorEvent::Kind::Alloc : AllocatorEvent::Kind::Free;
            auto id = bytes(e.contains("id") ? e["id"] : json(), at + ".id");
            if (!id) return id.error();
            a.id = *id;
            if (a.kind == AllocatorEvent::Kind::Alloc) {
                auto size = bytes(e.contains("size") ? e["size"] : json(), at + ".size");
                if (!size) return size.error();
                a.size = *size;
                if (e.contains("stream")) {
                    const json& s = e["stream"];
                    if (!s.is_number_integer() || s.get<std::int64_t>() < 0 ||
                        s.get<std::int64_t>() > 1'000'000)
                        return fail(at + ".stream", "expected an integer from 0 to 1000000");
                    a.stream = static_cast<int>(s.get<std::int64_t>());
                }
                if (e.contains("tag")) {
                    if (!e["tag"].is_string()) return fail(at + ".tag", "expected a string");
                    auto [it, added] =
                        tags.try_emplace(e["tag"].get<std::string>(), static_cast<int>(t.tagNames.size()));
                    if (added) t.tagNames.push_back(it->first);
                    a.tag = it->second;
                }
                if (e.contains("elastic")) {
                    if (!e["elastic"].is_boolean()) return fail(at + ".elastic", "expected true or false");
                    a.elastic = e["elastic"].get<bool>();
                }
            }
            t.events.push_back(a);
        }
        if (root.contains("recorded") && !root["recorded"].is_null()) {
            const json& r = root["recorded"];
            if (!r.is_object()) return fail("$.recorded", "expected an object");
            RecordedAllocator rec;
            for (const char* k : {"peak_allocated_bytes", "peak_reserved_bytes"}) {
                if (!r.contains(k)) continue;
                auto v = bytes(r[k], std::string("$.recorded.") + k);
                if (!v) return v.error();
                (std::string(k) == "peak_allocated_bytes" ? rec.peakAllocatedBytes : rec.peakReservedBytes) =
                    *v;
            }
            for (const char* k : {"segment_allocs", "segment_frees"}) {
                if (!r.contains(k)) continue;
                auto v = bytes(r[k], std::string("$.recorded.") + k);
                if (!v) return v.error();
                (std::string(k) == "segment_allocs" ? rec.segmentAllocs : rec.segmentFrees) =
                    static_cast<std::int64_t>(*v);
            }
            if (r.contains("segments")) {
                if (!r["segments"].is_array()) return fail("$.recorded.segments", "expected an array");
                std::vector<std::uint64_t> sizes;
                for (std::size_t i = 0; i < r["segments"].size(); ++i) {
                    const json& s = r["segments"][i];
                    const std::string at = "$.recorded.segments[" + std::to_string(i) + "]";
                    if (!s.is_object() || !s.contains("size")) return fail(at, "expected {\"size\": bytes}");
                    auto v = bytes(s["size"], at + ".size");
                    if (!v) return v.error();
                    sizes.push_back(*v);
                }
                rec.segmentSizes = std::move(sizes);
            }
            t.recorded = rec;
        }
        return t;
    }

private:
    std::string m_source;
    Error fail(const std::string& path, const std::string& what) const {
        return makeError(m_source + ": " + path + ": " + what);
    }
    Result<std::uint64_t> bytes(const json& j, const std::string& path) const {
        if (j.is_number_unsigned()) return j.get<std::uint64_t>();
        if (j.is_number_integer() && j.get<std::int64_t>() >= 0)
            return static_cast<std::uint64_t>(j.get<std::int64_t>());
        return fail(path, "expected a non-negative integer, got " + jsontext::describe(j));
    }
};
} // namespace

Result<AllocatorTrace> parseAllocatorTrace(const std::string& text, const std::string& source) {
    return jsontext::parseFileText<AllocatorTrace>(
        text, source, kMaxTraceFileBytes, "an allocator trace",
        [&](const json& root) { return Reader(source).trace(root); });
}

Result<AllocatorTrace> loadAllocatorTrace(const std::string& path) {
    auto text = readBoundedFile(path, kMaxTraceFileBytes, "an allocator trace");
    if (!text) return text.error();
    return parseAllocatorTrace(*text, path);
}

std::string allocatorTraceJson(const AllocatorTrace& t) {
    // Written by hand, one event per line: a step has tens of thousands of events.
    std::string out = "{\n  \"format\": \"batchfit-allocator-trace\",\n  \"version\": 1,\n";
    if (t.deviceTotalBytes) out += "  \"device_total_bytes\": " + std::to_string(*t.deviceTotalBytes) + ",\n";
    if (t.allocConf) out += "  \"alloc_conf\": " + json(*t.allocConf).dump() + ",\n";
    out += "  \"events\": [";
    for (std::size_t i = 0; i < t.events.size(); ++i) {
        const auto& e = t.events[i];
        out += i ? ",\n    " : "\n    ";
        switch (e.kind) {
        case AllocatorEvent::Kind::Alloc:
            out += "{\"op\": \"alloc\", \"id\": " + std::to_string(e.id) +
                   ", \"size\": " + std::to_string(e.size);
            if (e.stream) out += ", \"stream\": " + std::to_string(e.stream);
            if (e.tag >= 0 && static_cast<std::size_t>(e.tag) < t.tagNames.size())
                out += ", \"tag\": " + json(t.tagNames[static_cast<std::size_t>(e.tag)]).dump();
            if (e.elastic) out += ", \"elastic\": true";
            out += "}";
            break;
        case AllocatorEvent::Kind::Free:
            out += "{\"op\": \"free\", \"id\": " + std::to_string(e.id) + "}";
            break;
        case AllocatorEvent::Kind::EmptyCache:
            out += "{\"op\": \"empty_cache\"}";
            break;
        }
    }
    out += t.events.empty() ? "]\n}\n" : "\n  ]\n}\n";
    return out;
}

} // namespace batchfit
