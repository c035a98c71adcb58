// Keyboard use of the main window (issue 17, item 1): Tab reaches every control and leaves the tables, and no
// two visible controls (or a control and a menu) share an Alt+letter.
#include "catch_compat.h"
#include "gui/document/layer_address.h"
#include "gui/files/file_controller.h"
#include "gui/panels/batch_panel.h"
#include "gui/panels/layer_stack_panel.h"
#include "gui/panels/training_panel.h"
#include "gui/shell/language.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QCoreApplication>
#include <QLabel>
#include <QMap>
#include <QMenuBar>
#include <QPushButton>
#include <QAbstractSpinBox>
#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QSlider>
#include <QTabBar>
#include <QTabWidget>

#include <cstdlib>
#include <vector>

using namespace batchfit;

namespace {

/// The letter after a single '&' in `text` (lower case), or 0.
QChar mnemonic(const QString& text) {
    for (int i = 0; i + 1 < text.size(); ++i) {
        if (text[i] != QLatin1Char('&')) continue;
        if (text[i + 1] == QLatin1Char('&')) {
            ++i;
            continue;
        }
        return text[i + 1].toLower();
    }
    return {};
}

/// Every Alt+letter of the window as it is now: menu titles, visible labels with a buddy, buttons, tabs.
QMap<QChar, QStringList> mnemonics(MainWindow& w) {
    QMap<QChar, QStringList> m;
    auto add = [&m](const QString& text) {
        const QChar c = mnemonic(text);
        if (!c.isNull()) m[c] << text;
    };
    for (QAction* a : w.menuBar()->actions()) add(a->text());
    for (QLabel* l : w.findChildren<QLabel*>())
        if (l->isVisibleTo(&w) && l->buddy() && l->buddy()->isVisibleTo(&w)) add(l->text());
    for (QAbstractButton* b : w.findChildren<QAbstractButton*>())
        if (b->isVisibleTo(&w) && !b->text().isEmpty()) add(b->text());
    for (QTabWidget* t : w.findChildren<QTabWidget*>())
        if (t->isVisibleTo(&w))
            for (int i = 0; i < t->count(); ++i) add(t->tabText(i));
    return m;
}

QStringList clashes(MainWindow& w) {
    QStringList out;
    const auto m = mnemonics(w);
    for (auto it = m.begin(); it != m.end(); ++it)
        if (it.value().size() > 1)
            out << QStringLiteral("Alt+%1: %2")
                       .arg(it.key().toUpper(), it.value().join(QStringLiteral(", ")));
    return out;
}

/// A window with ResNet-50 loaded and the levers shown, as after a first start.
struct Fixture : test::AppWithSettings {
    MainWindow w{&temp.settings()};
    Fixture() {
        w.restoreSettings();
        w.resize(1600, 1000);
        w.show();
        REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
        REQUIRE(w.waitForIdle(30000, true));
    }
};

} // namespace

TEST_CASE("no two visible controls or menus share an Alt+letter", "[keyboard]") {
    test::app();
    const QString lang = GENERATE(QStringLiteral("en"), QStringLiteral("zh_CN"));
    INFO(lang.toStdString());
    REQUIRE(Language::install(lang));
    struct Restore {
        ~Restore() { Language::install(QStringLiteral("en")); }
    } restore;
    Fixture f;
    MainWindow& w = f.w;
    // The layer editor shows other fields for the input (selected at start), an op and a block: each on its
    // own.
    {
        const QStringList c = clashes(w);
        INFO("input row: " << c.join(QLatin1Char('\n')).toStdString());
        CHECK(c.isEmpty());
        CHECK(mnemonics(w).contains(QLatin1Char('s'))); // Input &shape: the input's fields are on screen
    }
    for (const LayerAddress& a : {LayerAddress::top(0), LayerAddress::top(1), LayerAddress::top(5)}) {
        w.layerPanel()->select(a);
        QCoreApplication::processEvents();
        const QStringList c = clashes(w);
        INFO(c.join(QLatin1Char('\n')).toStdString());
        CHECK(c.isEmpty());
    }
    // Serving mode has its own form: none of its letters may be a menu's.
    w.setServingMode(true);
    QCoreApplication::processEvents();
    const QStringList serving = clashes(w);
    INFO("serving mode: " << serving.join(QLatin1Char('\n')).toStdString());
    CHECK(serving.isEmpty());
    CHECK(mnemonics(w).contains(QLatin1Char('q'))); // Concurrent se&quences: the serving form is on screen
    w.setServingMode(false);
}

TEST_CASE("Tab walks through every control, out of the tables, to the Apply button", "[keyboard]") {
    Fixture f;
    MainWindow& w = f.w;
    // Tables are one Tab stop each (arrow keys move inside them): Tab in a table must not walk its cells.
    for (QAbstractItemView* v : w.findChildren<QAbstractItemView*>())
        if (v->isVisibleTo(&w) && qobject_cast<QAbstractItemView*>(v)) CHECK_FALSE(v->tabKeyNavigation());
    // Following the focus chain from the first widget reaches the what-if Apply button and comes back round.
    QWidget* start = w.nextInFocusChain();
    QWidget* at = start;
    bool apply = false;
    int stops = 0;
    for (int i = 0; i < 2000; ++i) {
        at = at->nextInFocusChain();
        if (at == start) break;
        if (at->isVisibleTo(&w) && at->isEnabled() && (at->focusPolicy() & Qt::TabFocus)) ++stops;
        if (auto* b = qobject_cast<QPushButton*>(at); b && b->text() == QStringLiteral("Appl&y"))
            apply = true;
    }
    CHECK(at == start);
    CHECK(apply);
    CHECK(stops > 15);
}

TEST_CASE("Tab goes down each panel as it is laid out", "[keyboard]") {
    // The review found Tab jumping from the GPU to "zero_grad", the GPU count last, and the chart's axis boxes
    // after the tables (issue 30).
    Fixture f;
    MainWindow& w = f.w;
    w.resize(1366, 768);
    struct Stop {
        QWidget* widget;
        QPoint at;
    };
    std::vector<Stop> stops;
    QWidget* start = w.nextInFocusChain();
    QWidget* at = start;
    for (int i = 0; i < 2000; ++i) {
        at = at->nextInFocusChain();
        if (at == start) break;
        // A spin box's or combo box's own line edit is the same stop as its box.
        if (qobject_cast<QLineEdit*>(at) && at->parentWidget() &&
            (qobject_cast<QAbstractSpinBox*>(at->parentWidget()) || qobject_cast<QComboBox*>(at->parentWidget())))
            continue;
        if (at->isVisibleTo(&w) && at->isEnabled() && (at->focusPolicy() & Qt::TabFocus) &&
            !qobject_cast<QAbstractScrollArea*>(at))
            stops.push_back({at, at->mapTo(&w, QPoint(0, at->height() / 2))});
    }
    auto* panel = w.findChild<TrainingPanel*>();
    REQUIRE(panel != nullptr);
    auto inside = [](QWidget* child, QWidget* parent) { return child == parent || parent->isAncestorOf(child); };
    // The training panel: every next stop is lower, or on the same row (within 12 px) further right.
    QStringList out;
    const Stop* prev = nullptr;
    for (const Stop& s : stops) {
        if (!inside(s.widget, panel)) continue;
        if (prev) {
            const bool sameRow = std::abs(s.at.y() - prev->at.y()) <= 12;
            if (sameRow ? s.at.x() <= prev->at.x() : s.at.y() < prev->at.y())
                out << QStringLiteral("%1 at (%2,%3) after %4 at (%5,%6)")
                           .arg(QString::fromLatin1(s.widget->metaObject()->className()))
                           .arg(s.at.x())
                           .arg(s.at.y())
                           .arg(QString::fromLatin1(prev->widget->metaObject()->className()))
                           .arg(prev->at.x())
                           .arg(prev->at.y());
        }
        prev = &s;
    }
    INFO(out.join(QLatin1Char('\n')).toStdString());
    CHECK(out.isEmpty());
    // The centre: the axis boxes under the chart come before the batch slider, the slider before the tabs.
    auto index = [&stops](QWidget* wdg) {
        for (std::size_t i = 0; i < stops.size(); ++i)
            if (stops[i].widget == wdg) return static_cast<int>(i);
        return -1;
    };
    auto* logBatch = w.findChild<QCheckBox*>(QStringLiteral("logBatchBox"));
    auto* slider = w.findChild<BatchPanel*>()->slider();
    QTabWidget* tabs = w.tabs(); // the training page's (serving mode has its own)
    REQUIRE(logBatch);
    REQUIRE(tabs);
    CHECK(index(logBatch) >= 0);
    CHECK(index(logBatch) < index(slider));
    CHECK(index(slider) < index(tabs->tabBar()));
}
