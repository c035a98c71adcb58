#pragma once
// A QGuiApplication for rendering without a window system (the CLI's `report` command, tests, CI).

namespace batchfit {

/// Makes sure a QGuiApplication exists: creates one (never destroyed) if there is no application yet, on the
/// offscreen platform unless QT_QPA_PLATFORM says otherwise (a report never opens a window). False if a
/// non-GUI QCoreApplication already exists.
bool ensureGuiApplication();

} // namespace batchfit
