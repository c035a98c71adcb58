#include "batchfit/parallel_config.h"

#include "enum_names.h"

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

} // namespace

std::string_view parallelStrategyName(ParallelStrategy s) {
    return nameFrom(kStrategies, s);
}
Result<ParallelStrategy> parseParallelStrategy(std::string_view s) {
    return parseFrom(kStrategies, s, "parallel strategy");
}
std::string_view zeroImplName(ZeroImpl z) {
    return nameFrom(kZeroImpls, z);
}
Result<ZeroImpl> parseZeroImpl(std::string_view s) {
    return parseFrom(kZeroImpls, s, "ZeRO implementation");
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
bool isFsdp(ParallelStrategy s) {
    return s == ParallelStrategy::Fsdp || s == ParallelStrategy::FsdpGradOp || s == ParallelStrategy::Hsdp ||
           s == ParallelStrategy::Fsdp2;
}
std::string sequenceParallelProblem(const ParallelConfig& p) {
    if (!p.sequenceParallel || p.tp > 1) return {};
    return "sequence parallelism splits the sequence over the tensor-parallel group: it needs --tp T > 1 "
           "(and --gpus a multiple of T)";
}
std::int64_t shardGroupSize(const ParallelConfig& p) {
    if (!p.enabled()) return 1;
    const std::int64_t dp = p.dataParallel();
    if (p.strategy == ParallelStrategy::Hsdp) return std::max<std::int64_t>(1, std::min(dp, p.gpusPerNode));
    return dp;
}

} // namespace batchfit
