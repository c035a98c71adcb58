#include "batchfit/fit_map.h"

#include "batchfit/checked.h"
#include "batchfit/estimator.h"

#include <algorithm>
#include <array>
#include <string>

namespace batchfit {
namespace {

std::string join(const std::string& parent, const std::string& name) {
    if (parent.empty()) return name;
    if (name.empty()) return parent;
    return parent + "." + name;
}

/// Calls f(layer, path) for every op layer, blocks' shortcut and after-merge layers included.
template <class F> void forEachOp(const std::vector<Layer>& layers, const std::string& parent, F&& f) {
    for (const Layer& l : layers) {
        const std::string path = join(parent, l.name);
        if (!l.isBlock()) {
            f(l, path);
            continue;
        }
        forEachOp(l.layers, path, f);
        forEachOp(l.shortcutLayers, path, f);
        forEachOp(l.after, path, f);
    }
}

/// Shape-like attributes a model file may pin to one sequence length.
constexpr std::array<const char*, 5> kShapeKeys{"shape", "sizes", "mask_shape", "buffer_shape",
                                                "output_shape"};

std::optional<std::string> pinnedAttribute(const Layer& l, std::int64_t seq) {
    for (const char* key : kShapeKeys) {
        if (!l.attrs.has(key)) continue;
        const auto list = l.attrs.getInts(key, 0);
        if (list && std::find(list->begin(), list->end(), seq) != list->end()) return std::string(key);
    }
    if (l.attrs.getInt("end") == seq) return std::string("end");
    return std::nullopt;
}

/// The powers of two 1, 2, 4, ... up to twice `largest` (at least 1..16), at most kMaxFitMapColumns.
std::vector<std::int64_t> heatColumns(std::int64_t largest) {
    std::vector<std::int64_t> cols;
    const std::int64_t top = std::max<std::int64_t>(16, largest > kMaxBatch / 2 ? kMaxBatch : 2 * largest);
    for (std::int64_t b = 1; b <= top && cols.size() < kMaxFitMapColumns; b *= 2) cols.push_back(b);
    return cols;
}

FitMapCell cellAt(const Estimator& est, std::int64_t batch, std::uint64_t capacity) {
    FitMapCell cell;
    cell.batch = batch;
    auto fit = est.fitAt(batch, capacity); // the verdict's decision
    if (!fit) return cell;                 // too large to count: does not fit
    const std::uint64_t usable = est.usableBytes(capacity);
    cell.requiredBytes = fit->requiredBytes;
    cell.fits = fit->fits;
    cell.cacheReleased = fit->cacheReleased;
    cell.usedFraction = usable ? static_cast<double>(fit->requiredBytes) / static_cast<double>(usable) : 0.0;
    return cell;
}

} // namespace

Result<std::vector<std::int64_t>> fitMapSequences(const FitMapRange& r) {
    const std::string range = std::to_string(r.from) + ".." + std::to_string(r.to);
    if (r.from < 1 || r.to > kMaxFitMapSequence)
        return makeError("sequence lengths " + range + " are out of range 1.." +
                         std::to_string(kMaxFitMapSequence));
    if (r.to < r.from) return makeError("sequence lengths " + range + ": the last is below the first");
    if (r.step < 0) return makeError("sequence step " + std::to_string(r.step) + " must be positive");
    std::vector<std::int64_t> seqs;
    for (std::int64_t s = r.from; s <= r.to; s = r.step > 0 ? s + r.step : s * 2) {
        if (seqs.size() == kMaxFitMapRows)
            return makeError("sequence lengths " + range +
                             (r.step > 0 ? " step " + std::to_string(r.step) : "") + " make more than " +
                             std::to_string(kMaxFitMapRows) +
                             " points: use a larger step or a shorter range");
        seqs.push_back(s);
    }
    return seqs;
}

Result<std::int64_t> modelSequenceLength(const Model& model) {
    const bool ids = model.inputDtype == DType::Int64 || model.inputDtype == DType::Int32;
    if (model.inputShape.size() != 1 || !ids)
        return makeError(model.name + ": the input is " + shapeToString(model.inputShape) + " " +
                         std::string(dtypeName(model.inputDtype)) +
                         ", not a token sequence ([seq] int64 ids): the sequence length is not a batch axis "
                         "of this model");
    return model.inputShape[0];
}

std::optional<std::int64_t> maxSequenceLength(const Model& model) {
    std::optional<std::int64_t> limit;
    auto bound = [&](std::optional<std::int64_t> v) {
        if (v && *v > 0) limit = limit ? std::min(*limit, *v) : *v;
    };
    forEachOp(model.layers, "", [&](const Layer& l, const std::string&) {
        if (l.op == "embedding" && l.attrs.getString("indices") == "positions")
            bound(l.attrs.getInt("num_embeddings"));
        bound(l.attrs.getInt("max_positions"));
    });
    return limit;
}

Result<Model> withSequenceLength(const Model& model, std::int64_t seq) {
    auto current = modelSequenceLength(model);
    if (!current) return current.error();
    if (seq < 1 || seq > kMaxFitMapSequence)
        return makeError("sequence length " + std::to_string(seq) + " is out of range 1.." +
                         std::to_string(kMaxFitMapSequence));
    std::optional<Error> refused;
    forEachOp(model.layers, "", [&](const Layer& l, const std::string& path) {
        if (refused) return;
        const bool positions = l.op == "embedding" && l.attrs.getString("indices") == "positions";
        const auto table = positions ? l.attrs.getInt("num_embeddings") : l.attrs.getInt("max_positions");
        if (table && seq > *table) {
            refused = makeError(model.name + ": sequence length " + std::to_string(seq) + " exceeds the " +
                                std::to_string(*table) + " positions of layer '" + path + "'");
            return;
        }
        if (seq == *current) return;
        if (auto key = pinnedAttribute(l, *current))
            refused = makeError(model.name + ": layer '" + path + "' has its '" + *key +
                                "' fixed to the sequence length " + std::to_string(*current) +
                                ": import the model again at each length (batchfit-cli fit-map --hf-config)");
    });
    if (refused) return *refused;
    Model m = model;
    m.inputShape = {seq};
    return m;
}

namespace {

/// The names of the top-level op layers after the model's last block (none when it has no block).
std::vector<std::string> headLayers(const Model& model) {
    std::vector<std::string> out;
    for (auto it = model.layers.rbegin(); it != model.layers.rend(); ++it) {
        if (it->isBlock()) return out;
        out.push_back(it->name);
    }
    return {};
}

bool inHead(const std::string& opPath, const std::vector<std::string>& head) {
    const std::string top = opPath.substr(0, opPath.find_first_of(".["));
    return !opPath.empty() && std::find(head.begin(), head.end(), top) != head.end();
}

} // namespace

Result<FitMap> computeFitMap(const SequenceModelSource& source, const TrainingConfig& config,
                             const GpuSpec& gpu, const FitMapOptions& options) {
    auto seqs = fitMapSequences(options.range);
    if (!seqs) return seqs.error();
    FitMap map;
    map.accumulationSteps = config.accumulationSteps;
    // Each row is a run of batches of exactly its length: an earlier-batch history does not apply to it.
    TrainingConfig rowConfig = config;
    rowConfig.replaySequences.clear();
    std::vector<Estimator> estimators;
    estimators.reserve(seqs->size());
    for (const std::int64_t seq : *seqs) {
        if (options.cancelled && options.cancelled()) return makeError("fit map cancelled");
        auto model = source(seq);
        if (!model) return model.error();
        auto own = modelSequenceLength(*model);
        if (!own) return own.error();
        if (*own != seq)
            return makeError(model->name + ": asked for sequence length " + std::to_string(seq) +
                             ", the model has " + std::to_string(*own));
        auto est = Estimator::create(*model, rowConfig, gpu);
        if (!est) return makeError("sequence length " + std::to_string(seq) + ": " + est.error().message);
        map.usableBytes = est->usableBytes(gpu.memoryBytes);
        FitMapRow row;
        row.sequence = seq;
        row.largest = est->maxBatch(gpu.memoryBytes);
        if (row.largest.largest > 0) {
            auto tokens =
                checkedMul(static_cast<std::uint64_t>(row.largest.largest), static_cast<std::uint64_t>(seq));
            if (tokens)
                tokens = checkedMul(
                    *tokens, static_cast<std::uint64_t>(std::max<std::int64_t>(1, config.accumulationSteps)));
            if (!tokens || *tokens > kMaxBytes)
                return makeError("sequence length " + std::to_string(seq) + ": the tokens per step overflow");
            row.tokensPerStep = *tokens;
        } else if (auto one = est->requiredBytes(1)) {
            row.requiredAtOne = *one;
        }
        // One estimate at the largest batch (batch 1 when none fits): its peak and where it happens.
        if (auto at = est->estimate(std::max<std::int64_t>(1, row.largest.largest))) {
            if (row.largest.largest > 0) row.peakAllocatedAtLargest = at->peakAllocatedBytes;
            row.peakLabel = at->peakLabel;
            row.peakInHead = inHead(at->peakOpPath, headLayers(*model));
        }
        map.rows.push_back(std::move(row));
        estimators.push_back(std::move(*est));
    }
    map.batches = options.batchColumns;
    if (map.batches.empty() && options.heatMapColumns) {
        std::int64_t largest = 0;
        for (const auto& r : map.rows) largest = std::max(largest, r.largest.largest);
        map.batches = heatColumns(largest);
    }
    if (map.batches.size() > kMaxFitMapColumns)
        return makeError("a fit map has at most " + std::to_string(kMaxFitMapColumns) + " batch columns");
    for (const std::int64_t b : map.batches)
        if (b < 1 || b > kMaxBatch)
            return makeError("batch " + std::to_string(b) + " is out of range 1.." +
                             std::to_string(kMaxBatch));
    for (std::size_t i = 0; i < map.rows.size(); ++i) {
        if (options.cancelled && options.cancelled()) return makeError("fit map cancelled");
        for (const std::int64_t b : map.batches)
            map.rows[i].cells.push_back(cellAt(estimators[i], b, gpu.memoryBytes));
    }
    return map;
}

Result<FitMap> computeFitMap(const Model& model, const TrainingConfig& config, const GpuSpec& gpu,
                             const FitMapOptions& options) {
    if (auto seq = modelSequenceLength(model); !seq) return seq.error();
    return computeFitMap([&model](std::int64_t seq) { return withSequenceLength(model, seq); }, config, gpu,
                         options);
}

FitMapRange suggestedFitMapRange(const Model& model) {
    auto own = modelSequenceLength(model);
    const std::int64_t current = std::clamp<std::int64_t>(own ? *own : 128, 1, kMaxFitMapSequence);
    const std::int64_t limit = std::min(maxSequenceLength(model).value_or(4 * current), kMaxFitMapSequence);
    std::int64_t top = 1;
    while (top * 2 <= limit) top *= 2;
    std::int64_t from = 1;
    while (from * 2 <= std::min<std::int64_t>(current, 128)) from *= 2;
    from = std::min(std::max(from, top >> 7), top);
    return FitMapRange{from, top, 0};
}

} // namespace batchfit
