#pragma once
// Maps the core's layer paths ("layer2[1].conv3", "layer2[1].merge") back to layers of the model tree.
#include "batchfit/estimate.h"
#include "batchfit/model.h"
#include "gui/document/layer_address.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace batchfit {

/// The paths the core gives each layer (docs/model-format.md, "Layer paths"), in the core's order.
class LayerPathIndex {
public:
    LayerPathIndex() = default;
    explicit LayerPathIndex(const Model& model);

    /// For each row of Estimate::layers, the layer it belongs to: a merge row maps to its block; the input
    /// row and rows the model does not name (a synthetic loss) map to an empty address.
    std::vector<LayerAddress> resolve(const std::vector<LayerActivation>& rows) const;
    /// The layer a core message is about ("layer2[1].conv3: attribute ..."), when it starts with a path of
    /// this model; std::nullopt otherwise.
    std::optional<LayerAddress> addressInMessage(const std::string& message) const;
    /// Every path in model order (tests).
    std::vector<std::string> paths() const;

private:
    void walk(const std::vector<Layer>& list, const LayerAddress& parent, LayerAddress::Branch branch,
              const std::string& prefix);
    void add(std::string path, LayerAddress address);

    std::vector<std::pair<std::string, LayerAddress>> m_ordered;
    std::unordered_map<std::string, std::size_t> m_byPath;
};

} // namespace batchfit
