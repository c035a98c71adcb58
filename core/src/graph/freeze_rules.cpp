#include "graph/freeze_rules.h"

namespace batchfit {

bool globMatch(std::string_view p, std::string_view t) {
    // Iterative matching with one backtrack point for the last '*': linear in practice, no recursion.
    std::size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
    while (ti < t.size()) {
        if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
            ++pi;
            ++ti;
        } else if (pi < p.size() && p[pi] == '*') {
            star = pi++;
            mark = ti;
        } else if (star != std::string_view::npos) {
            pi = star + 1;
            ti = ++mark;
        } else {
            return false;
        }
    }
    while (pi < p.size() && p[pi] == '*') ++pi;
    return pi == p.size();
}

namespace {

/// "h[3].attn.q" -> "h.3.attn.q"
std::string torchName(const std::string& path) {
    std::string out;
    for (char c : path) {
        if (c == '[')
            out += '.';
        else if (c != ']')
            out += c;
    }
    return out;
}

/// The path, its ancestors, and each in PyTorch's spelling.
std::vector<std::string> namesOf(const std::string& path) {
    std::vector<std::string> names;
    std::string cur = path;
    while (!cur.empty()) {
        names.push_back(cur);
        const auto dot = cur.find_last_of(".[");
        if (dot == std::string::npos) break;
        cur = cur.substr(0, dot);
    }
    const std::size_t n = names.size();
    for (std::size_t i = 0; i < n; ++i) {
        auto t = torchName(names[i]);
        if (t != names[i]) names.push_back(std::move(t));
    }
    return names;
}

} // namespace

FreezeRules::FreezeRules(std::vector<std::string> freeze, std::vector<std::string> trainOnly)
    : m_freeze(std::move(freeze)), m_trainOnly(std::move(trainOnly)), m_freezeUsed(m_freeze.size(), false),
      m_trainOnlyUsed(m_trainOnly.size(), false) {}

bool FreezeRules::matches(const std::vector<std::string>& patterns, std::vector<bool>& used,
                          const std::vector<std::string>& names) const {
    bool any = false;
    for (std::size_t i = 0; i < patterns.size(); ++i) {
        for (const auto& n : names) {
            if (globMatch(patterns[i], n)) {
                used[i] = true;
                any = true;
                break;
            }
        }
    }
    return any;
}

bool FreezeRules::trains(const std::string& path, const std::string& module) {
    if (m_freeze.empty() && m_trainOnly.empty()) return true;
    auto names = namesOf(path);
    if (!module.empty())
        for (auto& n : namesOf(module)) names.push_back(std::move(n));
    const bool frozen = matches(m_freeze, m_freezeUsed, names);
    const bool listed = m_trainOnly.empty() || matches(m_trainOnly, m_trainOnlyUsed, names);
    return listed && !frozen;
}

std::vector<std::string> FreezeRules::unmatched() const {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < m_freeze.size(); ++i)
        if (!m_freezeUsed[i]) out.push_back("--freeze '" + m_freeze[i] + "'");
    for (std::size_t i = 0; i < m_trainOnly.size(); ++i)
        if (!m_trainOnlyUsed[i]) out.push_back("--train-only '" + m_trainOnly[i] + "'");
    return out;
}

} // namespace batchfit
