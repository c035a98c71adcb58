// What the settings table cannot check one setting at a time, and the --help section it gives.
#include "batchfit/settings.h"

namespace batchfit {

Status validateSetup(const TrainingSetup& setup,
                     const std::function<std::string(const std::string&)>& where) {
    if (setup.gpuId == "custom" && setup.customGpuBytes == 0)
        return makeError(where("gpu_memory_bytes") + ": missing (a \"custom\" GPU needs its capacity)");
    const ParallelConfig& p = setup.config.parallel;
    const std::string gpus = where("parallel.gpus") + " " + std::to_string(p.gpus);
    if (p.gpus % (p.tp * p.pp))
        return makeError((p.pp > 1 ? where("parallel.tp") + " x " + where("parallel.pp") + " " +
                                         std::to_string(p.tp * p.pp)
                                   : where("parallel.tp") + " " + std::to_string(p.tp)) +
                         " must divide " + gpus);
    if (auto problem = sequenceParallelProblem(p); !problem.empty())
        return makeError(where("parallel.sequence_parallel") + ": " + problem);
    if (p.dataParallel() > 1 && p.strategy == ParallelStrategy::None)
        return makeError(
            gpus + (p.tp > 1 ? " with " + where("parallel.tp") + " " + std::to_string(p.tp) : std::string()) +
            " needs a " + where("parallel.strategy") +
            " (ddp, zero1, zero2, zero3, fsdp, fsdp-grad-op, hsdp, fsdp2)");
    return Ok{};
}

namespace {

/// `text` wrapped to `width` columns, every line after the first indented by `indent`.
std::string wrapped(const std::string& text, std::size_t indent, std::size_t width) {
    std::string out, line;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find(' ', start);
        if (end == std::string::npos) end = text.size();
        const std::string word = text.substr(start, end - start);
        if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
            out += line + "\n" + std::string(indent, ' ');
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
        start = end + 1;
    }
    return out + line;
}

} // namespace

std::string settingsHelp() {
    constexpr std::size_t kColumn = 25, kWidth = 112;
    std::string out = "Training set-up:\n";
    for (const SettingInfo& s : settingsTable()) {
        if (s.flag.empty()) continue;
        if (s.key == "serving.engine") out += "\nServing set-up (serve):\n";
        std::string head = "  " + s.flag + (s.metavar.empty() ? "" : " " + s.metavar);
        std::string help = s.help;
        if (s.type == SettingType::Integer) // the range a file and the GUI accept too
            help += " (" + std::to_string(static_cast<long long>(s.min)) + ".." +
                    std::to_string(static_cast<long long>(s.max)) + ")";
        if (head.size() + 2 > kColumn) {
            out += head + "\n" + std::string(kColumn, ' ');
        } else {
            out += head + std::string(kColumn - head.size(), ' ');
        }
        out += wrapped(help, kColumn, kWidth) + "\n";
    }
    return out;
}

} // namespace batchfit
