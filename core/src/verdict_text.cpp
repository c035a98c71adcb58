#include "batchfit/verdict_text.h"

#include <cmath>
#include <cstdio>

namespace batchfit {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
double gib(std::uint64_t bytes) {
    return static_cast<double>(bytes) / kGiB;
}
} // namespace

std::string fitLabel(bool fits, bool cacheReleased) {
    if (!fits) return "out of memory";
    return cacheReleased ? "fits with cache flushes" : "fits";
}

std::string cacheFlushNote(std::uint64_t largeGpuBytes) {
    char buf[320];
    std::snprintf(
        buf, sizeof buf,
        "on a GPU large enough it would reserve %.2f GiB; on this one PyTorch frees its cached blocks "
        "when a cudaMalloc fails and retries (num_alloc_retries > 0: slower steps, each retry "
        "synchronizes the GPU)",
        gib(largeGpuBytes));
    return buf;
}

VerdictFigures verdictFigures(const Verdict& v, std::uint64_t requiredBytes) {
    VerdictFigures f;
    // The verdict's own figure when it has one: held to the usable memory, the allocator may free its cache
    // and need less than the step reserves on a GPU large enough.
    f.requiredGib = gib(v.fits && v.requiredBytes ? v.requiredBytes : requiredBytes);
    f.usableGib = gib(v.usableBytes);
    f.capacityGib = gib(v.capacityBytes);
    f.shortGib = v.headroomBytes < 0 ? gib(static_cast<std::uint64_t>(-(v.headroomBytes + 1)) + 1) : 0.0;
    f.percentOfUsable =
        v.usableBytes ? static_cast<int>(std::floor(100.0 * f.requiredGib / f.usableGib + 0.5)) : 0;
    return f;
}

std::string verdictHeadline(const Verdict& v, std::uint64_t requiredBytes) {
    const VerdictFigures f = verdictFigures(v, requiredBytes);
    char buf[160];
    if (v.fits)
        std::snprintf(buf, sizeof buf, "%s: %.2f of %.2f GiB usable (%d%%)",
                      fitLabel(true, v.cacheReleased).c_str(), f.requiredGib, f.usableGib, f.percentOfUsable);
    else
        std::snprintf(buf, sizeof buf, "out of memory by %.2f GiB", f.shortGib);
    return buf;
}

std::string verdictSentence(const Verdict& v, std::uint64_t requiredBytes) {
    if (v.fits) return verdictHeadline(v, requiredBytes);
    const VerdictFigures f = verdictFigures(v, requiredBytes);
    char buf[120];
    std::snprintf(buf, sizeof buf, ": needs %.2f of %.2f GiB usable", f.requiredGib, f.usableGib);
    return verdictHeadline(v, requiredBytes) + buf;
}

std::string pagedNote(const Verdict& v, const Estimate& e) {
    if (e.pagedStateBytes == 0) return {};
    const std::uint64_t with = e.requiredBytes + e.pagedStateBytes;
    char buf[320];
    const int n = std::snprintf(buf, sizeof buf,
                                "plus %.2f GiB of paged optimizer states (CUDA managed memory, outside "
                                "PyTorch's counters): ",
                                gib(e.pagedStateBytes));
    if (with <= v.usableBytes)
        std::snprintf(buf + n, sizeof buf - static_cast<std::size_t>(n),
                      "they fit beside the peak (%.2f of %.2f GiB usable)", gib(with), gib(v.usableBytes));
    else
        std::snprintf(buf + n, sizeof buf - static_cast<std::size_t>(n),
                      "with them the step needs %.2f of %.2f GiB usable, so the driver pages them to host "
                      "memory (slower steps, not an out-of-memory error)",
                      gib(with), gib(v.usableBytes));
    return buf;
}

std::string nonTorchText(const NonTorchMemory& m) {
    auto mib = [](std::uint64_t b) { return std::to_string((b + (1u << 19)) >> 20) + " MiB"; };
    static constexpr const char* kNames[] = {"CUDA context", "cuBLAS kernels", "eager module loading",
                                             "cuDNN",        "NCCL",           "the colocated vLLM engine"};
    std::string s;
    for (const NonTorchPart& p : nonTorchParts(m)) {
        const bool measured = m.measured && p.kind == NonTorchPart::Kind::Context;
        s += (s.empty() ? "" : " + ") +
             std::string(measured ? "your measured figure (--context-mib),"
                                  : kNames[static_cast<int>(p.kind)]) +
             " " + mib(p.bytes);
        if (p.kind == NonTorchPart::Kind::Nccl)
            s += " (" + std::to_string(m.ncclCommunicators) + " communicator" +
                 (m.ncclCommunicators > 1 ? "s)" : ")");
    }
    return s;
}

} // namespace batchfit
