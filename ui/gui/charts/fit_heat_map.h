#pragma once
// Batch size (x) against sequence length (y) for a token-sequence model: each cell green when that
// micro-batch fits at that length (darker: more of the usable memory), red when it does not; beside each row
// the largest batch and its tokens per step. Every figure comes from batchfit::computeFitMap (estimation
// service).
#include "batchfit/fit_map.h"

#include <QRect>
#include <QString>
#include <QWidget>
#include <cstdint>

namespace batchfit {

class FitHeatMap : public QWidget {
    Q_OBJECT

public:
    explicit FitHeatMap(QWidget* parent = nullptr);

    /// Shows `map`; `currentSequence` is the model's own length (its row is outlined).
    void setMap(const FitMap& map, std::int64_t currentSequence);
    /// Shows `text` instead of a map (a model whose input is not a sequence, or why the map failed).
    void showExplanation(const QString& text);
    /// "Computing…" until the next setMap().
    void setPending();

    bool hasMap() const { return m_hasMap; }
    int rowCount() const { return m_hasMap ? static_cast<int>(m_map.rows.size()) : 0; }
    const FitMap& map() const { return m_map; }
    /// The text shown instead of the map (empty while a map is shown).
    QString explanation() const { return m_hasMap ? QString() : m_message; }
    /// What row `row` (0: the first of FitMap::rows) says beside the map: largest batch and tokens per step.
    QString rowLabel(int row) const;
    /// The tooltip of a cell.
    QString cellToolTip(int row, int column) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

private:
    struct CellLayout {
        QRect grid;     ///< the cells
        int cellW = 0;  ///< per column
        int cellH = 0;  ///< per row
        int labelX = 0; ///< where the row labels start
        int axisY = 0;  ///< baseline of the batch labels
    };
    CellLayout cellLayout() const;
    /// Row index into m_map.rows drawn at visual line `line` (the longest sequence on top).
    int rowAt(int line) const;
    QColor cellColor(const FitMapCell& cell) const;

    FitMap m_map;
    bool m_hasMap = false;
    std::int64_t m_currentSequence = 0;
    QString m_message;
};

} // namespace batchfit
