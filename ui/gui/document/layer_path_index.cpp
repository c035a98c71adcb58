#include "gui/document/layer_path_index.h"

namespace batchfit {

namespace {

// The same joining rule as the core's graph builder: "a" + "b" = "a.b", "a" + "[1]" = "a[1]".
std::string joinPath(const std::string& prefix, const std::string& seg) {
    if (prefix.empty()) return seg;
    if (seg.empty()) return prefix;
    if (seg[0] == '[') return prefix + seg;
    return prefix + "." + seg;
}

} // namespace

LayerPathIndex::LayerPathIndex(const Model& model) {
    walk(model.layers, {}, LayerAddress::Branch::Main, "");
}

void LayerPathIndex::add(std::string path, LayerAddress address) {
    m_byPath.emplace(path, m_ordered.size());
    m_ordered.emplace_back(std::move(path), std::move(address));
}

void LayerPathIndex::walk(const std::vector<Layer>& list, const LayerAddress& parent,
                          LayerAddress::Branch branch, const std::string& prefix) {
    for (int i = 0; i < static_cast<int>(list.size()); ++i) {
        const Layer& l = list[static_cast<std::size_t>(i)];
        const LayerAddress addr = parent.isEmpty() ? LayerAddress::top(i) : parent.child(branch, i);
        if (!l.isBlock()) {
            add(joinPath(prefix, l.name), addr);
            continue;
        }
        const bool indexed = l.repeat > 1 || l.firstIndex >= 0;
        const std::int64_t first = l.firstIndex >= 0 ? l.firstIndex : 0;
        for (std::int64_t r = 0; r < l.repeat; ++r) {
            const std::string seg = l.name + (indexed ? "[" + std::to_string(first + r) + "]" : "");
            const std::string path = joinPath(prefix, seg);
            walk(l.layers, addr, LayerAddress::Branch::Main, path);
            if (l.shortcut != ShortcutKind::None) {
                if (l.shortcut == ShortcutKind::Layers)
                    walk(l.shortcutLayers, addr, LayerAddress::Branch::Shortcut, path);
                add(path + ".merge", addr);
            }
            walk(l.after, addr, LayerAddress::Branch::After, path);
        }
    }
}

std::vector<LayerAddress> LayerPathIndex::resolve(const std::vector<LayerActivation>& rows) const {
    std::vector<LayerAddress> out(rows.size());
    std::size_t next = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const std::string& path = rows[i].path;
        // Fast path: the core lists layers in model order, so the next expected path usually matches.
        if (next < m_ordered.size() && m_ordered[next].first == path) {
            out[i] = m_ordered[next++].second;
            continue;
        }
        auto it = m_byPath.find(path);
        if (it != m_byPath.end()) {
            out[i] = m_ordered[it->second].second;
            next = it->second + 1;
        }
    }
    return out;
}

std::optional<LayerAddress> LayerPathIndex::addressInMessage(const std::string& message) const {
    // Messages may start with a file name ("net.json: conv1: ..."): try each "prefix: " in turn.
    for (std::size_t from = 0, colon; (colon = message.find(": ", from)) != std::string::npos;
         from = colon + 2) {
        auto it = m_byPath.find(message.substr(from, colon - from));
        if (it != m_byPath.end()) return m_ordered[it->second].second;
    }
    return std::nullopt;
}

std::vector<std::string> LayerPathIndex::paths() const {
    std::vector<std::string> out;
    for (const auto& e : m_ordered) out.push_back(e.first);
    return out;
}

} // namespace batchfit
