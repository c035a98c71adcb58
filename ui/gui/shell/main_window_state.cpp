// MainWindow's state across runs and its first layout: settings restored and saved, the window placed on the
// screen, the docks and the splitter sized on a first start.
#include "gui/charts/memory_chart.h"
#include "gui/document/document.h"
#include "gui/estimation/byte_format.h"
#include "gui/files/file_controller.h"
#include "gui/models/breakdown_model.h"
#include "gui/panels/batch_panel.h"
#include "gui/panels/layer_stack_panel.h"
#include "gui/panels/training_panel.h"
#include "gui/shell/app_settings.h"
#include "gui/shell/main_window.h"
#include "gui/shell/window_geometry.h"

#include <QCloseEvent>
#include <QDockWidget>
#include <QGuiApplication>
#include <QHeaderView>
#include <QLayout>
#include <QScreen>
#include <QSplitter>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <algorithm>

namespace batchfit {

void MainWindow::restoreSettings() {
    m_doc->resetConfig(m_settings->trainingConfig());
    m_training->setConfig(m_doc->config());
    GpuSpec gpu = customGpuOfBytes(m_settings->customGpuBytes());
    if (m_settings->gpuId() != QLatin1String("custom"))
        if (auto g = findGpu(m_settings->gpuId().toStdString())) gpu = *g;
    m_doc->setGpu(gpu);
    m_training->setGpu(gpu);
    setLogScale(m_settings->logScale());
    setLogMemoryScale(m_settings->logMemoryScale());
    m_doc->setBatch(m_settings->batch());
    m_batchPanel->setBatch(m_doc->batch());
    placeOnScreen();
    if (!m_settings->windowState().isEmpty()) m_stateRestored = restoreState(m_settings->windowState());
    for (QSplitter* split : findChildren<QSplitter*>())
        if (!split->objectName().isEmpty())
            split->restoreState(m_settings->splitterState(split->objectName()));
    for (QHeaderView* header : findChildren<QHeaderView*>(QStringLiteral("layerTreeHeader")))
        if (const QByteArray s = m_settings->headerState(header->objectName()); !s.isEmpty())
            header->restoreState(s);
}

void MainWindow::placeOnScreen() {
    const QScreen* s = screen() ? screen() : QGuiApplication::primaryScreen();
    if (!s) return;
    const QRect available = s->availableGeometry();
    if (!m_settings->windowGeometry().isEmpty() && restoreGeometry(m_settings->windowGeometry())) {
        // The saved frame may be from a larger or disconnected screen: keep it on this one.
        if (!isMaximized() && !isFullScreen()) {
            const QRect frame = WindowGeometry::clamped(frameGeometry(), available);
            const QMargins m(
                geometry().left() - frameGeometry().left(), geometry().top() - frameGeometry().top(),
                frameGeometry().right() - geometry().right(), frameGeometry().bottom() - geometry().bottom());
            setGeometry(frame.marginsRemoved(m));
        }
        return;
    }
    // First start: most of the screen, centred; the whole of a small screen.
    setGeometry(WindowGeometry::firstStart(available));
    if (WindowGeometry::startMaximized(available)) setWindowState(windowState() | Qt::WindowMaximized);
}

void MainWindow::saveSettings() {
    m_settings->setWindowGeometry(saveGeometry());
    m_settings->setWindowState(saveState());
    for (QSplitter* split : findChildren<QSplitter*>())
        if (!split->objectName().isEmpty())
            m_settings->setSplitterState(split->objectName(), split->saveState());
    for (QHeaderView* header : findChildren<QHeaderView*>(QStringLiteral("layerTreeHeader")))
        m_settings->setHeaderState(header->objectName(), header->saveState());
    m_settings->setTrainingConfig(m_doc->config());
    m_settings->setGpuId(QString::fromStdString(m_doc->gpu().id));
    if (m_doc->gpu().id == "custom") m_settings->setCustomGpuBytes(m_doc->gpu().memoryBytes);
    m_settings->setBatch(m_doc->batch());
    m_settings->setLogScale(m_chart->logScale());
    m_settings->setLogMemoryScale(m_chart->logMemoryScale());
    m_settings->setLastModelPath(m_doc->filePath());
    m_settings->setLastPresetId(m_doc->presetId());
    m_settings->sync();
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!m_files->maybeSave()) {
        event->ignore();
        return;
    }
    saveSettings();
    event->accept();
}

void MainWindow::resizeEvent(QResizeEvent* event) {
    QMainWindow::resizeEvent(event);
    // After the dock layout has taken the new size.
    QMetaObject::invokeMethod(this, &MainWindow::fitTrainingDock, Qt::QueuedConnection);
}

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    if (m_stateRestored) return;
    m_stateRestored = true; // first start: the chart gets about half the width, the tables their rows
    // The set-up's height first: whether it scrolls decides the room its scroll bar takes beside it.
    fitTrainingDock();
    if (layout()) layout()->activate();
    const QList<QDockWidget*> docks = findChildren<QDockWidget*>();
    QList<int> widths;
    for (auto* d : docks) {
        // Left: every layer column where the screen allows (a third of a wide window, 28% of a small one).
        const bool left = dockWidgetArea(d) == Qt::LeftDockWidgetArea;
        const int want =
            left ? std::min(m_layers->preferredWidth(), width() * (width() >= 1600 ? 34 : 28) / 100)
                 : std::min(width() * 24 / 100, 440);
        widths << std::max({want, 300, d->widget()->minimumSizeHint().width()});
    }
    resizeDocks(docks, widths, Qt::Horizontal);
    if (m_settings->splitterState(m_split->objectName()).isEmpty()) {
        // The tables get the height that shows every breakdown row (up to half), the chart the rest.
        const int rows =
            m_breakdown->rowCount() > 0 ? m_breakdown->rowCount() : BreakdownModel::maxRowCount();
        const int tablesHeight = m_tabs->tabBar()->sizeHint().height() +
                                 m_breakdownView->horizontalHeader()->sizeHint().height() +
                                 rows * m_breakdownView->verticalHeader()->defaultSectionSize() +
                                 2 * m_breakdownView->frameWidth() + 12;
        const int total = m_split->height();
        // On a short screen the chart keeps what its layout needs and the table scrolls.
        const int chartMinimum = m_split->widget(0)->minimumSizeHint().height();
        const int tables = std::max(0, std::min({tablesHeight, total / 2, total - chartMinimum}));
        m_split->setSizes({total - tables, tables});
    }
}

} // namespace batchfit
