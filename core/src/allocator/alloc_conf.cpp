// PYTORCH_CUDA_ALLOC_CONF parsing, following c10/cuda/CUDAAllocatorConfig.cpp (2.1-2.8: lexArgs, parseArgs,
// parseMaxSplitSize, parseRoundUpPower2Divisions, parseGarbageCollectionThreshold, parseExpandableSegments).
#include "batchfit/allocator_config.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <locale>
#include <optional>
#include <sstream>
#include <vector>

namespace batchfit {

namespace {
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
}

namespace {

// lexArgs: ',', ':', '[' and ']' are tokens of their own; spaces are dropped.
std::vector<std::string> lex(std::string_view text) {
    std::vector<std::string> out;
    std::string cur;
    auto flush = [&] {
        if (!cur.empty()) out.push_back(cur);
        cur.clear();
    };
    for (char ch : text) {
        if (ch == ',' || ch == ':' || ch == '[' || ch == ']') {
            flush();
            out.emplace_back(1, ch);
        } else if (ch != ' ' && ch != '\t' && ch != '\n') {
            cur += ch;
        }
    }
    flush();
    return out;
}

Error confError(const std::string& what) {
    return makeError("PYTORCH_CUDA_ALLOC_CONF: " + what);
}

std::optional<std::uint64_t> unsignedValue(const std::string& s) {
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
    return v;
}

std::optional<bool> boolValue(const std::string& s) {
    if (s == "True" || s == "true" || s == "1") return true;
    if (s == "False" || s == "false" || s == "0") return false;
    return std::nullopt;
}

class Parser {
public:
    explicit Parser(std::vector<std::string> t) : m_t(std::move(t)) {}

    Result<AllocatorConfig> run() {
        AllocatorConfig c;
        while (m_i < m_t.size()) {
            const std::string key = m_t[m_i++];
            if (key == ",") continue;
            if (!take(":")) return confError("expected ':' after option '" + key + "'");
            Status st = option(key, c);
            if (!st) return st.error();
            if (m_i < m_t.size() && m_t[m_i] != ",")
                return confError("expected ',' after the value of '" + key + "', got '" + m_t[m_i] + "'");
        }
        return c;
    }

private:
    std::vector<std::string> m_t;
    std::size_t m_i = 0;

    bool take(const char* tok) {
        if (m_i < m_t.size() && m_t[m_i] == tok) {
            ++m_i;
            return true;
        }
        return false;
    }
    std::optional<std::string> value() {
        if (m_i >= m_t.size()) return std::nullopt;
        const std::string& v = m_t[m_i];
        if (v == "," || v == ":" || v == "[" || v == "]") return std::nullopt;
        ++m_i;
        return v;
    }

    Status option(const std::string& key, AllocatorConfig& c) {
        if (key == "max_split_size_mb") return megabytes(key, c.maxSplitSize, true);
        if (key == "max_non_split_rounding_mb") return megabytes(key, c.maxNonSplitRounding, false);
        if (key == "garbage_collection_threshold") {
            auto v = value();
            double d = 0;
            if (!v || !parseDouble(*v, d)) return confError("garbage_collection_threshold expects a number");
            if (!(d > 0)) return confError("garbage_collection_threshold too small, set it 0.0~1.0");
            if (!(d < 1)) return confError("garbage_collection_threshold too big, set it 0.0~1.0");
            c.garbageCollectionThreshold = d;
            return Ok{};
        }
        if (key == "roundup_power2_divisions") return divisions(c);
        if (key == "expandable_segments") {
            auto v = value();
            auto b = v ? boolValue(*v) : std::nullopt;
            if (!b) return confError("Expected a single True/False argument for expandable_segments");
            c.expandableSegments = *b;
            return Ok{};
        }
        if (key == "release_lock_on_cudamalloc" || key == "pinned_use_cuda_host_register" ||
            key == "pinned_use_background_threads") {
            auto v = value();
            if (!v || !boolValue(*v)) return confError("Expected a single True/False argument for " + key);
            return Ok{}; // no effect on one process's device memory
        }
        if (key == "pinned_num_register_threads") {
            auto v = value();
            if (!v || !unsignedValue(*v)) return confError(key + " expects a number of threads");
            return Ok{};
        }
        if (key == "backend") {
            auto v = value();
            if (v && *v == "native") return Ok{};
            if (v && *v == "cudaMallocAsync")
                return confError("backend:cudaMallocAsync is a different allocator (CUDA's own pools), which "
                                 "BatchFit does not simulate; use backend:native");
            return confError("backend expects native or cudaMallocAsync");
        }
        return confError(
            "Unrecognized CachingAllocator option: " + key +
            " (expected max_split_size_mb, roundup_power2_divisions, garbage_collection_threshold, "
            "expandable_segments, max_non_split_rounding_mb, release_lock_on_cudamalloc, "
            "pinned_use_cuda_host_register, pinned_num_register_threads or backend)");
    }

    static bool parseDouble(const std::string& s, double& d) {
        std::istringstream is(s);
        is.imbue(std::locale::classic());
        is >> d;
        return !is.fail() && is.eof() && std::isfinite(d);
    }

    Status megabytes(const std::string& key, std::uint64_t& out, bool splitMinimum) {
        auto v = value();
        auto n = v ? unsignedValue(*v) : std::nullopt;
        if (!n) return confError(key + " expects a whole number of MiB");
        // parseMaxSplitSize: "CachingAllocator option max_split_size_mb too small, must be > 20".
        if (splitMinimum && *n <= 20) return confError("max_split_size_mb too small, must be > 20");
        const std::uint64_t cap = std::numeric_limits<std::uint64_t>::max() / kMiB;
        out = std::min(*n, cap) * kMiB;
        return Ok{};
    }

    Status divisions(AllocatorConfig& c) {
        auto isPow2OrZero = [](std::uint64_t v) { return v == 0 || std::has_single_bit(v); };
        if (!take("[")) {
            auto v = value();
            auto n = v ? unsignedValue(*v) : std::nullopt;
            if (!n || *n > (1u << 30))
                return confError("roundup_power2_divisions expects a number or a list");
            if (!isPow2OrZero(*n)) return confError("For roundups, the divisions has to be power of 2 or 0");
            c.roundupDivisions.fill(static_cast<std::uint32_t>(*n));
            return Ok{};
        }
        bool first = true;
        std::size_t last = 0;
        while (true) {
            auto k = value();
            if (!k || !take(":"))
                return confError("roundup_power2_divisions: expected [size_mb:divisions, ...]");
            auto d = value();
            auto dv = d ? unsignedValue(*d) : std::nullopt;
            if (!dv || *dv > (1u << 30) || !isPow2OrZero(*dv))
                return confError("For roundups, the divisions has to be power of 2 or 0");
            const auto div = static_cast<std::uint32_t>(*dv);
            if (*k == ">") {
                // 2.1-2.8: filled from the last listed interval, inclusive (it is overwritten).
                for (std::size_t i = last; i < c.roundupDivisions.size(); ++i) c.roundupDivisions[i] = div;
            } else {
                auto mb = unsignedValue(*k);
                if (!mb || *mb == 0 || !std::has_single_bit(*mb))
                    return confError("For roundups, the intervals have to be power of 2, got '" + *k + "'");
                std::size_t index = static_cast<std::size_t>(std::bit_width(*mb) - 1);
                index = std::min<std::size_t>(index, c.roundupDivisions.size() - 1);
                if (first) {
                    for (std::size_t i = 0; i < index; ++i) c.roundupDivisions[i] = div;
                    first = false;
                }
                c.roundupDivisions[index] = div;
                last = index;
            }
            if (take("]")) return Ok{};
            if (!take(",")) return confError("roundup_power2_divisions: expected ',' or ']'");
        }
    }
};

std::string mb(std::uint64_t bytes) {
    return std::to_string(bytes / kMiB);
}

} // namespace

Result<AllocatorConfig> parseAllocConf(std::string_view text) {
    return Parser(lex(text)).run();
}

std::string allocConfText(const AllocatorConfig& c) {
    const AllocatorConfig d;
    std::vector<std::string> parts;
    if (c.expandableSegments) parts.push_back("expandable_segments:True");
    if (c.maxSplitSize != d.maxSplitSize) parts.push_back("max_split_size_mb:" + mb(c.maxSplitSize));
    if (c.roundupDivisions != d.roundupDivisions) {
        std::string s = "roundup_power2_divisions:[";
        for (std::size_t i = 0; i < c.roundupDivisions.size(); ++i) {
            if (i) s += ",";
            s += std::to_string(std::uint64_t{1} << i) + ":" + std::to_string(c.roundupDivisions[i]);
        }
        parts.push_back(s + "]");
    }
    if (c.garbageCollectionThreshold != d.garbageCollectionThreshold) {
        std::ostringstream os;
        os.imbue(std::locale::classic());
        os.precision(17);
        os << c.garbageCollectionThreshold;
        parts.push_back("garbage_collection_threshold:" + os.str());
    }
    if (c.maxNonSplitRounding != d.maxNonSplitRounding)
        parts.push_back("max_non_split_rounding_mb:" + mb(c.maxNonSplitRounding));
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : ",") + p;
    return out;
}

} // namespace batchfit
