#pragma once
// Sequence length, the other batch axis: for a token-sequence model, the largest micro-batch that fits at
// each sequence length of a range, the tokens per optimizer step there and, for a heat map, batch x sequence
// cells.
#include "batchfit/estimate.h"
#include "batchfit/gpu.h"
#include "batchfit/model.h"
#include "batchfit/result.h"
#include "batchfit/training_config.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace batchfit {

inline constexpr std::size_t kMaxFitMapRows = 64;             ///< sequence lengths in one map
inline constexpr std::int64_t kMaxFitMapSequence = 1ll << 24; ///< longest sequence length accepted
inline constexpr std::size_t kMaxFitMapColumns = 24;          ///< batch columns of a heat map

/// Sequence lengths from..to (inclusive): with step 0, from, 2*from, 4*from, ... (powers of two when from is
/// one); otherwise from, from+step, ...
struct FitMapRange {
    std::int64_t from = 128;
    std::int64_t to = 4096;
    std::int64_t step = 0;
};

/// The lengths of `range`, or an error when it is empty, out of 1..kMaxFitMapSequence or longer than
/// kMaxFitMapRows points.
Result<std::vector<std::int64_t>> fitMapSequences(const FitMapRange& range);

/// The per-sample sequence length of a token-sequence model (input [seq], int64 or int32 ids), or an error
/// naming the input it has instead.
Result<std::int64_t> modelSequenceLength(const Model& model);

/// The longest sequence the layers accept (position-embedding tables, attention max_positions), when bounded.
std::optional<std::int64_t> maxSequenceLength(const Model& model);

/// The model with input [seq]. Refuses, naming the layer, lengths beyond maxSequenceLength() and layers whose
/// shape attributes (reshape "shape", "mask_shape", ...) hold the current sequence length: those need a new
/// import at each length (batchfit-cli fit-map --hf-config re-imports).
Result<Model> withSequenceLength(const Model& model, std::int64_t seq);

/// Builds the model at a sequence length (a re-import, or withSequenceLength).
using SequenceModelSource = std::function<Result<Model>(std::int64_t seq)>;

/// One heat-map cell: a batch at a row's sequence length.
struct FitMapCell {
    std::int64_t batch = 0;
    std::uint64_t requiredBytes = 0; ///< Estimator::fitAt()'s figure; 0 when too large to count (never fits)
    bool fits = false;               ///< Estimator::fitAt()'s decision
    bool cacheReleased = false;      ///< fits only with cache flushes
    double usedFraction = 0; ///< requiredBytes / usable bytes (> 1: does not fit; 0 when too large to count)
};

/// One sequence length.
struct FitMapRow {
    std::int64_t sequence = 0;
    MaxBatch largest;                         ///< the exact solver's largest micro-batch (0: not even 1)
    std::uint64_t tokensPerStep = 0;          ///< largest * sequence * accumulation steps
    std::uint64_t peakAllocatedAtLargest = 0; ///< torch.cuda.max_memory_allocated() at the largest batch
    std::uint64_t requiredAtOne =
        0;                         ///< when not even batch 1 fits: what batch 1 needs (0: too large to count)
    /// Where the step peaks at the largest batch (batch 1 when none fits): Estimate::peakLabel, and whether
    /// that op is one of the model's last layers after its last block (a language model's final norm, head
    /// and loss): at long context the logits and the loss take the peak over from the layers.
    std::string peakLabel;
    bool peakInHead = false;
    std::vector<FitMapCell> cells; ///< one per FitMap::batches
};

struct FitMap {
    std::vector<FitMapRow> rows;       ///< in the order of fitMapSequences()
    std::vector<std::int64_t> batches; ///< the heat map's columns (empty when none were asked for)
    std::uint64_t usableBytes = 0;     ///< the GPU's capacity minus the margin
    std::int64_t accumulationSteps = 1;
};

struct FitMapOptions {
    FitMapRange range;
    /// Heat-map columns: these batches, or with heatMapColumns the powers of two up to twice the largest
    /// batch of any row (at most kMaxFitMapColumns). Neither: no cells.
    std::vector<std::int64_t> batchColumns;
    bool heatMapColumns = false;
    /// Polled between sequence lengths; true abandons the map with the Error "fit map cancelled".
    std::function<bool()> cancelled = {};
};

/// The map for the models `source` builds, each lowered with `config` on `gpu` (Estimator::create), less its
/// replaySequences: each row is a run of batches of exactly its length.
Result<FitMap> computeFitMap(const SequenceModelSource& source, const TrainingConfig& config,
                             const GpuSpec& gpu, const FitMapOptions& options);
/// The same for `model` reshaped with withSequenceLength (refused unless it is a token-sequence model).
Result<FitMap> computeFitMap(const Model& model, const TrainingConfig& config, const GpuSpec& gpu,
                             const FitMapOptions& options);

/// A range for a heat map of `model`: powers of two from 128 (or the model's length when shorter) up to
/// maxSequenceLength(), or four times the model's length when unbounded, at most 8 rows ending at the top.
FitMapRange suggestedFitMapRange(const Model& model);

} // namespace batchfit
