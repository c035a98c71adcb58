#pragma once
// Undo step for a change of the training set-up (options panel, what-if levers).
#include "batchfit/training_config.h"

#include <QUndoCommand>

namespace batchfit {

class Document;

/// Swaps the document's training set-up between two values; consecutive changes of one option merge.
class ConfigEditCommand : public QUndoCommand {
public:
    ConfigEditCommand(Document* doc, const TrainingConfig& before, const TrainingConfig& after,
                      const QString& text, int mergeId = -1);

    void undo() override;
    void redo() override;
    int id() const override { return m_mergeId; }
    bool mergeWith(const QUndoCommand* other) override;

private:
    Document* m_doc;
    TrainingConfig m_before;
    TrainingConfig m_after;
    int m_mergeId;
};

} // namespace batchfit
