#pragma once
// Every setting of a training set-up, declared once: its key, type, unit, range, default, command-line flag
// and help. The CLI's options, --help and "Copy as CLI Command", the model file's "training" section, the
// JSON report's config, the app's stored settings, the GUI editors' ranges and the report's set-up table are
// derived from this one table (docs/model-format.md, "The training section").
#include "batchfit/result.h"
#include "batchfit/training_setup.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace batchfit {

enum class SettingType {
    Switch,  ///< true or false
    Integer, ///< a whole number in [min, max]
    Number,  ///< a real number in [min, max] (max itself excluded when maxExcluded)
    Choice,  ///< one of `choices`
    Bytes,   ///< a byte count in [min, max]; the CLI and the GUI give it in `unit` (KiB, MiB, GiB)
    Text,    ///< text the setting's own parser accepts and makes canonical (PYTORCH_CUDA_ALLOC_CONF)
    List,    ///< names (layer path patterns): comma-separated on the command line, an array in a file
    Lengths, ///< whole numbers in [min, max] (sequence lengths): comma-separated, or an array
};

/// How the flag takes its value: `--accumulation 4`, a switch that turns the setting on (`--amsgrad`), or one
/// that turns it off (`--no-set-to-none`).
enum class FlagForm { Value, SetsTrue, SetsFalse };

/// A setting's value. Empty (std::monostate): an optional setting left unset (its default applies). Choices
/// and texts hold their canonical names, Bytes an std::int64_t.
using SettingValue = std::variant<std::monostate, bool, std::int64_t, double, std::string,
                                  std::vector<std::string>, std::vector<std::int64_t>>;

/// One setting.
struct SettingInfo {
    std::string key;     ///< JSON path in the training section: "checkpoint_every", "lora.rank"
    std::string flag;    ///< "--checkpoint-every"; empty when the command line has none
    std::string metavar; ///< the value's name in --help: "K"
    std::string label;   ///< English label (report rows, tool tips): "Checkpoint every k blocks"
    std::string help;    ///< --help's description
    SettingType type = SettingType::Integer;
    FlagForm form = FlagForm::Value;
    std::string unit;                 ///< Bytes: "KiB", "MiB" or "GiB" on the command line and in the GUI;
                                      ///< Number: "%" when the GUI shows a fraction as a percentage
    double min = 0, max = 0;          ///< Integer, Number, Bytes, Lengths (bytes for Bytes)
    bool maxExcluded = false;         ///< Number: [min, max)
    bool minExcluded = false;         ///< Number: (min, max]
    std::size_t maxItems = 0;         ///< List, Lengths: at most this many
    std::vector<std::string> choices; ///< Choice: the canonical names, in the order shown
    bool optional = false;            ///< may be unset (empty SettingValue)
    SettingValue defaultValue;        ///< what a new set-up holds
    /// The value in `setup`, and the setter (checks only what the type cannot: validateSetup() checks the
    /// whole set-up).
    std::function<SettingValue(const TrainingSetup&)> get;
    std::function<void(TrainingSetup&, const SettingValue&)> set;
    /// Choice: the canonical name of what `text` names (aliases such as "fp32" for "float32"), or an error.
    std::function<Result<std::string>(std::string_view text)> canonical;

    /// The group a dotted key belongs to ("lora" for "lora.rank"; empty for a top-level key).
    std::string group() const;
    /// The key within its group ("rank" for "lora.rank").
    std::string name() const;
};

/// Every setting, in the order the model file writes them and --help lists them.
const std::vector<SettingInfo>& settingsTable();
/// The setting with this key, or null.
const SettingInfo* findSetting(std::string_view key);
/// The setting whose flag this is ("--context-mib"), or null.
const SettingInfo* findSettingByFlag(std::string_view flag);

/// Checks a value against the setting's type and range: an error names what was expected ("expected an
/// integer from 1 to 1000000, got 0"), without the setting's name (the caller adds the flag or JSON path).
Status checkSettingValue(const SettingInfo& s, const SettingValue& v);
/// The value a command-line (or stored) text gives: "4", "5%", "1536" MiB, "on", "q_proj,v_proj". Errors
/// start with the flag (or the key when it has none): "--checkpoint-every must be between 1 and 1000000,
/// got 0".
Result<SettingValue> parseSettingText(const SettingInfo& s, std::string_view text);
/// The value as the command line takes it back: parseSettingText(s, settingText(s, v)) == v for every
/// valid value (reals in the shortest form that reads back exactly; bytes that are not whole units as
/// "<n>B").
std::string settingText(const SettingInfo& s, const SettingValue& v);
/// True when `v` is the setting's default (an unset optional, or an empty list, counts as its default).
bool isDefaultSetting(const SettingInfo& s, const SettingValue& v);

/// Checks what no single setting can: tp x pp divides the GPUs, several replicas have a strategy, sequence
/// parallelism has tensor parallelism, a custom GPU has its capacity. `where(key)` names a setting in the
/// message ("--tp" on the command line, "$.training.parallel.tp" in a file).
Status validateSetup(const TrainingSetup& setup, const std::function<std::string(const std::string&)>& where);

/// The CLI's "Training set-up:" section of --help, derived from the table (wrapped at 112 columns).
std::string settingsHelp();

} // namespace batchfit
