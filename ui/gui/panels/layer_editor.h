#pragma once
// The editor panel for the selected row: the input (shape, dtype), an op layer (name, op, inputs, attributes)
// or a block (name, repeat, residual shortcut, merge, checkpoint unit). Every change is an undoable edit.
#include "batchfit/attributes.h"
#include "gui/document/layer_address.h"

#include <QWidget>
#include <functional>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QStackedWidget;
class QTableView;
class QToolButton;

namespace batchfit {

class AttributeTableModel;
class Document;

/// Edits one layer of the document's model; explains what is wrong when an input does not parse.
class LayerEditor : public QWidget {
    Q_OBJECT

public:
    explicit LayerEditor(Document* doc, QWidget* parent = nullptr);

    /// Edits the input (`isInput`), the layer at `address`, or nothing (empty address, not input).
    void setTarget(const LayerAddress& address, bool isInput);
    /// Shows the core's message about the whole model (or clears it with an empty string).
    void setModelProblem(const QString& message);
    /// The message shown under the editor (tests).
    QString problemText() const;

    QLineEdit* nameEdit() const { return m_name; }
    QLineEdit* shapeEdit() const { return m_shape; }
    QSpinBox* repeatSpin() const { return m_repeat; }
    AttributeTableModel* attributes() const { return m_attrs; }

private:
    void refresh();
    void showLocalProblem(const QString& message);
    /// Why the core refuses `value` for attribute `key` of this layer, or empty when it takes it.
    QString valueProblem(const QString& key, const AttrValue& value) const;
    void commit(const std::function<bool(Layer&)>& change, const QString& text, int mergeId = -1);
    void commitName(QLineEdit* edit);
    void commitShape();
    void commitInputs();
    void addAttribute();
    void removeAttribute();
    QWidget* buildInputPage();
    QWidget* buildOpPage();
    QWidget* buildBlockPage();

    Document* m_doc;
    LayerAddress m_address;
    bool m_isInput = false;
    bool m_refreshing = false;
    QString m_localProblem;
    QString m_modelProblem;

    QStackedWidget* m_pages = nullptr;
    QLabel* m_problem = nullptr;
    // input page
    QLineEdit* m_shape = nullptr;
    QComboBox* m_dtype = nullptr;
    // op page
    QLineEdit* m_name = nullptr;
    QComboBox* m_op = nullptr;
    QLabel* m_opHelp = nullptr;
    QLineEdit* m_inputs = nullptr;
    QTableView* m_attrView = nullptr;
    AttributeTableModel* m_attrs = nullptr;
    QToolButton* m_addAttr = nullptr;
    QToolButton* m_removeAttr = nullptr;
    // block page
    QLineEdit* m_blockName = nullptr;
    QSpinBox* m_repeat = nullptr;
    QSpinBox* m_firstIndex = nullptr;
    QComboBox* m_shortcut = nullptr;
    QComboBox* m_merge = nullptr;
    QSpinBox* m_mergeDim = nullptr;
    QCheckBox* m_checkpoint = nullptr;
};

} // namespace batchfit
