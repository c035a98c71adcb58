#include "gui/document/model_edits.h"

#include <algorithm>

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

LayerAddress ModelEdits::setRepeat(Model& model, const LayerAddress& at, std::int64_t repeat) {
    Layer* target = at.resolve(model);
    if (!target || !target->isBlock() || repeat < 1 || target->repeat == repeat) return {};
    target->repeat = repeat;
    return at;
}

} // namespace batchfit
