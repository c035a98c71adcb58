#include "gui/document/model_edits.h"

#include <algorithm>
#include <functional>

namespace batchfit {

namespace {

bool nameTaken(const std::vector<Layer>& list, const std::string& name) {
    return std::any_of(list.begin(), list.end(), [&](const Layer& l) { return l.name == name; });
}

} // namespace

std::string ModelEdits::uniqueName(const std::vector<Layer>& siblings, const std::string& base) {
    std::string stem = base.empty() ? std::string("layer") : base;
    if (!nameTaken(siblings, stem)) return stem;
    // Strip an existing "_N" suffix so duplicating "fc_2" gives "fc_3", not "fc_2_2".
    const auto underscore = stem.rfind('_');
    if (underscore != std::string::npos && underscore + 1 < stem.size() &&
        std::all_of(stem.begin() + static_cast<std::ptrdiff_t>(underscore) + 1, stem.end(),
                    [](char c) { return c >= '0' && c <= '9'; }))
        stem.resize(underscore);
    for (int i = 2;; ++i) {
        std::string candidate = stem + "_" + std::to_string(i);
        if (!nameTaken(siblings, candidate)) return candidate;
    }
}

LayerAddress ModelEdits::insertAfter(Model& model, const LayerAddress& at, Layer layer) {
    std::vector<Layer>* list = at.isEmpty() ? &model.layers : at.container(model);
    if (!list) return {};
    layer.name = uniqueName(*list, layer.name);
    const int pos = at.isEmpty() ? static_cast<int>(list->size())
                                 : std::min(at.index() + 1, static_cast<int>(list->size()));
    list->insert(list->begin() + pos, std::move(layer));
    return at.isEmpty() ? LayerAddress::top(pos) : at.sibling(pos);
}

LayerAddress ModelEdits::duplicate(Model& model, const LayerAddress& at) {
    const Layer* src = at.resolve(model);
    if (!src) return {};
    Layer copy = *src;
    return insertAfter(model, at, std::move(copy));
}

LayerAddress ModelEdits::remove(Model& model, const LayerAddress& at, bool* removed) {
    if (removed) *removed = false;
    auto* list = at.container(model);
    if (!list || at.index() < 0 || at.index() >= static_cast<int>(list->size())) return {};
    list->erase(list->begin() + at.index());
    if (removed) *removed = true;
    if (!list->empty()) return at.sibling(std::min(at.index(), static_cast<int>(list->size()) - 1));
    return at.parent();
}

LayerAddress ModelEdits::move(Model& model, const LayerAddress& at, int delta) {
    auto* list = at.container(model);
    if (!list) return {};
    const int from = at.index();
    const int to = from + delta;
    if (from < 0 || from >= static_cast<int>(list->size()) || to < 0 || to >= static_cast<int>(list->size()))
        return {};
    if (from < to)
        std::rotate(list->begin() + from, list->begin() + from + 1, list->begin() + to + 1);
    else
        std::rotate(list->begin() + to, list->begin() + from, list->begin() + from + 1);
    return at.sibling(to);
}

LayerAddress ModelEdits::wrapInBlock(Model& model, const LayerAddress& at) {
    Layer* target = at.resolve(model);
    if (!target) return {};
    auto* list = at.container(model);
    Layer block;
    block.layers.push_back(std::move(*target));
    list->erase(list->begin() + at.index());
    block.name = uniqueName(*list, "block");
    list->insert(list->begin() + at.index(), std::move(block));
    return at;
}

namespace {

void forEachChildList(Layer& block, const std::function<void(std::vector<Layer>&)>& f) {
    f(block.layers);
    f(block.shortcutLayers);
    f(block.after);
}

void setAll(std::vector<Layer>& list, bool trainable, bool& changed) {
    for (Layer& l : list) {
        changed = changed || l.trainable != trainable;
        l.trainable = trainable;
        if (l.isBlock()) forEachChildList(l, [&](std::vector<Layer>& c) { setAll(c, true, changed); });
    }
}

/// Returns true once `target` was reached (the layers from there on train, those before are frozen).
bool freezeUntil(std::vector<Layer>& list, const Layer* target, bool reached, bool& changed) {
    for (Layer& l : list) {
        if (&l == target) {
            reached = true;
            changed = changed || !l.trainable;
            l.trainable = true;
            if (l.isBlock()) forEachChildList(l, [&](std::vector<Layer>& c) { setAll(c, true, changed); });
            continue;
        }
        if (!l.isBlock()) {
            changed = changed || l.trainable != reached;
            l.trainable = reached;
            continue;
        }
        // A block: trainable itself (its children decide), unless it lies wholly before the target.
        bool inside = false;
        std::function<bool(const std::vector<Layer>&)> holds = [&](const std::vector<Layer>& c) {
            for (const Layer& x : c)
                if (&x == target ||
                    (x.isBlock() && (holds(x.layers) || holds(x.shortcutLayers) || holds(x.after))))
                    return true;
            return false;
        };
        inside = holds(l.layers) || holds(l.shortcutLayers) || holds(l.after);
        if (!inside && !reached) {
            changed = changed || l.trainable;
            l.trainable = false;
            forEachChildList(l, [&](std::vector<Layer>& c) { setAll(c, true, changed); });
            continue;
        }
        changed = changed || !l.trainable;
        l.trainable = true;
        if (!inside) {
            forEachChildList(l, [&](std::vector<Layer>& c) { setAll(c, true, changed); });
            continue;
        }
        bool r = reached;
        for (auto* c : {&l.layers, &l.shortcutLayers, &l.after}) r = freezeUntil(*c, target, r, changed);
        reached = r;
    }
    return reached;
}

} // namespace

LayerAddress ModelEdits::setTrainable(Model& model, const LayerAddress& at, bool trainable) {
    Layer* target = at.resolve(model);
    if (!target) return {};
    bool changed = target->trainable != trainable;
    if (trainable) {
        // Frozen ancestors: make each trainable, keeping its other children frozen.
        std::vector<LayerAddress> chain;
        for (LayerAddress a = at.parent(); !a.isEmpty(); a = a.parent()) chain.insert(chain.begin(), a);
        for (std::size_t i = 0; i < chain.size(); ++i) {
            Layer* block = chain[i].resolve(model);
            if (!block || block->trainable) continue;
            block->trainable = true;
            changed = true;
            const Layer* keep = (i + 1 < chain.size() ? chain[i + 1] : at).resolve(model);
            forEachChildList(*block, [&](std::vector<Layer>& c) {
                for (Layer& x : c)
                    if (&x != keep) x.trainable = false;
            });
        }
    }
    target = at.resolve(model);
    target->trainable = trainable;
    return changed ? at : LayerAddress();
}

LayerAddress ModelEdits::freezeBefore(Model& model, const LayerAddress& at) {
    const Layer* target = at.resolve(model);
    if (!target) return {};
    bool changed = false;
    freezeUntil(model.layers, target, false, changed);
    return changed ? at : LayerAddress();
}

bool ModelEdits::trainAll(Model& model) {
    bool changed = false;
    setAll(model.layers, true, changed);
    return changed;
}

LayerAddress ModelEdits::setRepeat(Model& model, const LayerAddress& at, std::int64_t repeat) {
    Layer* target = at.resolve(model);
    if (!target || !target->isBlock() || repeat < 1 || target->repeat == repeat) return {};
    target->repeat = repeat;
    return at;
}

} // namespace batchfit
