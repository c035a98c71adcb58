#include "batchfit/cli_command.h"

#include "batchfit/settings.h"

#include <charconv>

namespace batchfit {

std::string shellQuote(const std::string& s) {
    if (!s.empty() &&
        s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=%+,@") ==
            std::string::npos)
        return s;
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

CliCommand cliCommand(const std::string& modelOption, const std::string& modelValue,
                      const TrainingConfig& config, const GpuSpec& gpu, std::int64_t batch) {
    CliCommand c;
    auto& a = c.arguments;
    a = {"estimate", modelOption, modelValue, "--batch", std::to_string(batch), "--gpu"};
    if (gpu.id == "custom") { // GiB in the shortest form that reads back to the same bytes
        char buf[64];
        const auto [end, ec] =
            std::to_chars(buf, buf + sizeof buf, static_cast<double>(gpu.memoryBytes) / double(1ull << 30));
        a.push_back(std::string(buf, ec == std::errc() ? end : buf) + "GiB");
    } else {
        a.push_back(gpu.id);
    }
    TrainingSetup setup;
    setup.batch = batch;
    setup.config = config;
    // Every setting that differs from its default, in the table's order (batchfit/settings.h).
    for (const SettingInfo& s : settingsTable()) {
        if (s.flag.empty() || s.flag == "--gpu" || s.flag == "--batch") continue;
        const SettingValue v = s.get(setup);
        if (isDefaultSetting(s, v)) continue;
        a.push_back(s.flag);
        if (s.form == FlagForm::Value) a.push_back(settingText(s, v));
    }
    // --quant alone turns checkpointing on (applyQuantDefaults): say "none" when it is off
    if (config.quant.enabled() && config.quant.prepare && config.checkpointing == Checkpointing::None) {
        a.push_back("--checkpointing");
        a.push_back(std::string(checkpointingName(config.checkpointing)));
    }
    c.line = "batchfit-cli";
    for (const std::string& arg : a) c.line += " " + shellQuote(arg);
    return c;
}

} // namespace batchfit
