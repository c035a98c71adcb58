#include "gui/files/import_dialog.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace batchfit {

ImportDialog::ImportDialog(const QString& title, const QString& path, QWidget* parent) : QDialog(parent) {
    setWindowTitle(title);
    auto* file = new QLabel(QDir::toNativeSeparators(path));
    file->setTextInteractionFlags(Qt::TextSelectableByMouse);
    file->setWordWrap(true);
    m_form = new QFormLayout;
    m_form->addRow(tr("File:"), file);
}

void ImportDialog::finish() {
    auto* note =
        new QLabel(tr("The imported model replaces the current one. It has no file yet: Save asks for a "
                      "name."));
    note->setWordWrap(true);
    note->setEnabled(false);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("&Import"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(m_form);
    layout->addWidget(note);
    layout->addWidget(buttons);
}

} // namespace batchfit
