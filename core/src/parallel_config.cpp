#include "batchfit/parallel_config.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

namespace batchfit {
namespace {

constexpr std::array<std::pair<std::string_view, ParallelStrategy>, 9> kStrategies{{
    {"none", ParallelStrategy::None},
    {"ddp", ParallelStrategy::Ddp},
    {"zero1", ParallelStrategy::Zero1},
    {"zero2", ParallelStrategy::Zero2},
    {"zero3", ParallelStrategy::Zero3},
    {"fsdp", ParallelStrategy::Fsdp},
    {"fsdp-grad-op", ParallelStrategy::FsdpGradOp},
    {"hsdp", ParallelStrategy::Hsdp},
    {"fsdp2", ParallelStrategy::Fsdp2},
}};
constexpr std::array<std::pair<std::string_view, ZeroImpl>, 2> kZeroImpls{{
    {"deepspeed", ZeroImpl::DeepSpeed},
    {"torch", ZeroImpl::Torch},
}};

template <class E, std::size_t N>
Result<E> parse(const std::array<std::pair<std::string_view, E>, N>& table, std::string_view s,
                const char* what) {
    for (const auto& [name, value] : table)
        if (name == s) return value;
    std::string expected;
    for (const auto& [name, value] : table) expected += (expected.empty() ? "" : ", ") + std::string(name);
    return makeError("unknown " + std::string(what) + " '" + std::string(s) +
                     "' (expected one of: " + expected + ")");
}

template <class E, std::size_t N>
std::string_view name(const std::array<std::pair<std::string_view, E>, N>& table, E e) {
    for (const auto& [n, value] : table)
        if (value == e) return n;
    return "?";
}

} // namespace

std::string_view parallelStrategyName(ParallelStrategy s) {
    return name(kStrategies, s);
}
Result<ParallelStrategy> parseParallelStrategy(std::string_view s) {
    return parse(kStrategies, s, "parallel strategy");
}
std::string_view zeroImplName(ZeroImpl z) {
    return name(kZeroImpls, z);
}
Result<ZeroImpl> parseZeroImpl(std::string_view s) {
    return parse(kZeroImpls, s, "ZeRO implementation");
}
std::vector<ParallelStrategy> allParallelStrategies() {
    std::vector<ParallelStrategy> out;
    for (const auto& p : kStrategies) out.push_back(p.second);
    return out;
}

bool shardsParameters(ParallelStrategy s) {
    return s == ParallelStrategy::Zero3 || s == ParallelStrategy::Fsdp || s == ParallelStrategy::FsdpGradOp ||
           s == ParallelStrategy::Hsdp || s == ParallelStrategy::Fsdp2;
}
bool shardsGradients(ParallelStrategy s) {
    return s == ParallelStrategy::Zero2 || shardsParameters(s);
}
bool shardsOptimizerStates(ParallelStrategy s) {
    return s != ParallelStrategy::None && s != ParallelStrategy::Ddp;
}
std::int64_t shardGroupSize(const ParallelConfig& p) {
    if (!p.enabled()) return 1;
    if (p.strategy == ParallelStrategy::Hsdp)
        return std::max<std::int64_t>(1, std::min(p.gpus, p.gpusPerNode));
    return p.gpus;
}

} // namespace batchfit
