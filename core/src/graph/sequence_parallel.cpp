// Megatron-LM sequence parallelism (Korthikanti et al. 2022, arXiv 2205.05198, section 4.2.2; Megatron-LM
// megatron/core/tensor_parallel/layers.py and mappings.py): with --tp t, what tensor parallelism leaves whole
// on every rank (the LayerNorms, the dropouts, the residual stream) is split along the sequence, s/t tokens
// per rank. Dim 0 of the per-sample shape is the sequence.
// - Entering the transformer layers, the hidden state is scattered (the embedding's
//   scatter_to_sequence_parallel_region, cloned so that the whole one is freed).
// - A column-parallel linear (and the attention's q, k, v) all-gathers its input inside
//   LinearWithGradAccumulationAndAsyncCommunication, into get_global_memory_buffer(): one "mpu" buffer per
//   dtype, as large as the largest gather, made once and kept. The linear saves its *sharded* input
//   (ctx.save_for_backward(input, weight)) and all-gathers it again in the backward, into the same buffer;
//   the paper's 4.2.2 counts this too ("we store the Y_i^s part ... and perform an extra all-gather").
// - Attention's output projection and the MLP's row-parallel linear reduce-scatter their output instead of
//   all-reducing it.
// - Outside the layers, the final norm stays split and the output layer gathers its input as any
//   column-parallel linear; any other layer that reads a split tensor gets it all-gathered first
//   (gather_from_sequence_parallel_region).
// Everything else inside the layers is taken to work token by token.
#include "graph/graph_builder.h"

#include <algorithm>

namespace batchfit {

namespace {

/// Layers outside the transformer layers that keep a split sequence split (they work token by token).
bool tokenWise(const std::string& op) {
    static const char* const kOps[] = {"layernorm", "rmsnorm", "dropout", "scale", "cast",
                                       "identity",  "gelu",    "relu",    "silu",  "tanh",
                                       "sigmoid",   "add",     "mul"};
    return std::any_of(std::begin(kOps), std::end(kOps), [&](const char* o) { return op == o; });
}

bool isCollective(const std::string& type) {
    return type == "sp_split" || type == "sp_gather" || type == "sp_gather_buffer";
}

} // namespace

Result<int> GraphBuilder::scatterSequence(int x, const std::string& path) {
    Attributes a;
    a.set("tp", m_config.parallel.tp);
    auto out = addOp("sp_split", path + ".sp_scatter", a, {x});
    if (!out) return out.error();
    m_spShards.insert(*out);
    return *out;
}

Result<int> GraphBuilder::gatherSequence(int shard, const std::string& path, bool forLinear) {
    Attributes a;
    a.set("tp", m_config.parallel.tp);
    if (!forLinear) return addOp("sp_gather", path + ".sp_all_gather", a, {shard});
    if (auto it = m_spGathered.find(shard); it != m_spGathered.end()) return it->second;
    // The buffer: flat, as many elements per sample as the largest gather so far.
    const TensorInfo& in = info(shard);
    const auto numel = shapeNumel(in.shape);
    if (!numel || *numel > (std::uint64_t{1} << 62) / static_cast<std::uint64_t>(m_config.parallel.tp))
        return makeError(path + ": the gathered sequence is too large");
    const auto want = static_cast<std::int64_t>(*numel) * m_config.parallel.tp;
    auto buf = m_spBuffers.find(in.dtype);
    if (buf == m_spBuffers.end()) {
        const int t = newTensor(TensorInfo{{want}, in.dtype, in.batched, true}, -1,
                                "sequence-parallel all-gather buffer (Megatron's global memory buffer)");
        m_graph.tensors.back().persistent = true;
        buf = m_spBuffers.emplace(in.dtype, t).first;
    }
    TensorInfo& bi = m_graph.tensors[static_cast<std::size_t>(buf->second)].info;
    bi.shape[0] = std::max(bi.shape[0], want);
    bi.batched = bi.batched || in.batched;
    auto out = addOp("sp_gather_buffer", path + ".sp_all_gather", a, {buf->second, shard});
    if (!out) return out.error();
    m_spGathered[shard] = *out;
    m_spSavedAs[*out] = shard;
    return *out;
}

Result<std::vector<int>> GraphBuilder::sequenceParallelInputs(const Layer& layer, const std::string& path,
                                                              std::vector<int> inputs) {
    const bool inLayers = m_repeatDepth > 0;
    const bool readsWhole = layer.op == "linear" || layer.op == "attention";
    for (int& t : inputs) {
        if (!m_spShards.count(t)) continue;
        if (!readsWhole && (inLayers || tokenWise(layer.op))) continue; // stays split
        auto g = gatherSequence(t, path, readsWhole);
        if (!g) return g.error();
        t = *g;
    }
    return inputs;
}

Result<int> GraphBuilder::sequenceParallelOutput(const Layer& layer, const std::string& path, int out) {
    if (m_repeatDepth == 0 || m_spShards.count(out)) return out;
    if (layer.op != "attention" && &layer != m_rowLinear) return out;
    Attributes a;
    a.set("tp", m_config.parallel.tp);
    auto split = addOp("sp_split", path + ".sp_reduce_scatter", a, {out});
    if (!split) return split.error();
    m_spShards.insert(*split);
    return *split;
}

void GraphBuilder::noteSequenceParallel(const std::string& type, const std::vector<int>& inputs,
                                        const std::vector<int>& outputs) {
    if (isCollective(type)) return;
    bool split = false;
    for (int t : inputs) split = split || m_spShards.count(t) > 0;
    if (split) m_spShards.insert(outputs.begin(), outputs.end());
    if (type == "cast" && !inputs.empty() && !outputs.empty())
        if (auto it = m_spSavedAs.find(inputs[0]); it != m_spSavedAs.end())
            m_spSavedAs[outputs[0]] = it->second;
}

int GraphBuilder::savedAs(int tensor) const {
    auto it = m_spSavedAs.find(tensor);
    return it == m_spSavedAs.end() ? tensor : it->second;
}

} // namespace batchfit
