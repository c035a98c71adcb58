#pragma once
// One node of a layer stack: an op layer or a block of layers.
#include "batchfit/attributes.h"

#include <cstdint>
#include <string>
#include <vector>

namespace batchfit {

/// How a block's residual branch is formed.
enum class ShortcutKind { None, Identity, Layers };
/// How the main branch and the shortcut are merged.
enum class MergeKind { Add, Concat };

/// A layer (op non-empty) or a block (op empty): blocks hold children, may repeat and may have a residual.
struct Layer {
    std::string name;
    std::string op;                  ///< op type, e.g. "conv2d"; empty for a block
    Attributes attrs;                ///< op attributes (op layers only)
    std::vector<std::string> inputs; ///< explicit inputs by layer name; empty = previous layer's output
    /// false: its parameters (a block: those of everything inside) are frozen (requires_grad=False): no
    /// gradient, no optimizer state, and ops save only what the gradients that still flow need.
    bool trainable = true;
    std::vector<std::string> frozenParams; ///< op layers: these parameters frozen ("bias"), the others not

    // Block fields.
    std::vector<Layer> layers;    ///< children, run in order
    std::int64_t repeat = 1;      ///< how many times the block runs (weights not shared)
    std::int64_t firstIndex = -1; ///< index of the first repetition in paths; -1 = no index unless repeat > 1
    ShortcutKind shortcut = ShortcutKind::None;
    std::vector<Layer> shortcutLayers; ///< the residual branch when shortcut == Layers
    MergeKind merge = MergeKind::Add;
    std::int64_t mergeDim = 0;   ///< per-sample dim for a concat merge
    std::vector<Layer> after;    ///< layers applied after the merge, inside each repetition
    bool checkpointUnit = false; ///< a unit for "every block" checkpointing even when repeat == 1
    /// "keep_input": each repetition's input lives until the repetition's last op has run, whatever saved it
    /// (the caller's Python reference while a module runs: transformers' `decoder_layer(hidden_states)`)
    bool keepInput = false;

    bool isBlock() const { return op.empty(); }
    bool operator==(const Layer&) const = default;
};

} // namespace batchfit
