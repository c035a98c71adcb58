#pragma once
// The most experts a mixture-of-experts layer may have: the moe op's bound (rules_moe.cpp), which the Hugging
// Face importers check first to name the config's field.
#include <cstdint>

namespace batchfit {

inline constexpr std::int64_t kMaxExperts = 1024;

} // namespace batchfit
