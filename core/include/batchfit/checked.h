#pragma once
// Overflow-checked unsigned arithmetic for byte counts.
#include <cstdint>
#include <optional>

namespace batchfit {

inline std::optional<std::uint64_t> checkedMul(std::uint64_t a, std::uint64_t b) {
    std::uint64_t r;
    if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
    return r;
}

inline std::optional<std::uint64_t> checkedAdd(std::uint64_t a, std::uint64_t b) {
    std::uint64_t r;
    if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
    return r;
}

/// Largest byte count BatchFit reports (2^62): anything above is "too large", never wrapped.
inline constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 62;

} // namespace batchfit
