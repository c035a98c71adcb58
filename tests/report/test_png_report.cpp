// The PNG report: size and density as requested, and actually drawn (chart colours, verdict, text).
#include "catch_compat.h"
#include "report/component_palette.h"
#include "report/report_exporter.h"
#include "report_test_support.h"

#include <QImage>
#include <QTemporaryDir>
#include <cmath>

using namespace batchfit;
using namespace batchfit::test;

namespace {

QImage exportPng(const ReportRequest& r, const QTemporaryDir& dir) {
    const QString path = dir.filePath(QStringLiteral("r.png"));
    const Status s = exportReport(r, path);
    INFO((s ? std::string() : s.error().message));
    REQUIRE(s);
    QImage image(path);
    REQUIRE_FALSE(image.isNull());
    return image;
}

int countColor(const QImage& image, QColor c) {
    int n = 0;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x)
            if (image.pixelColor(x, y).rgb() == c.rgb()) ++n;
    return n;
}

double inkFraction(const QImage& image) {
    qint64 ink = 0;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x)
            if (image.pixel(x, y) != qRgb(255, 255, 255)) ++ink;
    return double(ink) / (double(image.width()) * image.height());
}

} // namespace

TEST_CASE("PNG report: 1600 px wide by default, as tall as needed, and drawn", "[report][png]") {
    ensureApp();
    QTemporaryDir dir;
    const QImage image = exportPng(presetRequest("resnet50", 64), dir);
    CHECK(image.width() == 1600);
    CHECK(image.height() > 600);
    CHECK(image.height() < 1600);
    CHECK(inkFraction(image) > 0.10);
    // The stacked chart's largest band and the table's swatches, in the palette's colours.
    CHECK(countColor(image, ComponentPalette::color(Component::Activations)) > 20000);
    CHECK(countColor(image, ComponentPalette::color(Component::Parameters)) > 50);
    // The verdict's accent bar (fits).
    CHECK(countColor(image, ComponentPalette::fits()) > 500);
    CHECK(countColor(image, ComponentPalette::doesNotFit()) == 0);
}

TEST_CASE("PNG report: the requested size and DPI, also when the height is tight", "[report][png]") {
    ensureApp();
    QTemporaryDir dir;
    ReportRequest r = presetRequest("transformer-12", 32);
    r.pngSize = QSize(1200, 900);
    r.dpi = 120;
    QImage image = exportPng(r, dir);
    CHECK(image.size() == QSize(1200, 900));
    CHECK(std::abs(image.dotsPerMeterX() - std::lround(120 / 0.0254)) <= 1);
    CHECK(inkFraction(image) > 0.10);

    r.pngSize = QSize(1000, 420); // shorter than the content at 120 dpi: scaled down to fit
    image = exportPng(r, dir);
    CHECK(image.size() == QSize(1000, 420));
    CHECK(inkFraction(image) > 0.10);
    // The chart is still there, and the bottom rows of the image are not cut-off content but margin.
    CHECK(countColor(image, ComponentPalette::color(Component::Activations)) > 2000);
    for (int x = 0; x < image.width(); ++x) CHECK(image.pixel(x, image.height() - 2) == qRgb(255, 255, 255));
}

TEST_CASE("PNG report: a batch that does not fit shows the red verdict", "[report][png]") {
    ensureApp();
    QTemporaryDir dir;
    const QImage image = exportPng(presetRequest("llama-2-7b", 2, "80GiB"), dir);
    CHECK(countColor(image, ComponentPalette::doesNotFit()) > 500);
    CHECK(countColor(image, ComponentPalette::fits()) == 0);
}

TEST_CASE("Chart image for the clipboard has the requested size", "[report][png]") {
    ensureApp();
    auto data = buildReportData(presetRequest("resnet50", 64));
    REQUIRE(data);
    const QImage chart = renderReportChart(*data, QSize(800, 500), 96);
    CHECK(chart.size() == QSize(800, 500));
    CHECK(countColor(chart, ComponentPalette::color(Component::Activations)) > 10000);
    CHECK(countColor(chart, ComponentPalette::capacity()) > 300);

    // Measurements show up as marks on the chart.
    ReportData measured = *data;
    measured.request.measured = {{128, 14ull << 30, QStringLiteral("nvidia-smi")}};
    CHECK(renderReportChart(measured, QSize(800, 500), 96) != chart);
}
