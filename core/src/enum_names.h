#pragma once
// Name <-> enum tables for the set-up's options (training_config.cpp, parallel_config.cpp): one parser, one
// message listing what is accepted.
#include "batchfit/result.h"

#include <array>
#include <string>
#include <string_view>
#include <utility>

namespace batchfit {

template <class E, std::size_t N> using EnumNames = std::array<std::pair<std::string_view, E>, N>;

/// The value named `s`, or "unknown <what> 's' (expected one of: a, b, c)".
template <class E, std::size_t N>
Result<E> parseFrom(const EnumNames<E, N>& table, std::string_view s, std::string_view what) {
    for (const auto& [name, value] : table)
        if (name == s) return value;
    std::string expected;
    for (const auto& [name, value] : table) expected += (expected.empty() ? "" : ", ") + std::string(name);
    return makeError("unknown " + std::string(what) + " '" + std::string(s) +
                     "' (expected one of: " + expected + ")");
}

/// The first name of `e` in the table ("?" if none).
template <class E, std::size_t N> std::string_view nameFrom(const EnumNames<E, N>& table, E e) {
    for (const auto& [name, value] : table)
        if (value == e) return name;
    return "?";
}

} // namespace batchfit
