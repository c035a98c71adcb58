#include "report_test_support.h"

#include "batchfit/gpu.h"
#include "batchfit/presets.h"
#include "catch_compat.h"
#include "report/headless_app.h"

#include <QDir>
#include <QProcess>
#include <QRegularExpression>

namespace batchfit::test {

void ensureApp() {
    REQUIRE(ensureGuiApplication());
}

ReportRequest presetRequest(const std::string& preset, std::int64_t batch, const std::string& gpu) {
    ReportRequest r;
    auto model = loadPreset(preset);
    REQUIRE(model);
    r.model = *model;
    if (gpu.size() > 3 && gpu.substr(gpu.size() - 3) == "GiB") {
        r.gpu = customGpu(std::stod(gpu.substr(0, gpu.size() - 3)));
    } else {
        auto g = findGpu(gpu);
        REQUIRE(g);
        r.gpu = *g;
    }
    r.batch = batch;
    r.language = QStringLiteral("en");
    r.generatedAt = QDateTime(QDate(2026, 1, 2), QTime(3, 4));
    return r;
}

QString runProgram(const QString& program, const QStringList& args, int* rc) {
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(60000)) {
        if (rc) *rc = -1;
        return {};
    }
    if (rc) *rc = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    return QString::fromUtf8(p.readAllStandardOutput());
}

QString pdfText(const QString& path, int first, int last) {
    QStringList args{QStringLiteral("-layout"), QStringLiteral("-enc"), QStringLiteral("UTF-8")};
    if (first > 0) args << QStringLiteral("-f") << QString::number(first);
    if (last > 0) args << QStringLiteral("-l") << QString::number(last);
    args << path << QStringLiteral("-");
    int rc = 0;
    const QString text = runProgram(QStringLiteral(BATCHFIT_PDFTOTEXT), args, &rc);
    INFO("pdftotext (poppler-utils) must be installed");
    REQUIRE(rc == 0);
    return text;
}

int pdfPages(const QString& path) {
    int rc = 0;
    const QString info = runProgram(QStringLiteral(BATCHFIT_PDFINFO), {path}, &rc);
    INFO("pdfinfo (poppler-utils) must be installed");
    REQUIRE(rc == 0);
    const auto m = QRegularExpression(QStringLiteral("Pages:\\s+(\\d+)")).match(info);
    REQUIRE(m.hasMatch());
    return m.captured(1).toInt();
}

QStringList dirEntries(const QString& dir) {
    return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                               QDir::Name);
}

} // namespace batchfit::test
