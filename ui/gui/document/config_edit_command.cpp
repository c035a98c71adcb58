#include "gui/document/config_edit_command.h"

#include "gui/document/document.h"

namespace batchfit {

ConfigEditCommand::ConfigEditCommand(Document* doc, const TrainingConfig& before, const TrainingConfig& after,
                                     const QString& text, int mergeId)
    : QUndoCommand(text), m_doc(doc), m_before(before), m_after(after), m_mergeId(mergeId) {}

void ConfigEditCommand::undo() {
    m_doc->applyConfigState(m_before);
}

void ConfigEditCommand::redo() {
    m_doc->applyConfigState(m_after);
}

bool ConfigEditCommand::mergeWith(const QUndoCommand* other) {
    const auto* o = dynamic_cast<const ConfigEditCommand*>(other);
    if (!o || o->m_mergeId != m_mergeId) return false;
    m_after = o->m_after;
    return true;
}

} // namespace batchfit
