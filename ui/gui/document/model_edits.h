#pragma once
// Structural edits of a model's layer tree, as plain functions on a Model value (the undo commands snapshot
// it).
#include "batchfit/model.h"
#include "gui/document/layer_address.h"

#include <string>

namespace batchfit {

/// Pure edits of a Model. Each returns the address to select afterwards, or an empty address if nothing
/// changed.
class ModelEdits {
public:
    /// Inserts `layer` after `at` in the same list (or appends at the top level when `at` is empty).
    static LayerAddress insertAfter(Model& model, const LayerAddress& at, Layer layer);
    /// Inserts a copy (with a fresh name) right after the layer.
    static LayerAddress duplicate(Model& model, const LayerAddress& at);
    /// Removes the layer; returns the address of the neighbour to select (may be empty).
    static LayerAddress remove(Model& model, const LayerAddress& at, bool* removed = nullptr);
    /// Moves the layer by `delta` places within its list.
    static LayerAddress move(Model& model, const LayerAddress& at, int delta);
    /// Replaces the layer by a block (repeat 1) that holds it.
    static LayerAddress wrapInBlock(Model& model, const LayerAddress& at);
    /// Sets a block's repeat count (>= 1).
    static LayerAddress setRepeat(Model& model, const LayerAddress& at, std::int64_t repeat);
    /// Freezes (or unfreezes) the layer. Unfreezing a layer inside a frozen block makes the block trainable
    /// and freezes its other children instead, so that only this layer changes.
    static LayerAddress setTrainable(Model& model, const LayerAddress& at, bool trainable);
    /// Freezes every layer before `at` (in model order) and makes `at` and every layer after it train:
    /// "fine-tune from here on". Returns `at`, or empty if nothing changed.
    static LayerAddress freezeBefore(Model& model, const LayerAddress& at);
    /// Makes every layer and block trainable again.
    static bool trainAll(Model& model);
    /// `base`, or `base_2`, `base_3`, ... : a name no layer in `siblings` has.
    static std::string uniqueName(const std::vector<Layer>& siblings, const std::string& base);
};

} // namespace batchfit
