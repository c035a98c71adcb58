#pragma once
// Small helpers for importers that build layer stacks in code.
#include "batchfit/layer.h"

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace batchfit {

using AttrList = std::vector<std::pair<std::string, AttrValue>>;

inline Layer op(std::string name, std::string type, const AttrList& attrs = {},
                std::vector<std::string> inputs = {}) {
    Layer l;
    l.name = std::move(name);
    l.op = std::move(type);
    for (const auto& [k, v] : attrs) l.attrs.set(k, v);
    l.inputs = std::move(inputs);
    return l;
}

inline Layer block(std::string name, std::vector<Layer> layers) {
    Layer b;
    b.name = std::move(name);
    b.layers = std::move(layers);
    return b;
}

} // namespace batchfit
