// `batchfit-cli serve --json` (docs/estimate-fields.md, "serve").
#include "batchfit/serving_plan.h"

#include <nlohmann/json.hpp>

namespace batchfit {
namespace {

using ojson = nlohmann::ordered_json;

const char* failureName(ServingEstimate::Failure f) {
    switch (f) {
    case ServingEstimate::Failure::None:
        return "none";
    case ServingEstimate::Failure::Weights:
        return "weights";
    case ServingEstimate::Failure::Profile:
        return "profile";
    case ServingEstimate::Failure::KvTooSmall:
        return "kv_too_small";
    }
    return "?";
}

} // namespace

std::string servingJson(const ServingModel& m, const ServingEstimate& e, const GpuSpec& gpu,
                        std::int64_t context, std::int64_t sequences, const std::vector<ServingLever>& levers,
                        const HfGenerateReplay* replay, std::int64_t replayPrompt) {
    const ServingConfig& c = e.config;
    ojson o;
    o["model"] = {{"name", m.name},
                  {"model_type", m.modelType},
                  {"parameters", m.parameterCount()},
                  {"layers", m.kv.size()},
                  {"max_position_embeddings", m.maxPositions}};
    o["gpu"] = {{"id", gpu.id}, {"name", gpu.name}, {"memory_bytes", gpu.memoryBytes}};
    o["engine"] = {{"name", std::string(servingEngineName(c.engine))},
                   {"version", c.engine == ServingEngine::Vllm ? "0." + std::to_string(c.engineVersion) : ""},
                   {"memory_fraction", *c.memoryFraction},
                   {"max_model_len", c.maxModelLen},
                   {"max_num_seqs", c.maxNumSeqs},
                   {"max_num_batched_tokens", c.maxNumBatchedTokens},
                   {"block_size", c.blockSize},
                   {"kv_cache_dtype", std::string(kvCacheDtypeName(c.kvCacheDtype))},
                   {"quantization", std::string(weightQuantName(c.quant))},
                   {"enforce_eager", c.enforceEager},
                   {"tp", e.tp},
                   {"pp", e.pp}};
    o["rank"] = {{"first_layer", e.firstLayer},
                 {"layers", e.stageLayers},
                 {"total_bytes", e.totalBytes},
                 {"context_bytes", e.contextBytes},
                 {"requested_bytes", e.requestedBytes},
                 {"weight_bytes", e.weightBytes},
                 {"activation_bytes", e.activationBytes},
                 {"non_torch_bytes", e.nonTorchBytes},
                 {"cuda_graph_bytes", e.cudaGraphBytes},
                 {"margin_bytes", e.marginBytes},
                 {"kv_available_bytes", e.kvAvailableBytes}};
    o["kv_cache"] = {{"bytes_per_token", e.bytesPerToken},
                     {"bytes_per_block", e.bytesPerBlock},
                     {"blocks", e.blocks},
                     {"groups", e.groups.size()},
                     {"tokens", e.kvTokens},
                     {"max_concurrency", e.maxConcurrency},
                     {"needed_for_one_request_bytes", e.neededForOneRequest}};
    const ServingCell cell = servingCell(m, e, sequences, context);
    o["answer"] = {{"starts", e.failure == ServingEstimate::Failure::None},
                   {"failure", failureName(e.failure)},
                   {"message", e.message},
                   {"context", context},
                   {"max_sequences_at_context", maxConcurrentSequences(m, e, context)},
                   {"sequences", sequences},
                   {"max_context_at_sequences", maxContextAt(m, e, sequences)},
                   {"fits", e.failure == ServingEstimate::Failure::None && cell.fits},
                   {"kv_cache_bytes", servingCacheBytes(m, e, sequences, context)},
                   {"kv_used_fraction", cell.usedFraction}};
    if (replay) {
        const AllocatorStats& s = replay->result.stats;
        o["hf_replay"] = {{"prompt", replayPrompt},
                          {"new_tokens", context - replayPrompt + 1},
                          {"cache_bytes", replay->cacheBytes},
                          {"peak_allocated_bytes", s.peakAllocatedBytes},
                          {"peak_reserved_bytes", s.peakReservedBytes},
                          {"oom", replay->result.oom.has_value()},
                          {"message", replay->result.oom ? replay->result.oom->message : std::string()}};
        o["answer"]["fits"] = o["answer"]["fits"].get<bool>() && !replay->result.oom;
    }
    o["levers"] = ojson::array();
    for (const ServingLever& l : levers)
        o["levers"].push_back({{"id", l.id},
                               {"title", l.title},
                               {"tp", l.tp},
                               {"starts", l.estimate.failure == ServingEstimate::Failure::None},
                               {"kv_tokens", l.estimate.kvTokens},
                               {"sequences_at_context", l.sequencesAtContext}});
    return o.dump(2) + "\n";
}

} // namespace batchfit
