// "Which GPUs fit": the table is the core's fitAcrossCatalogue at the set-up shown, and picks a GPU.
#include "batchfit/fit_plan.h"
#include "catch_compat.h"
#include "gui/document/document.h"
#include "gui/files/file_controller.h"
#include "gui/models/gpu_fit_model.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QFont>
#include <QTableView>
#include <QUndoStack>

using namespace batchfit;

TEST_CASE("the GPU table lists every catalogue GPU with the core's largest batch, and picks one", "[gpus]") {
    test::app();
    test::TempSettings temp;
    MainWindow w(&temp.settings());
    w.restoreSettings();
    w.document()->setGpu(*findGpu("rtx-4090"));
    REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
    w.show();
    w.setBatch(256);
    REQUIRE(w.waitForIdle(30000, true));

    const std::vector<GpuFit> expected = fitAcrossCatalogue(w.document()->model(), w.document()->config());
    GpuFitModel* table = w.gpuFitModel();
    REQUIRE(table->rowCount() == static_cast<int>(gpuCatalogue().size()));
    int current = -1, fitting = 0;
    for (int r = 0; r < table->rowCount(); ++r) {
        const GpuFit& e = expected[static_cast<std::size_t>(r)];
        INFO(e.gpu.id);
        CHECK(table->fit(r)->gpu.id == e.gpu.id);
        CHECK(table->fit(r)->maxBatch == e.maxBatch);
        if (r > 0) CHECK(e.gpu.memoryBytes >= expected[static_cast<std::size_t>(r - 1)].gpu.memoryBytes);
        const QString shown = table->data(table->index(r, GpuFitModel::ShownColumn)).toString();
        CHECK(shown == (e.maxBatch >= 256 ? QStringLiteral("fits") : QStringLiteral("does not fit")));
        fitting += e.maxBatch >= 256;
        if (e.gpu.id == "rtx-4090") {
            current = r;
            CHECK(table->data(table->index(r, 0), Qt::FontRole).value<QFont>().bold());
        }
    }
    REQUIRE(current >= 0);
    CHECK(fitting > 0);
    CHECK(fitting < table->rowCount()); // 8 GB cards do not fit ResNet-50 at 256
    CHECK(table->headerData(GpuFitModel::ShownColumn, Qt::Horizontal).toString() ==
          QStringLiteral("Batch 256"));

    // Activating a row uses that GPU, as an undoable edit.
    int a100 = -1;
    for (int r = 0; r < table->rowCount(); ++r)
        if (table->fit(r)->gpu.id == "a100-80gb") a100 = r;
    REQUIRE(a100 >= 0);
    const int undoBefore = w.document()->undoStack()->count();
    emit w.gpuFitView()->activated(table->index(a100, 0));
    CHECK(w.document()->gpu().id == "a100-80gb");
    CHECK(w.document()->undoStack()->count() == undoBefore + 1);
    w.document()->undoStack()->undo();
    CHECK(w.document()->gpu().id == "rtx-4090");
}
