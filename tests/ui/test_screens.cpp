// Hidden test ("[.screens]"): renders views that the default screenshot does not show, for looking at.
// Run: QT_QPA_PLATFORM=offscreen batchfit_ui_tests "[.screens]" (PNGs go to $BATCHFIT_SHOTS or /tmp).
#include "catch_compat.h"
#include "gui/charts/timeline_chart.h"
#include "gui/document/document.h"
#include "gui/files/file_controller.h"
#include "gui/models/attribute_table_model.h"
#include "gui/panels/layer_editor.h"
#include "gui/panels/layer_stack_panel.h"
#include "gui/shell/docs_window.h"
#include "gui/shell/language.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QPalette>
#include <QTabWidget>
#include <QTableView>
#include <QUndoStack>

using namespace batchfit;

namespace {

QString shot(const QString& name) {
    const QString dir = qEnvironmentVariable("BATCHFIT_SHOTS", QDir::tempPath());
    return QDir(dir).filePath(name);
}

QPalette darkPalette() {
    QPalette p;
    p.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
    p.setColor(QPalette::WindowText, QColor(0xe6, 0xe6, 0xe6));
    p.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
    p.setColor(QPalette::AlternateBase, QColor(0x33, 0x33, 0x33));
    p.setColor(QPalette::Text, QColor(0xe6, 0xe6, 0xe6));
    p.setColor(QPalette::Button, QColor(0x35, 0x35, 0x35));
    p.setColor(QPalette::ButtonText, QColor(0xe6, 0xe6, 0xe6));
    p.setColor(QPalette::Mid, QColor(0x55, 0x55, 0x55));
    p.setColor(QPalette::Highlight, QColor(0x3d, 0x7a, 0xd6));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::ToolTipBase, QColor(0x35, 0x35, 0x35));
    p.setColor(QPalette::ToolTipText, QColor(0xe6, 0xe6, 0xe6));
    return p;
}

} // namespace

TEST_CASE("render the other views for review", "[.screens]") {
    test::app();
    test::TempSettings temp;
    temp.settings().setWelcomeDismissed(true);
    MainWindow w(&temp.settings());
    w.restoreSettings();
    w.resize(1480, 940);
    w.show();
    REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
    REQUIRE(w.waitForIdle(30000, true));
    w.setBatch(96);
    w.tabs()->setCurrentWidget(w.timelineChart());
    REQUIRE(w.waitForIdle());
    CHECK(w.grab().save(shot(QStringLiteral("bf-timeline.png"))));
    w.tabs()->setCurrentIndex(2);
    w.layerPanel()->select(LayerAddress::top(4));
    REQUIRE(w.waitForIdle());
    CHECK(w.grab().save(shot(QStringLiteral("bf-layers-block.png"))));

    REQUIRE(w.files()->loadPreset(QStringLiteral("llama-2-7b"), false));
    w.setLogScale(true);
    REQUIRE(w.waitForIdle(60000, true));
    w.layerPanel()->select(LayerAddress::top(1).child(LayerAddress::Branch::Main, 1));
    w.tabs()->setCurrentIndex(0);
    REQUIRE(w.waitForIdle());
    CHECK(w.grab().save(shot(QStringLiteral("bf-llama-log.png"))));

    QApplication::setPalette(darkPalette());
    REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
    w.setLogScale(false);
    REQUIRE(w.waitForIdle(30000, true));
    w.setBatch(300);
    QCoreApplication::processEvents();
    CHECK(w.grab().save(shot(QStringLiteral("bf-dark.png"))));
    QApplication::setPalette(QPalette());

    Model broken = w.document()->model();
    broken.inputShape = {5};
    w.document()->editModel(broken, QStringLiteral("break"), {});
    w.layerPanel()->select(LayerAddress::top(0));
    REQUIRE(w.waitForIdle());
    CHECK(w.grab().save(shot(QStringLiteral("bf-invalid.png"))));
}

TEST_CASE("render the step timeline in Chinese at 1366x768 for review", "[.screens]") {
    test::app();
    REQUIRE(Language::install(QStringLiteral("zh_CN")));
    {
        test::TempSettings temp;
        temp.settings().setWelcomeDismissed(true);
        MainWindow w(&temp.settings());
        w.restoreSettings();
        w.setGeometry(QRect(0, 0, 1362, 764));
        w.show();
        REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
        REQUIRE(w.waitForIdle(30000, true));
        w.tabs()->setCurrentWidget(w.timelineChart());
        REQUIRE(w.waitForIdle());
        CHECK(w.grab().save(shot(QStringLiteral("bf-timeline-zh.png"))));
    }
    REQUIRE(Language::install(QStringLiteral("en")));
}

TEST_CASE("render this session's changed views at 1366x768 in English and Chinese", "[.screens]") {
    test::app();
    for (const QString& lang : {QStringLiteral("en"), QStringLiteral("zh_CN")}) {
        REQUIRE(Language::install(lang));
        test::TempSettings temp;
        temp.settings().setWelcomeDismissed(true);
        MainWindow w(&temp.settings());
        w.restoreSettings();
        w.setGeometry(QRect(0, 0, 1362, 764));
        w.show();
        w.document()->setGpu(*findGpu("rtx-4090"));
        REQUIRE(w.files()->loadPreset(QStringLiteral("llama-2-7b"), false));
        w.setLogMemoryScale(true);
        REQUIRE(w.waitForIdle(60000, true));
        for (int i = 0; i < w.tabs()->count(); ++i)
            if (w.tabs()->widget(i) == static_cast<QWidget*>(w.gpuFitView())) w.tabs()->setCurrentIndex(i);
        QCoreApplication::processEvents();
        CHECK(w.grab().save(shot(QStringLiteral("bf-gpus-logmem-%1.png").arg(lang))));

        REQUIRE(w.files()->openPath(QStringLiteral(BATCHFIT_TEST_DATA "/models/tiny-cnn.json"), false));
        w.setLogMemoryScale(false);
        REQUIRE(w.waitForIdle(30000, true));
        w.layerPanel()->select(LayerAddress::top(0));
        AttributeTableModel* attrs = w.layerPanel()->editor()->attributes();
        for (int r = 0; r < attrs->rowCount(); ++r)
            if (attrs->keyAt(r) == QLatin1String("out_channels"))
                attrs->setData(attrs->index(r, AttributeTableModel::ValueColumn), QStringLiteral("-5"));
        Model broken = w.document()->model(); // and a later layer broken: marked red in the stack
        broken.layers[0].attrs.set("out_channels", std::int64_t{8});
        w.document()->editModel(broken, QStringLiteral("break"), LayerAddress::top(0));
        REQUIRE(w.waitForIdle());
        for (int r = 0; r < attrs->rowCount(); ++r)
            if (attrs->keyAt(r) == QLatin1String("out_channels"))
                attrs->setData(attrs->index(r, AttributeTableModel::ValueColumn), QStringLiteral("-5"));
        QCoreApplication::processEvents();
        CHECK(w.grab().save(shot(QStringLiteral("bf-invalid-%1.png").arg(lang))));

        w.findChild<QAction*>(QStringLiteral("documentationAction"))->trigger();
        w.docsWindow()->setGeometry(QRect(0, 0, 1362, 764));
        QCoreApplication::processEvents();
        CHECK(w.docsWindow()->grab().save(shot(QStringLiteral("bf-docs-%1.png").arg(lang))));
        delete w.docsWindow();
    }
    REQUIRE(Language::install(QStringLiteral("en")));
}
