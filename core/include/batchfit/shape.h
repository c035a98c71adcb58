#pragma once
// A tensor shape, without the batch dimension unless stated.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace batchfit {

using Shape = std::vector<std::int64_t>;

/// "[3,224,224]".
std::string shapeToString(const Shape& s);
/// Product of the dimensions, or nullopt on overflow or a negative dimension.
std::optional<std::uint64_t> shapeNumel(const Shape& s);

} // namespace batchfit
