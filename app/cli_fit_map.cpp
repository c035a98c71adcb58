#include "cli_fit_map.h"

#include "batchfit/hf_import.h"
#include "cli_text.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace batchfit {
Result<FitMap> cliFitMap(const CliOptions& o, const Model& model, const std::string& hfConfigPath) {
    FitMapOptions options;
    options.range = suggestedFitMapRange(model);
    if (o.seqFrom) options.range.from = *o.seqFrom;
    if (o.seqTo) options.range.to = *o.seqTo;
    options.range.step = o.seqStep;
    if (hfConfigPath.empty()) return computeFitMap(model, o.config, *o.gpu, options);
    HfImportOptions hf{std::nullopt, o.attention};
    if (o.moeLoad) hf.moeLoad = *o.moeLoad;
    if (o.moeImpl) hf.moeImpl = *o.moeImpl;
    return computeFitMap(
        [&hfConfigPath, &hf](std::int64_t seq) {
            HfImportOptions at = hf;
            at.sequenceLength = seq;
            return importHfConfigFile(hfConfigPath, at);
        },
        o.config, *o.gpu, options);
}

std::string fitMapText(const Model& model, const GpuSpec& gpu, const FitMap& map) {
    std::ostringstream os;
    os << model.name << " on " << gpu.name << " (" << formatBytes(map.usableBytes) << " usable)";
    if (map.accumulationSteps > 1) os << ", " << map.accumulationSteps << " accumulation steps";
    os << ":\n";
    os << "       seq   largest batch   tokens per step   peak at that batch        needs   peaks in\n";
    for (const FitMapRow& r : map.rows) {
        char buf[200];
        if (r.largest.largest == 0) {
            const std::string one = r.requiredAtOne ? "batch 1: " + formatBytes(r.requiredAtOne) : "-";
            std::snprintf(buf, sizeof buf, "%10lld   %13s   %15s   %18s   %10s   %s\n",
                          static_cast<long long>(r.sequence), "does not fit", "-", "-", one.c_str(),
                          r.peakLabel.c_str());
        } else {
            const std::string batch = std::to_string(r.largest.largest) + (r.largest.capped ? "+" : "");
            std::snprintf(buf, sizeof buf, "%10lld   %13s   %15s   %18s   %10s   %s\n",
                          static_cast<long long>(r.sequence), batch.c_str(),
                          grouped(static_cast<std::int64_t>(r.tokensPerStep)).c_str(),
                          formatBytes(r.peakAllocatedAtLargest).c_str(),
                          formatBytes(r.largest.requiredAtLargest).c_str(), r.peakLabel.c_str());
        }
        os << buf;
    }
    const auto head =
        std::find_if(map.rows.begin(), map.rows.end(), [](const FitMapRow& r) { return r.peakInHead; });
    if (head != map.rows.end())
        os << (head == map.rows.begin() ? std::string("At every length here")
                                        : "From sequence " + std::to_string(head->sequence) + " on")
           << " the step peaks in the model's head and loss (the logits), not in its layers; TRL's "
              "SFTTrainer never makes the whole logits (--lm-loss trl-fused).\n";
    const bool none = std::all_of(map.rows.begin(), map.rows.end(),
                                  [](const FitMapRow& r) { return r.largest.largest == 0; });
    if (none)
        os << "Not even batch 1 fits at these lengths: `max-batch` and the GUI's What Would Help? list what "
              "saves memory (--checkpointing every-block, --lora-rank, --optimizer adam8bit, ...).\n";
    return os.str();
}

} // namespace batchfit
