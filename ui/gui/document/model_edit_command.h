#pragma once
// Undo step for a model edit: the model before and after (models are small, so snapshots are exact and
// cheap).
#include "batchfit/model.h"
#include "gui/document/layer_address.h"

#include <QUndoCommand>

namespace batchfit {

class Document;

/// Swaps the document's model between two snapshots; consecutive edits of one field merge.
class ModelEditCommand : public QUndoCommand {
public:
    ModelEditCommand(Document* doc, Model before, Model after, LayerAddress focus, const QString& text,
                     int mergeId = -1);

    void undo() override;
    void redo() override;
    int id() const override { return m_mergeId; }
    bool mergeWith(const QUndoCommand* other) override;

private:
    Document* m_doc;
    Model m_before;
    Model m_after;
    LayerAddress m_focus;
    int m_mergeId;
};

} // namespace batchfit
