// Edit > Copy Chart to Clipboard, and File > Export Report… starting in the folder of the last export.
#include "catch_compat.h"
#include "gui/charts/memory_chart.h"
#include "gui/document/document.h"
#include "gui/files/file_controller.h"
#include "gui/files/report_exporter.h"
#include "gui/panels/batch_panel.h"
#include "gui/shell/app_settings.h"
#include "gui/shell/main_window.h"
#include "gui_test_support.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QImage>
#include <QLineEdit>
#include <QSet>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <functional>

using namespace batchfit;

namespace {

/// While alive, hands every modal file dialog to `answer` (which accepts or rejects it) and records the
/// folder it opened in.
class FileDialogDriver {
public:
    explicit FileDialogDriver(std::function<void(QFileDialog*)> answer) {
        m_timer.setInterval(10);
        QObject::connect(&m_timer, &QTimer::timeout, [this, answer] {
            auto* d = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
            if (!d || !d->isVisible()) return;
            m_folders << d->directory().absolutePath();
            answer(d);
        });
        m_timer.start();
    }
    QStringList folders() const { return m_folders; }

private:
    QTimer m_timer;
    QStringList m_folders;
};

} // namespace

TEST_CASE("Copy Chart to Clipboard puts the chart's image on the clipboard", "[chart][clipboard]") {
    test::app();
    test::TempSettings temp;
    MainWindow w(&temp.settings());
    w.resize(1200, 800);
    REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
    w.show();
    REQUIRE(w.waitForIdle(30000));
    QGuiApplication::clipboard()->clear();
    REQUIRE(QGuiApplication::clipboard()->image().isNull());

    auto* copy = w.findChild<QAction*>(QStringLiteral("copyChartAction"));
    REQUIRE(copy);
    copy->trigger();
    const QImage image = QGuiApplication::clipboard()->image();
    REQUIRE_FALSE(image.isNull());
    if (ReportExporter::available()) {
        // The report's chart, large, with its title and legend (it was a small grab of the widget).
        CHECK(image.size() == QSize(1600, 900));
        QDir().mkpath(QStringLiteral(BATCHFIT_SHOTS_DIR));
        image.save(QStringLiteral(BATCHFIT_SHOTS_DIR "/copy-chart.png")); // to look at
        const QImage expected =
            ReportExporter::chartImage(w.document()->model(), w.document()->config(), w.document()->gpu(),
                                       w.batch(), QStringLiteral("en"), {}, QSize(1600, 900));
        CHECK(image.convertToFormat(QImage::Format_ARGB32) ==
              expected.convertToFormat(QImage::Format_ARGB32));
        // Dark title text in the top band, above the plot.
        int dark = 0;
        for (int y = 0; y < 60; ++y)
            for (int x = 0; x < 800; x += 2) dark += qGray(image.pixel(x, y)) < 90;
        CHECK(dark > 200);
    } else {
        CHECK(image.size() == w.memoryChart()->size() * w.memoryChart()->devicePixelRatioF());
    }
    // A drawn chart, not a blank widget: many colours (areas, lines, text).
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 7)
        for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
    CHECK(colours.size() > 10);
}

TEST_CASE("Export Report starts in the folder of the last export", "[report][settings]") {
    test::app();
    if (!ReportExporter::available()) {
        WARN("this build has no report support");
        return;
    }
    test::TempSettings temp;
    QTemporaryDir out;
    const QString folder = out.filePath(QStringLiteral("reports"));
    REQUIRE(QDir().mkpath(folder));
    MainWindow w(&temp.settings());
    REQUIRE(w.files()->loadPreset(QStringLiteral("mobilenet_v2"), false));
    REQUIRE(w.waitForIdle(30000));
    auto* exportAction = w.findChild<QAction*>(QStringLiteral("exportReportAction"));
    REQUIRE(exportAction);
    CHECK(temp.settings().lastReportDir().isEmpty());

    const QString report = QDir(folder).filePath(QStringLiteral("step.md"));
    {
        QStringList chosen;
        FileDialogDriver driver([&](QFileDialog* d) {
            // Typed into the name field, as a user would: Qt 6.8 applies the dialog's initial selection
            // once the folder has loaded, which can replace a selectFile() made before that.
            if (auto* name = d->findChild<QLineEdit*>(QStringLiteral("fileNameEdit")))
                name->setText(report);
            else
                d->selectFile(report);
            chosen = d->selectedFiles();
            static_cast<QDialog*>(d)->accept(); // QFileDialog::accept is protected
        });
        exportAction->trigger();
        INFO("the dialog had " << chosen.join(QLatin1Char(' ')).toStdString() << "; the folder has "
                               << QDir(folder).entryList(QDir::Files).join(QLatin1Char(' ')).toStdString());
        REQUIRE(QFileInfo(report).size() > 0);
    }
    CHECK(temp.settings().lastReportDir() == folder);

    FileDialogDriver again([](QFileDialog* d) { d->reject(); });
    exportAction->trigger();
    REQUIRE(again.folders().size() == 1);
    CHECK(again.folders().first() == folder);
    // Remembered across runs: a fresh settings object over the same file.
    temp.settings().sync();
    CHECK(AppSettings(temp.dir() + QStringLiteral("/test.ini")).lastReportDir() == folder);
}

// Hidden: run under X11 by its own ctest entry (xvfb-run, QT_QPA_PLATFORM=xcb). Only X11's key scheme makes
// Ctrl+E "end of line" in a QLineEdit; the offscreen platform's does not, so there the bug cannot show.
TEST_CASE("Ctrl+E exports from every widget, the batch box too", "[.x11][report][shortcuts]") {
    test::app();
    REQUIRE(QKeySequence::keyBindings(QKeySequence::MoveToEndOfLine)
                .contains(QKeySequence(Qt::CTRL | Qt::Key_E)));
    if (!ReportExporter::available()) {
        WARN("this build has no report support");
        return;
    }
    test::TempSettings temp;
    MainWindow w(&temp.settings());
    REQUIRE(w.files()->loadPreset(QStringLiteral("resnet50"), false));
    w.show();
    w.activateWindow();
    REQUIRE(w.waitForIdle(30000));
    auto* spin = w.batchPanel()->findChild<QSpinBox*>();
    REQUIRE(spin);
    spin->setFocus();
    QCoreApplication::processEvents();
    FileDialogDriver driver([](QFileDialog* d) { d->reject(); });
    // The spin box's line edit has the focus; QLineEdit would take Ctrl+E (end of line) for itself.
    QWidget* target = QApplication::focusWidget();
    REQUIRE(target);
    QTest::keyClick(target, Qt::Key_E, Qt::ControlModifier);
    CHECK(driver.folders().size() == 1);
    // Copy in a text field stays the field's.
    QTest::keyClick(target, Qt::Key_C, Qt::ControlModifier);
    CHECK(driver.folders().size() == 1);
}
