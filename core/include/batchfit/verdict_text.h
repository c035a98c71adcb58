#pragma once
// The verdict in words: one wording and one denominator (the usable memory) for the GUI, the CLI and reports.
#include "batchfit/estimate.h"

#include <cstdint>
#include <string>

namespace batchfit {

/// The figures every front end puts in its verdict, already rounded the way they are shown.
struct VerdictFigures {
    double requiredGib = 0; ///< what the GPU shows at the peak
    double usableGib = 0;   ///< capacity minus the safety margin: the denominator of the verdict
    double capacityGib = 0;
    double shortGib = 0;     ///< how much is missing (0 when it fits)
    int percentOfUsable = 0; ///< required / usable, rounded half up
};

/// The decision in the words every surface uses: "fits", "fits with cache flushes" (PyTorch frees its cached
/// blocks and retries a cudaMalloc that fails; no OOM, slower steps) or "out of memory".
std::string fitLabel(bool fits, bool cacheReleased);
inline std::string fitLabel(const FitDecision& d) {
    return fitLabel(d.fits, d.cacheReleased);
}

/// Why a step fits only with cache flushes, for a step that reserves `largeGpuBytes` on a GPU large enough:
/// "on a GPU large enough it would reserve 24.09 GiB; on this one PyTorch frees its cached blocks when a
/// cudaMalloc fails and retries (num_alloc_retries > 0: slower steps, each retry synchronizes the GPU)".
std::string cacheFlushNote(std::uint64_t largeGpuBytes);

/// Figures of `v` for a step that needs `requiredBytes`.
VerdictFigures verdictFigures(const Verdict& v, std::uint64_t requiredBytes);

/// "fits: 6.25 of 22.79 GiB usable (27%)", "fits with cache flushes: 22.55 of 22.79 GiB usable (99%)" or
/// "out of memory by 243.21 GiB": GiB with two decimals, as every
/// byte figure is shown. The GUI's verdict line is this (translatable, same pattern); its budget bar shows
/// the rest.
std::string verdictHeadline(const Verdict& v, std::uint64_t requiredBytes);

/// The headline, and when it does not fit what it needs: "out of memory by 243.21 GiB: needs 266.02 of 22.79
/// GiB usable" (the CLI's verdict).
std::string verdictSentence(const Verdict& v, std::uint64_t requiredBytes);

/// For bitsandbytes' paged optimizers (Estimate::pagedStateBytes > 0): whether their managed memory fits
/// beside the peak, e.g. "plus 0.10 GiB of paged optimizer states (CUDA managed memory, outside PyTorch's
/// counters): they fit beside the peak (6.35 of 22.79 GiB usable)" or "... : with them the step needs 24.1
/// of 22.79 GiB usable, so the driver pages them to host memory (slower steps, not an out-of-memory error)".
/// Empty without paged states.
std::string pagedNote(const Verdict& v, const Estimate& e);

/// The memory outside PyTorch's allocator, part by part, in MiB: "CUDA context 450 MiB + cuBLAS kernels 64 MiB
/// + cuDNN 256 MiB", or "measured by the user (--context-mib)".
std::string nonTorchText(const NonTorchMemory& m);

} // namespace batchfit
