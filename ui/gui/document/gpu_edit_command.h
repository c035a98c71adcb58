#pragma once
// Undo step for a change of GPU (the training panel's GPU list and custom capacity).
#include "batchfit/gpu.h"

#include <QUndoCommand>

namespace batchfit {

class Document;

/// Swaps the document's GPU between two values; consecutive custom-capacity changes merge into one step.
class GpuEditCommand : public QUndoCommand {
public:
    GpuEditCommand(Document* doc, const GpuSpec& before, const GpuSpec& after, const QString& text);

    void undo() override;
    void redo() override;
    int id() const override { return kMergeId; }
    bool mergeWith(const QUndoCommand* other) override;

private:
    static constexpr int kMergeId = 0x6770; // "gp"
    Document* m_doc;
    GpuSpec m_before;
    GpuSpec m_after;
};

} // namespace batchfit
