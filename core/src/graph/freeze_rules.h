#pragma once
// Which layers train: --freeze and --train-only patterns over layer paths.
#include <string>
#include <string_view>
#include <vector>

namespace batchfit {

/// A shell-style glob ('*' any run of characters, '?' one character; '[' is literal, as in layer paths).
bool globMatch(std::string_view pattern, std::string_view text);

/// The patterns of --freeze and --train-only, matched against a layer's path and its ancestors' paths
/// ("layer1[0].conv1" is also "layer1[0]" and "layer1"), each in BatchFit's form and in PyTorch's
/// module-name form ("layer1.0.conv1"), so that either spelling works.
class FreezeRules {
public:
    FreezeRules(std::vector<std::string> freeze, std::vector<std::string> trainOnly);
    /// False when the layer at `path` is frozen by the patterns; marks the patterns that matched. `module`:
    /// the PyTorch module the layer came from (an exported layer's "module" attribute), matched too.
    bool trains(const std::string& path, const std::string& module = {});
    /// The patterns that matched no layer so far, each prefixed with its option ("--freeze 'x'").
    std::vector<std::string> unmatched() const;

private:
    bool matches(const std::vector<std::string>& patterns, std::vector<bool>& used,
                 const std::vector<std::string>& names) const;

    std::vector<std::string> m_freeze, m_trainOnly;
    std::vector<bool> m_freezeUsed, m_trainOnlyUsed;
};

} // namespace batchfit
