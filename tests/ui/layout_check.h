#pragma once
// What a person would call a broken layout, as checks: widgets on top of each other, text cut off, widgets
// squeezed below the size their layout asks for.
#include <QStringList>

class QWidget;

namespace batchfit::test {

/// Problems in the visible widgets under `root`, one line each ("cut: QLabel 'verdict' ..."); empty when
/// none. Looks at siblings placed by the same layout (overlap), labels (text wider or taller than the label,
/// except labels that elide on purpose) and widgets smaller than their minimum size hint.
QStringList layoutProblems(QWidget* root);

} // namespace batchfit::test
