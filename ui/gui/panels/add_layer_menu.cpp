#include "gui/panels/add_layer_menu.h"

#include "gui/document/op_catalogue.h"

#include <QLineEdit>
#include <QMap>
#include <QWidgetAction>

namespace batchfit {

AddLayerMenu::AddLayerMenu(QWidget* parent) : QMenu(parent) {
    setToolTipsVisible(true);
    m_search = new QLineEdit(this);
    m_search->setObjectName(QStringLiteral("addLayerSearch"));
    m_search->setPlaceholderText(tr("Search ops…"));
    m_search->setClearButtonEnabled(true);
    auto* searchAction = new QWidgetAction(this);
    searchAction->setDefaultWidget(m_search);
    m_searchAction = searchAction;
    addAction(m_searchAction);
    connect(m_search, &QLineEdit::textChanged, this, &AddLayerMenu::rebuild);
    connect(m_search, &QLineEdit::returnPressed, this, [this] {
        if (m_matches.isEmpty()) return;
        emit opChosen(m_matches.first());
        close();
    });
    connect(this, &QMenu::aboutToShow, this, [this] {
        m_search->clear();
        m_search->setFocus();
    });
    rebuild();
}

QAction* AddLayerMenu::addOp(QMenu* into, const QString& op) {
    QAction* a = into->addAction(op, this, [this, op] { emit opChosen(op); });
    a->setToolTip(OpCatalogue::description(op));
    return a;
}

void AddLayerMenu::rebuild() {
    for (QAction* a : actions())
        if (a != m_searchAction) {
            removeAction(a);
            if (QMenu* sub = a->menu()) sub->deleteLater();
            a->deleteLater();
        }
    m_matches.clear();
    const QString text = m_search->text().trimmed();
    if (!text.isEmpty()) {
        for (const QString& op : OpCatalogue::ops())
            if (op.contains(text, Qt::CaseInsensitive) ||
                OpCatalogue::description(op).contains(text, Qt::CaseInsensitive) ||
                OpCatalogue::familyName(OpCatalogue::family(op)).contains(text, Qt::CaseInsensitive))
                m_matches << op;
        addSeparator();
        for (const QString& op : m_matches) addOp(this, op);
        if (m_matches.isEmpty()) addAction(tr("No op matches '%1'").arg(text))->setEnabled(false);
        return;
    }
    QMap<int, QStringList> byFamily;
    for (const QString& op : OpCatalogue::ops()) byFamily[static_cast<int>(OpCatalogue::family(op))] << op;
    addSeparator();
    for (auto it = byFamily.cbegin(); it != byFamily.cend(); ++it) {
        QMenu* sub = addMenu(OpCatalogue::familyName(static_cast<OpCatalogue::Family>(it.key())));
        sub->setToolTipsVisible(true);
        for (const QString& op : it.value()) addOp(sub, op);
    }
}

} // namespace batchfit
