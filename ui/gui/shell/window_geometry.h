#pragma once
// Where the main window opens: most of the screen on a first start, the user's own geometry afterwards.
#include <QRect>

namespace batchfit {

/// Pure geometry rules for the main window, so that they can be tested without a screen of each size.
class WindowGeometry {
public:
    /// Screens smaller than this (available area) get the whole available area on a first start.
    static constexpr int kSmallWidth = 1600;
    static constexpr int kSmallHeight = 900;
    /// On larger screens the first window takes this share of the available area, centred ...
    static constexpr double kShare = 0.9;
    /// ... and at most this size (a 4K screen does not get a 3456-pixel-wide window).
    static constexpr int kMaxWidth = 1920;
    static constexpr int kMaxHeight = 1200;

    /// The first-start frame for a screen whose available area is `available`.
    static QRect firstStart(const QRect& available);
    /// True when a first start on `available` should also ask the window manager to maximise.
    static bool startMaximized(const QRect& available);
    /// `saved` moved and shrunk as little as needed to lie inside `available` (a window saved on a larger or
    /// disconnected screen).
    static QRect clamped(const QRect& saved, const QRect& available);
};

} // namespace batchfit
