// MainWindow: the menu commands that are more than one call (export, copy as CLI, language, about).
#include "batchfit/cli_command.h"
#include "batchfit/presets.h"
#include "gui/charts/chart_data.h"
#include "gui/charts/component_style.h"
#include "gui/charts/memory_chart.h"
#include "gui/charts/timeline_chart.h"
#include "gui/document/document.h"
#include "gui/estimation/byte_format.h"
#include "gui/estimation/estimation_service.h"
#include "gui/files/file_controller.h"
#include "gui/files/report_exporter.h"
#include "gui/models/breakdown_model.h"
#include "gui/models/layer_activation_model.h"
#include "gui/models/layer_tree_model.h"
#include "gui/models/lever_model.h"
#include "gui/panels/batch_panel.h"
#include "gui/panels/eliding_label.h"
#include "gui/panels/layer_editor.h"
#include "gui/panels/layer_stack_panel.h"
#include "gui/panels/training_panel.h"
#include "gui/panels/what_if_panel.h"
#include "gui/serving/serving_view.h"
#include "gui/shell/app_settings.h"
#include "gui/shell/docs_window.h"
#include "gui/shell/language.h"
#include "gui/shell/main_window.h"
#include "gui/shell/shortcut_keeper.h"
#include "gui/shell/window_geometry.h"

#include <QAbstractItemView>
#include <QClipboard>
#include <QCloseEvent>
#include <QCoreApplication>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QScreen>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QThread>
#include <QToolButton>
#include <QUndoStack>
#include <QVBoxLayout>
#include <algorithm>
#include <cstdio>

namespace batchfit {

void MainWindow::exportReport() {
    if (isServingMode()) return exportServingReport();
    const QString name = QString::fromStdString(m_doc->model().name) + QStringLiteral(".pdf");
    const QString lastDir = m_settings->lastReportDir();
    const QString suggestion =
        !lastDir.isEmpty() && QFileInfo(lastDir).isDir() ? QDir(lastDir).filePath(name) : name;
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export Report"), suggestion, ReportExporter::fileFilter());
    if (path.isEmpty()) return;
    m_settings->setLastReportDir(QFileInfo(path).absolutePath());
    const QString error =
        ReportExporter::exportTo(path, m_doc->model(), m_doc->config(), m_doc->gpu(), m_doc->batch(),
                                 Language::current(), m_chart->measuredComparisons());
    if (!error.isEmpty())
        QMessageBox::critical(this, tr("Cannot Export Report"), error);
    else
        statusBar()->showMessage(tr("Report written to %1").arg(path), 5000);
}

void MainWindow::exportServingReport() {
    const ServingView* v = m_serving;
    if (!v->model()) {
        QMessageBox::information(this, tr("Export Report"),
                                 tr("Open a decoder's config.json in serving mode first."));
        return;
    }
    const QString name =
        QString::fromStdString(v->model()->name).replace(QLatin1Char('/'), QLatin1Char('-')) +
        QStringLiteral("-serving.pdf");
    const QString lastDir = m_settings->lastReportDir();
    const QString suggestion =
        !lastDir.isEmpty() && QFileInfo(lastDir).isDir() ? QDir(lastDir).filePath(name) : name;
    const QString path = QFileDialog::getSaveFileName(this, tr("Export Serving Report"), suggestion,
                                                      tr("PDF (*.pdf);;PNG image (*.png)"));
    if (path.isEmpty()) return;
    m_settings->setLastReportDir(QFileInfo(path).absolutePath());
    const QString error =
        ReportExporter::exportServing(path, *v->model(), v->config(), v->gpu(), v->tensorParallel(),
                                      v->pipelineStages(), v->sequences(), v->context(), Language::current());
    if (!error.isEmpty())
        QMessageBox::critical(this, tr("Cannot Export Report"), error);
    else
        statusBar()->showMessage(tr("Report written to %1").arg(path), 5000);
}

void MainWindow::copyChart() {
    // The report's chart: legend, capacity and usable lines, batch marker, a title with the set-up and the
    // verdict, at 1600 x 900 px (a widget grab was small and had neither legend nor title).
    QImage image = m_stale ? QImage()
                           : ReportExporter::chartImage(m_doc->model(), m_doc->config(), m_doc->gpu(),
                                                        m_doc->batch(), Language::current(),
                                                        m_chart->measuredComparisons(), QSize(1600, 900));
    if (image.isNull()) image = m_chart->grab().toImage();
    QGuiApplication::clipboard()->setImage(image);
    statusBar()->showMessage(tr("Chart copied to the clipboard."), 3000);
}

void MainWindow::copyCliCommand(bool python) {
    // A preset by its id; a file by its path (edits not yet saved are not in it: say so).
    const bool preset = !m_doc->presetId().isEmpty() && !m_doc->isModified();
    if (!preset && m_doc->filePath().isEmpty()) {
        statusBar()->showMessage(tr("Save the model first: the command line names its file."), 5000);
        return;
    }
    const CliCommand c = preset ? cliCommand("--preset", m_doc->presetId().toStdString(), m_doc->config(),
                                             m_doc->gpu(), m_doc->batch())
                                : cliCommand("--model", m_doc->filePath().toStdString(), m_doc->config(),
                                             m_doc->gpu(), m_doc->batch());
    const QString text = QString::fromStdString(python ? c.python : c.line);
    QGuiApplication::clipboard()->setText(text);
    QString message = tr("Copied: %1").arg(QString(text).replace(QLatin1Char('\n'), QLatin1String("; ")));
    if (!c.unsaid.empty()) {
        QStringList unsaid;
        for (const auto& u : c.unsaid) unsaid << QString::fromStdString(u);
        message += QLatin1Char(' ') + tr("(no CLI option for: %1)").arg(unsaid.join(QStringLiteral(", ")));
    }
    if (m_doc->isModified() && !preset)
        message += QLatin1Char(' ') + tr("(unsaved edits are not in the file)");
    statusBar()->showMessage(message, 8000);
}

void MainWindow::chooseLanguage(const QString& language) {
    m_settings->setLanguage(language);
    QMessageBox box(QMessageBox::Question, tr("Language"),
                    tr("BatchFit will use %1 the next time it starts.").arg(Language::nativeName(language)),
                    QMessageBox::NoButton, this);
    box.setObjectName(QStringLiteral("languageRestartBox"));
    QPushButton* restart = box.addButton(tr("Restart Now"), QMessageBox::AcceptRole);
    box.addButton(tr("Later"), QMessageBox::RejectRole);
    box.setDefaultButton(restart);
    box.exec();
    if (box.clickedButton() != restart) return;
    // Closing asks about unsaved changes first; the next start reopens the model (saveSettings in
    // closeEvent).
    if (!close()) return;
    QStringList args = QCoreApplication::arguments().mid(1);
    for (int i = 0; i < args.size();) { // the new language comes from the settings, not from an old --lang
        if (args[i] == QLatin1String("--lang") && i + 1 < args.size())
            args.remove(i, 2);
        else if (args[i].startsWith(QLatin1String("--lang=")))
            args.remove(i);
        else
            ++i;
    }
    if (!QProcess::startDetached(QCoreApplication::applicationFilePath(), args))
        std::fprintf(stderr, "batchfit: could not restart %s\n",
                     qPrintable(QCoreApplication::applicationFilePath()));
}

void MainWindow::about() {
    QMessageBox::about(
        this, tr("About BatchFit"),
        tr("<h3>BatchFit %1</h3><p>How much GPU memory one training step needs, and the largest "
           "batch that fits — before you spend a GPU-hour.</p>")
            .arg(QStringLiteral(BATCHFIT_VERSION)));
}

void MainWindow::showDocumentation() {
    if (!m_docs) m_docs = new DocsWindow(this);
    m_docs->show();
    m_docs->raise();
    m_docs->activateWindow();
}

} // namespace batchfit
