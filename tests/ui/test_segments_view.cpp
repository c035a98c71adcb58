// The caching allocator in the window (issue 16, "Into the estimate"): the Segments tab shows the core's
// replay, the PYTORCH_CUDA_ALLOC_CONF field edits the set-up undoably, the breakdown tells allocated from
// reserved, and the verdict carries PyTorch's out-of-memory message.
#include "batchfit/allocator_config.h"
#include "batchfit/training_config.h"
#include "catch_compat.h"
#include "gui/charts/allocator_strip.h"
#include "gui/charts/segment_map.h"
#include "gui/charts/segments_view.h"
#include "gui/document/document.h"
#include "gui/estimation/byte_format.h"
#include "gui/files/file_controller.h"
#include "gui/models/breakdown_model.h"
#include "gui/panels/alloc_conf_field.h"
#include "gui/panels/batch_panel.h"
#include "gui/panels/eliding_label.h"
#include "gui/panels/training_panel.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QTabWidget>
#include <QTest>
#include <QToolButton>

using namespace batchfit;

namespace {

/// A window with a preset on an RTX 4090 at a batch, the Segments tab in front.
struct Fixture : test::AppWithSettings {
    MainWindow w{&temp.settings()};
    explicit Fixture(const char* preset = "gpt2-small", std::int64_t batch = 8) {
        w.restoreSettings();
        w.document()->setGpu(*findGpu("rtx-4090"));
        REQUIRE(w.files()->loadPreset(QString::fromLatin1(preset), false));
        w.resize(1400, 900);
        w.show();
        REQUIRE(w.waitForIdle(60000));
        w.setBatch(batch);
        REQUIRE(w.waitForIdle(60000));
        REQUIRE(w.showTab(QStringLiteral("segments")));
        QCoreApplication::processEvents();
    }
};

/// Allocated blocks in a snapshot.
int allocatedBlocks(const std::vector<SegmentView>& segments) {
    int n = 0;
    for (const SegmentView& s : segments)
        for (const SegmentBlock& b : s.blocks) n += b.allocated ? 1 : 0;
    return n;
}

/// The header's figures are the core's: the sample after timeline point `moment` and the snapshot's size.
void checkHeader(const SegmentsView& v, const Estimator& est, std::int64_t batch, int moment) {
    const auto r = est.replayStep(batch, std::nullopt, static_cast<std::size_t>(moment));
    REQUIRE(r);
    const auto e = est.estimate(batch, true);
    REQUIRE(e);
    REQUIRE(static_cast<std::size_t>(moment) < r->samples.size());
    const AllocatorSample& s = r->samples[static_cast<std::size_t>(moment)];
    const QString header = v.headerText();
    INFO(header.toStdString());
    CHECK(v.replay().segments.size() == r->segments.size());
    CHECK(v.map()->barCount() == static_cast<int>(r->segments.size()));
    CHECK(header.startsWith(QStringLiteral("at %1: ").arg(
        QString::fromStdString(e->timeline[static_cast<std::size_t>(moment)].label))));
    CHECK(header.contains(QStringLiteral("allocated %1,").arg(ByteFormat::bytes(s.allocatedBytes))));
    CHECK(header.contains(QStringLiteral("reserved %1,").arg(ByteFormat::bytes(s.reservedBytes))));
    CHECK(header.contains(QStringLiteral("free inside segments %1 (inactive split)")
                              .arg(ByteFormat::bytes(s.inactiveSplitBytes))));
    CHECK(header.endsWith(QStringLiteral(", %1 segments").arg(r->segments.size())));
}

} // namespace

TEST_CASE("the Segments tab shows the replay's segments at the peak and at a moment picked",
          "[window][segments]") {
    Fixture f;
    MainWindow& w = f.w;
    SegmentsView* v = w.segmentsView();
    REQUIRE(w.tabs()->currentWidget() == v);
    const Estimator& est = *w.result()->estimator;
    const auto all = est.replayStep(8);
    REQUIRE(all);
    const auto e = est.estimate(8, true);
    REQUIRE(v->momentCount() == static_cast<int>(e->timeline.size()));
    REQUIRE(all->samples.size() == e->timeline.size());

    // First shown: the first timeline point with the most allocated bytes.
    int peak = 0;
    for (int i = 0; i < static_cast<int>(all->samples.size()); ++i)
        if (all->samples[static_cast<std::size_t>(i)].allocatedBytes >
            all->samples[static_cast<std::size_t>(peak)].allocatedBytes)
            peak = i;
    CHECK(v->peakMoment() == peak);
    CHECK(v->moment() == peak);
    CHECK(v->strip()->moment() == peak);
    REQUIRE_FALSE(v->replay().segments.empty());
    checkHeader(*v, est, 8, peak);
    const int peakBlocks = allocatedBlocks(v->replay().segments);

    // A block's tooltip names its component, its size, what was asked for and where it sits.
    bool described = false;
    for (int y = 0; y < v->map()->height() && !described; y += 3)
        for (int x = 0; x < v->map()->width() && !described; x += 4) {
            const QString tip = v->map()->describeAt(QPointF(x, y));
            described = tip.contains(QStringLiteral("requested")) && tip.contains(QStringLiteral("offset"));
        }
    CHECK(described);

    // Clicking the strip's left end picks the first op: another snapshot, the core's again.
    QTest::mouseClick(v->strip(), Qt::LeftButton, {}, QPoint(1, v->strip()->height() / 2));
    CHECK(v->moment() == 0);
    checkHeader(*v, est, 8, 0);
    CHECK(allocatedBlocks(v->replay().segments) != peakBlocks);
    // The keys move it as a slider does.
    v->strip()->setFocus();
    QTest::keyClick(v->strip(), Qt::Key_End);
    CHECK(v->moment() == v->momentCount() - 1);
    checkHeader(*v, est, 8, v->momentCount() - 1);
    QTest::keyClick(v->strip(), Qt::Key_Left);
    CHECK(v->moment() == v->momentCount() - 2);

    // Another batch replays again, back at its peak.
    w.setBatch(4);
    REQUIRE(w.waitForIdle());
    QTest::qWait(120); // the tabs follow the slider once it rests
    CHECK(v->moment() == v->peakMoment());
    checkHeader(*v, est, 4, v->peakMoment());
}

TEST_CASE("the Segments tab says where the GPU chosen runs out and marks that moment", "[window][segments]") {
    Fixture f("gpt2-small", 16); // 42.9 GiB on a 24 GiB card
    MainWindow& w = f.w;
    SegmentsView* v = w.segmentsView();
    const Estimator& est = *w.result()->estimator;
    const auto verdict = est.verdict(16, w.result()->gpu.memoryBytes);
    REQUIRE(verdict);
    REQUIRE(verdict->oom);
    REQUIRE(verdict->oom->step);
    // The line names the op and carries PyTorch's message; the strip marks the same timeline point.
    const QString line = v->oomText();
    CHECK(line.contains(QString::fromStdString(verdict->oom->stepLabel)));
    CHECK(line.contains(QStringLiteral("CUDA out of memory. Tried to allocate")));
    CHECK(line.contains(QStringLiteral("first training step")) == verdict->oom->firstIteration);
    CHECK(v->strip()->oomMoment() == static_cast<int>(*verdict->oom->step));
    // The segments below stay the step on a GPU large enough: every moment can still be picked.
    CHECK(v->momentCount() > v->strip()->oomMoment());
    // A batch that fits: no line, no mark.
    w.setBatch(4);
    REQUIRE(w.waitForIdle());
    QTest::qWait(120);
    CHECK(v->oomText().isEmpty());
    CHECK(v->strip()->oomMoment() == -1);
}

TEST_CASE("the Segments tab stays quick for Llama-2-7B's thousands of blocks", "[window][segments]") {
    Fixture f("llama-2-7b", 2);
    SegmentsView* v = f.w.segmentsView();
    REQUIRE(v->momentCount() > 0);
    int blocks = 0;
    for (const SegmentView& s : v->replay().segments) blocks += static_cast<int>(s.blocks.size());
    INFO(blocks << " blocks in " << v->replay().segments.size() << " segments, " << v->map()->markCount()
                << " marks");
    CHECK(blocks > 500);
    CHECK(v->map()->barCount() == static_cast<int>(v->replay().segments.size()));
    CHECK(v->map()->markCount() <= blocks); // merged below a pixel, never more marks than blocks
    QElapsedTimer t;
    t.start();
    for (int i = 0; i < 10; ++i) {
        v->setMoment(v->momentCount() * i / 10);
        v->map()->repaint();
    }
    INFO("10 moments picked and painted in " << t.elapsed() << " ms");
    CHECK(t.elapsed() < 2000); // a few ms each here; generous for slow CI machines
}

TEST_CASE("PYTORCH_CUDA_ALLOC_CONF: refused text changes nothing, accepted text is one undoable edit",
          "[window][segments][undo]") {
    Fixture f;
    MainWindow& w = f.w;
    AllocConfField* field = w.trainingPanel()->allocConfField();
    QLineEdit* edit = field->lineEdit();
    auto* message = w.findChild<ElidingLabel*>(QStringLiteral("allocConfProblem"));
    REQUIRE(message);
    // Folded at first (the set-up keeps its height); the Advanced toggle beside the PyTorch choice shows it.
    CHECK_FALSE(edit->isVisibleTo(&w));
    field->advancedButton()->click();
    CHECK(edit->isVisibleTo(&w));
    const TrainingConfig before = w.document()->config();
    const int steps = w.document()->undoStack()->count();
    const std::uint64_t reservedBefore = w.shownEstimate()->allocator.peakReservedBytes;
    REQUIRE(w.shownEstimate()->allocator.simulated);
    CHECK(w.shownEstimate()->allocator.allocConf.empty());

    edit->setText(QStringLiteral("expandable:True"));
    QTest::keyClick(edit, Qt::Key_Return);
    REQUIRE(w.waitForIdle());
    const auto refused = parseAllocConf("expandable:True");
    REQUIRE_FALSE(refused);
    CHECK(field->problem() == QString::fromStdString(refused.error().message));
    CHECK(message->isVisibleTo(&w));
    CHECK(message->fullText().contains(QString::fromStdString(refused.error().message)));
    CHECK(edit->toolTip().contains(QString::fromStdString(refused.error().message).toHtmlEscaped()));
    CHECK(edit->property("invalid").toBool());
    CHECK(edit->text() == QStringLiteral("expandable:True")); // kept, to be corrected
    CHECK(w.document()->config() == before);
    CHECK(w.document()->undoStack()->count() == steps);

    edit->setText(QStringLiteral("expandable_segments:True"));
    QTest::keyClick(edit, Qt::Key_Return);
    REQUIRE(w.waitForIdle());
    const std::string canonical = allocConfText(*parseAllocConf("expandable_segments:True"));
    CHECK(field->problem().isEmpty());
    CHECK_FALSE(message->isVisibleTo(&w));
    CHECK_FALSE(edit->property("invalid").toBool());
    CHECK(w.document()->config().allocConf == canonical);
    CHECK(w.document()->undoStack()->count() == steps + 1);
    REQUIRE(w.shownEstimate());
    CHECK(w.shownEstimate()->allocator.allocConf == canonical);
    CHECK(w.shownEstimate()->allocator.peakReservedBytes <= reservedBefore);
    CHECK(edit->text() == QString::fromStdString(canonical));
    // The Segments tab replays the new set-up: its segments are expandable ones.
    QTest::qWait(120);
    REQUIRE_FALSE(w.segmentsView()->replay().segments.empty());
    CHECK(w.segmentsView()->replay().segments.front().expandable);

    w.document()->undoStack()->undo();
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->config() == before);
    CHECK(edit->text().isEmpty());
    CHECK(w.shownEstimate()->allocator.peakReservedBytes == reservedBefore);
    w.document()->undoStack()->redo();
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->config().allocConf == canonical);
    CHECK(edit->text() == QString::fromStdString(canonical));
}

TEST_CASE("earlier batch lengths: one undoable edit that the replay follows; refused text changes nothing",
          "[window][segments][undo][sequences]") {
    Fixture f; // gpt2-small, seq 1024
    MainWindow& w = f.w;
    AllocConfField* field = w.trainingPanel()->allocConfField();
    QLineEdit* edit = field->sequencesEdit();
    CHECK_FALSE(edit->isVisibleTo(&w)); // under the Advanced fold with the allocator settings
    field->advancedButton()->click();
    CHECK(edit->isVisibleTo(&w));
    const TrainingConfig before = w.document()->config();
    const int steps = w.document()->undoStack()->count();
    const std::uint64_t reservedBefore = w.shownEstimate()->reservedBytes;

    edit->setText(QStringLiteral("896, 512,x"));
    QTest::keyClick(edit, Qt::Key_Return);
    REQUIRE(w.waitForIdle());
    CHECK(field->sequencesProblem() ==
          QString::fromStdString(parseReplaySequences("896, 512,x").error().message));
    CHECK(edit->property("invalid").toBool());
    CHECK(edit->text() == QStringLiteral("896, 512,x"));
    CHECK(w.document()->config() == before);
    CHECK(w.document()->undoStack()->count() == steps);

    edit->setText(QStringLiteral("896, 768,640,512,384,256,128"));
    QTest::keyClick(edit, Qt::Key_Return);
    REQUIRE(w.waitForIdle());
    CHECK(field->sequencesProblem().isEmpty());
    CHECK_FALSE(edit->property("invalid").toBool());
    CHECK(edit->text() == QStringLiteral("896,768,640,512,384,256,128")); // as the core writes it
    CHECK(w.document()->config().replaySequences ==
          std::vector<std::int64_t>{896, 768, 640, 512, 384, 256, 128});
    CHECK(w.document()->undoStack()->count() == steps + 1);
    REQUIRE(w.shownEstimate());
    CHECK(w.shownEstimate()->allocator.sequences.back() == 1024);
    CHECK(w.shownEstimate()->reservedBytes > reservedBefore); // the shorter batches' blocks fragment it
    // On the 4090 it fits only by freeing the cache: the total row says it is a larger GPU's need.
    const auto v = w.result()->estimator->verdict(8, w.result()->gpu.memoryBytes);
    REQUIRE(v);
    REQUIRE(v->cacheReleased);
    CHECK(w.verdictText().startsWith(QStringLiteral("fits")));
    const int totalRow = kComponentCount + 2; // after the reserve and the context
    CHECK(w.breakdown()->data(w.breakdown()->index(totalRow, BreakdownModel::NameColumn)).toString() ==
          QStringLiteral("Peak on a GPU large enough"));

    w.document()->undoStack()->undo();
    REQUIRE(w.waitForIdle());
    CHECK(w.document()->config() == before);
    CHECK(edit->text().isEmpty());
    CHECK(w.shownEstimate()->reservedBytes == reservedBefore);
    CHECK(w.breakdown()->data(w.breakdown()->index(totalRow, BreakdownModel::NameColumn)).toString() ==
          QStringLiteral("Peak GPU memory (must fit)"));

    // A length past the model's: the core says why, in the window, and the edit can be undone.
    edit->setText(QStringLiteral("2048"));
    QTest::keyClick(edit, Qt::Key_Return);
    REQUIRE(w.waitForIdle());
    bool said = false;
    for (const QLabel* l : w.findChildren<QLabel*>())
        said = said ||
               (l->isVisibleTo(&w) && l->text().contains(QStringLiteral("training set-up has a problem")) &&
                l->text().contains(QStringLiteral("replay sequence length 2048: expected 1 .. the "
                                                  "model's own length, 1024")));
    CHECK(said);
    w.document()->undoStack()->undo();
    REQUIRE(w.waitForIdle());
    CHECK(w.shownEstimate()->reservedBytes == reservedBefore);
}

TEST_CASE("the breakdown tells allocated from reserved; the verdict carries PyTorch's OOM message",
          "[window][segments]") {
    Fixture f;
    MainWindow& w = f.w;
    const Estimate& e = *w.shownEstimate();
    REQUIRE(e.allocator.simulated);
    const int reserveRow = kComponentCount; // after the five components
    BreakdownModel* b = w.breakdown();
    CHECK(b->data(b->index(reserveRow, BreakdownModel::NameColumn)).toString() ==
          QStringLiteral("Allocator reserve (replay)"));
    const QString tip = b->data(b->index(reserveRow, BreakdownModel::NameColumn), Qt::ToolTipRole).toString();
    INFO(tip.toStdString());
    CHECK(tip.contains(QStringLiteral("peak allocated (on the GPU, with block slack): %1")
                           .arg(ByteFormat::bytes(e.allocator.peakAllocatedBytes))));
    CHECK(tip.contains(
        QStringLiteral("peak reserved: %1").arg(ByteFormat::bytes(e.allocator.peakReservedBytes))));
    CHECK(tip.contains(QStringLiteral("free pieces of split segments: %1")
                           .arg(ByteFormat::bytes(e.allocator.peakInactiveSplitBytes))));
    CHECK_FALSE(w.batchPanel()->verdictLabel()->toolTip().contains(QStringLiteral("PyTorch would stop")));

    // Far out of memory: the tooltip has the replay's first failing allocation in PyTorch's words.
    w.setBatch(512);
    REQUIRE(w.waitForIdle());
    const auto v = w.result()->estimator->verdict(512, w.result()->gpu.memoryBytes);
    REQUIRE(v);
    REQUIRE_FALSE(v->fits);
    REQUIRE(v->oom);
    const QString verdictTip = w.batchPanel()->verdictLabel()->toolTip();
    INFO(verdictTip.toStdString());
    CHECK(verdictTip.contains(QStringLiteral("PyTorch would stop with:")));
    CHECK(verdictTip.contains(QString::fromStdString(v->oom->message).toHtmlEscaped()));

    // With the fragmentation override the row says so.
    TrainingConfig c = w.document()->config();
    c.fragmentationFraction = 0.05;
    w.document()->editConfig(c, QStringLiteral("override"));
    REQUIRE(w.waitForIdle());
    CHECK(b->data(b->index(reserveRow, BreakdownModel::NameColumn)).toString() ==
          QStringLiteral("Allocator reserve (override)"));
}

// Hidden ("[.screens]"): the Segments view alone, tall, for looking at (PNGs in $BATCHFIT_SHOTS or /tmp).
TEST_CASE("render the Segments view of GPT-2 and Llama-2-7B for review", "[.screens]") {
    for (const char* preset : {"gpt2-small", "llama-2-7b"}) {
        Fixture f(preset, 2);
        SegmentsView* v = f.w.segmentsView();
        v->setParent(nullptr);
        v->resize(900, 1400);
        v->show();
        QCoreApplication::processEvents();
        const QString dir = qEnvironmentVariable("BATCHFIT_SHOTS", QDir::tempPath());
        CHECK(
            v->grab().save(QDir(dir).filePath(QStringLiteral("segments-%1.png").arg(QLatin1String(preset)))));
        v->setMoment(v->momentCount() / 5);
        QCoreApplication::processEvents();
        CHECK(v->grab().save(
            QDir(dir).filePath(QStringLiteral("segments-%1-early.png").arg(QLatin1String(preset)))));
        delete v;
    }
}

TEST_CASE("render the allocator settings and expandable segments for review", "[.screens]") {
    Fixture f;
    MainWindow& w = f.w;
    const QString dir = qEnvironmentVariable("BATCHFIT_SHOTS", QDir::tempPath());
    AllocConfField* field = w.trainingPanel()->allocConfField();
    field->advancedButton()->click();
    field->lineEdit()->setText(QStringLiteral("expandable:True"));
    QTest::keyClick(field->lineEdit(), Qt::Key_Return);
    REQUIRE(w.waitForIdle());
    CHECK(w.trainingPanel()->grab().save(QDir(dir).filePath(QStringLiteral("alloc-conf-refused.png"))));
    field->sequencesEdit()->setText(QStringLiteral("896,512,x"));
    QTest::keyClick(field->sequencesEdit(), Qt::Key_Return);
    CHECK(w.trainingPanel()->grab().save(QDir(dir).filePath(QStringLiteral("replay-seqs-refused.png"))));
    field->sequencesEdit()->setText(QStringLiteral("896,768,512,256"));
    QTest::keyClick(field->sequencesEdit(), Qt::Key_Return);
    REQUIRE(w.waitForIdle());
    field->lineEdit()->setText(QStringLiteral("expandable_segments:True"));
    QTest::keyClick(field->lineEdit(), Qt::Key_Return);
    REQUIRE(w.waitForIdle());
    QTest::qWait(150);
    CHECK(w.grab().save(QDir(dir).filePath(QStringLiteral("segments-expandable-window.png"))));
    SegmentsView* v = w.segmentsView();
    v->setParent(nullptr);
    v->resize(900, 500);
    v->show();
    QCoreApplication::processEvents();
    CHECK(v->grab().save(QDir(dir).filePath(QStringLiteral("segments-expandable.png"))));
    delete v;
}
