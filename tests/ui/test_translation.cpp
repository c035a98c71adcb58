#include "catch_compat.h"
#include "gui/charts/component_style.h"
#include "gui/shell/language.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QFile>
#include <QMenuBar>
#include <QMessageBox>
#include <QRegularExpression>
#include <QTimer>

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

TEST_CASE("in Chinese, Qt's own dialogs and buttons are Chinese too", "[i18n]") {
    test::app();
    REQUIRE(Language::install(QStringLiteral("zh_CN")));
    // qtbase_zh_CN.qm comes from qt6-translations-l10n (scripts/deps.sh installs it; the .deb recommends it).
    const QString ok = QCoreApplication::translate("QPlatformTheme", "OK");
    const QString lookIn = QCoreApplication::translate("QFileDialog", "Look in:");
    REQUIRE(Language::install(QStringLiteral("en")));
    CHECK(ok != QStringLiteral("OK"));
    CHECK(lookIn != QStringLiteral("Look in:"));
    CHECK(QCoreApplication::translate("QPlatformTheme", "OK") == QStringLiteral("OK"));
}

TEST_CASE("choosing a language offers to restart now", "[i18n][settings]") {
    test::app();
    test::TempSettings temp;
    MainWindow w(&temp.settings());
    w.show();
    QAction* chinese = nullptr;
    for (QAction* a : w.findChildren<QAction*>())
        if (a->text() == Language::nativeName(QStringLiteral("zh_CN"))) chinese = a;
    REQUIRE(chinese);
    QStringList buttons;
    QTimer answer;
    answer.setInterval(10);
    QObject::connect(&answer, &QTimer::timeout, [&] {
        auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
        if (!box || box->objectName() != QLatin1String("languageRestartBox")) return;
        for (QAbstractButton* b : box->buttons()) buttons << b->text();
        for (QAbstractButton* b : box->buttons())
            if (b->text() == QStringLiteral("Later")) b->click();
    });
    answer.start();
    chinese->trigger();
    answer.stop();
    CHECK(buttons.contains(QStringLiteral("Restart Now")));
    CHECK(buttons.contains(QStringLiteral("Later")));
    CHECK(temp.settings().language() == QStringLiteral("zh_CN"));
    CHECK(w.isVisible()); // "Later" keeps the window open
}
