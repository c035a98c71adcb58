#pragma once
// Bytes as an affine function of the batch size: constant + perSample * batch.
#include "batchfit/checked.h"

#include <cstdint>
#include <optional>

namespace batchfit {

struct Affine {
    std::uint64_t constant = 0;
    std::uint64_t perSample = 0;

    bool isZero() const { return constant == 0 && perSample == 0; }
    /// Value at a batch size, or nullopt on overflow past kMaxBytes.
    std::optional<std::uint64_t> at(std::int64_t batch) const {
        auto k = checkedMul(perSample, static_cast<std::uint64_t>(batch));
        if (!k) return std::nullopt;
        auto v = checkedAdd(*k, constant);
        if (!v || *v > kMaxBytes) return std::nullopt;
        return v;
    }
    /// Unchecked evaluation, for callers that proved the total fits.
    std::uint64_t atUnchecked(std::int64_t batch) const {
        return constant + perSample * static_cast<std::uint64_t>(batch);
    }
    bool operator==(const Affine&) const = default;
};

/// Sum with overflow detection (sets `overflow`).
inline Affine addAffine(Affine a, Affine b, bool& overflow) {
    auto c = checkedAdd(a.constant, b.constant);
    auto k = checkedAdd(a.perSample, b.perSample);
    if (!c || !k || *c > kMaxBytes || *k > kMaxBytes) {
        overflow = true;
        return a;
    }
    return Affine{*c, *k};
}

} // namespace batchfit
