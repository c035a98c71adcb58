#pragma once
// Where a layer sits in a model: a path of (branch, index) steps from the top-level layer list.
#include "batchfit/model.h"

#include <QMetaType>
#include <QString>
#include <vector>

namespace batchfit {

/// The address of one layer in a Model's tree of layer lists (main layers, shortcut layers, after-merge
/// layers).
class LayerAddress {
public:
    /// Which child list of a block a step goes into (top-level steps use Main).
    enum class Branch { Main, Shortcut, After };
    struct Step {
        Branch branch = Branch::Main;
        int index = 0;
        bool operator==(const Step&) const = default;
    };

    LayerAddress() = default;
    explicit LayerAddress(std::vector<Step> steps) : m_steps(std::move(steps)) {}
    /// A top-level layer.
    static LayerAddress top(int index) { return LayerAddress({Step{Branch::Main, index}}); }

    bool isEmpty() const { return m_steps.empty(); }
    int depth() const { return static_cast<int>(m_steps.size()); }
    const std::vector<Step>& steps() const { return m_steps; }
    const Step& last() const { return m_steps.back(); }
    int index() const { return m_steps.empty() ? -1 : m_steps.back().index; }

    /// The enclosing block's address (empty for a top-level layer).
    LayerAddress parent() const;
    /// A child of this block in the given branch.
    LayerAddress child(Branch branch, int index) const;
    /// The same list, another index.
    LayerAddress sibling(int index) const;

    /// The addressed layer, or nullptr if the address does not exist in the model.
    const Layer* resolve(const Model& model) const;
    Layer* resolve(Model& model) const;
    /// The list that holds the addressed layer, or nullptr.
    std::vector<Layer>* container(Model& model) const;
    const std::vector<Layer>* container(const Model& model) const;

    /// A stable text form, e.g. "3/s0/1" (for saving expanded state and tests).
    QString key() const;

    bool operator==(const LayerAddress&) const = default;

private:
    std::vector<Step> m_steps;
};

} // namespace batchfit

Q_DECLARE_METATYPE(batchfit::LayerAddress)
