// Pipeline parallelism (Megatron-LM 1F1B, Narayanan et al. 2021, arXiv 2104.04473): P stages of the
// transformer layers (the run of repeated blocks), the embedding on the first stage and the final norm, the
// head and the loss on the last. Stage s keeps the activations of min(M, P - s) micro-batches in flight
// (ParallelConfig::inFlight, the scheduler). BatchFit lowers the first stage (everything before the layers
// and ceil(L / P) of them) and the last (floor(L / P) layers and everything after them); the estimator
// reports the heavier. The last stage's input is the hidden state the previous stage sends: it requires a
// gradient, which the stage sends back. A head tied to the embedding has its own copy on the last stage
// (Megatron's word_embeddings_for_head, kept equal by an all-reduce of the gradients).
#include "graph/graph_builder.h"

namespace batchfit {

namespace {

bool isLayerBlock(const Layer& l) {
    return l.isBlock() && (l.repeat > 1 || l.firstIndex >= 0);
}

/// The transformer layers: top-level blocks [begin, end), from the first repeated block on while the blocks
/// are indexed (Hugging Face imports split runs of different layers into consecutive indexed blocks).
struct LayerRun {
    std::size_t begin = 0, end = 0;
    std::int64_t layers = 0;
};

Result<LayerRun> layerRun(const Model& model, std::int64_t pp) {
    LayerRun run;
    std::size_t i = 0;
    while (i < model.layers.size() && !(model.layers[i].isBlock() && model.layers[i].repeat > 1)) ++i;
    if (i == model.layers.size())
        return makeError(model.name + ": pipeline parallelism splits a repeated block (the transformer "
                                      "layers); this model has none");
    // an indexed block just before it (a dense first layer) belongs to the run too
    while (i > 0 && isLayerBlock(model.layers[i - 1])) --i;
    run.begin = i;
    for (run.end = i; run.end < model.layers.size() && isLayerBlock(model.layers[run.end]); ++run.end)
        run.layers += model.layers[run.end].repeat;
    if (pp > run.layers)
        return makeError(model.name + ": --pp " + std::to_string(pp) + " is more than the " +
                         std::to_string(run.layers) + " layers of " + model.layers[run.begin].name);
    return run;
}

/// Repetitions [from, from + count) of the run, as blocks that keep their global indices.
void takeLayers(const Model& model, const LayerRun& run, std::int64_t from, std::int64_t count,
                std::vector<Layer>& out) {
    std::int64_t at = 0;
    for (std::size_t i = run.begin; i < run.end; ++i) {
        const Layer& l = model.layers[i];
        const std::int64_t lo = std::max(from, at), hi = std::min(from + count, at + l.repeat);
        if (lo < hi) {
            Layer part = l;
            part.repeat = hi - lo;
            part.firstIndex = (l.firstIndex >= 0 ? l.firstIndex : 0) + (lo - at);
            part.checkpointUnit = l.checkpointUnit || l.repeat > 1; // still one unit per layer
            out.push_back(std::move(part));
        }
        at += l.repeat;
    }
}

/// The layer a tied_to path names: its first segment.
std::string firstSegment(const std::string& path) {
    return path.substr(0, path.find_first_of(".["));
}

void untie(std::vector<Layer>& layers, const std::vector<std::string>& gone) {
    for (Layer& l : layers) {
        if (l.isBlock()) {
            untie(l.layers, gone);
            untie(l.shortcutLayers, gone);
            untie(l.after, gone);
        } else if (auto t = l.attrs.getString("tied_to")) {
            for (const auto& g : gone)
                if (firstSegment(*t) == g) l.attrs.erase("tied_to");
        }
    }
}

std::string joined(const std::string& prefix, const std::string& seg) {
    if (prefix.empty()) return seg;
    if (seg.empty()) return prefix;
    return seg[0] == '[' ? prefix + seg : prefix + "." + seg;
}

/// Offers every op layer's path (as GraphBuilder names it) to the patterns; false past `budget` layers.
bool offerPaths(const std::vector<Layer>& layers, const std::string& prefix, FreezeRules& rules,
                std::uint64_t& budget) {
    for (const Layer& l : layers) {
        if (!l.isBlock()) {
            if (budget-- == 0) return false;
            rules.trains(joined(prefix, l.name), l.attrs.getString("module").value_or(""));
            continue;
        }
        const bool indexed = l.repeat > 1 || l.firstIndex >= 0;
        const std::int64_t first = l.firstIndex >= 0 ? l.firstIndex : 0;
        for (std::int64_t r = 0; r < l.repeat; ++r) {
            const std::string path =
                joined(prefix, l.name + (indexed ? "[" + std::to_string(first + r) + "]" : ""));
            if (!offerPaths(l.layers, path, rules, budget) ||
                !offerPaths(l.shortcutLayers, path, rules, budget) ||
                !offerPaths(l.after, path, rules, budget))
                return false;
        }
    }
    return true;
}

} // namespace

std::vector<std::string> GraphBuilder::unmatchedInWholeModel() const {
    FreezeRules rules(m_config.freeze, m_config.trainOnly);
    std::uint64_t budget = 50'000; // as many layers as a model may lower to; past that, no verdict
    if (!m_wholeModel || !offerPaths(m_wholeModel->layers, "", rules, budget)) return {};
    return rules.unmatched();
}

Result<Model> firstPipelineStage(const Model& model, std::int64_t pp) {
    auto run = layerRun(model, pp);
    if (!run) return run.error();
    Model stage = model;
    stage.layers.assign(model.layers.begin(), model.layers.begin() + static_cast<std::ptrdiff_t>(run->begin));
    takeLayers(model, *run, 0, (run->layers + pp - 1) / pp, stage.layers); // the first takes the remainder
    return stage; // the rest (final norm, head, loss) lives on later stages
}

Result<Model> pipelinePrefix(const Model& model, std::int64_t pp) {
    auto run = layerRun(model, pp);
    if (!run) return run.error();
    Model prefix = model;
    prefix.layers.assign(model.layers.begin(),
                         model.layers.begin() + static_cast<std::ptrdiff_t>(run->begin));
    return prefix;
}

Result<Model> lastPipelineStage(const Model& model, std::int64_t pp, const Shape& inputShape,
                                DType inputDtype) {
    auto run = layerRun(model, pp);
    if (!run) return run.error();
    Model stage = model;
    stage.inputShape = inputShape;
    stage.inputDtype = inputDtype;
    stage.layers.clear();
    const std::int64_t count = run->layers / pp;
    takeLayers(model, *run, run->layers - count, count, stage.layers);
    stage.layers.insert(stage.layers.end(), model.layers.begin() + static_cast<std::ptrdiff_t>(run->end),
                        model.layers.end());
    std::vector<std::string> gone;
    for (std::size_t i = 0; i < run->begin; ++i) gone.push_back(model.layers[i].name);
    untie(stage.layers, gone);
    return stage;
}

Result<Graph> buildLastPipelineStage(const Model& model, const TrainingConfig& config) {
    auto prefix = pipelinePrefix(model, config.parallel.pp);
    if (!prefix) return prefix.error();
    // Shapes only: what trains, LoRA and the pipeline do not change what the prefix sends.
    TrainingConfig shapes;
    shapes.precision = config.precision;
    shapes.quant = config.quant;
    shapes.torch = config.torch;
    shapes.gpuArch = config.gpuArch;
    shapes.parallel.gpus = shapes.parallel.tp = config.parallel.tp;
    GraphBuilder s(shapes);
    s.setPipelineStage(&model, false);
    auto in = s.outputInfo(*prefix);
    if (!in) return in.error();
    auto stage = lastPipelineStage(model, config.parallel.pp, in->shape, in->dtype);
    if (!stage) return stage.error();
    GraphBuilder b(config);
    b.setPipelineStage(&model, true);
    return b.build(*stage);
}

Result<TensorInfo> GraphBuilder::outputInfo(const Model& model) {
    const TensorInfo in = inputInfo(model);
    if (!in.bytes()) return makeError("input: shape " + shapeToString(model.inputShape) + " is too large");
    if (auto st = prepareTensorParallel(model); !st) return st.error();
    const int x = newTensor(in, -1, "input batch");
    Scope root{{}, x, nullptr};
    auto out = walkList(model.layers, x, root, "");
    if (!out) return out.error();
    return info(*out);
}

Result<int> GraphBuilder::newInputTensor(TensorInfo in) {
    const std::int64_t t = m_config.parallel.tp;
    if (m_receivesHidden && sequenceParallel()) { // Megatron sends the sequence-split hidden state
        if (in.shape.empty() || in.shape[0] % t)
            return makeError("--sequence-parallel: the sequence (dim 0 of " + shapeToString(in.shape) +
                             ") is not divisible by --tp " + std::to_string(t));
        in.shape[0] /= t;
    }
    const int x =
        newTensor(in, -1, m_receivesHidden ? "hidden state from the previous stage" : "input batch");
    m_graph.batchTensors.push_back(x);
    if (m_receivesHidden) {
        m_graph.tensors.back().requiresGrad = true; // its gradient goes back to the previous stage
        if (sequenceParallel()) m_spShards.insert(x);
    }
    return x;
}

} // namespace batchfit
