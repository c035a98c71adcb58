#include "gui/document/layer_address.h"

#include <QStringList>
#include <type_traits>

namespace batchfit {

namespace {

template <class ModelT, class LayerT>
auto* containerImpl(ModelT& model, const std::vector<LayerAddress::Step>& steps) {
    using List = std::conditional_t<std::is_const_v<LayerT>, const std::vector<Layer>, std::vector<Layer>>;
    List* list = &model.layers;
    for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
        const auto& s = steps[i];
        if (s.index < 0 || s.index >= static_cast<int>(list->size())) return static_cast<List*>(nullptr);
        LayerT& block = (*list)[static_cast<std::size_t>(s.index)];
        if (!block.isBlock()) return static_cast<List*>(nullptr);
        const auto& next = steps[i + 1];
        switch (next.branch) {
        case LayerAddress::Branch::Main:
            list = &block.layers;
            break;
        case LayerAddress::Branch::Shortcut:
            list = &block.shortcutLayers;
            break;
        case LayerAddress::Branch::After:
            list = &block.after;
            break;
        }
    }
    return list;
}

} // namespace

LayerAddress LayerAddress::parent() const {
    if (m_steps.size() <= 1) return {};
    return LayerAddress(std::vector<Step>(m_steps.begin(), m_steps.end() - 1));
}

LayerAddress LayerAddress::child(Branch branch, int index) const {
    auto steps = m_steps;
    steps.push_back(Step{branch, index});
    return LayerAddress(std::move(steps));
}

LayerAddress LayerAddress::sibling(int index) const {
    auto steps = m_steps;
    if (!steps.empty()) steps.back().index = index;
    return LayerAddress(std::move(steps));
}

std::vector<Layer>* LayerAddress::container(Model& model) const {
    if (m_steps.empty()) return nullptr;
    return containerImpl<Model, Layer>(model, m_steps);
}

const std::vector<Layer>* LayerAddress::container(const Model& model) const {
    if (m_steps.empty()) return nullptr;
    return containerImpl<const Model, const Layer>(model, m_steps);
}

const Layer* LayerAddress::resolve(const Model& model) const {
    const auto* list = container(model);
    if (!list || index() < 0 || index() >= static_cast<int>(list->size())) return nullptr;
    return &(*list)[static_cast<std::size_t>(index())];
}

Layer* LayerAddress::resolve(Model& model) const {
    auto* list = container(model);
    if (!list || index() < 0 || index() >= static_cast<int>(list->size())) return nullptr;
    return &(*list)[static_cast<std::size_t>(index())];
}

QString LayerAddress::key() const {
    QStringList parts;
    for (const auto& s : m_steps) {
        const char* prefix = s.branch == Branch::Shortcut ? "s" : s.branch == Branch::After ? "a" : "";
        parts << QString::fromLatin1(prefix) + QString::number(s.index);
    }
    return parts.join(QLatin1Char('/'));
}

} // namespace batchfit
