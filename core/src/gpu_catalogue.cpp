#include "batchfit/gpu.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string_view>

namespace batchfit {

std::string_view embeddedResource(std::string_view name);

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

std::vector<GpuSpec> parseCatalogue() {
    std::vector<GpuSpec> out;
    const auto text = embeddedResource("gpus.json");
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.contains("gpus")) return out;
    for (const auto& g : j["gpus"]) {
        GpuSpec s;
        s.id = g.value("id", "");
        s.name = g.value("name", s.id);
        s.vendor = g.value("vendor", "");
        s.arch = g.value("arch", "");
        s.memoryBytes = g.value("memory_bytes", std::uint64_t{0});
        s.contextBytes = g.value("context_bytes", std::uint64_t{536870912});
        s.contextSource = g.value("context_source", "");
        s.source = g.value("source", "");
        s.cublasWorkspaceBytes = g.value("cublas_workspace_bytes", std::uint64_t{8519680});
        s.archSource = g.value("arch_source", "");
        s.family = g.value("family", "");
        s.bf16 = g.value("bf16", false);
        s.fp8 = g.value("fp8", false);
        s.nameZh = g.value("name_zh", "");
        s.noteZh = g.value("note_zh", "");
        if (!s.id.empty() && s.memoryBytes > 0) out.push_back(std::move(s));
    }
    return out;
}

} // namespace

const std::vector<std::string>& gpuFamilies() {
    static const std::vector<std::string> families = [] {
        std::vector<std::string> out;
        auto j = nlohmann::json::parse(embeddedResource("gpus.json"), nullptr, false);
        if (!j.is_discarded() && j.contains("family_order") && j["family_order"].is_array())
            for (const auto& f : j["family_order"])
                if (f.is_string()) out.push_back(f.get<std::string>());
        return out;
    }();
    return families;
}

const std::vector<GpuSpec>& gpuCatalogue() {
    static const std::vector<GpuSpec> catalogue = parseCatalogue();
    return catalogue;
}

Result<GpuSpec> findGpu(const std::string& id) {
    const std::string want = lower(id);
    for (const auto& g : gpuCatalogue())
        if (lower(g.id) == want) return g;
    std::string known;
    for (const auto& g : gpuCatalogue()) known += (known.empty() ? "" : ", ") + g.id;
    return makeError("unknown GPU '" + id + "' (known: " + known +
                     "; or give a capacity in GiB, e.g. 24GiB)");
}

GpuSpec customGpu(double gib) {
    GpuSpec s;
    s.id = "custom";
    s.vendor = "Custom";
    char buf[64];
    std::snprintf(buf, sizeof buf, "Custom %.4g GiB", gib);
    s.name = buf;
    const double bytes = gib * 1024.0 * 1024.0 * 1024.0;
    s.memoryBytes = bytes > 0 && bytes < 9.0e18 ? static_cast<std::uint64_t>(std::llround(bytes)) : 0;
    s.contextBytes = 536870912;
    s.contextSource =
        "a custom GPU: 512 MiB, above every measured lazy context up to Hopper (docs/memory-model.md 6.3)";
    s.source = "user supplied";
    return s;
}

GpuSpec customGpuOfBytes(std::uint64_t bytes) {
    GpuSpec s = customGpu(static_cast<double>(bytes) / double(1ull << 30));
    s.memoryBytes = bytes;
    return s;
}

} // namespace batchfit
