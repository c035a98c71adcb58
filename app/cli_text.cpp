#include "cli_text.h"

#include "batchfit/verdict_text.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace batchfit {

std::string grouped(std::int64_t v) {
    const std::uint64_t magnitude = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
    std::string digits = std::to_string(magnitude), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return (v < 0 ? "-" : "") + out;
}

std::string formatBytes(std::uint64_t bytes) {
    char buf[64];
    const double b = static_cast<double>(bytes);
    if (bytes >= (1ull << 30))
        std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1ull << 30));
    else if (bytes >= (1ull << 20))
        std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1ull << 20));
    else if (bytes >= 1024)
        std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024);
    else
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
    return buf;
}

static std::string row(const std::string& label, std::uint64_t bytes, std::uint64_t of) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "  %-24s %12s  %5.1f%%\n", label.c_str(), formatBytes(bytes).c_str(),
                  of ? 100.0 * static_cast<double>(bytes) / static_cast<double>(of) : 0.0);
    return buf;
}

std::string estimateText(const Model& model, const TrainingConfig& c, const Estimate& e,
                         const std::optional<GpuSpec>& gpu, const std::optional<Verdict>& v,
                         const std::optional<MaxBatch>& m, int top) {
    std::ostringstream os;
    os << "Model: " << model.name << "  (" << e.parameterCount << " parameters";
    if (e.trainableParameterCount != e.parameterCount)
        os << ", " << e.trainableParameterCount << " trainable";
    os << ")\n";
    os << "Set-up: batch " << e.batch;
    if (c.recipe == Recipe::Dpo)
        os << " preference pairs (DPO: " << 2 * e.batch << " sequences, reference log-probabilities "
           << (c.refLogps == RefLogps::Live ? "in every step" : "precomputed") << ")";
    if (c.accumulationSteps > 1) os << " x " << c.accumulationSteps << " accumulation steps";
    os << ", " << optimizerName(c.optimizer) << " (" << optimizerImplLabel(c) << "), "
       << precisionName(c.precision) << ", checkpointing " << checkpointingName(c.checkpointing)
       << (c.firstStep ? ", first step" : "");
    if (c.lora.rank > 0) {
        os << ", LoRA r=" << c.lora.rank << " alpha=" << c.lora.alpha << " dropout=" << c.lora.dropout
           << " on ";
        if (c.lora.targets.empty()) os << "the family's default targets";
        for (std::size_t i = 0; i < c.lora.targets.size(); ++i) os << (i ? "," : "") << c.lora.targets[i];
    }
    if (c.quant.enabled())
        os << ", " << quantKindName(c.quant.kind) << (c.quant.doubleQuant ? " double-quantized" : "")
           << " base weights" << (c.quant.prepare ? " (prepared for k-bit training)" : "");
    if (!c.freeze.empty() || !c.trainOnly.empty()) os << ", some layers frozen";
    if (c.parallel.enabled()) {
        os << "\nParallel: " << parallelStrategyName(c.parallel.strategy) << " on " << c.parallel.gpus
           << " GPUs (shards over " << e.parallel.group << "); every figure below is one GPU's (rank "
           << e.parallel.rank << ", the most loaded); global batch "
           << e.batch * c.parallel.dataParallel() * c.accumulationSteps *
                  (c.parallel.pp > 1 ? (c.parallel.microbatches > 0 ? c.parallel.microbatches : c.parallel.pp)
                                     : 1);
        if (e.parallel.bucketBytes) os << "; communication buckets " << formatBytes(e.parallel.bucketBytes);
        if (e.parallel.largestGatheredBytes)
            os << "; largest gathered unit " << e.parallel.largestGatheredUnit << " "
               << formatBytes(e.parallel.largestGatheredBytes);
    }
    if (c.parallel.tp > 1 || c.parallel.pp > 1) {
        os << "\nModel parallel:";
        if (c.parallel.tp > 1)
            os << " tensor parallel " << c.parallel.tp
               << (c.parallel.splitsSequence() ? " with sequence parallelism" : "");
        if (c.parallel.pp > 1)
            os << (c.parallel.tp > 1 ? ";" : "") << " pipeline of " << c.parallel.pp << " stages, the "
               << e.parallel.pipelineStage << " stage shown (the heavier; " << e.parallel.microBatchesInFlight
               << " micro-batch" << (e.parallel.microBatchesInFlight > 1 ? "es" : "") << " in flight)";
    }
    os << "\n\n";
    os << "Peak allocated: " << formatBytes(e.peakAllocatedBytes) << "  (" << e.peakAllocatedBytes << " B)\n";
    os << "  during " << phaseName(e.peakPhase) << ": " << e.peakLabel << "\n\n";
    os << "At the peak:\n";
    const std::uint64_t p = e.peakAllocatedBytes;
    os << row("parameters", e.atPeak[Component::Parameters], p);
    os << row("gradients", e.atPeak[Component::Gradients], p);
    os << row("optimizer states", e.atPeak[Component::OptimizerStates], p);
    os << row("activations", e.atPeak[Component::Activations], p);
    os << row("temporaries", e.atPeak[Component::Temporaries], p);
    // What this GPU shows: below the figure of a GPU large enough when it fits with cache flushes.
    const bool flushes = gpu && v && v->fits && v->cacheReleased;
    const std::uint64_t required = flushes ? v->requiredBytes : e.requiredBytes;
    os << "\nOverheads:\n";
    os << row("allocator reserve", flushes ? v->reserveBytes : e.allocatorReserveBytes, required);
    os << row("outside PyTorch", e.cudaContextBytes, required);
    os << "  (" << nonTorchText(e.nonTorch) << ")\n";
    if (!e.allocator.sequences.empty()) {
        os << "  (the allocator replay ran " << e.allocator.sequences.size() << " steps at sequence lengths";
        for (std::size_t i = 0; i < e.allocator.sequences.size(); ++i)
            os << (i ? ", " : " ") << e.allocator.sequences[i];
        os << ")\n";
    }
    if (e.allocator.lastBatch > 0)
        os << "  (the replay ran the epoch's last batch of " << e.allocator.lastBatch
           << " samples before the step estimated)\n";
    if (flushes)
        os << "Required on " << gpu->name << " (nvidia-smi at the peak): " << formatBytes(required) << "  ("
           << formatBytes(e.requiredBytes) << " on a GPU large enough)\n";
    else
        os << "Required (nvidia-smi at the peak): " << formatBytes(e.requiredBytes) << "\n";
    os << "PyTorch's max_memory_reserved(): " << formatBytes(required - e.cudaContextBytes)
       << "  (nvidia-smi less the memory outside PyTorch)\n";
    if (e.allocator.largestWorkspaceBytes)
        os << "  cuDNN workspaces (largest " << formatBytes(e.allocator.largestWorkspaceBytes)
           << ") are in it; they never cause an out-of-memory error (PyTorch falls back to engines that need "
              "less), and without any the step reserves "
           << formatBytes(e.allocator.leastReservedBytes) << "\n";
    os << "Saved for backward at end of forward" << (e.hostActivationBytes ? " (on the GPU)" : "") << ": "
       << formatBytes(e.savedActivationBytes) << "  (" << e.savedActivationBytes << " B)\n";
    if (e.autocastWeightCopyBytes)
        os << "  of which autocast's half copies of the weights: " << formatBytes(e.autocastWeightCopyBytes)
           << " (no layer owns them; with ZeRO-3/FSDP, copies of the gathered weights)\n";
    if (e.referenceModelBytes)
        os << "  of the parameters, DPO's frozen reference copy of the model: "
           << formatBytes(e.referenceModelBytes) << " (--ref-logps precomputed drops it)\n";
    if (e.hostBytes) os << "Host memory (offloaded optimizer): " << formatBytes(e.hostBytes) << "\n";
    if (e.hostParameterBytes)
        os << "Host memory (offloaded parameter and gradient shards): " << formatBytes(e.hostParameterBytes)
           << "; " << formatBytes(e.parameterTransferBytes)
           << " copied over PCIe per step (shards to the GPU for each all-gather, gradients back)\n";
    if (e.hostActivationBytes)
        os << "Host memory (offloaded activations): " << formatBytes(e.hostActivationBytes)
           << (c.activationOffload == ActivationOffload::All ? " pageable" : " pinned") << "; "
           << formatBytes(e.activationTransferBytes) << " copied over PCIe per step (to the host and back)\n";
    if (e.hostTotalBytes() && e.parallel.gpus > 1)
        os << "  host memory per GPU " << formatBytes(e.hostTotalBytes()) << "; "
           << formatBytes(e.hostBytesPerNode()) << " for the " << e.parallel.gpusOnNode
           << " GPUs of a node\n";
    if (e.quantizedParameterCount)
        os << "Quantized weights: " << e.quantizedParameterCount << " parameters in "
           << formatBytes(e.quantizedParameterBytes) << "\n";
    if (e.pagedStateBytes)
        os << "Paged optimizer states (CUDA managed memory, outside the peak): "
           << formatBytes(e.pagedStateBytes) << "\n";
    if (gpu && v) {
        os << "\nVerdict on " << gpu->name << ": " << verdictSentence(*v, e.requiredBytes) << "\n";
        if (const std::string note = pagedNote(*v, e); !note.empty()) os << "  " << note << "\n";
        if (flushes) os << "  " << cacheFlushNote(e.requiredBytes) << "\n";
        if (v->oom) {
            os << "  PyTorch would stop";
            if (!v->oom->stepLabel.empty()) {
                os << " at " << v->oom->stepLabel
                   << (v->oom->firstIteration ? " (first training step"
                       : v->oom->lastBatch > 0
                           ? " (the epoch's last batch, " + std::to_string(v->oom->lastBatch) + " samples"
                           : std::string(" (steady-state step"));
                if (v->oom->sequence > 0) os << ", sequence " << v->oom->sequence;
                os << ")";
            }
            os << " with:\n    torch.OutOfMemoryError: " << v->oom->message << "\n";
        }
    }
    if (m) {
        os << "Largest batch that fits: " << m->largest << (m->capped ? "+" : "");
        if (m->largestMultipleOf8 > 0) os << "  (largest multiple of 8: " << m->largestMultipleOf8 << ")";
        os << "\n";
    }
    if (top > 0) {
        std::vector<const LayerActivation*> rows;
        for (const auto& l : e.layers)
            if (l.savedBytes) rows.push_back(&l);
        std::stable_sort(rows.begin(), rows.end(),
                         [](auto* a, auto* b) { return a->savedBytes > b->savedBytes; });
        if (rows.size() > static_cast<std::size_t>(top)) rows.resize(static_cast<std::size_t>(top));
        os << "\nTop layers by activation memory (saved for backward):\n";
        for (const auto* l : rows) {
            char buf[256];
            std::snprintf(buf, sizeof buf, "  %-40s %-18s %12s  %5.1f%%\n", l->path.c_str(), l->op.c_str(),
                          formatBytes(l->savedBytes).c_str(), 100.0 * l->shareOfPeak);
            os << buf;
        }
    }
    return os.str();
}

static std::string compareRow(const char* batch, const char* label, std::uint64_t measured,
                              std::uint64_t estimated) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "  %6s  %-30s %12s %12s  %+7.2f%%\n", batch, label,
                  formatBytes(measured).c_str(), formatBytes(estimated).c_str(),
                  100.0 * relativeError(estimated, measured));
    return buf;
}

std::string measuredText(const std::string& source, const Measurement& measurement,
                         const std::vector<MeasurementComparison>& comparisons) {
    std::ostringstream os;
    os << "\nMeasured vs estimated (" << source;
    if (!measurement.model.empty()) os << ": " << measurement.model;
    if (!measurement.device.empty()) os << " on " << measurement.device;
    if (!measurement.torchVersion.empty()) os << ", torch " << measurement.torchVersion;
    if (!measurement.optimizer.empty()) os << ", " << measurement.optimizer;
    os << "):\n";
    char head[200];
    std::snprintf(head, sizeof head, "  %6s  %-30s %12s %12s  %8s\n", "batch", "figure", "measured",
                  "estimated", "error");
    os << head;
    for (const auto& c : comparisons) {
        const MeasuredStep& m = c.measured;
        const std::string batch = std::to_string(m.batch);
        os << compareRow(batch.c_str(), "parameters", m.parameterBytes, c.estimatedParameterBytes);
        os << compareRow("", "gradients", m.gradientBytes, c.estimatedGradientBytes);
        os << compareRow("", "optimizer states", m.optimizerStateBytes, c.estimatedOptimizerStateBytes);
        os << compareRow("", "saved activations", m.savedActivationBytes, c.estimatedSavedActivationBytes);
        os << compareRow("", c.comparesPeak ? "peak allocated (charted)" : "sum of the four (charted)",
                         c.measuredBytes, c.estimatedBytes);
    }
    os << "Error = (estimated - measured) / measured. Charted: max_memory_allocated vs peak allocated when "
          "measured on CUDA, else the sum of the four figures.\n";
    return os.str();
}

std::string sweepText(const std::vector<SweepPoint>& points, std::optional<std::uint64_t> usable) {
    // With a GPU, "required" is what that GPU shows (Estimator::fitAt), as in the verdict.
    std::ostringstream os;
    os << "   batch   peak allocated     required" << (usable ? "   on this GPU" : "") << "\n";
    bool anyFlush = false;
    for (const auto& p : points) {
        char buf[160];
        const std::uint64_t required = p.gpuRequiredBytes();
        std::snprintf(buf, sizeof buf, "%8lld %16s %12s", static_cast<long long>(p.batch),
                      formatBytes(p.peakAllocatedBytes).c_str(), formatBytes(required).c_str());
        os << buf;
        if (usable && p.fit) {
            os << "   " << fitLabel(*p.fit);
            anyFlush = anyFlush || (p.fit->fits && p.fit->cacheReleased);
        }
        os << "\n";
    }
    if (anyFlush)
        os << "fits with cache flushes: PyTorch frees its cached blocks when a cudaMalloc fails and retries "
              "(slower steps, no OOM); usable: "
           << formatBytes(*usable) << "\n";
    return os.str();
}

} // namespace batchfit
