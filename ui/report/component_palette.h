#pragma once
// The one colour palette for memory components, shared by the report and the desktop app.
#include "batchfit/estimate.h"

#include <QColor>

namespace batchfit {

/// Colours of the five components, the overheads (allocator reserve + CUDA context) and the chart's lines.
/// Okabe-Ito hues: distinguishable with the common colour-vision deficiencies, printable on white.
class ComponentPalette {
public:
    static QColor color(Component c) {
        switch (c) {
        case Component::Parameters:
            return QColor(0x00, 0x72, 0xB2); // blue
        case Component::Gradients:
            return QColor(0xE6, 0x9F, 0x00); // orange
        case Component::OptimizerStates:
            return QColor(0x00, 0x9E, 0x73); // bluish green
        case Component::Activations:
            return QColor(0x56, 0xB4, 0xE9); // sky blue
        case Component::Temporaries:
            return QColor(0xCC, 0x79, 0xA7); // reddish purple
        }
        return QColor(Qt::gray);
    }
    /// Allocator reserve and CUDA context (outside the allocator's counters).
    static QColor overhead() { return QColor(0xBD, 0xBD, 0xBD); }
    /// The GPU's capacity and the usable line (capacity minus the margin).
    static QColor capacity() { return QColor(0xD5, 0x5E, 0x00); }
    /// The chosen batch and other markers.
    static QColor marker() { return QColor(0x21, 0x21, 0x21); }
    static QColor fits() { return QColor(0x1B, 0x7F, 0x3B); }
    static QColor doesNotFit() { return QColor(0xB3, 0x26, 0x1E); }
    static QColor text() { return QColor(0x21, 0x21, 0x21); }
    static QColor mutedText() { return QColor(0x61, 0x61, 0x61); }
    static QColor grid() { return QColor(0xE0, 0xE0, 0xE0); }
};

} // namespace batchfit
