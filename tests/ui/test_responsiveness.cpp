#include "catch_compat.h"
#include "gui/charts/memory_chart.h"
#include "gui/document/document.h"
#include "gui/files/file_controller.h"
#include "gui/models/breakdown_model.h"
#include "gui/models/layer_activation_model.h"
#include "gui/models/layer_tree_model.h"
#include "gui/panels/batch_panel.h"
#include "gui/panels/layer_stack_panel.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QCoreApplication>
#include <QElapsedTimer>

using namespace batchfit;

// The speed target (<= 8 ms a tick) is a benchmark: bench/bench_gui.cpp. This checks what makes ticks cheap
// and right: a tick re-evaluates the lowered step for the new batch without asking for a new estimate (no
// re-lowering), and what is shown is the core's estimate at exactly that batch.
TEST_CASE("a slider tick shows the core's estimate at that batch without re-lowering the model",
          "[window][slider]") {
    test::app();
    test::TempSettings temp;
    MainWindow w(&temp.settings());
    w.restoreSettings();
    w.resize(1400, 900);
    w.show();
    for (const char* id : {"resnet50", "llama-2-7b"}) {
        w.document()->setGpu(customGpu(std::string(id) == "resnet50" ? 24.0 : 80.0));
        REQUIRE(w.files()->loadPreset(QString::fromLatin1(id), false));
        REQUIRE(w.waitForIdle(60000));
        const auto result = w.result();
        for (std::int64_t b = 2; b <= 61; ++b) {
            w.setBatch(b);
            QCoreApplication::processEvents();
            INFO(id << " batch " << b);
            REQUIRE(w.shownEstimate().has_value());
            CHECK(w.shownEstimate()->batch == b);
            CHECK(w.shownEstimate()->requiredBytes == result->estimator->estimate(b)->requiredBytes);
            CHECK(w.memoryChart()->markerBatch() == Approx(static_cast<double>(b)));
        }
        CHECK(w.result() == result); // the same lowered step throughout: no new estimate was requested
    }
}

TEST_CASE("where a slider tick spends its time", "[.profile]") {
    test::app();
    test::TempSettings temp;
    MainWindow w(&temp.settings());
    w.restoreSettings();
    w.resize(1400, 900);
    w.show();
    for (const char* id : {"resnet50", "llama-2-7b"}) {
        w.document()->setGpu(customGpu(std::string(id) == "resnet50" ? 24.0 : 80.0));
        REQUIRE(w.files()->loadPreset(QString::fromLatin1(id), false));
        REQUIRE(w.waitForIdle(60000));
        QElapsedTimer t;
        double update = 0, events = 0, full = 0, estimate = 0;
        const auto est = w.result()->estimator;
        for (std::int64_t b = 1; b <= 40; ++b) {
            t.start();
            (void)est->estimate(b);
            estimate += static_cast<double>(t.nsecsElapsed()) / 1e6;
            t.start();
            w.setBatch(b);
            update += static_cast<double>(t.nsecsElapsed()) / 1e6;
            t.start();
            QCoreApplication::processEvents();
            events += static_cast<double>(t.nsecsElapsed()) / 1e6;
            t.start();
            w.repaint();
            full += static_cast<double>(t.nsecsElapsed()) / 1e6;
        }
        WARN(id << ": core estimate " << estimate / 40 << " ms, setBatch " << update / 40
                << " ms, events+paint " << events / 40 << " ms, full repaint " << full / 40 << " ms");
        double tChart = 0, tVerdict = 0, tBreak = 0, tTree = 0, tRows = 0;
        for (std::int64_t b = 1; b <= 40; ++b) {
            auto e = est->estimate(b);
            auto v = est->verdict(b, w.result()->gpu.memoryBytes);
            t.start();
            w.memoryChart()->setBatch(b);
            tChart += static_cast<double>(t.nsecsElapsed()) / 1e6;
            t.start();
            w.batchPanel()->showVerdict(*e, *v);
            tVerdict += static_cast<double>(t.nsecsElapsed()) / 1e6;
            t.start();
            w.breakdown()->setEstimate(*e);
            tBreak += static_cast<double>(t.nsecsElapsed()) / 1e6;
            t.start();
            w.layerPanel()->treeModel()->setEstimate(&*e);
            tTree += static_cast<double>(t.nsecsElapsed()) / 1e6;
            t.start();
            w.layerTable()->setLayers(e->layers);
            tRows += static_cast<double>(t.nsecsElapsed()) / 1e6;
        }
        WARN(id << ": chart " << tChart / 40 << ", verdict " << tVerdict / 40 << ", breakdown " << tBreak / 40
                << ", tree " << tTree / 40 << ", rows " << tRows / 40 << " ms; rows "
                << w.layerTable()->rowCount());
        for (QWidget* child : w.findChildren<QWidget*>()) {
            if (!child->isVisible() || child->parentWidget() == nullptr) continue;
            if (!child->metaObject()->className()) continue;
            t.start();
            for (int i = 0; i < 5; ++i) child->repaint();
            const double ms = static_cast<double>(t.nsecsElapsed()) / 1e6 / 5;
            if (ms > 1.0)
                WARN("  repaint " << child->metaObject()->className() << " "
                                  << child->objectName().toStdString() << ": " << ms << " ms");
        }
    }
}
