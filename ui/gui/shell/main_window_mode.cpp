// MainWindow's Training | Serving modes (split from main_window_layout.cpp): serving mode shows ServingView
// in the centre and hides the training docks, which it shows again on the way back.
#include "gui/document/document.h"
#include "gui/files/file_controller.h"
#include "gui/files/import_controller.h"
#include "gui/serving/serving_view.h"
#include "gui/shell/main_window.h"

#include <QDockWidget>
#include <QMenuBar>
#include <QStackedWidget>
#include <QTabBar>

namespace batchfit {

QWidget* MainWindow::wrapInModes(QWidget* training) {
    // The switch sits in the menu bar's corner: it takes no height from the chart (the window must fit a
    // 1366 x 768 screen).
    m_modeBar = new QTabBar(this);
    m_modeBar->setObjectName(QStringLiteral("modeBar"));
    m_modeBar->setDrawBase(false);
    m_modeBar->setExpanding(false);
    m_modeBar->addTab(tr("Training"));
    m_modeBar->addTab(tr("Serving"));
    m_modeBar->setToolTip(tr("Training: one training step and the largest batch (Ctrl+1). Serving: how many "
                             "requests fit beside the weights, as vLLM, SGLang or generate() size their KV "
                             "cache (Ctrl+2)."));
    menuBar()->setCornerWidget(m_modeBar, Qt::TopRightCorner);
    m_modeStack = new QStackedWidget(this);
    m_modeStack->addWidget(training);
    m_serving = new ServingView(m_modeStack);
    m_serving->setObjectName(QStringLiteral("servingView"));
    m_modeStack->addWidget(m_serving);
    connect(m_modeBar, &QTabBar::currentChanged, this, [this](int index) { setServingMode(index == 1); });
    return m_modeStack;
}

bool MainWindow::isServingMode() const {
    return m_modeStack && m_modeStack->currentWidget() == m_serving;
}

void MainWindow::setServingMode(bool serving) {
    if (serving == isServingMode()) return;
    m_modeStack->setCurrentIndex(serving ? 1 : 0);
    if (m_modeBar->currentIndex() != (serving ? 1 : 0)) m_modeBar->setCurrentIndex(serving ? 1 : 0);
    for (QDockWidget* dock : findChildren<QDockWidget*>()) {
        if (serving && !dock->isHidden()) { // isHidden: also before the window is first shown
            m_docksHiddenForServing << dock->objectName();
            dock->hide();
        } else if (!serving && m_docksHiddenForServing.contains(dock->objectName())) {
            dock->show();
        }
    }
    if (!serving) m_docksHiddenForServing.clear();
}

void MainWindow::connectServing() {
    m_serving->setGpu(m_doc->gpu());
    m_serving->setConfig(m_doc->serving());
    connect(m_doc, &Document::gpuChanged, m_serving, [this] { m_serving->setGpu(m_doc->gpu()); });
    connect(m_doc, &Document::servingChanged, m_serving, [this] { m_serving->setConfig(m_doc->serving()); });
    connect(m_serving, &ServingView::configEdited, m_doc, &Document::setServing);
    connect(m_serving, &ServingView::gpuPicked, m_doc, [this](const GpuSpec& g) {
        m_doc->editGpu(g, tr("GPU: %1").arg(QString::fromStdString(g.name)));
    });
    connect(m_files->imports(), &ImportController::hfConfigImported, m_serving, &ServingView::setConfigPath);
}

} // namespace batchfit
