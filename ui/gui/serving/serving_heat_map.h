#pragma once
// Concurrency x context: each cell green where that many sequences of that length fit the KV cache (darker:
// more of it used), red where they do not.
#include "batchfit/serving_plan.h"

#include <QWidget>

namespace batchfit {

/// A painted map of a ServingMap; the tool tip names the cell under the mouse.
class ServingHeatMap : public QWidget {
    Q_OBJECT

public:
    explicit ServingHeatMap(QWidget* parent = nullptr);

    void setMap(const ServingMap& map);
    const ServingMap& map() const { return m_map; }
    /// The text the tool tip shows for a cell.
    QString cellText(std::size_t row, std::size_t column) const;

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

private:
    QRect gridRect() const;

    ServingMap m_map;
};

} // namespace batchfit
