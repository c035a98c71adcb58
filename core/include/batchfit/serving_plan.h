#pragma once
// Serving's answers beyond one set-up: the concurrency x context fit map and the what-if levers (fp8 KV
// cache, a lower max_model_len, more tensor parallelism, 4-bit weights, a raised utilization).
#include "batchfit/allocator_replay.h"
#include "batchfit/serving.h"

#include <string>
#include <vector>

namespace batchfit {

/// Whether each number of sequences fits at each context length.
struct ServingMap {
    std::vector<std::int64_t> contexts;  ///< rows
    std::vector<std::int64_t> sequences; ///< columns
    std::vector<ServingCell> cells;      ///< row-major: contexts.size() x sequences.size()
    const ServingCell& at(std::size_t row, std::size_t column) const {
        return cells[row * sequences.size() + column];
    }
};

/// At most this many rows and columns.
inline constexpr std::size_t kMaxServingMapAxis = 256;

/// Powers of two from 1 up to `top` (at least one value; `top` itself last when not a power of two).
std::vector<std::int64_t> servingAxis(std::int64_t top);
/// The map of `e` (an estimate that starts) over `contexts` x `sequences`; an error when an axis is empty,
/// longer than kMaxServingMapAxis or holds a value below 1.
Result<ServingMap> servingFitMap(const ServingModel& model, const ServingEstimate& e,
                                 const std::vector<std::int64_t>& contexts,
                                 const std::vector<std::int64_t>& sequences);

/// One change to the set-up, re-estimated on its own.
struct ServingLever {
    std::string id;    ///< "kv-fp8", "max-model-len", "tp", "awq", "utilization"
    std::string title; ///< "fp8 KV cache", "max_model_len 16384", "tensor parallel 2", ...
    ServingConfig config;
    std::int64_t tp = 1, pp = 1;
    ServingEstimate estimate;
    std::int64_t sequencesAtContext = 0; ///< maxConcurrentSequences at the context asked about
};

/// The levers that apply to this set-up (those already taken are left out), each with its answer at
/// `context`, the most sequences first.
std::vector<ServingLever> servingLevers(const ServingModel& model, const ServingConfig& config,
                                        const GpuSpec& gpu, std::int64_t tp, std::int64_t pp,
                                        std::int64_t context);

/// Decoding steps a generate() replay takes at most.
inline constexpr std::int64_t kMaxReplayedSteps = 65536;

/// generate() with DynamicCache through the caching allocator (ReplayResult): `sequences` prompts of `prompt`
/// tokens, then `newTokens` tokens, each a torch.cat per layer. cacheBytes is what the cache holds at the
/// end; the replay's reserve shows the churn beyond it.
struct HfGenerateReplay {
    ReplayResult result;
    std::uint64_t cacheBytes = 0;
    std::size_t events = 0;
};
Result<HfGenerateReplay> replayHfGenerate(const ServingModel& model, const ServingEstimate& e,
                                          std::int64_t sequences, std::int64_t prompt,
                                          std::int64_t newTokens);

/// The JSON `batchfit-cli serve --json` prints (docs/estimate-fields.md, "serve"), with the levers.
std::string servingJson(const ServingModel& model, const ServingEstimate& e, const GpuSpec& gpu,
                        std::int64_t context, std::int64_t sequences, const std::vector<ServingLever>& levers,
                        const HfGenerateReplay* replay = nullptr, std::int64_t replayPrompt = 0);

} // namespace batchfit
