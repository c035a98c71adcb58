// Megatron-LM tensor parallelism (Shoeybi et al. 2019, arXiv 1909.08053, section 3; Korthikanti et al. 2022,
// arXiv 2205.05198, section 4): one rank of t holds, in each transformer layer (a repetition of a repeated
// block), 1/t of the attention heads (q, k, v column-parallel, the output projection row-parallel) and 1/t of
// the MLP's inner width (every linear of the block but the last is column-parallel, the last row-parallel);
// the token embedding and the output head are vocab-parallel (the vocabulary padded to a multiple of 128 t).
// Norms, dropout and the residual stream stay whole on every rank unless --sequence-parallel splits them
// (sequence_parallel.cpp). The all-reduce of a row-parallel output runs in place.
#include "batchfit/lora_targets.h"
#include "graph/graph_builder.h"

namespace batchfit {

namespace {

const Layer* findLayer(const std::vector<Layer>& layers, const std::string& prefix, const std::string& path) {
    for (const Layer& l : layers) {
        const std::string p = prefix.empty() ? l.name : (l.name.empty() ? prefix : prefix + "." + l.name);
        if (!l.isBlock() && p == path) return &l;
        if (l.isBlock())
            if (const Layer* f = findLayer(l.layers, p, path)) return f;
    }
    return nullptr;
}

} // namespace

Status GraphBuilder::prepareTensorParallel(const Model& model) {
    const std::int64_t t = m_config.parallel.tp;
    if (auto problem = sequenceParallelProblem(m_config.parallel); !problem.empty())
        return makeError(problem);
    if (t <= 1) return Ok{};
    if (m_config.parallel.gpus % (t * m_config.parallel.pp))
        return makeError("--tp " + std::to_string(t) + " must divide --gpus " +
                         std::to_string(m_config.parallel.gpus) + " (with --pp)");
    // A pipeline stage's head and vocabulary are the whole model's (the first stage has no head)
    const Model& whole = m_wholeModel ? *m_wholeModel : model;
    m_tpHead = loraTargetInfo(whole).head;
    if (const Layer* head = findLayer(whole.layers, "", m_tpHead))
        m_vocab = head->attrs.getInt("out_features").value_or(0);
    return Ok{};
}

Result<Attributes> GraphBuilder::tensorParallelAttributes(const Layer& layer, const std::string& path,
                                                          std::int64_t width) const {
    const std::int64_t t = m_config.parallel.tp;
    Attributes a = layer.attrs;
    const auto split = [&](const char* key, std::int64_t value) -> Status {
        if (value % t)
            return makeError(path + ": " + key + " " + std::to_string(value) + " is not divisible by --tp " +
                             std::to_string(t));
        a.set(key, value / t);
        return Ok{};
    };
    // Megatron pads the vocabulary to a multiple of 128 x t (_vocab_size_with_padding,
    // make_vocab_size_divisible_by = 128) before splitting it.
    const auto vocabShard = [&](std::int64_t v) {
        const std::int64_t m = 128 * t;
        return (v + m - 1) / m * m / t;
    };
    if (layer.op == "embedding" && m_vocab > 0 && a.getInt("num_embeddings").value_or(0) == m_vocab) {
        a.set("num_embeddings", vocabShard(m_vocab)); // VocabParallelEmbedding
        return a;
    }
    if (layer.op == "linear" && path == m_tpHead) { // tied to the embedding or not: split the same way
        a.set("out_features", vocabShard(a.getInt("out_features").value_or(1)));
        return a; // the head: column-parallel logits, vocab-parallel cross-entropy
    }
    if (m_repeatDepth == 0) return a; // outside the transformer layers everything is whole
    if (layer.op == "attention") {
        const std::int64_t heads = a.getInt("heads").value_or(1);
        const std::int64_t kv = a.getInt("kv_heads").value_or(heads);
        // head_dim defaults to the width over the heads: keep the full model's
        if (!a.has("head_dim") && heads > 0) a.set("head_dim", width / heads);
        if (auto st = split("heads", heads); !st) return st.error();
        if (auto st = split("kv_heads", kv); !st) return st.error();
        return a;
    }
    if (layer.op == "linear" && &layer != m_rowLinear) {
        if (auto st = split("out_features", a.getInt("out_features").value_or(1)); !st) return st.error();
    }
    return a;
}

} // namespace batchfit
