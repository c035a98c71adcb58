#include "gui/document/model_edit_command.h"

#include "gui/document/document.h"

namespace batchfit {

ModelEditCommand::ModelEditCommand(Document* doc, Model before, Model after, LayerAddress focus,
                                   const QString& text, int mergeId)
    : QUndoCommand(text), m_doc(doc), m_before(std::move(before)), m_after(std::move(after)),
      m_focus(std::move(focus)), m_mergeId(mergeId) {}

void ModelEditCommand::undo() {
    m_doc->applyModelState(m_before, m_focus);
}

void ModelEditCommand::redo() {
    m_doc->applyModelState(m_after, m_focus);
}

bool ModelEditCommand::mergeWith(const QUndoCommand* other) {
    const auto* o = dynamic_cast<const ModelEditCommand*>(other);
    if (!o || o->m_mergeId != m_mergeId || !(o->m_focus == m_focus)) return false;
    m_after = o->m_after;
    return true;
}

} // namespace batchfit
