#pragma once
// A tensor's per-sample shape, dtype and layout, as seen by op rules.
#include "batchfit/dtype.h"
#include "batchfit/shape.h"
#include "graph/affine.h"

#include <optional>

namespace batchfit {

struct TensorInfo {
    Shape shape; ///< per sample when batched, else the full shape
    DType dtype = DType::Float32;
    bool batched = true; ///< has a leading batch dimension
    bool contiguous = true;

    /// Storage bytes as constant + perSample * batch, or nullopt if too large.
    std::optional<Affine> bytes() const {
        auto n = shapeNumel(shape);
        if (!n) return std::nullopt;
        auto b = checkedMul(*n, static_cast<std::uint64_t>(dtypeSize(dtype)));
        if (!b || *b > kMaxBytes) return std::nullopt;
        return batched ? Affine{0, *b} : Affine{*b, 0};
    }
    std::int64_t rank() const { return static_cast<std::int64_t>(shape.size()); }
};

} // namespace batchfit
