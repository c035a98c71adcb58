// The "Samples per epoch" field of the allocator's Advanced fold (TrainingConfig::epochSamples): one undoable
// edit that the replay follows, refused text that changes nothing, a model file's value shown.
#include "batchfit/training_config.h"
#include "catch_compat.h"
#include "gui/charts/segments_view.h"
#include "gui/document/document.h"
#include "gui/files/file_controller.h"
#include "gui/panels/alloc_conf_field.h"
#include "gui/panels/training_panel.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QCoreApplication>
#include <QLabel>
#include <QLineEdit>
#include <QTest>
#include <QToolButton>
#include <QUndoStack>

using namespace batchfit;

namespace {

struct Fixture : test::AppWithSettings {
    MainWindow w{&temp.settings()};
    Fixture() {
        w.restoreSettings();
        w.document()->setGpu(*findGpu("rtx-4090"));
        REQUIRE(w.files()->loadPreset(QStringLiteral("vit_b_16"), false));
        w.resize(1400, 900);
        w.show();
        REQUIRE(w.waitForIdle(60000));
        w.setBatch(8);
        REQUIRE(w.waitForIdle(60000));
    }
};

} // namespace

TEST_CASE("samples per epoch: the last batch is replayed; undo restores; refused text changes nothing",
          "[window][undo][epoch]") {
    Fixture f;
    MainWindow& w = f.w;
    AllocConfField* field = w.trainingPanel()->allocConfField();
    QLineEdit* edit = field->epochEdit();
    CHECK_FALSE(edit->isVisibleTo(&w)); // under the Advanced fold
    field->advancedButton()->click();
    CHECK(edit->isVisibleTo(&w));
    const TrainingConfig before = w.document()->config();
    const int steps = w.document()->undoStack()->count();
    REQUIRE(w.shownEstimate());
    CHECK(w.shownEstimate()->allocator.lastBatch == 0);

    edit->setText(QStringLiteral("fifty thousand"));
    QTest::keyClick(edit, Qt::Key_Return);
    REQUIRE(w.waitForIdle());
    CHECK(field->epochProblem() ==
          QString::fromStdString(parseEpochSamples("fifty thousand").error().message));
    CHECK(edit->property("invalid").toBool());
    CHECK(w.document()->config() == before);
    CHECK(w.document()->undoStack()->count() == steps);

    edit->setText(QStringLiteral("50,003")); // 6250 x 8 + 3
    QTest::keyClick(edit, Qt::Key_Return);
    REQUIRE(w.waitForIdle());
    CHECK(field->epochProblem().isEmpty());
    CHECK_FALSE(edit->property("invalid").toBool());
    CHECK(edit->text() == QStringLiteral("50003"));
    REQUIRE(w.document()->config().epochSamples);
    CHECK(*w.document()->config().epochSamples == 50003);
    CHECK(w.document()->undoStack()->count() == steps + 1);
    REQUIRE(w.shownEstimate());
    CHECK(w.shownEstimate()->allocator.lastBatch == 3);
    CHECK(w.shownEstimate()->allocator.iterations == 3);

    w.document()->undoStack()->undo();
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->config() == before);
    CHECK(edit->text().isEmpty());
    CHECK(w.shownEstimate()->allocator.lastBatch == 0);
    w.document()->undoStack()->redo();
    REQUIRE(w.waitForIdle());
    CHECK(edit->text() == QStringLiteral("50003"));
}

TEST_CASE("samples per epoch with gradient accumulation: the set-up's problem is shown, not a stale estimate",
          "[window][epoch]") {
    Fixture f;
    MainWindow& w = f.w;
    TrainingConfig c = w.document()->config();
    c.epochSamples = 50003;
    c.accumulationSteps = 4;
    w.document()->editConfig(c, QStringLiteral("accumulate"));
    REQUIRE(w.waitForIdle());
    CHECK(w.trainingPanel()->allocConfField()->epochEdit()->text() == QStringLiteral("50003"));
    CHECK(w.trainingPanel()->allocConfField()->advancedButton()->isChecked()); // a set value is shown
    bool said = false;
    for (const QLabel* l : w.findChildren<QLabel*>())
        said = said ||
               (l->isVisibleTo(&w) && l->text().contains(QStringLiteral("training set-up has a problem")) &&
                l->text().contains(QStringLiteral("with gradient accumulation")));
    CHECK(said);
}

TEST_CASE("samples per epoch: the Segments tab names the epoch's last batch when it runs out",
          "[window][epoch]") {
    Fixture f;
    MainWindow& w = f.w;
    TrainingConfig c = w.document()->config();
    c.epochSamples = 50007; // last batch 7 at batch 8
    c.marginFraction = 0;
    c.cudaContextBytes = 0;
    w.document()->editConfig(c, QStringLiteral("tight"));
    w.document()->setGpu(customGpu(2.0));
    REQUIRE(w.waitForIdle());
    REQUIRE(w.showTab(QStringLiteral("segments")));
    QCoreApplication::processEvents();
    CHECK(w.segmentsView()->oomText().startsWith(
        QStringLiteral("Does not fit this GPU: the epoch's last batch (7 samples) stops at ")));
}
