#include "batchfit/shape.h"

#include "batchfit/checked.h"

namespace batchfit {

std::string shapeToString(const Shape& s) {
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i) out += ",";
        out += std::to_string(s[i]);
    }
    return out + "]";
}

std::optional<std::uint64_t> shapeNumel(const Shape& s) {
    std::uint64_t n = 1;
    for (auto d : s) {
        if (d < 0) return std::nullopt;
        auto m = checkedMul(n, static_cast<std::uint64_t>(d));
        if (!m || *m > kMaxBytes) return std::nullopt;
        n = *m;
    }
    return n;
}

} // namespace batchfit
