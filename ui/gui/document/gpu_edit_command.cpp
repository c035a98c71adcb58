#include "gui/document/gpu_edit_command.h"

#include "gui/document/document.h"

namespace batchfit {

GpuEditCommand::GpuEditCommand(Document* doc, const GpuSpec& before, const GpuSpec& after,
                               const QString& text)
    : QUndoCommand(text), m_doc(doc), m_before(before), m_after(after) {}

void GpuEditCommand::undo() {
    m_doc->setGpu(m_before);
}

void GpuEditCommand::redo() {
    m_doc->setGpu(m_after);
}

bool GpuEditCommand::mergeWith(const QUndoCommand* other) {
    const auto* o = dynamic_cast<const GpuEditCommand*>(other);
    // Typing a custom capacity digit by digit is one change; picking another GPU is a new step.
    if (!o || m_after.id != "custom" || o->m_after.id != "custom") return false;
    m_after = o->m_after;
    return true;
}

} // namespace batchfit
