#pragma once
// A model: a layer stack over a per-sample input.
#include "batchfit/dtype.h"
#include "batchfit/layer.h"
#include "batchfit/shape.h"

#include <string>
#include <vector>

namespace batchfit {

struct Model {
    std::string name;
    std::string description;
    Shape inputShape; ///< per sample, e.g. [3,224,224] or [128]
    DType inputDtype = DType::Float32;
    std::vector<Layer> layers; ///< the stack; the last layer is normally a loss

    bool operator==(const Model&) const = default;
};

} // namespace batchfit
