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

std::string pythonLiteral(const std::string& s) {
    // A number only when Python prints it back the same (so "0.30" stays the text the CLI was given).
    double d = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
    char buf[64];
    const auto [printed, ec2] = std::to_chars(buf, buf + sizeof buf, d);
    if (!s.empty() && ec == std::errc() && end == s.data() + s.size() && ec2 == std::errc() &&
        std::string(buf, printed) == s)
        return s;
    std::string q = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') q += '\\';
        q += c;
    }
    return q + "\"";
}

namespace {

/// The keyword a flag is under in the Python package: "--lora-rank" -> "lora_rank", "--batch" ->
/// "batch_size".
std::string pythonKeyword(const std::string& flag) {
    if (flag == "--batch") return "batch_size";
    std::string k = flag.substr(2);
    for (char& c : k)
        if (c == '-') c = '_';
    return k;
}

} // namespace

std::string pythonEstimateCall(const std::vector<std::string>& a) {
    if (a.size() < 3) return {};
    std::string call = "import batchfit\nbatchfit.estimate(" + pythonLiteral(a[2]);
    for (std::size_t i = 3; i < a.size(); ++i) {
        const SettingInfo* s = findSettingByFlag(a[i]);
        const bool takesValue = !s || s->form == FlagForm::Value;
        call += ", " + pythonKeyword(a[i]) + "=";
        call += takesValue && i + 1 < a.size() ? pythonLiteral(a[++i]) : std::string("True");
    }
    return call + ")";
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
    c.python = pythonEstimateCall(a);
    return c;
}

} // namespace batchfit
