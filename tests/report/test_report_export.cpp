// Export by extension, the machine-readable companions, and failures that write nothing.
#include "batchfit/estimator.h"
#include "batchfit/json_report.h"
#include "catch_compat.h"
#include "report/report_exporter.h"
#include "report_test_support.h"

#include <QDir>
#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>

using namespace batchfit;
using namespace batchfit::test;

namespace {

QByteArray readAll(const QString& path) {
    QFile f(path);
    REQUIRE(f.open(QIODevice::ReadOnly));
    return f.readAll();
}

void writeFile(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    REQUIRE(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

} // namespace

TEST_CASE("Export: JSON is the CLI's --json document", "[report][export]") {
    QTemporaryDir dir;
    ReportRequest r = presetRequest("resnet50", 64);
    r.topLayers = 10;
    const QString path = dir.filePath(QStringLiteral("r.json"));
    REQUIRE(exportReport(r, path));
    auto est = Estimator::create(r.model, r.config, r.gpu);
    const Estimate e = *est->estimate(64);
    ReportInput in{&r.model,
                   &r.config,
                   r.gpu,
                   &e,
                   *est->verdict(64, r.gpu.memoryBytes),
                   est->maxBatch(r.gpu.memoryBytes),
                   10};
    CHECK(readAll(path).toStdString() == estimateJson(in));
}

TEST_CASE("Export: Markdown and CSV hold the tables with the core's numbers", "[report][export]") {
    QTemporaryDir dir;
    ReportRequest r = presetRequest("transformer-12", 16);
    r.topLayers = 7;
    r.measured = {{16, 3000000000, QStringLiteral("nvidia-smi, run 1")}};
    auto est = Estimator::create(r.model, r.config, r.gpu);
    const Estimate e = *est->estimate(16);

    REQUIRE(exportReport(r, dir.filePath(QStringLiteral("r.md"))));
    const QString md = QString::fromUtf8(readAll(dir.filePath(QStringLiteral("r.md"))));
    CHECK(md.startsWith(QStringLiteral("# GPU memory report: BERT-base")));
    CHECK(md.contains(QStringLiteral("| Component | Size | Bytes | % of capacity |")));
    CHECK(md.contains(QStringLiteral("|---|---:|---:|---:|")));
    for (const char* c :
         {"| Parameters |", "| Gradients |", "| Optimizer states |", "| Activations |", "| Temporaries |"})
        CHECK(md.contains(QLatin1String(c)));
    CHECK(md.contains(QStringLiteral("Batch 16 fits on")));

    REQUIRE(exportReport(r, dir.filePath(QStringLiteral("r.CSV")))); // extensions are case-insensitive
    const QStringList lines = QString::fromUtf8(readAll(dir.filePath(QStringLiteral("r.CSV"))))
                                  .split(QStringLiteral("\r\n"), Qt::SkipEmptyParts);
    REQUIRE(lines.size() > 10);
    CHECK(lines[0] ==
          QStringLiteral("table,name,op,batch,bytes,output_bytes,percent_of_capacity,share_of_peak"));
    auto rowStarting = [&](const QString& prefix) {
        for (const QString& l : lines)
            if (l.startsWith(prefix)) return true;
        return false;
    };
    CHECK(rowStarting(QStringLiteral("at_peak,activations,,16,%1,,").arg(e.atPeak[Component::Activations])));
    CHECK(rowStarting(
        QStringLiteral("at_peak,optimizer_states,,16,%1,,").arg(e.atPeak[Component::OptimizerStates])));
    CHECK(rowStarting(QStringLiteral("total,required,,16,%1,,").arg(e.requiredBytes)));
    CHECK(lines.filter(QRegularExpression(QStringLiteral("^layer,"))).size() == 7);
    CHECK(rowStarting(QStringLiteral("measured,\"nvidia-smi, run 1\",,16,3000000000,")));
}

TEST_CASE("Export: an unwritable path gives a clear error and writes nothing", "[report][export]") {
    ensureApp();
    QTemporaryDir dir;
    const ReportRequest r = presetRequest("resnet50", 8);

    SECTION("the folder does not exist") {
        const QString path = dir.filePath(QStringLiteral("no/such/folder/r.pdf"));
        const Status s = exportReport(r, path);
        REQUIRE_FALSE(s);
        CHECK(s.error().message.find("cannot write report to '" + path.toStdString() + "'") !=
              std::string::npos);
        CHECK(s.error().message.find("No such file or directory") != std::string::npos);
    }
    SECTION("the parent is a file") {
        writeFile(dir.filePath(QStringLiteral("file")), "x");
        const Status s = exportReport(r, dir.filePath(QStringLiteral("file/r.png")));
        REQUIRE_FALSE(s);
        CHECK(s.error().message.find("file/r.png") != std::string::npos);
    }
    SECTION("the target is a folder") {
        REQUIRE(QDir(dir.path()).mkdir(QStringLiteral("r.pdf")));
        const Status s = exportReport(r, dir.filePath(QStringLiteral("r.pdf")));
        REQUIRE_FALSE(s);
        CHECK(s.error().message.find("is a directory") != std::string::npos);
    }
    SECTION("an unknown extension names the formats") {
        const Status s = exportReport(r, dir.filePath(QStringLiteral("r.docx")));
        REQUIRE_FALSE(s);
        CHECK(s.error().message.find("unknown format '.docx'") != std::string::npos);
        CHECK(s.error().message.find(".pdf, .png, .json, .md, .csv") != std::string::npos);
    }
    // Only what the sections made themselves is there: no report, no temporary file.
    for (const QString& name : dirEntries(dir.path()))
        CHECK((name == QStringLiteral("file") || name == QStringLiteral("r.pdf")));
}

TEST_CASE("Export: a failed export leaves an existing report as it was", "[report][export]") {
    ensureApp();
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("r.pdf"));
    writeFile(path, "previous report");
    ReportRequest r = presetRequest("resnet50", 0); // the core refuses batch 0
    Status s = exportReport(r, path);
    REQUIRE_FALSE(s);
    CHECK(s.error().message.find("batch must be between") != std::string::npos);
    r = presetRequest("resnet50", 8);
    r.language = QStringLiteral("fr");
    s = exportReport(r, path);
    REQUIRE_FALSE(s);
    CHECK(s.error().message.find("no report translation for 'fr' (available: en, zh_CN)") !=
          std::string::npos);
    CHECK(readAll(path) == "previous report");
    CHECK(dirEntries(dir.path()) == QStringList{QStringLiteral("r.pdf")});

    r.language = QStringLiteral("en");
    REQUIRE(exportReport(r, path)); // and a good export replaces it
    CHECK(readAll(path).startsWith("%PDF-"));
    CHECK(dirEntries(dir.path()) == QStringList{QStringLiteral("r.pdf")});
}

TEST_CASE("Export: the format follows the extension", "[report][export]") {
    CHECK(reportFormatForPath(QStringLiteral("a/b/R.PDF")) == ReportFormat::Pdf);
    CHECK(reportFormatForPath(QStringLiteral("x.png")) == ReportFormat::Png);
    CHECK(reportFormatForPath(QStringLiteral("x.json")) == ReportFormat::Json);
    CHECK(reportFormatForPath(QStringLiteral("x.md")) == ReportFormat::Markdown);
    CHECK(reportFormatForPath(QStringLiteral("x.csv")) == ReportFormat::Csv);
    CHECK_FALSE(reportFormatForPath(QStringLiteral("x.pdf.txt")));
    CHECK_FALSE(reportFormatForPath(QStringLiteral("pdf")));
}
