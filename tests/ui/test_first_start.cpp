// The window a user gets on a first start (issue 12): where it opens, and that nothing in it overlaps or is
// cut at the sizes people's screens have. The in-process cases place the window as a first start would on
// each screen; the process cases start the real app on offscreen screens of each size, in English and
// Chinese, and save what it shows in $BATCHFIT_SHOTS (default: the test's build folder) for looking at.
#include "batchfit/model_io.h"
#include "batchfit/presets.h"
#include "catch_compat.h"
#include "gui/charts/memory_chart.h"
#include "gui/document/document.h"
#include "gui/files/file_controller.h"
#include "gui/models/breakdown_model.h"
#include "gui/panels/batch_panel.h"
#include "gui/panels/eliding_label.h"
#include "gui/shell/main_window.h"
#include "gui/shell/window_geometry.h"
#include "gui_test_support.h"
#include "layout_check.h"

#include <QAction>
#include <QCategoryAxis>
#include <QChart>
#include <QClipboard>
#include <QDir>
#include <QDockWidget>
#include <QGuiApplication>
#include <QHeaderView>
#include <QIcon>
#include <QImage>
#include <QLabel>
#include <QLocale>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QScreen>
#include <QScrollBar>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QVBoxLayout>
#include <QValueAxis>

using namespace batchfit;

namespace {

const QSize kScreens[] = {{1280, 720}, {1366, 768}, {1920, 1080}};

QString sizeName(const QSize& s) {
    return QStringLiteral("%1x%2").arg(s.width()).arg(s.height());
}

/// Everything a first start would show at `screen`, checked; returns the problems found.
QStringList firstStartProblems(const QSize& screen, std::int64_t batch) {
    test::TempSettings temp;
    temp.settings().setWelcomeDismissed(false);
    MainWindow w(&temp.settings());
    w.restoreSettings();
    w.document()->setGpu(customGpu(24.0));
    REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
    w.setGeometry(WindowGeometry::firstStart(QRect(QPoint(0, 0), screen)));
    w.show();
    REQUIRE(w.waitForIdle(30000, true));
    w.setBatch(batch);
    REQUIRE(w.waitForIdle(30000, true));

    QStringList problems = test::layoutProblems(&w);
    const QString at = QStringLiteral(" at %1").arg(sizeName(screen));

    // The welcome note is one line.
    auto* welcome = w.findChild<QLabel*>(QStringLiteral("welcomeText"));
    REQUIRE(welcome);
    if (welcome->height() > welcome->fontMetrics().lineSpacing() * 3 / 2)
        problems << QStringLiteral("welcome takes %1 px (more than a line)").arg(welcome->height()) + at;

    // The verdict: one line, the whole number readable.
    ElidingLabel* verdict = w.batchPanel()->verdictLabel();
    if (verdict->height() >= 2 * verdict->fontMetrics().lineSpacing())
        problems << QStringLiteral("verdict '%1' takes %2 px").arg(verdict->text()).arg(verdict->height()) +
                        at;
    if (verdict->isElided()) problems << QStringLiteral("verdict '%1' is cut").arg(verdict->fullText()) + at;

    // Every breakdown row is on screen without scrolling.
    auto* table = qobject_cast<QTableView*>(w.tabs()->widget(0));
    REQUIRE(table);
    const int rows = table->model()->rowCount();
    const int lastBottom = table->rowViewportPosition(rows - 1) + table->rowHeight(rows - 1);
    // Every row on screen where the screen is 768 px or more; on a shorter one they scroll (and stay
    // reachable).
    const bool reachable =
        lastBottom <= table->viewport()->height() || table->verticalScrollBar()->isVisible();
    if (rows < 8 || (screen.height() >= 768 ? lastBottom > table->viewport()->height() : !reachable))
        problems << QStringLiteral("breakdown shows %1 of %2 px of rows")
                            .arg(table->viewport()->height())
                            .arg(lastBottom) +
                        at;

    // The batch labels under the chart fit side by side.
    const auto axes = w.memoryChart()->chart()->axes(Qt::Horizontal);
    REQUIRE(axes.size() == 1);
    auto* x = qobject_cast<QCategoryAxis*>(axes.first());
    REQUIRE(x);
    const QFontMetrics fm(x->labelsFont());
    int labelsWidth = 0;
    for (const QString& l : x->categoriesLabels())
        labelsWidth += fm.horizontalAdvance(l) + fm.averageCharWidth();
    const double plotWidth = w.memoryChart()->chart()->plotArea().width();
    if (x->categoriesLabels().size() < 3 || labelsWidth > plotWidth)
        problems << QStringLiteral("%1 batch labels need %2 px, the plot is %3 px wide")
                            .arg(x->categoriesLabels().size())
                            .arg(labelsWidth)
                            .arg(plotWidth) +
                        at;
    if (w.memoryChart()->chart()->plotArea().height() < 140) // 145 px at 1280x720
        problems << QStringLiteral("the chart's plot is %1 px high")
                            .arg(w.memoryChart()->chart()->plotArea().height()) +
                        at;

    // Docks keep a usable width, and the chart keeps at least 40% of the window.
    for (auto* d : w.findChildren<QDockWidget*>())
        if (d->isVisible() && d->width() < std::max(280, d->widget()->minimumSizeHint().width()))
            problems << QStringLiteral("dock '%1' is %2 px wide").arg(d->windowTitle()).arg(d->width()) + at;
    if (w.centralWidget()->width() < w.width() * 2 / 5)
        problems << QStringLiteral("the chart's column is %1 of %2 px")
                            .arg(w.centralWidget()->width())
                            .arg(w.width()) +
                        at;
    return problems;
}

#if defined(BATCHFIT_CLI_EXE)
/// Runs batchfit-cli with `args` and returns what follows "Verdict on GPU: " (empty, with the output in the
/// test's log, when there is no verdict line).
QString cliVerdict(const QStringList& args) {
    QProcess cli;
    cli.start(QStringLiteral(BATCHFIT_CLI_EXE), args);
    if (!cli.waitForFinished(60000)) return {};
    const QString out = QString::fromUtf8(cli.readAllStandardOutput());
    const auto m = QRegularExpression(QStringLiteral("Verdict on [^:]+: (.*)")).match(out);
    if (!m.hasMatch()) UNSCOPED_INFO(out.toStdString());
    return m.hasMatch() ? m.captured(1).trimmed() : QString();
}
#endif

} // namespace

TEST_CASE("a first start takes most of the screen, centred; a small screen whole", "[window][geometry]") {
    const QRect fullHd(0, 0, 1920, 1050); // a 1080p screen less a 30 px panel
    const QRect r = WindowGeometry::firstStart(fullHd);
    CHECK(r.size() == QSize(1728, 945));
    CHECK(r.center() == fullHd.center());
    CHECK_FALSE(WindowGeometry::startMaximized(fullHd));

    const QRect laptop(0, 27, 1366, 741);
    CHECK(WindowGeometry::startMaximized(laptop));
    CHECK(WindowGeometry::firstStart(laptop) == laptop);
    CHECK(WindowGeometry::firstStart(QRect(0, 0, 1280, 720)) == QRect(0, 0, 1280, 720));

    const QRect uhd(1920, 0, 3840, 2160); // a 4K screen right of another one
    const QRect big = WindowGeometry::firstStart(uhd);
    CHECK(big.size() == QSize(WindowGeometry::kMaxWidth, WindowGeometry::kMaxHeight));
    CHECK(big.center() == uhd.center());
    CHECK(uhd.contains(big));
}

TEST_CASE("a saved geometry is kept on the screen it opens on", "[window][geometry]") {
    const QRect screen(0, 0, 1366, 768);
    // Saved on a larger screen, or on one that is gone: moved in and shrunk as little as needed.
    CHECK(WindowGeometry::clamped(QRect(2500, 1400, 1800, 1000), screen) == screen);
    CHECK(WindowGeometry::clamped(QRect(1000, 500, 800, 600), screen) == QRect(566, 168, 800, 600));
    CHECK(WindowGeometry::clamped(QRect(-300, -50, 800, 600), screen) == QRect(0, 0, 800, 600));
    // A window that fits stays where the user left it.
    CHECK(WindowGeometry::clamped(QRect(100, 80, 900, 600), screen) == QRect(100, 80, 900, 600));

    test::app();
    test::TempSettings temp;
    const QRect available = QGuiApplication::primaryScreen()->availableGeometry();
    {
        MainWindow w(&temp.settings());
        w.restoreSettings();
        w.show();
        w.setGeometry(QRect(available.right() + 400, available.bottom() + 300, available.width() + 900,
                            available.height() + 500));
        w.saveSettings();
    }
    MainWindow again(&temp.settings());
    again.restoreSettings();
    INFO("restored " << again.frameGeometry().x() << "," << again.frameGeometry().y() << " "
                     << again.frameGeometry().width() << "x" << again.frameGeometry().height());
    CHECK(available.contains(again.frameGeometry()));
}

TEST_CASE("at 1280x720, 1366x768 and 1920x1080 nothing overlaps or is cut", "[window][layout]") {
    test::app();
    for (const QSize& screen : kScreens) {
        // Fits (batch 64) and far out of memory (a long verdict).
        for (std::int64_t batch : {std::int64_t{64}, std::int64_t{120000}}) {
            const QStringList problems = firstStartProblems(screen, batch);
            INFO(sizeName(screen).toStdString() << ", batch " << batch << ":\n"
                                                << problems.join(QLatin1Char('\n')).toStdString());
            CHECK(problems.isEmpty());
        }
    }
}

#ifdef BATCHFIT_GUI_EXE
TEST_CASE("the app's first start on offscreen screens of three sizes, English and Chinese",
          "[window][process]") {
    test::app();
    QTemporaryDir dir;
    REQUIRE(dir.isValid());
    const QString shots = qEnvironmentVariable("BATCHFIT_SHOTS", QStringLiteral(BATCHFIT_SHOTS_DIR));
    QDir().mkpath(shots);
    // A model file whose set-up opens the allocator's Advanced fold (three more rows in the set-up dock).
    const QString folded = dir.filePath(QStringLiteral("folded.json"));
    {
        TrainingSetup setup;
        setup.gpuId = "rtx-4090";
        setup.batch = 8;
        setup.config.allocConf = "expandable_segments:True";
        setup.config.epochSamples = 50003;
        QFile m(folded);
        REQUIRE(m.open(QIODevice::WriteOnly));
        m.write(QByteArray::fromStdString(serializeModelDocument(*loadPreset("resnet50"), setup)));
    }
    for (const QSize& screen : kScreens) {
        const QString config = dir.filePath(sizeName(screen) + QStringLiteral(".json"));
        QFile f(config);
        REQUIRE(f.open(QIODevice::WriteOnly));
        f.write(
            QStringLiteral("{\"screens\":[{\"name\":\"screen\",\"x\":0,\"y\":0,\"width\":%1,\"height\":%2,"
                           "\"logicalDpi\":96,\"logicalBaseDpi\":96,\"dpr\":1}]}")
                .arg(screen.width())
                .arg(screen.height())
                .toUtf8());
        f.close();
        for (const QString& run :
             {QStringLiteral("en"), QStringLiteral("zh_CN"), QStringLiteral("zh_CN-folded")}) {
            const QString lang = run.section(QLatin1Char('-'), 0, 0);
            const QString png =
                QDir(shots).filePath(QStringLiteral("first-start-%1-%2.png").arg(sizeName(screen), run));
            QFile::remove(png);
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen:configfile=") + config);
            QProcess app;
            app.setProcessEnvironment(env);
            app.setProcessChannelMode(QProcess::MergedChannels);
            const QStringList model =
                run.endsWith(QStringLiteral("folded"))
                    ? QStringList{QStringLiteral("--model"), folded}
                    : QStringList{QStringLiteral("--preset"), QStringLiteral("resnet50"),
                                  QStringLiteral("--gpu"), QStringLiteral("24GiB")};
            app.start(QStringLiteral(BATCHFIT_GUI_EXE),
                      model +
                          QStringList{QStringLiteral("--lang"), lang, QStringLiteral("--screenshot"), png});
            REQUIRE(app.waitForFinished(60000));
            const QString out = QString::fromUtf8(app.readAll());
            INFO(out.toStdString());
            REQUIRE(app.exitCode() == 0);
            const auto m =
                QRegularExpression(
                    QStringLiteral(R"(window (\d+)x(\d+) at (-?\d+),(-?\d+) on a (\d+)x(\d+) screen)"))
                    .match(out);
            REQUIRE(m.hasMatch());
            const QRect window(m.captured(3).toInt(), m.captured(4).toInt(), m.captured(1).toInt(),
                               m.captured(2).toInt());
            CHECK(QSize(m.captured(5).toInt(), m.captured(6).toInt()) == screen);
            const QRect available(QPoint(0, 0), screen);
            // The first start's own rule, and the window really on the screen.
            CHECK(available.contains(window));
            if (WindowGeometry::startMaximized(available)) {
                CHECK(window.width() >= screen.width() * 98 / 100);
                CHECK(window.height() >= screen.height() * 98 / 100);
            } else {
                CHECK(window == WindowGeometry::firstStart(available));
            }
            const QImage image(png);
            REQUIRE_FALSE(image.isNull());
            CHECK(image.size() == window.size());
        }
    }
}

TEST_CASE("with --screenshot, a model that cannot be opened says why on stderr and never waits on a dialog",
          "[window][process]") {
    test::app();
    QTemporaryDir dir;
    REQUIRE(dir.isValid());
    const QString bad = dir.filePath(QStringLiteral("bad.json"));
    {
        QFile f(bad);
        REQUIRE(f.open(QIODevice::WriteOnly));
        f.write("{\"format\": \"batchfit-model\", \"layers\": 7}");
    }
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    QProcess app;
    app.setProcessEnvironment(env);
    app.setProcessChannelMode(QProcess::MergedChannels);
    app.start(QStringLiteral(BATCHFIT_GUI_EXE),
              {QStringLiteral("--model"), bad, QStringLiteral("--screenshot"),
               dir.filePath(QStringLiteral("s.png"))});
    const bool finished = app.waitForFinished(60000); // a modal error box would wait for ever
    if (!finished) app.kill();
    REQUIRE(finished);
    const QString out = QString::fromUtf8(app.readAll());
    INFO(out.toStdString());
    CHECK(out.contains(QStringLiteral("batchfit: Cannot Open Model")));
}
#endif

TEST_CASE("the layout check sees cut text, squeezed widgets and overlaps", "[window][layout]") {
    test::app();
    QWidget box;
    auto* layout = new QVBoxLayout(&box);
    auto* wrapped =
        new QLabel(QStringLiteral("a long sentence that needs several lines at this width"), &box);
    wrapped->setWordWrap(true);
    auto* oneLine = new QLabel(QStringLiteral("out of memory by 2837.6 GiB"), &box);
    auto* button = new QPushButton(QStringLiteral("Largest batch that fits"), &box);
    layout->addWidget(wrapped);
    layout->addWidget(oneLine);
    layout->addWidget(button);
    box.show();
    box.setFixedSize(200, 200);
    QCoreApplication::processEvents();
    CHECK(test::layoutProblems(&box).isEmpty());

    box.setFixedSize(60, 40); // below the layout's minimum: Qt squeezes and overlaps
    QCoreApplication::processEvents();
    const QString problems = test::layoutProblems(&box).join(QLatin1Char('\n'));
    INFO(problems.toStdString());
    CHECK(problems.contains(QStringLiteral("cut")));
    CHECK(problems.contains(QStringLiteral("squeezed")));
    CHECK(problems.contains(QStringLiteral("QPushButton")));
}

TEST_CASE("splitter positions are remembered between starts", "[window][settings]") {
    test::app();
    test::TempSettings temp;
    QList<int> chartTables, treeEditor;
    {
        MainWindow w(&temp.settings());
        w.restoreSettings();
        w.setGeometry(WindowGeometry::firstStart(QRect(0, 0, 1920, 1080)));
        w.show();
        QCoreApplication::processEvents();
        auto* split = w.findChild<QSplitter*>(QStringLiteral("chartTablesSplitter"));
        auto* layers = w.findChild<QSplitter*>(QStringLiteral("layerTreeEditorSplitter"));
        REQUIRE(split);
        REQUIRE(layers);
        const int total = split->sizes().value(0) + split->sizes().value(1);
        split->setSizes({total - 300, 300});
        const int layerTotal = layers->sizes().value(0) + layers->sizes().value(1);
        layers->setSizes({layerTotal - 150, 150});
        chartTables = split->sizes();
        treeEditor = layers->sizes();
        CHECK(chartTables.value(1) == 300);
        w.saveSettings();
    }
    MainWindow again(&temp.settings());
    again.restoreSettings();
    again.show();
    QCoreApplication::processEvents();
    CHECK(again.findChild<QSplitter*>(QStringLiteral("chartTablesSplitter"))->sizes() == chartTables);
    CHECK(again.findChild<QSplitter*>(QStringLiteral("layerTreeEditorSplitter"))->sizes() == treeEditor);
}

TEST_CASE("the app's SVG icons are drawn (Qt's SVG plugins are installed)", "[window][icons]") {
    test::app();
    test::TempSettings temp;
    MainWindow w(&temp.settings()); // registers the icon resources
    // Debian 13 ships the engine in qt6-svg-plugins, which scripts/deps.sh installs; without it this is
    // blank.
    for (const char* name : {":/icons/batchfit.svg", ":/icons/max-batch.svg"}) {
        const QImage image = QIcon(QString::fromLatin1(name)).pixmap(24, 24).toImage();
        INFO(name);
        REQUIRE_FALSE(image.isNull());
        int painted = 0;
        for (int y = 0; y < image.height(); ++y)
            for (int x = 0; x < image.width(); ++x) painted += qAlpha(image.pixel(x, y)) > 0 ? 1 : 0;
        CHECK(painted > 24);
    }
}

#if defined(BATCHFIT_CLI_EXE)
TEST_CASE("the GUI's verdict is the CLI's, word for word", "[window][verdict]") {
    test::app();
    test::TempSettings temp;
    MainWindow w(&temp.settings());
    w.restoreSettings(); // the defaults, as on a first start
    const auto gpu = findGpu("rtx-4090");
    REQUIRE(gpu);
    for (const auto& [preset, batch] : {std::pair{"resnet50", 64}, std::pair{"gpt2-small", 96}}) {
        w.document()->setGpu(*gpu);
        REQUIRE(w.files()->loadPreset(QString::fromLatin1(preset), false));
        w.show();
        REQUIRE(w.waitForIdle(30000));
        w.setBatch(batch);
        REQUIRE(w.waitForIdle(30000));
        const QString said =
            cliVerdict({QStringLiteral("estimate"), QStringLiteral("--preset"), QString::fromLatin1(preset),
                        QStringLiteral("--batch"), QString::number(batch), QStringLiteral("--gpu"),
                        QStringLiteral("rtx-4090")});
        REQUIRE_FALSE(said.isEmpty());
        // Word for word where it fits; out of memory the GUI's line is the CLI's up to ": needs …" (the
        // budget bar under it shows what is needed and usable).
        // A language model's verdict also names the sequence length it used (the CLI's says it elsewhere).
        QString shown = w.verdictText();
        const QString atSequence = QStringLiteral(" at sequence %1").arg(QLocale().toString(1024));
        if (QString::fromLatin1(preset) == QLatin1String("gpt2-small")) {
            CHECK(shown.endsWith(atSequence));
            shown.chop(atSequence.size());
        }
        CHECK(shown == said.section(QStringLiteral(": needs "), 0, 0));
        if (!said.startsWith(QStringLiteral("fits"))) CHECK(said.contains(QStringLiteral(": needs ")));
    }
}
#endif

#if defined(BATCHFIT_CLI_EXE)
TEST_CASE("Copy as CLI Command gives a command whose verdict is the window's",
          "[window][verdict][cli-command]") {
    test::app();
    test::TempSettings temp;
    MainWindow w(&temp.settings());
    w.restoreSettings();
    const auto gpu = findGpu("a100-40gb");
    REQUIRE(gpu);
    w.document()->setGpu(*gpu);
    REQUIRE(w.files()->loadPreset(QStringLiteral("gpt2-small"), false));
    TrainingConfig c = w.document()->config();
    c.precision = Precision::AmpBf16;
    c.checkpointing = Checkpointing::EveryBlock;
    c.optimizer = OptimizerKind::AdamW;
    c.marginFraction = 0.08;
    w.document()->editConfig(c, QStringLiteral("set-up for the test"));
    w.show();
    REQUIRE(w.waitForIdle(30000));
    w.setBatch(24);
    REQUIRE(w.waitForIdle(30000));
    auto* action = w.findChild<QAction*>(QStringLiteral("copyCliAction"));
    REQUIRE(action);
    QGuiApplication::clipboard()->clear();
    action->trigger();
    const QString line = QGuiApplication::clipboard()->text();
    INFO(line.toStdString());
    REQUIRE(line.startsWith(
        QStringLiteral("batchfit-cli estimate --preset gpt2-small --batch 24 --gpu a100-40gb")));
    CHECK(line.contains(QStringLiteral("--precision amp-bf16")));
    QStringList args = QProcess::splitCommand(line);
    args.removeFirst();
    const QString said = cliVerdict(args);
    REQUIRE_FALSE(said.isEmpty());
    QString shown = w.verdictText();
    const QString atSequence = QStringLiteral(" at sequence %1").arg(QLocale().toString(1024));
    CHECK(shown.endsWith(atSequence)); // gpt2-small's length
    shown.chop(atSequence.size());
    CHECK(shown == said.section(QStringLiteral(": needs "), 0, 0));

    // Copy as Python: the same set-up as the package's call (tests/python runs such calls against the CLI).
    auto* python = w.findChild<QAction*>(QStringLiteral("copyPythonAction"));
    REQUIRE(python);
    python->trigger();
    const QString call = QGuiApplication::clipboard()->text();
    INFO(call.toStdString());
    CHECK(call.startsWith(QStringLiteral("import batchfit\nbatchfit.estimate(\"gpt2-small\", batch_size=24, "
                                         "gpu=\"a100-40gb\"")));
    CHECK(call.contains(QStringLiteral("precision=\"amp-bf16\"")));
    CHECK(call.contains(QStringLiteral("margin=0.08")));
    CHECK(call.endsWith(QLatin1Char(')')));
}
#endif
