// File > Load Measurements…: points measured by tools/torch_measure.py on the live chart.
#include "batchfit/measurement.h"
#include "catch_compat.h"
#include "gui/charts/memory_chart.h"
#include "gui/document/document.h"
#include "gui/estimation/byte_format.h"
#include "gui/files/file_controller.h"
#include "gui/files/report_exporter.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QAction>
#include <QChart>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QLegend>
#include <QLegendMarker>
#include <QScatterSeries>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QToolTip>
#include <cmath>

using namespace batchfit;

namespace {

QString data(const QString& file) {
    return QStringLiteral(BATCHFIT_TEST_DATA "/measurements/") + file;
}

/// resnet18 exported by tools/torch_export.py on a 4 GiB GPU, log axis (batches 1, 2 and 4 apart).
struct Fixture : test::AppWithSettings {
    MainWindow window{&temp.settings()};
    Fixture() {
        window.restoreSettings();
        window.document()->setGpu(customGpu(4.0));
        REQUIRE(window.files()->openPath(data(QStringLiteral("resnet18.json")), false));
        window.setLogScale(true);
        window.resize(1400, 900);
        window.show();
        REQUIRE(window.waitForIdle());
    }
};

QList<QPointF> points(const QScatterSeries* s) {
    return s->points();
}

QAction* action(const MainWindow& w, const char* name) {
    return w.findChild<QAction*>(QLatin1String(name));
}

} // namespace

TEST_CASE("loaded measurements are drawn at the measured values with the estimate beside them",
          "[measurements]") {
    Fixture f;
    MemoryChart* chart = f.window.memoryChart();
    REQUIRE(chart->measuredSeries());
    CHECK(chart->measuredSeries()->count() == 0);
    CHECK_FALSE(chart->memoryChart()->legend()->isVisible());
    REQUIRE(action(f.window, "loadMeasurementsAction"));
    REQUIRE(action(f.window, "clearMeasurementsAction"));
    CHECK_FALSE(action(f.window, "clearMeasurementsAction")->isEnabled());

    REQUIRE(chart->loadMeasurements(data(QStringLiteral("resnet18-cpu.json"))));
    auto file = loadMeasurementFile(data(QStringLiteral("resnet18-cpu.json")).toStdString());
    REQUIRE(file);
    REQUIRE(file->points.size() == 3);
    const QList<QPointF> measured = points(chart->measuredSeries());
    REQUIRE(measured.size() == 3);
    for (int i = 0; i < 3; ++i) {
        const MeasuredStep& m = file->points[static_cast<std::size_t>(i)];
        INFO("batch " << m.batch);
        CHECK(measured[i].x() == Approx(std::log2(static_cast<double>(m.batch)))); // log axis
        CHECK(measured[i].y() == Approx(ByteFormat::toGib(m.componentSum())));     // CPU file: the sum
    }
    // The estimates of the same figures, from the core, within 2% (saved activations) of the measurement.
    const auto& cmp = chart->measuredComparisons();
    REQUIRE(cmp.size() == 3);
    const QList<QPointF> estimated = points(chart->measuredEstimateSeries());
    REQUIRE(estimated.size() == 3);
    for (int i = 0; i < 3; ++i) {
        const auto& c = cmp[static_cast<std::size_t>(i)];
        CHECK_FALSE(c.comparesPeak);
        CHECK(std::fabs(c.error) < 0.02);
        CHECK(estimated[i].y() == Approx(ByteFormat::toGib(c.estimatedBytes)));
    }
    // The chart's legend shows the "measured" entry (and the estimate's), nothing else.
    QLegend* legend = chart->memoryChart()->legend();
    QCoreApplication::processEvents(); // the legend lays its markers out later
    CHECK(legend->isVisible());
    QStringList shown;
    for (QLegendMarker* m : legend->markers())
        if (m->isVisible()) shown << m->label();
    CHECK(shown.contains(QStringLiteral("measured")));
    CHECK(shown.size() == 2);
    CHECK(action(f.window, "clearMeasurementsAction")->isEnabled());

    // Hovering a point tells batch, measured, estimated and error.
    emit chart->measuredSeries()->hovered(measured[1], true);
    const QString tip = QToolTip::text();
    CHECK(tip.contains(QStringLiteral("batch 2")));
    CHECK(tip.contains(ByteFormat::bytes(file->points[1].componentSum())));
    CHECK(tip.contains(ByteFormat::bytes(cmp[1].estimatedBytes)));
    CHECK(tip.contains(QStringLiteral("error")));
    QToolTip::hideText();

    // Switching to the linear axis moves the points with the stack.
    f.window.setLogScale(false);
    CHECK(points(chart->measuredSeries())[2].x() == Approx(4.0));

    chart->clearMeasurements();
    CHECK(chart->measuredSeries()->count() == 0);
    CHECK(chart->measuredEstimateSeries()->count() == 0);
    CHECK(chart->measuredComparisons().empty());
    CHECK_FALSE(legend->isVisible());
    CHECK_FALSE(action(f.window, "clearMeasurementsAction")->isEnabled());
}

TEST_CASE("a malformed measurement file shows an error and changes nothing", "[measurements][errors]") {
    Fixture f;
    MemoryChart* chart = f.window.memoryChart();
    REQUIRE(chart->loadMeasurements(data(QStringLiteral("resnet18-cpu.json"))));
    const QList<QPointF> before = points(chart->measuredSeries());
    REQUIRE(before.size() == 3);

    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("bad-measure.json"));
    QFile out(path);
    REQUIRE(out.open(QIODevice::WriteOnly));
    out.write(R"({"format": "batchfit-measurement", "version": 1, "points": [{"batch": -2}]})");
    out.close();

    test::ModalWatcher watcher;
    CHECK_FALSE(chart->loadMeasurements(path));
    REQUIRE(watcher.texts().size() == 1);
    CHECK(watcher.texts()[0].contains(
        QStringLiteral("bad-measure.json: $.points[0].batch: expected an integer")));
    CHECK(chart->lastMeasurementError().contains(QStringLiteral("$.points[0].batch")));
    CHECK(points(chart->measuredSeries()) == before);
    CHECK(chart->measuredComparisons().size() == 3);
    CHECK(chart->hasMeasurements());

    // A model file is not a measurement file; a missing file neither.
    CHECK_FALSE(chart->loadMeasurements(data(QStringLiteral("resnet18.json"))));
    CHECK(chart->lastMeasurementError().contains(QStringLiteral("$.format")));
    CHECK_FALSE(chart->loadMeasurements(dir.filePath(QStringLiteral("missing.json"))));
    CHECK(chart->lastMeasurementError().contains(QStringLiteral("cannot read")));
    CHECK(watcher.texts().size() == 3);
    CHECK(points(chart->measuredSeries()) == before);
}

TEST_CASE("the chart's range widens to the largest measured batch and keeps it on re-estimates",
          "[measurements]") {
    Fixture f;
    MemoryChart* chart = f.window.memoryChart();
    const std::int64_t before = chart->batchRange();
    const std::int64_t far = before * 4 + 3; // well past the right edge
    // resnet18-cpu.json with one more point at `far` (saved activations scaled from batch 4).
    QFile src(data(QStringLiteral("resnet18-cpu.json")));
    REQUIRE(src.open(QIODevice::ReadOnly));
    QString text = QString::fromUtf8(src.readAll());
    const QString last =
        QStringLiteral("\"saved_activation_bytes\": 88812196,\n      \"max_memory_allocated\": null\n    }");
    REQUIRE(text.contains(last));
    text.replace(last,
                 last + QStringLiteral(",\n    {\"batch\": %1, \"parameter_bytes\": 46758048, "
                                       "\"gradient_bytes\": 46758048, \"optimizer_state_bytes\": 93516344, "
                                       "\"saved_activation_bytes\": %2, \"max_memory_allocated\": null}")
                            .arg(far)
                            .arg(22203049LL * far));
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("far.json"));
    QFile out(path);
    REQUIRE(out.open(QIODevice::WriteOnly));
    out.write(text.toUtf8());
    out.close();

    REQUIRE(chart->loadMeasurements(path));
    CHECK(chart->measuredMaxBatch() == far);
    CHECK(chart->batchRange() >= far);
    f.window.setLogScale(false);
    CHECK(points(chart->measuredSeries()).last().x() == Approx(static_cast<double>(far)));
    // A new estimate (another GPU) keeps the measured point in range.
    f.window.document()->setGpu(customGpu(6.0));
    REQUIRE(f.window.waitForIdle());
    CHECK(chart->batchRange() >= far);
}

TEST_CASE("Export Report carries the loaded measurements", "[measurements][report]") {
    if (!ReportExporter::available()) return; // a build without the report library
    Fixture f;
    MemoryChart* chart = f.window.memoryChart();
    REQUIRE(chart->loadMeasurements(data(QStringLiteral("resnet18-cpu.json"))));
    QTemporaryDir dir;
    const QString csv = dir.filePath(QStringLiteral("report.csv"));
    const QString error = ReportExporter::exportTo(csv, f.window.document()->model(),
                                                   f.window.document()->config(), f.window.document()->gpu(),
                                                   2, QStringLiteral("en"), chart->measuredComparisons());
    REQUIRE(error.isEmpty());
    QFile in(csv);
    REQUIRE(in.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(in.readAll());
    const auto& c = chart->measuredComparisons()[2];
    CHECK(text.contains(QStringLiteral(",4,%1,").arg(c.measuredBytes)));
    CHECK(text.contains(QStringLiteral("estimated_for_measured,")));
    CHECK(text.contains(QStringLiteral(",4,%1,").arg(c.estimatedBytes)));
}

// Hidden: QT_QPA_PLATFORM=offscreen batchfit_ui_tests "[.screens]" writes bf-measured.png for looking at.
TEST_CASE("screenshot: chart with measured points", "[.screens]") {
    Fixture f;
    REQUIRE(f.window.memoryChart()->loadMeasurements(data(QStringLiteral("resnet18-cpu.json"))));
    QCoreApplication::processEvents();
    const QString dir = qEnvironmentVariable("BATCHFIT_SHOTS", QDir::tempPath());
    CHECK(f.window.memoryChart()->grab().save(QDir(dir).filePath(QStringLiteral("bf-measured-chart.png"))));
    CHECK(f.window.grab().save(QDir(dir).filePath(QStringLiteral("bf-measured.png"))));
}

TEST_CASE("measurements of another model load with a warning that says why", "[measurements]") {
    Fixture f; // resnet18 and its own measurements: no warning
    MemoryChart* chart = f.window.memoryChart();
    {
        test::ModalWatcher watcher;
        REQUIRE(chart->loadMeasurements(data(QStringLiteral("resnet18-cpu.json"))));
        CHECK(chart->measurementWarning().isEmpty());
        CHECK(watcher.texts().isEmpty());
    }
    // The same points against ResNet-50: its parameters are twice the bytes.
    REQUIRE(f.window.files()->loadPreset(QStringLiteral("resnet50"), false));
    REQUIRE(f.window.waitForIdle());
    chart->clearMeasurements();
    test::ModalWatcher watcher(0x00000400 /* QMessageBox::Ok */);
    REQUIRE(chart->loadMeasurements(data(QStringLiteral("resnet18-cpu.json"))));
    const QString warning = chart->measurementWarning();
    INFO(warning.toStdString());
    CHECK(warning.contains(QStringLiteral("another model")));
    CHECK(warning.contains(QStringLiteral("ResNet-50")));
    CHECK(watcher.texts().join(QString()).contains(QStringLiteral("another model")));
    CHECK(chart->measuredSeries()->count() == 3); // still shown: the user may know better
}

TEST_CASE("measured points stay readable at GiB scale: the log memory axis spreads them",
          "[measured][chart]") {
    Fixture f;
    MainWindow& w = f.window;
    w.document()->setGpu(*findGpu("a100-80gb")); // resnet18's points are below 1 GiB of an 80+ GiB axis
    REQUIRE(w.waitForIdle());
    MemoryChart* chart = w.memoryChart();
    REQUIRE(chart->loadMeasurements(data(QStringLiteral("resnet18-cpu.json"))));
    CHECK(chart->measuredPointsCrowded());
    CHECK(w.statusBar()->currentMessage().contains(QStringLiteral("log memory")));
    // Height of the lowest measured point above the plot's bottom, as a fraction of the plot's height.
    auto height = [&] {
        const QRectF plot = chart->chart()->plotArea();
        double lowest = 1.0;
        for (const QPointF& p : chart->measuredSeries()->points()) {
            const double y = chart->chart()->mapToPosition(p, chart->measuredSeries()).y();
            lowest = std::min(lowest, (plot.bottom() - y) / plot.height());
        }
        return lowest;
    };
    const double linear = height();
    w.setLogMemoryScale(true);
    QCoreApplication::processEvents();
    CHECK_FALSE(chart->measuredPointsCrowded());
    const double log = height();
    INFO("linear " << linear << ", log " << log << " of the plot's height");
    CHECK(linear < 0.01); // on the floor of the linear axis, on the areas' edges
    CHECK(log > 0.15);    // lifted well into the plot by the log axis
}
