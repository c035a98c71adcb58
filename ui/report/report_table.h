#pragma once
// A table of the report as text cells: painted in PDF/PNG, written as Markdown.
#include <QColor>
#include <QString>
#include <QStringList>
#include <vector>

namespace batchfit {

struct ReportTable {
    struct Column {
        QString title;
        double weight = 1;    ///< share of the width left to stretching columns
        bool stretch = false; ///< takes the width the others leave; else fits its text
        Qt::Alignment align = Qt::AlignLeft;
        Qt::TextElideMode elide = Qt::ElideRight; ///< how a cell too long for its column is shortened
    };
    struct Row {
        QStringList cells;
        QColor swatch; ///< a colour square before the first cell (invalid: none)
        bool bold = false;
        bool ruleAbove = false; ///< a line above the row (starts a group)
    };

    std::vector<Column> columns;
    std::vector<Row> rows;
};

} // namespace batchfit
