#pragma once
// How the memory components look in the app: colour (the report's palette when the report library is built,
// else the same values), translated name and one-sentence explanation.
#include "batchfit/estimate.h"

#include <QColor>
#include <QCoreApplication>
#include <QString>

namespace batchfit {

/// One colour and one translated name per component; readable on light and dark palettes.
class ComponentStyle {
    Q_DECLARE_TR_FUNCTIONS(batchfit::ComponentStyle)

public:
    /// Slots drawn in stacks: the five components, then the overhead (allocator reserve + CUDA context).
    static constexpr int kSlotCount = kComponentCount + 1;
    static constexpr int kOverheadSlot = kComponentCount;

    static QColor color(int slot);
    static QColor color(Component c) { return color(static_cast<int>(c)); }
    /// "Model parameters", "Gradients", ... ; slot kOverheadSlot is "Overhead".
    static QString name(int slot);
    static QString name(Component c) { return name(static_cast<int>(c)); }
    /// One sentence: what the component is.
    static QString explanation(int slot);
    /// Colour of the out-of-memory region and of the "does not fit" verdict.
    static QColor oomColor();
    static QColor fitsColor();
    /// The capacity and usable lines.
    static QColor capacityColor();
    /// A colour made readable as text on `background` (lightened on dark backgrounds).
    static QColor readableOn(const QColor& color, const QColor& background);
    /// A wrapping rich-text legend: a swatch and the name of each slot, then the out-of-memory region.
    static QString legendHtml();
    /// Whether a widget palette is dark (window colour lightness below the middle).
    static bool isDark(const QColor& window);
};

} // namespace batchfit
