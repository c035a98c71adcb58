#pragma once
// A chart legend laid out as a flow of entries that wraps onto more lines, never overlapping the plot.
#include "report/report_canvas.h"

#include <QColor>
#include <QString>
#include <vector>

namespace batchfit {

class ChartLegend {
public:
    enum class Kind { Swatch, Line, DashedLine, Marker, Cross, Ring };

    void add(Kind kind, const QColor& color, const QString& label) {
        m_entries.push_back({kind, color, label});
    }
    /// Height the entries need at `width`.
    double height(const ReportCanvas& canvas, const QFont& font, double width) const;
    void paint(ReportCanvas& canvas, const QFont& font, const QRectF& rect) const;
    /// Draws the sample of one kind in a small box (also used for markers on the plot).
    static void paintSample(QPainter& p, Kind kind, const QColor& color, const QRectF& box);

private:
    struct Entry {
        Kind kind;
        QColor color;
        QString label;
    };
    /// Line index of every entry at `width`.
    std::vector<int> lineOf(const ReportCanvas& canvas, const QFont& font, double width) const;
    double entryWidth(const ReportCanvas& canvas, const QFont& font, const Entry& e) const;

    std::vector<Entry> m_entries;
};

} // namespace batchfit
