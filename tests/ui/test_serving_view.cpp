// Serving mode (issue 27): the view shows the core's answers, its levers apply, the mode switch keeps the
// training docks, and the serving set-up is saved with the model file.
#include "batchfit/model_io.h"
#include "catch_compat.h"
#include "gui/document/document.h"
#include "gui/files/file_controller.h"
#include "gui/files/import_controller.h"
#include "gui/serving/serving_chart.h"
#include "gui/serving/serving_heat_map.h"
#include "gui/serving/serving_lever_model.h"
#include "gui/serving/serving_view.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QComboBox>
#include <QDockWidget>
#include <QPushButton>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using namespace batchfit;

namespace {

QString data(const QString& rel) {
    return QStringLiteral(BATCHFIT_TEST_DATA "/") + rel;
}

GpuSpec gpu(const char* id) {
    auto g = findGpu(id);
    REQUIRE(g);
    return *g;
}

} // namespace

TEST_CASE("serving view: its figures are the core's, and the largest concurrency fits", "[serving]") {
    test::app();
    ServingView view;
    REQUIRE(view.setConfigPath(data(QStringLiteral("hf/llama-3-8b.json"))));
    view.setGpu(gpu("h100-80gb"));
    const auto model = readServingModelFile(data(QStringLiteral("hf/llama-3-8b.json")).toStdString());
    REQUIRE(model);
    auto core = estimateServing(*model, ServingConfig{}, gpu("h100-80gb"));
    REQUIRE(core);
    REQUIRE(view.estimate());
    CHECK(view.estimate()->kvTokens == core->kvTokens);
    CHECK(view.engineLines().contains(QLocale().toString(static_cast<qlonglong>(core->kvTokens))));
    QTest::mouseClick(view.maxButton(), Qt::LeftButton);
    const std::int64_t most = maxConcurrentSequences(*model, *core, 8192);
    CHECK(view.sequences() == most);
    CHECK(view.verdictText().startsWith(QStringLiteral("fits:")));
    view.setSequences(most + 1);
    CHECK(view.verdictText().startsWith(QStringLiteral("does not fit:")));
    // The map is the core's map at the same axes.
    const ServingMap& map = view.heatMap()->map();
    REQUIRE_FALSE(map.contexts.empty());
    for (std::size_t r = 0; r < map.contexts.size(); ++r)
        for (std::size_t k = 0; k < map.sequences.size(); ++k)
            CHECK(map.at(r, k).fits == servingCell(*model, *core, map.sequences[k], map.contexts[r]).fits);
    CHECK(view.chart()->layerNames().size() == 5);
}

TEST_CASE("serving view: a lever applied gives the sequences it promised, and is saved", "[serving]") {
    test::app();
    ServingView view;
    REQUIRE(view.setConfigPath(data(QStringLiteral("serving/configs/llama-3.1-8b.json"))));
    view.setGpu(gpu("rtx-4090"));
    ServingConfig c;
    c.maxModelLen = 16384;
    view.setConfig(c);
    ServingConfig edited;
    bool emitted = false;
    QObject::connect(&view, &ServingView::configEdited, [&](const ServingConfig& e) {
        edited = e;
        emitted = true;
    });
    int fp8 = -1;
    for (int row = 0; row < view.levers()->rowCount(); ++row)
        if (view.levers()->lever(row)->id == "kv-fp8") fp8 = row;
    REQUIRE(fp8 >= 0);
    const std::int64_t promised = view.levers()->lever(fp8)->sequencesAtContext;
    emit view.leverView()->activated(view.levers()->index(fp8, 0));
    CHECK(emitted);
    CHECK(edited.kvCacheDtype == KvCacheDtype::Fp8);
    CHECK(view.kvDtypeBox()->currentData().toInt() == static_cast<int>(KvCacheDtype::Fp8));
    QTest::mouseClick(view.maxButton(), Qt::LeftButton);
    CHECK(view.sequences() == promised);
}

TEST_CASE("serving mode: Ctrl+2 shows it without the training docks, Ctrl+1 brings them back", "[serving]") {
    test::AppWithSettings base;
    MainWindow w(&base.temp.settings());
    w.restoreSettings();
    w.resize(1366, 768);
    w.show();
    REQUIRE(w.files()->imports()->importHfPath(data(QStringLiteral("hf/qwen3-8b.json")), {}, false));
    REQUIRE(w.waitForIdle(30000, true));
    // The import also reaches serving mode.
    CHECK(w.servingView()->configPath() == data(QStringLiteral("hf/qwen3-8b.json")));
    REQUIRE(w.servingView()->estimate());
    QStringList shown;
    for (QDockWidget* d : w.findChildren<QDockWidget*>())
        if (d->isVisible()) shown << d->objectName();
    REQUIRE_FALSE(shown.isEmpty());
    QTest::keyClick(&w, Qt::Key_2, Qt::ControlModifier);
    CHECK(w.isServingMode());
    CHECK(w.servingView()->isVisible());
    for (QDockWidget* d : w.findChildren<QDockWidget*>()) CHECK_FALSE(d->isVisible());
    QTest::keyClick(&w, Qt::Key_1, Qt::ControlModifier);
    CHECK_FALSE(w.isServingMode());
    QStringList back;
    for (QDockWidget* d : w.findChildren<QDockWidget*>())
        if (d->isVisible()) back << d->objectName();
    CHECK(back == shown);
    // The GPU is the training set-up's, and picking one in serving mode changes it there too (undoable).
    w.document()->setGpu(gpu("l40s"));
    CHECK(w.servingView()->estimate()->totalBytes == gpu("l40s").memoryBytes);
    CHECK(w.servingView()->gpuBox()->currentData().toString() == QStringLiteral("l40s"));
    w.servingView()->gpuBox()->setCurrentIndex(
        w.servingView()->gpuBox()->findData(QStringLiteral("h100-80gb")));
    CHECK(w.document()->gpu().id == "h100-80gb");
    CHECK(w.servingView()->estimate()->totalBytes == gpu("h100-80gb").memoryBytes);
    w.document()->undoStack()->undo();
    CHECK(w.document()->gpu().id == "l40s");
}

TEST_CASE("serving set-up: saved with the model file and read back", "[serving]") {
    test::AppWithSettings base;
    MainWindow w(&base.temp.settings());
    REQUIRE(w.files()->loadPreset(QStringLiteral("gpt2-small"), false));
    ServingConfig c;
    c.engine = ServingEngine::Sglang;
    c.maxModelLen = 4096;
    c.kvCacheDtype = KvCacheDtype::Fp8;
    c.memoryFraction = 0.85;
    w.document()->setServing(c);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("served.json"));
    REQUIRE(w.files()->saveTo(path));
    auto doc = loadModelDocument(path.toStdString());
    REQUIRE(doc);
    REQUIRE(doc->setup);
    CHECK(doc->setup->serving == c);
    MainWindow again(&base.temp.settings());
    REQUIRE(again.files()->openPath(path, false));
    CHECK(again.document()->serving() == c);
    CHECK(again.servingView()->config() == c);
    CHECK(again.servingView()->engineBox()->currentData().toInt() == static_cast<int>(ServingEngine::Sglang));
}

TEST_CASE("serving view: screenshots of each tab (manual: BATCHFIT_SHOT_DIR)", "[.shot]") {
    test::app();
    ServingView view;
    view.resize(1100, 720);
    REQUIRE(view.setConfigPath(data(QStringLiteral("hf/qwen3-8b.json"))));
    view.setGpu(gpu("l40s"));
    view.show();
    view.setSequences(24);
    const QString dir = qEnvironmentVariable("BATCHFIT_SHOT_DIR", QStringLiteral("/tmp"));
    for (int i = 0; i < view.tabs()->count(); ++i) {
        view.tabs()->setCurrentIndex(i);
        QTest::qWait(50);
        CHECK(view.grab().save(dir + QStringLiteral("/serving-tab-%1.png").arg(i)));
    }
}
