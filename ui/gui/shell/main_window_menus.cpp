// MainWindow's menus (split from main_window.cpp to keep files short).
#include "batchfit/presets.h"
#include "gui/charts/memory_chart.h"
#include "gui/document/document.h"
#include "gui/files/file_controller.h"
#include "gui/files/import_controller.h"
#include "gui/files/report_exporter.h"
#include "gui/panels/batch_panel.h"
#include "gui/panels/layer_stack_panel.h"
#include "gui/shell/app_settings.h"
#include "gui/shell/docs_window.h"
#include "gui/shell/language.h"
#include "gui/shell/main_window.h"

#include <QActionGroup>
#include <QApplication>
#include <QClipboard>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QSpinBox>
#include <QStatusBar>
#include <QUndoStack>
#include <QWhatsThis>

namespace batchfit {

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&New Model"), QKeySequence::New, m_files, &FileController::newModel);
    file->addAction(tr("&Open…"), QKeySequence::Open, m_files, &FileController::open);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    rebuildRecentMenu();
    QMenu* imports = file->addMenu(tr("&Import"));
    imports->setToolTipsVisible(true);
    imports->addAction(tr("&Hugging Face Config…"), m_files->imports(), &ImportController::importHf)
        ->setObjectName(QStringLiteral("importHfAction"));
    imports->addAction(tr("Hugging Face Model from the &Cache…"), m_files->imports(),
                       qOverload<>(&ImportController::importHfModelId));
    QAction* importOnnx =
        imports->addAction(tr("&ONNX Model…"), m_files->imports(), &ImportController::importOnnx);
    importOnnx->setObjectName(QStringLiteral("importOnnxAction"));
    if (const QString why = ImportController::onnxUnavailableReason(); !why.isEmpty()) {
        importOnnx->setEnabled(false);
        importOnnx->setToolTip(why);
        importOnnx->setStatusTip(why);
    }
    file->addSeparator();
    file->addAction(tr("&Save"), QKeySequence::Save, m_files, &FileController::save);
    file->addAction(tr("Save &As…"), QKeySequence::SaveAs, m_files, &FileController::saveAs);
    file->addSeparator();
    QAction* exportAction = file->addAction(tr("&Export Report…"), QKeySequence(Qt::CTRL | Qt::Key_E), this,
                                            &MainWindow::exportReport);
    exportAction->setObjectName(QStringLiteral("exportReportAction"));
    exportAction->setEnabled(ReportExporter::available());
    if (!ReportExporter::available()) exportAction->setToolTip(tr("This build has no report support."));
    // Measured points (tools/torch_measure.py) drawn on the chart and passed to Export Report.
    QAction* loadMeasured = file->addAction(tr("Load &Measurements…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Load Measurements"), m_settings->lastFolder(QStringLiteral("measurements")),
            tr("Measurements (*.json);;All files (*)"));
        if (path.isEmpty()) return;
        m_settings->rememberFolder(QStringLiteral("measurements"), path);
        m_chart->loadMeasurements(path);
    });
    loadMeasured->setObjectName(QStringLiteral("loadMeasurementsAction"));
    loadMeasured->setStatusTip(tr("Show points measured by tools/torch_measure.py on the chart"));
    QAction* clearMeasured =
        file->addAction(tr("Clear Measu&rements"), m_chart, &MemoryChart::clearMeasurements);
    clearMeasured->setObjectName(QStringLiteral("clearMeasurementsAction"));
    clearMeasured->setEnabled(false);
    connect(m_chart, &MemoryChart::measurementsChanged, clearMeasured,
            [this, clearMeasured] { clearMeasured->setEnabled(m_chart->hasMeasurements()); });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = m_doc->undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setShortcuts(QKeySequence::Undo);
    QAction* redo = m_doc->undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcuts({QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::Key_Y)});
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    edit->addActions(m_layers->editActions());
    edit->addSeparator();
    QAction* copyChartAction = edit->addAction(tr("Copy &Chart to Clipboard"), this, &MainWindow::copyChart);
    copyChartAction->setObjectName(QStringLiteral("copyChartAction"));

    QAction* copyCli = edit->addAction(tr("Copy as CLI C&ommand"), this, [this] { copyCliCommand(false); });
    copyCli->setObjectName(QStringLiteral("copyCliAction"));
    copyCli->setToolTip(tr("Copy the batchfit-cli command line that estimates this model with this set-up."));
    QAction* copyPython = edit->addAction(tr("Copy as P&ython"), this, [this] { copyCliCommand(true); });
    copyPython->setObjectName(QStringLiteral("copyPythonAction"));
    copyPython->setToolTip(
        tr("Copy the call of the batchfit Python package that estimates this model with this "
           "set-up."));

    QMenu* model = menuBar()->addMenu(tr("&Model"));
    QMenu* presets = model->addMenu(tr("&Presets"));
    for (const auto& p : presetList()) {
        const QString id = QString::fromStdString(p.id);
        presets->addAction(QString::fromStdString(p.title), this, [this, id] { m_files->loadPreset(id); });
    }
    model->addSeparator();
    QAction* maxAction =
        model->addAction(QIcon(QStringLiteral(":/icons/max-batch.svg")), tr("&Largest Batch That Fits"),
                         QKeySequence(Qt::CTRL | Qt::Key_M), this, &MainWindow::goToMaxBatch);
    maxAction->setToolTip(tr("Jump to the largest batch size that fits"));
    model->addAction(tr("Focus &Batch Size"), QKeySequence(Qt::CTRL | Qt::Key_B), this,
                     [this] { m_batchPanel->spinBox()->setFocus(Qt::ShortcutFocusReason); });

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(tr("&Training"), QKeySequence(Qt::CTRL | Qt::Key_1), this,
                    [this] { setServingMode(false); });
    view->addAction(tr("Se&rving"), QKeySequence(Qt::CTRL | Qt::Key_2), this,
                    [this] { setServingMode(true); });
    view->addSeparator();
    m_logAction = view->addAction(tr("&Logarithmic Batch Axis"), QKeySequence(Qt::CTRL | Qt::Key_L), this,
                                  [this](bool on) { setLogScale(on); });
    m_logAction->setCheckable(true);
    m_logAction->setChecked(m_chart->logScale());
    m_logMemoryAction =
        view->addAction(tr("Logarithmic &Memory Axis"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_L), this,
                        [this](bool on) { setLogMemoryScale(on); });
    m_logMemoryAction->setCheckable(true);
    m_logMemoryAction->setChecked(m_chart->logMemoryScale());
    // The Segments tab has no Alt+letter left (every letter of its name is taken): View → Segments reaches
    // it.
    view->addAction(tr("Caching Allocator &Segments"), this, [this] { showTab(QStringLiteral("segments")); });
    view->addSeparator();
    for (auto* dock : findChildren<QDockWidget*>()) view->addAction(dock->toggleViewAction());
    view->addSeparator();
    QMenu* language = view->addMenu(tr("&Language"));
    auto* group = new QActionGroup(this);
    for (const QString& lang : Language::available()) {
        QAction* a =
            language->addAction(Language::nativeName(lang), this, [this, lang] { chooseLanguage(lang); });
        a->setCheckable(true);
        a->setChecked(Language::current() == lang);
        group->addAction(a);
    }

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    QAction* docs = help->addAction(tr("&Documentation"), this, &MainWindow::showDocumentation);
    docs->setObjectName(QStringLiteral("documentationAction"));
    docs->setShortcut(QKeySequence::HelpContents);
    docs->setStatusTip(tr("How BatchFit counts memory, its file formats and its accuracy (offline)"));
    help->addAction(QWhatsThis::createAction(this));
    help->addAction(tr("&About BatchFit"), this, &MainWindow::about);
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

void MainWindow::rebuildRecentMenu() {
    m_recentMenu->clear();
    const QStringList files = m_settings->recentFiles();
    for (int i = 0; i < files.size(); ++i) {
        const QString path = files[i];
        m_recentMenu
            ->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName()), this,
                        [this, path] { m_files->openPath(path); })
            ->setToolTip(path);
    }
    m_recentMenu->setToolTipsVisible(true);
    m_recentMenu->setEnabled(!files.isEmpty());
}

} // namespace batchfit
