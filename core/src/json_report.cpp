#include "batchfit/json_report.h"

#include "batchfit/verdict_text.h"
#include "setup/training_setup_json.h"

#include <nlohmann/json.hpp>

namespace batchfit {
namespace {

using ojson = nlohmann::ordered_json;

/// The set-up as the model file writes it (the settings table: docs/model-format.md), unset options as null,
/// with the implementation torch runs in place of "default".
ojson configObject(const TrainingConfig& c) {
    TrainingSetup setup;
    setup.config = c;
    ojson o = setupjson::write(setup, true);
    for (const char* key : {"gpu", "gpu_memory_bytes", "batch"}) o.erase(key); // the estimate's own fields
    o["optimizer_impl"] = std::string(optimizerImplName(resolvedImpl(c)));     // what runs
    o["optimizer_impl_default"] = c.impl == OptimizerImpl::Default; // chosen by torch, not the user
    return o;
}

ojson componentsObject(const ComponentBytes& b) {
    ojson o;
    o["parameter_bytes"] = b[Component::Parameters];
    o["gradient_bytes"] = b[Component::Gradients];
    o["optimizer_state_bytes"] = b[Component::OptimizerStates];
    o["activation_bytes"] = b[Component::Activations];
    o["temporary_bytes"] = b[Component::Temporaries];
    return o;
}

ojson gpuObject(const GpuSpec& g) {
    ojson o;
    o["id"] = g.id;
    o["name"] = g.name;
    o["memory_bytes"] = g.memoryBytes;
    return o;
}

ojson header(const Model& m, const TrainingConfig& c) {
    ojson o;
    o["batchfit_version"] = BATCHFIT_VERSION;
    o["schema_version"] = kEstimateJsonVersion;
    o["model"] = m.name;
    o["config"] = configObject(c);
    return o;
}

} // namespace

std::string configJson(const TrainingConfig& config) {
    return configObject(config).dump(2);
}

std::string estimateJson(const ReportInput& in) {
    const Estimate& e = *in.estimate;
    ojson o = header(*in.model, *in.config);
    o["batch"] = e.batch;
    if (in.gpu) o["gpu"] = gpuObject(*in.gpu);
    o["peak_allocated_bytes"] = e.peakAllocatedBytes;
    o["peak_phase"] = phaseName(e.peakPhase);
    o["peak_op"] = e.peakLabel;
    o["at_peak"] = componentsObject(e.atPeak);
    ojson t;
    t["parameter_count"] = e.parameterCount;
    t["trainable_parameter_count"] = e.trainableParameterCount;
    t["parameter_bytes"] = e.parameterBytes;
    t["gradient_bytes"] = e.gradientBytes;
    t["optimizer_state_bytes"] = e.optimizerStateBytes;
    t["saved_activation_bytes"] = e.savedActivationBytes;
    t["autocast_weight_copy_bytes"] = e.autocastWeightCopyBytes;
    t["host_bytes"] = e.hostBytes;
    t["host_parameter_bytes"] = e.hostParameterBytes;
    t["reference_model_bytes"] = e.referenceModelBytes;
    t["generation_cache_bytes"] = e.generationCacheBytes;
    t["parameter_transfer_bytes"] = e.parameterTransferBytes;
    t["host_activation_bytes"] = e.hostActivationBytes;
    t["activation_transfer_bytes"] = e.activationTransferBytes;
    t["host_bytes_per_node"] = e.hostBytesPerNode();
    t["paged_optimizer_state_bytes"] = e.pagedStateBytes;
    t["quantized_parameter_count"] = e.quantizedParameterCount;
    t["quantized_parameter_bytes"] = e.quantizedParameterBytes;
    o["totals"] = t;
    if (in.config->parallel.gpus > 1) {
        // Every figure above is this GPU's; the batch is its micro-batch.
        const ParallelConfig& p = in.config->parallel;
        ojson par;
        par["strategy"] = std::string(parallelStrategyName(p.strategy));
        par["gpus"] = p.gpus;
        par["tensor_parallel_size"] = p.tp;
        par["sequence_parallel"] = p.splitsSequence();
        par["pipeline_parallel_size"] = p.pp;
        if (p.pp > 1) {
            // the heavier of the first stage (the embedding, ceil(L / P) layers) and the last (floor(L / P)
            // layers, the head and the loss)
            par["pipeline_stage"] = e.parallel.pipelineStage;
            par["stage_simulated"] = e.parallel.stage;
            par["micro_batches_in_flight"] = e.parallel.microBatchesInFlight;
        }
        par["data_parallel_size"] = p.dataParallel();
        par["shard_group_size"] = e.parallel.group;
        par["rank_simulated"] = e.parallel.rank;
        const std::int64_t pipeMicro = p.pp > 1 ? (p.microbatches > 0 ? p.microbatches : p.pp) : 1;
        par["global_batch"] = e.batch * p.dataParallel() * in.config->accumulationSteps * pipeMicro;
        par["bucket_bytes"] = e.parallel.bucketBytes;
        par["largest_gathered_unit"] = e.parallel.largestGatheredUnit;
        par["largest_gathered_bytes"] = e.parallel.largestGatheredBytes;
        o["parallel"] = par;
    }
    ojson ov;
    ov["cuda_context_bytes"] = e.cudaContextBytes; // all of it, as before the parts existed
    ojson nt;
    nt["context_bytes"] = e.nonTorch.contextBytes;
    nt["cublas_kernel_bytes"] = e.nonTorch.cublasBytes;
    nt["eager_loading_bytes"] = e.nonTorch.eagerBytes;
    nt["cudnn_bytes"] = e.nonTorch.cudnnBytes;
    nt["nccl_bytes"] = e.nonTorch.ncclBytes;
    nt["nccl_communicators"] = e.nonTorch.ncclCommunicators;
    nt["vllm_bytes"] = e.nonTorch.vllmBytes; // GRPO's colocated vLLM engine
    nt["measured"] = e.nonTorch.measured; // --context-mib: the user's figure stands for all of it
    nt["total_bytes"] = e.nonTorch.total();
    ov["non_pytorch"] = nt;
    ov["allocator_reserve_bytes"] = e.allocatorReserveBytes;
    ov["reserved_bytes"] = e.reservedBytes;
    ov["peak_reserved_bytes"] = e.allocator.peakReservedBytes;
    ov["peak_inactive_split_bytes"] = e.allocator.peakInactiveSplitBytes;
    o["overheads"] = ov;
    ojson al;
    al["simulated"] = e.allocator.simulated; // false: the fragmentation_fraction override
    al["alloc_conf"] = e.allocator.allocConf;
    al["iterations_replayed"] = e.allocator.iterations;
    al["sequences"] = e.allocator.sequences;
    al["last_batch"] = e.allocator.lastBatch;
    al["peak_allocated_bytes"] = e.allocator.peakAllocatedBytes;
    al["peak_reserved_bytes"] = e.allocator.peakReservedBytes;
    al["peak_inactive_split_bytes"] = e.allocator.peakInactiveSplitBytes;
    al["peak_segments"] = e.allocator.peakSegments;
    al["device_allocs"] = e.allocator.deviceAllocs;
    al["largest_cudnn_workspace_bytes"] = e.allocator.largestWorkspaceBytes;
    al["least_reserved_bytes"] = e.allocator.leastReservedBytes; // every cuDNN workspace fallen back to 0
    o["allocator"] = al;
    o["required_bytes"] = e.requiredBytes;
    if (in.verdict) {
        ojson v;
        v["capacity_bytes"] = in.verdict->capacityBytes;
        v["usable_bytes"] = in.verdict->usableBytes;
        v["fits"] = in.verdict->fits;
        v["headroom_bytes"] = in.verdict->headroomBytes;
        v["required_bytes"] = in.verdict->requiredBytes;
        v["cache_released"] = in.verdict->cacheReleased;
        v["decision"] = fitLabel(in.verdict->fits, in.verdict->cacheReleased);
        if (in.verdict->oom) {
            const auto& f = *in.verdict->oom;
            ojson oom;
            oom["allocation_index"] = f.eventIndex;
            oom["requested_bytes"] = f.requestedBytes;
            oom["tried_to_allocate_bytes"] = f.triedBytes;
            oom["allocated_bytes"] = f.allocatedBytes;
            oom["reserved_bytes"] = f.reservedBytes;
            oom["message"] = f.message;
            oom["at"] = f.stepLabel.empty() ? ojson(nullptr) : ojson(f.stepLabel);
            oom["first_iteration"] = f.firstIteration;
            oom["sequence"] = f.sequence > 0 ? ojson(f.sequence) : ojson(nullptr);
            oom["last_batch"] = f.lastBatch > 0 ? ojson(f.lastBatch) : ojson(nullptr);
            v["oom"] = oom;
        } else {
            v["oom"] = nullptr;
        }
        if (e.pagedStateBytes) v["paged_note"] = pagedNote(*in.verdict, e);
        o["verdict"] = v;
    }
    if (in.maxBatch) {
        ojson m;
        m["largest"] = in.maxBatch->largest;
        m["largest_multiple_of_8"] = in.maxBatch->largestMultipleOf8;
        m["capped"] = in.maxBatch->capped;
        m["required_bytes_at_largest"] = in.maxBatch->requiredAtLargest;
        m["replayed"] = in.maxBatch->replayed;
        o["max_batch"] = m;
    }
    ojson layers = ojson::array();
    std::vector<const LayerActivation*> rows;
    for (const auto& l : e.layers) rows.push_back(&l);
    if (in.topLayers >= 0) {
        std::stable_sort(rows.begin(), rows.end(),
                         [](auto* a, auto* b) { return a->savedBytes > b->savedBytes; });
        if (rows.size() > static_cast<std::size_t>(in.topLayers))
            rows.resize(static_cast<std::size_t>(in.topLayers));
    }
    for (const auto* l : rows) {
        ojson r;
        r["path"] = l->path;
        r["op"] = l->op;
        r["saved_activation_bytes"] = l->savedBytes;
        r["output_bytes"] = l->outputBytes;
        r["parameters"] = l->parameterCount;
        r["trainable_parameters"] = l->trainableParameterCount;
        r["share_of_peak"] = l->shareOfPeak;
        layers.push_back(r);
    }
    o[in.topLayers >= 0 ? "top_layers" : "layers"] = layers;
    if (!e.timeline.empty()) {
        ojson tl = ojson::array();
        for (const auto& p : e.timeline) {
            ojson r;
            r["phase"] = phaseName(p.phase);
            r["op"] = p.label;
            r["live"] = componentsObject(p.live);
            r["reserved_bytes"] = p.reservedBytes;
            tl.push_back(r);
        }
        o["timeline"] = tl;
    }
    if (in.measured) o["measured"] = ojson::parse(comparisonJson(*in.measured));
    return o.dump(2) + "\n";
}

std::string maxBatchJson(const Model& model, const TrainingConfig& config, const GpuSpec& gpu,
                         const MaxBatch& m, std::uint64_t usableBytes) {
    ojson o = header(model, config);
    o["gpu"] = gpuObject(gpu);
    o["usable_bytes"] = usableBytes;
    o["largest"] = m.largest;
    o["largest_multiple_of_8"] = m.largestMultipleOf8;
    o["capped"] = m.capped;
    o["required_bytes_at_largest"] = m.requiredAtLargest;
    o["replayed"] = m.replayed;
    return o.dump(2) + "\n";
}

std::string sweepJson(const Model& model, const TrainingConfig& config, const std::vector<SweepPoint>& points,
                      std::optional<std::uint64_t> usableBytes) {
    ojson o = header(model, config);
    if (usableBytes) o["usable_bytes"] = *usableBytes;
    ojson arr = ojson::array();
    for (const auto& p : points) {
        ojson r;
        r["batch"] = p.batch;
        r["peak_allocated_bytes"] = p.peakAllocatedBytes;
        r["required_bytes"] = p.requiredBytes;
        r["at_peak"] = componentsObject(p.atPeak);
        if (usableBytes && p.fit) {
            r["fits"] = p.fit->fits;
            r["cache_released"] = p.fit->cacheReleased;
            r["decision"] = fitLabel(*p.fit);
            r["gpu_required_bytes"] = p.gpuRequiredBytes();
        }
        arr.push_back(r);
    }
    o["points"] = arr;
    return o.dump(2) + "\n";
}

std::string gpuCatalogueJson() {
    ojson arr = ojson::array();
    for (const GpuSpec& g : gpuCatalogue()) {
        ojson o;
        o["id"] = g.id;
        o["name"] = g.name;
        o["vendor"] = g.vendor;
        o["family"] = g.family;
        o["arch"] = g.arch;
        o["memory_bytes"] = g.memoryBytes;
        o["context_bytes"] = g.contextBytes;
        o["context_source"] = g.contextSource;
        o["cublas_workspace_bytes"] = g.cublasWorkspaceBytes;
        o["bf16"] = g.bf16;
        o["fp8"] = g.fp8;
        o["name_zh"] = g.nameZh;
        o["note_zh"] = g.noteZh;
        o["source"] = g.source;
        o["arch_source"] = g.archSource;
        arr.push_back(std::move(o));
    }
    return arr.dump(2) + "\n";
}

std::string gpuFitsJson(const std::vector<GpuFit>& fits) {
    ojson arr = ojson::array();
    for (const GpuFit& f : fits) {
        ojson o = gpuObject(f.gpu);
        o["max_batch"] = f.maxBatch;
        arr.push_back(std::move(o));
    }
    return arr.dump(2) + "\n";
}

std::string fitMapJson(const Model& model, const TrainingConfig& config, const GpuSpec& gpu,
                       const FitMap& map) {
    ojson o = header(model, config);
    o["gpu"] = gpuObject(gpu);
    o["usable_bytes"] = map.usableBytes;
    o["accumulation_steps"] = map.accumulationSteps;
    ojson rows = ojson::array();
    for (const FitMapRow& row : map.rows) {
        ojson r;
        r["sequence"] = row.sequence;
        r["max_batch"] = row.largest.largest;
        r["max_batch_capped"] = row.largest.capped;
        r["largest_multiple_of_8"] = row.largest.largestMultipleOf8;
        r["tokens_per_step"] = row.tokensPerStep;
        r["required_bytes_at_max"] = row.largest.requiredAtLargest;
        r["peak_allocated_bytes_at_max"] = row.peakAllocatedAtLargest;
        if (row.largest.largest == 0) r["required_bytes_at_1"] = row.requiredAtOne;
        r["peak_op"] = row.peakLabel;
        r["peak_in_head"] = row.peakInHead;
        if (!row.cells.empty()) {
            ojson cells = ojson::array();
            for (const FitMapCell& c : row.cells)
                cells.push_back({{"batch", c.batch},
                                 {"required_bytes", c.requiredBytes},
                                 {"fits", c.fits},
                                 {"cache_released", c.cacheReleased}});
            r["cells"] = cells;
        }
        rows.push_back(r);
    }
    o["rows"] = rows;
    return o.dump(2) + "\n";
}

} // namespace batchfit
