#pragma once
// What the attention op (rules_attention.cpp) shares with DeepSeek's latent attention (rules_mla.cpp).
#include "graph/graph_builder.h"

#include <string>

namespace batchfit {

/// The tensors attention runs on, each [S, heads * width] per sample.
struct Qkv {
    int q, k, v;
};

/// The rotary embedding's cos and sin tables for `seq` positions of `width` in `dtype`: transformers computes
/// them once per forward from position_ids [1, S], so every layer shares them.
std::pair<int, int> ropeTables(GraphBuilder& b, std::int64_t seq, std::int64_t width, DType dtype);

/// DeepSeek-V2/V3's multi-head latent attention up to the attention itself (rules_mla.cpp): q and k
/// [S, heads * (qk_nope_head_dim + qk_rope_head_dim)], v a view [S, heads * v_head_dim] into kv_b_proj's
/// output.
Result<Qkv> mlaProjections(GraphBuilder& b, const std::string& path, const Attributes& a, int x,
                           std::int64_t heads);

} // namespace batchfit
