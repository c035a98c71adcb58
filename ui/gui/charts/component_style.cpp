#include "gui/charts/component_style.h"

#ifdef BATCHFIT_HAVE_REPORT
#include "report/component_palette.h"
#endif

namespace batchfit {

#ifdef BATCHFIT_HAVE_REPORT
QColor ComponentStyle::color(int slot) {
    if (slot >= 0 && slot < kComponentCount) return ComponentPalette::color(static_cast<Component>(slot));
    return ComponentPalette::overhead();
}
QColor ComponentStyle::oomColor() {
    return ComponentPalette::doesNotFit();
}
QColor ComponentStyle::fitsColor() {
    return ComponentPalette::fits();
}
QColor ComponentStyle::capacityColor() {
    return ComponentPalette::capacity();
}
#else
// The report's palette (ui/report/component_palette.h, Okabe-Ito hues), for builds without the report
// library.
QColor ComponentStyle::color(int slot) {
    switch (slot) {
    case 0:
        return QColor(0x00, 0x72, 0xB2); // parameters: blue
    case 1:
        return QColor(0xE6, 0x9F, 0x00); // gradients: orange
    case 2:
        return QColor(0x00, 0x9E, 0x73); // optimizer states: bluish green
    case 3:
        return QColor(0x56, 0xB4, 0xE9); // activations: sky blue
    case 4:
        return QColor(0xCC, 0x79, 0xA7); // temporaries: reddish purple
    default:
        return QColor(0xBD, 0xBD, 0xBD); // overhead: grey
    }
}
QColor ComponentStyle::oomColor() {
    return QColor(0xB3, 0x26, 0x1E);
}
QColor ComponentStyle::fitsColor() {
    return QColor(0x1B, 0x7F, 0x3B);
}
QColor ComponentStyle::capacityColor() {
    return QColor(0xD5, 0x5E, 0x00);
}
#endif

QColor ComponentStyle::readableOn(const QColor& color, const QColor& background) {
    return isDark(background) ? color.lighter(170) : color;
}

QString ComponentStyle::name(int slot) {
    switch (slot) {
    case 0:
        return tr("Model parameters");
    case 1:
        return tr("Gradients");
    case 2:
        return tr("Optimizer states");
    case 3:
        return tr("Activations");
    case 4:
        return tr("Temporaries");
    default: // the same words as the breakdown table's two rows and the report's legend
        return tr("Allocator reserve + CUDA context");
    }
}

QString ComponentStyle::explanation(int slot) {
    switch (slot) {
    case 0:
        return tr("The weights and buffers of the model on the GPU (including half-precision copies).");
    case 1:
        return tr("The .grad tensors of every trainable parameter, filled during the backward pass.");
    case 2:
        return tr("What the optimizer keeps per parameter, e.g. Adam's two moments and fp32 master weights.");
    case 3:
        return tr("Forward activations saved for the backward pass; they grow with the batch size.");
    case 4:
        return tr("Short-lived buffers of single operations (workspaces, gradients of activations) live at "
                  "the peak.");
    default:
        return tr("Memory outside PyTorch's tensors: the caching allocator's reserve and the CUDA context.");
    }
}

QString ComponentStyle::legendHtml() {
    QString html;
    auto item = [&html](const QColor& c, const QString& name) {
        // One item never breaks: Chinese names have no spaces, and a line may otherwise end inside one
        // ("优化 / 器状态"). Lines break only between items.
        QString glued; // U+2060 WORD JOINER between characters: Qt honours it where it ignores <nobr>
        for (const QChar ch : name) {
            if (!glued.isEmpty()) glued += QChar(0x2060);
            glued += ch == QLatin1Char(' ') ? QChar(0x00A0) : ch;
        }
        html += QStringLiteral("<span style='color:%1; font-size:large'>■</span>&nbsp;%2&nbsp;&nbsp; ")
                    .arg(c.name(), glued.toHtmlEscaped());
    };
    for (int slot = kSlotCount - 1; slot >= 0; --slot) item(color(slot), name(slot));
    QColor oom = oomColor();
    oom.setAlpha(90);
    item(oom, tr("Does not fit"));
    return html;
}

bool ComponentStyle::isDark(const QColor& window) {
    return window.lightness() < 128;
}

} // namespace batchfit
