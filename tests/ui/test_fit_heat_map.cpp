// "Batch × sequence": the heat map is the core's computeFitMap for a token-sequence model, an explanation
// otherwise; the slider's verdict names the sequence length it was estimated at.
#include "batchfit/fit_map.h"
#include "catch_compat.h"
#include "gui/charts/fit_heat_map.h"
#include "gui/document/document.h"
#include "gui/files/file_controller.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QLocale>
#include <QTabWidget>

using namespace batchfit;

TEST_CASE("the heat map has the core's rows for an LLM preset and an explanation for ResNet-50",
          "[heat-map]") {
    test::app();
    test::TempSettings temp;
    MainWindow w(&temp.settings());
    w.restoreSettings();
    const GpuSpec gpu = *findGpu("rtx-4090");
    w.document()->setGpu(gpu);
    REQUIRE(w.files()->loadPreset(QStringLiteral("gpt2-small"), false));
    w.show();
    w.setBatch(8);
    REQUIRE(w.waitForIdle(60000, true));

    FitHeatMap* map = w.heatMap();
    REQUIRE(map);
    CHECK(w.tabs()->indexOf(map) >= 0);
    REQUIRE(map->hasMap());
    FitMapOptions options;
    options.range = suggestedFitMapRange(w.document()->model());
    options.heatMapColumns = true;
    const auto expected = computeFitMap(w.document()->model(), w.document()->config(), gpu, options);
    REQUIRE(expected);
    REQUIRE(map->rowCount() == static_cast<int>(expected->rows.size()));
    CHECK(map->rowCount() >= 3); // 128 .. 1024
    for (int r = 0; r < map->rowCount(); ++r) {
        const FitMapRow& e = expected->rows[static_cast<std::size_t>(r)];
        INFO("sequence " << e.sequence);
        CHECK(map->map().rows[static_cast<std::size_t>(r)].sequence == e.sequence);
        CHECK(map->map().rows[static_cast<std::size_t>(r)].largest.largest == e.largest.largest);
        CHECK(map->map().rows[static_cast<std::size_t>(r)].cells.size() == expected->batches.size());
        REQUIRE(e.largest.largest > 0);
        CHECK(map->rowLabel(r).contains(QString::number(e.largest.largest)));
        CHECK(map->cellToolTip(r, 0).contains(QStringLiteral("fits")));
    }
    // The verdict names the length the slider's estimate used (the preset's 1024).
    CHECK(w.verdictText().endsWith(QStringLiteral(" at sequence %1").arg(QLocale().toString(1024))));

    // A CNN: no map, a sentence saying why.
    REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
    REQUIRE(w.waitForIdle(60000, true));
    CHECK_FALSE(map->hasMap());
    CHECK(map->rowCount() == 0);
    CHECK(map->explanation().contains(QStringLiteral("token ids")));
    CHECK(map->explanation().contains(QStringLiteral("[3,224,224]")));
    CHECK_FALSE(w.verdictText().contains(QStringLiteral("sequence")));
}
