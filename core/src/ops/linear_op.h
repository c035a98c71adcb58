#pragma once
// The linear that composite ops add for their projections (attention, latent attention, the MoE router and
// shared experts): one place for the attributes a "linear" op takes.
#include "graph/graph_builder.h"

#include <string>

namespace batchfit {

inline Result<int> addLinear(GraphBuilder& b, const std::string& path, int in, std::int64_t out, bool bias) {
    Attributes la;
    la.set("out_features", out);
    la.set("bias", bias);
    return b.addOp("linear", path, la, {in});
}

} // namespace batchfit
