#pragma once
// Add Layer's menu: a search field, then the ops grouped by family (convolution, normalization, ...).
#include <QMenu>

class QLineEdit;

namespace batchfit {

/// Without a search, one submenu per family; with one, the matching ops (name or description) in one list,
/// and Enter adds the first.
class AddLayerMenu : public QMenu {
    Q_OBJECT

public:
    explicit AddLayerMenu(QWidget* parent = nullptr);

    QLineEdit* searchField() const { return m_search; }
    /// The ops listed at the top level now (the search's matches; empty without a search).
    QStringList matches() const { return m_matches; }

signals:
    void opChosen(const QString& op);

private:
    void rebuild();
    QAction* addOp(QMenu* into, const QString& op);

    QLineEdit* m_search = nullptr;
    QAction* m_searchAction = nullptr;
    QStringList m_matches;
};

} // namespace batchfit
