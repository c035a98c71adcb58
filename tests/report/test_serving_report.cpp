// The serving report (issue 27): one PDF page or one PNG with the engine's figures, in both languages,
// written atomically.
#include "catch_compat.h"
#include "report/serving_report.h"
#include "report_test_support.h"

#include <QFile>
#include <QImage>
#include <QLocale>
#include <QTemporaryDir>

using namespace batchfit;
using namespace batchfit::test;

namespace {

ServingReportRequest request() {
    auto m = readServingModelFile(std::string(BATCHFIT_TEST_DATA) + "/hf/qwen3-8b.json");
    REQUIRE(m);
    ServingReportRequest r;
    r.model = *m;
    r.gpu = *findGpu("l40s");
    r.sequences = 8;
    r.context = 8192;
    r.generatedAt = QDateTime(QDate(2026, 12, 3), QTime(12, 0));
    return r;
}

} // namespace

TEST_CASE("serving report: one PDF page with the engine's own figures", "[report][serving]") {
    ensureApp();
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("serve.pdf"));
    const ServingReportRequest r = request();
    REQUIRE(exportServingReport(r, path));
    CHECK(pdfPages(path) == 1);
    const QString text = pdfText(path);
    auto e = estimateServing(r.model, r.config, r.gpu);
    REQUIRE(e);
    const QString tokens = QLocale(QLocale::English).toString(static_cast<qlonglong>(e->kvTokens));
    CHECK(text.contains(QStringLiteral("GPU KV cache size: %1 tokens").arg(tokens)));
    CHECK(text.contains(QStringLiteral("fits: 8")));
    CHECK(text.contains(QStringLiteral("Memory on one GPU")));
    CHECK(text.contains(QStringLiteral("What would help")));
    CHECK(text.contains(QStringLiteral("fp8 KV cache")));
}

TEST_CASE("serving report: PNG in Chinese, and a failure leaves the old file as it was",
          "[report][serving]") {
    ensureApp();
    QTemporaryDir dir;
    ServingReportRequest r = request();
    r.language = QStringLiteral("zh_CN");
    const QString png = dir.filePath(QStringLiteral("serve.png"));
    REQUIRE(exportServingReport(r, png));
    QImage image(png);
    CHECK(image.width() == r.pngWidth);
    CHECK(image.height() > 600);
    // A bad format or language writes nothing and says why, naming the file.
    auto bad = exportServingReport(r, dir.filePath(QStringLiteral("serve.docx")));
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message.find("serve.docx") != std::string::npos);
    QFile old(png);
    REQUIRE(old.open(QIODevice::ReadOnly));
    const QByteArray before = old.readAll();
    old.close();
    r.language = QStringLiteral("fr");
    REQUIRE_FALSE(exportServingReport(r, png));
    QFile again(png);
    REQUIRE(again.open(QIODevice::ReadOnly));
    CHECK(again.readAll() == before);
}
