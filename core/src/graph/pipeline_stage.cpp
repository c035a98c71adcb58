// Pipeline parallelism (Megatron-LM 1F1B, Narayanan et al. 2021, arXiv 2104.04473): P stages of the
// transformer layers, the embedding on the first and the head and loss on the last. BatchFit simulates the
// first stage, the most loaded under 1F1B: it keeps the activations of min(M, P) micro-batches in flight
// (Scheduler: the in-flight activations), with the embedding and ceil(L / P) of the layers.
#include "graph/graph_builder.h"

namespace batchfit {

Result<Model> firstPipelineStage(const Model& model, std::int64_t pp) {
    Model stage = model;
    stage.layers.clear();
    for (const Layer& l : model.layers) {
        if (l.isBlock() && l.repeat > 1) {
            if (pp > l.repeat)
                return makeError(model.name + ": --pp " + std::to_string(pp) + " is more than the " +
                                 std::to_string(l.repeat) + " layers of " + l.name);
            Layer first = l;
            first.repeat = (l.repeat + pp - 1) / pp; // the first stage takes the remainder too
            stage.layers.push_back(first);
            return stage; // the rest (final norm, head, loss) lives on later stages
        }
        stage.layers.push_back(l);
    }
    return makeError(model.name + ": pipeline parallelism splits a repeated block (the transformer layers); "
                                  "this model has none");
}

} // namespace batchfit
