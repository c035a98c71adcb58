#include "catch_compat.h"
#include "gui/charts/component_style.h"
#include "gui/shell/language.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QApplication>
#include <QFile>
#include <QMenuBar>
#include <QRegularExpression>

using namespace batchfit;

TEST_CASE("the zh_CN translation loads and translates the UI", "[i18n]") {
    test::app();
    REQUIRE(Language::install(QStringLiteral("zh_CN")));
    CHECK(Language::current() == QStringLiteral("zh_CN"));
    CHECK(ComponentStyle::name(Component::Parameters) == QStringLiteral("模型参数"));
    CHECK(ComponentStyle::name(Component::OptimizerStates) == QStringLiteral("优化器状态"));
    CHECK(ComponentStyle::name(Component::Activations) == QStringLiteral("前向激活"));
    CHECK(ComponentStyle::name(Component::Gradients) == QStringLiteral("反向梯度"));
    {
        test::TempSettings temp;
        MainWindow w(&temp.settings());
        const QString file = w.menuBar()->actions().first()->text();
        CHECK(file.contains(QStringLiteral("文件")));
    }
    const QStringList families = QApplication::font().families();
    CHECK(families.contains(QStringLiteral("Noto Sans CJK SC")));
    REQUIRE(Language::install(QStringLiteral("en")));
    CHECK(ComponentStyle::name(Component::Parameters) == QStringLiteral("Model parameters"));
}

TEST_CASE("the zh_CN translation is complete", "[i18n]") {
    QFile ts(QStringLiteral(BATCHFIT_TS_FILE));
    REQUIRE(ts.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(ts.readAll());
    const int messages = static_cast<int>(text.count(QStringLiteral("<message")));
    CHECK(messages > 200);
    CHECK(text.count(QStringLiteral("type=\"unfinished\"")) == 0);
    CHECK(text.count(QStringLiteral("type=\"vanished\"")) == 0);
    CHECK(text.count(QRegularExpression(QStringLiteral("<translation>\\s*</translation>"))) == 0);
}
