#pragma once
// The frame both File > Import dialogs share: the file's name, a form for the options, the note that the
// import replaces the current model, and Import / Cancel.
#include <QDialog>
#include <QString>

class QFormLayout;

namespace batchfit {

class ImportDialog : public QDialog {
    Q_OBJECT

protected:
    /// Starts the form with the file's path; subclasses add their rows to form(), then call finish().
    ImportDialog(const QString& title, const QString& path, QWidget* parent);
    QFormLayout* form() const { return m_form; }
    void finish();

private:
    QFormLayout* m_form = nullptr;
};

} // namespace batchfit
