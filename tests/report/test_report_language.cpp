// Report languages: per-report translation, the app-wide default, and a complete Chinese translation.
#include "catch_compat.h"
#include "report/report_language.h"
#include "report/report_text.h"
#include "report_test_support.h"

#include <QCoreApplication>
#include <QFile>

using namespace batchfit;
using namespace batchfit::test;

TEST_CASE("Report language: scopes translate and restore", "[report][i18n]") {
    CHECK(ReportText::componentLabel(Component::Activations) == QStringLiteral("Activations"));
    {
        const ReportLanguage zh(QStringLiteral("zh_CN"));
        REQUIRE(zh.ok());
        CHECK(ReportText::componentLabel(Component::Parameters) == QString::fromUtf8("模型参数"));
        CHECK(ReportText::componentLabel(Component::Gradients) == QString::fromUtf8("梯度"));
        CHECK(ReportText::componentLabel(Component::OptimizerStates) == QString::fromUtf8("优化器状态"));
        CHECK(ReportText::componentLabel(Component::Activations) == QString::fromUtf8("激活"));
        CHECK(ReportText::componentLabel(Component::Temporaries) == QString::fromUtf8("临时缓冲区"));
        {
            const ReportLanguage en(QStringLiteral("en"));
            CHECK(ReportText::componentLabel(Component::Activations) == QStringLiteral("Activations"));
        }
        CHECK(ReportText::componentLabel(Component::Activations) == QString::fromUtf8("激活"));
        CHECK(ReportLanguage::currentFontFamilies().front() == QStringLiteral("Noto Sans CJK SC"));
    }
    CHECK(ReportText::componentLabel(Component::Activations) == QStringLiteral("Activations"));
    const ReportLanguage fr(QStringLiteral("fr"));
    CHECK_FALSE(fr.ok());
    CHECK(fr.error().contains(QStringLiteral("available: en, zh_CN")));
}

TEST_CASE("Report language: installReportTranslator sets the default and the app's translator",
          "[report][i18n]") {
    ensureApp();
    REQUIRE(installReportTranslator(QStringLiteral("zh_CN")));
    CHECK(defaultReportLanguage() == QStringLiteral("zh_CN"));
    CHECK(ReportText::componentLabel(Component::Gradients) == QString::fromUtf8("梯度"));
    CHECK(QCoreApplication::translate("batchfit::ReportText", "Gradients") == QString::fromUtf8("梯度"));
    REQUIRE(installReportTranslator(QStringLiteral("en")));
    CHECK(ReportText::componentLabel(Component::Gradients) == QStringLiteral("Gradients"));
    CHECK(QCoreApplication::translate("batchfit::ReportText", "Gradients") == QStringLiteral("Gradients"));
    CHECK_FALSE(installReportTranslator(QStringLiteral("xx")));
    CHECK(defaultReportLanguage() == QStringLiteral("en"));
}

TEST_CASE("Report language: the Chinese translation is complete", "[report][i18n]") {
    QFile ts(QStringLiteral(BATCHFIT_REPORT_TS));
    REQUIRE(ts.open(QIODevice::ReadOnly));
    const QString xml = QString::fromUtf8(ts.readAll());
    CHECK(xml.count(QStringLiteral("<message>")) > 80);
    CHECK_FALSE(xml.contains(QStringLiteral("type=\"unfinished\"")));
    CHECK_FALSE(xml.contains(QStringLiteral("type=\"vanished\"")));
    CHECK_FALSE(xml.contains(QStringLiteral("<translation></translation>")));
}

TEST_CASE("Report text: byte sizes and percentages", "[report][i18n]") {
    CHECK(ReportText::bytes(512) == QStringLiteral("512 B"));
    CHECK(ReportText::bytes(536870912) == QStringLiteral("512 MiB"));
    CHECK(ReportText::bytes(5872928256) == QStringLiteral("5.47 GiB"));
    CHECK(ReportText::bytes(25769803776) == QStringLiteral("24 GiB"));
    CHECK(ReportText::bytes(24469359820) == QStringLiteral("22.8 GiB"));
    CHECK(ReportText::exactBytes(5872928256) == QStringLiteral("5,872,928,256"));
    CHECK(ReportText::percentOf(1, 4) == QStringLiteral("25.0%"));
    CHECK(ReportText::percentOf(1, 0) == QStringLiteral("—"));
    CHECK(ReportText::fraction(0.05) == QStringLiteral("5%"));
    CHECK(ReportText::fraction(0.125) == QStringLiteral("12.5%"));
}
