#pragma once
// The layer stack: a tree of layers and blocks with structural edit actions, and the editor of the selected
// row.
#include "gui/document/layer_address.h"

#include <QStringList>
#include <QWidget>

class QAction;
class QMenu;
class QToolBar;
class QTreeView;

namespace batchfit {

class AddLayerMenu;

class Document;
class LayerEditor;
class LayerTreeModel;

/// Tree view + actions (add, duplicate, delete, move, wrap in block, set repeat) + LayerEditor.
class LayerStackPanel : public QWidget {
    Q_OBJECT

public:
    explicit LayerStackPanel(Document* doc, QWidget* parent = nullptr);

    LayerTreeModel* treeModel() const { return m_model; }
    QTreeView* treeView() const { return m_view; }
    LayerEditor* editor() const { return m_editor; }
    /// The width that shows every column of the layer tree without scrolling sideways.
    int preferredWidth() const;
    /// The structural edit actions, for the Edit menu.
    QList<QAction*> editActions() const;
    LayerAddress currentAddress() const;
    void select(const LayerAddress& address);

    /// The edits (public for tests and the menu).
    void addLayer(const QString& op);
    AddLayerMenu* addLayerMenu() const { return m_addMenu; }
    void duplicateCurrent();
    void deleteCurrent();
    void moveCurrent(int delta);
    void wrapCurrent();
    void setRepeatOfCurrent();
    void freezeBeforeCurrent();

private:
    void onModelChanged();
    void onCurrentChanged();
    void updateActions();
    QStringList expandedKeys() const;
    void restoreExpanded(const QStringList& keys);

    Document* m_doc;
    LayerTreeModel* m_model = nullptr;
    QTreeView* m_view = nullptr;
    LayerEditor* m_editor = nullptr;
    QToolBar* m_toolBar = nullptr;
    AddLayerMenu* m_addMenu = nullptr;
    QAction* m_add = nullptr;
    QAction* m_duplicate = nullptr;
    QAction* m_delete = nullptr;
    QAction* m_up = nullptr;
    QAction* m_down = nullptr;
    QAction* m_wrap = nullptr;
    QAction* m_repeat = nullptr;
    QAction* m_freezeBefore = nullptr;
    QAction* m_trainAll = nullptr;
    bool m_replaced = false;
};

} // namespace batchfit
