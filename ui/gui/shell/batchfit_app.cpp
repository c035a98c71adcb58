#include "gui/shell/batchfit_app.h"

#include "batchfit/hf_cache.h"
#include "batchfit/model_io.h"
#include "gui/document/document.h"
#include "gui/files/autosave.h"
#include "gui/files/autosave_restore.h"
#include "gui/files/file_controller.h"
#include "gui/files/import_controller.h"
#include "gui/shell/app_settings.h"
#include "gui/shell/language.h"
#include "gui/shell/main_window.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QImage>
#include <QPixmap>
#include <QScreen>
#include <QStatusBar>
#include <QTemporaryDir>
#include <cstdio>
#include <cstring>
#include <memory>

namespace batchfit {

namespace {

/// --screenshot renders offscreen; --help and --version print and exit, so they must work without a display.
bool wantsOffscreen(int argc, char** argv) {
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--screenshot") == 0 || std::strncmp(argv[i], "--screenshot=", 13) == 0 ||
            std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0 ||
            std::strcmp(argv[i], "--help-all") == 0 || std::strcmp(argv[i], "--version") == 0 ||
            std::strcmp(argv[i], "-v") == 0)
            return true;
    return false;
}

} // namespace

void BatchFitApp::openInitialModel(MainWindow& window, AppSettings& settings, const StartupOptions& o) {
    FileController* files = window.files();
    bool loaded = false;
    if (!o.hfConfig.isEmpty()) {
        // As batchfit-cli --hf-config: a path, or an id looked up in the local cache (never downloaded).
        std::string path = o.hfConfig.toStdString();
        if (!QFileInfo::exists(o.hfConfig) && isHfModelId(path)) {
            if (auto cached = findCachedHfConfig(path))
                path = *cached;
            else
                std::fprintf(stderr, "batchfit: %s\n", cached.error().message.c_str());
        }
        loaded = QFileInfo::exists(QString::fromStdString(path)) &&
                 files->imports()->importHfPath(QString::fromStdString(path), HfImportOptions{}, false);
        if (!loaded)
            std::fprintf(stderr, "batchfit: --hf-config %s was not imported\n", qPrintable(o.hfConfig));
    }
    const auto openNamed = [&] { // --model, --preset, else what the last session had open
        if (!o.modelFile.isEmpty()) return files->openPath(o.modelFile, false);
        if (!o.preset.isEmpty()) return files->loadPreset(o.preset, false);
        if (!settings.lastModelPath().isEmpty() && QFileInfo::exists(settings.lastModelPath()))
            return files->openPath(settings.lastModelPath(), false);
        if (!settings.lastPresetId().isEmpty()) return files->loadPreset(settings.lastPresetId(), false);
        return false;
    };
    if (!loaded) loaded = openNamed();
    if (!loaded) files->loadPreset(QStringLiteral("resnet50"), false);

    if (!o.gpu.isEmpty()) {
        GpuSpec gpu = customGpu(24.0);
        bool isNumber = false;
        const double gib =
            QString(o.gpu).remove(QStringLiteral("GiB"), Qt::CaseInsensitive).toDouble(&isNumber);
        if (isNumber)
            gpu = customGpu(gib);
        else if (auto g = findGpu(o.gpu.toStdString()))
            gpu = *g;
        else
            std::fprintf(stderr, "batchfit: unknown GPU '%s', using a custom 24 GiB GPU\n",
                         qPrintable(o.gpu));
        window.document()->setGpu(gpu);
    }
    if (o.logScale) window.setLogScale(true);
    if (o.logMemory) window.setLogMemoryScale(true);
    if (o.batch > 0) window.setBatch(o.batch);
}

void BatchFitApp::applyTestEdit(MainWindow& window, const QString& path) {
    auto model = loadModelFile(path.toStdString());
    if (!model) {
        std::fprintf(stderr, "batchfit: --test-edit: %s\n", model.error().message.c_str());
        return;
    }
    window.document()->editModel(std::move(*model), QStringLiteral("test edit"), {});
    std::printf("test edit applied\n");
    std::fflush(stdout);
}

bool BatchFitApp::saveScreenshot(MainWindow& window, const QString& path) {
    window.waitForIdle(30000, true);
    QCoreApplication::processEvents();
    const QPixmap pixmap = window.grab();
    return pixmap.save(path, "PNG");
}

int BatchFitApp::run(int argc, char** argv) {
    QElapsedTimer startTimer;
    startTimer.start();
    if (wantsOffscreen(argc, argv) && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("batchfit"));
    QApplication::setApplicationDisplayName(QStringLiteral("BatchFit"));
    QApplication::setOrganizationName(QStringLiteral("BatchFit"));
    QApplication::setApplicationVersion(QStringLiteral(BATCHFIT_VERSION));
    QGuiApplication::setDesktopFileName(QStringLiteral("io.github.batchfit.BatchFit"));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("BatchFit: GPU memory of one training step and the largest batch that fits."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption presetOpt(QStringLiteral("preset"), QStringLiteral("Open a built-in model."),
                                       QStringLiteral("NAME"));
    const QCommandLineOption modelOpt(QStringLiteral("model"), QStringLiteral("Open a model file."),
                                      QStringLiteral("FILE"));
    const QCommandLineOption hfOpt(
        QStringLiteral("hf-config"),
        QStringLiteral(
            "Import a Hugging Face config.json, or a model id from the local cache (never downloaded)."),
        QStringLiteral("PATH|ID"));
    const QCommandLineOption batchOpt(QStringLiteral("batch"), QStringLiteral("Micro-batch size."),
                                      QStringLiteral("N"));
    const QCommandLineOption gpuOpt(QStringLiteral("gpu"),
                                    QStringLiteral("Catalogue GPU id, or a capacity such as 24GiB."),
                                    QStringLiteral("ID"));
    const QCommandLineOption langOpt(QStringLiteral("lang"),
                                     QStringLiteral("User interface language: en or zh_CN."),
                                     QStringLiteral("LANG"));
    const QCommandLineOption shotOpt(
        QStringLiteral("screenshot"),
        QStringLiteral("Render the main window to a PNG once the estimate is shown, then exit."),
        QStringLiteral("FILE"));
    const QCommandLineOption logOpt(QStringLiteral("log"), QStringLiteral("Logarithmic batch axis."));
    const QCommandLineOption logMemoryOpt(QStringLiteral("log-memory"),
                                          QStringLiteral("Logarithmic memory axis."));
    const QCommandLineOption chartOpt(
        QStringList{QStringLiteral("chart"), QStringLiteral("tab")},
        QStringLiteral("Tab in front under the chart: breakdown (default), timeline, segments (the caching "
                       "allocator's), layers, gpus or heatmap (batch x sequence)."),
        QStringLiteral("TAB"));
    const QCommandLineOption modeOpt(QStringLiteral("mode"),
                                     QStringLiteral("Start in training (default) or serving mode."),
                                     QStringLiteral("MODE"));
    QCommandLineOption testEditOpt(
        QStringLiteral("test-edit"),
        QStringLiteral("Tests only: replace the model with FILE as an unsaved edit."),
        QStringLiteral("FILE"));
    testEditOpt.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOptions({presetOpt, modelOpt, hfOpt, batchOpt, gpuOpt, langOpt, shotOpt, logOpt, logMemoryOpt,
                       chartOpt, modeOpt, testEditOpt});
    parser.process(app);

    StartupOptions o;
    o.preset = parser.value(presetOpt);
    o.modelFile = parser.value(modelOpt);
    o.hfConfig = parser.value(hfOpt);
    o.batch = parser.value(batchOpt).toLongLong();
    o.gpu = parser.value(gpuOpt);
    o.language = parser.value(langOpt);
    o.screenshot = parser.value(shotOpt);
    o.logScale = parser.isSet(logOpt);
    o.logMemory = parser.isSet(logMemoryOpt);
    o.testEdit = parser.value(testEditOpt);
    o.chart = parser.value(chartOpt);
    const QStringList tabs = {QStringLiteral("breakdown"), QStringLiteral("timeline"),
                              QStringLiteral("segments"),  QStringLiteral("layers"),
                              QStringLiteral("gpus"),      QStringLiteral("heatmap")};
    const QString mode = parser.value(modeOpt);
    if (!mode.isEmpty() && mode != QLatin1String("training") && mode != QLatin1String("serving")) {
        std::fprintf(stderr, "batchfit: --mode must be training or serving, got '%s'\n", qPrintable(mode));
        return 2;
    }
    if (!o.chart.isEmpty() && !tabs.contains(o.chart)) {
        std::fprintf(stderr, "batchfit: --chart (--tab) must be one of %s, got '%s'\n",
                     qPrintable(tabs.join(QStringLiteral(", "))), qPrintable(o.chart));
        return 2;
    }

    // A screenshot uses fresh settings, so it shows the defaults whatever this user's last session was.
    std::unique_ptr<QTemporaryDir> tempSettings;
    std::unique_ptr<AppSettings> settings;
    if (!o.screenshot.isEmpty()) {
        tempSettings = std::make_unique<QTemporaryDir>();
        settings = std::make_unique<AppSettings>(tempSettings->filePath(QStringLiteral("batchfit.ini")));
        settings->setWelcomeDismissed(false);
    } else {
        settings = std::make_unique<AppSettings>();
    }
    const QString language = Language::resolve(o.language.isEmpty() ? settings->language() : o.language);
    if (!Language::install(language) && language != QLatin1String("en"))
        std::fprintf(stderr, "batchfit: no translation for '%s'\n", qPrintable(language));

    MainWindow window(settings.get());
    QApplication::setWindowIcon(window.windowIcon());
    if (window.windowIcon().pixmap(16, 16).isNull()) // every toolbar button would show text or nothing
        std::fprintf(stderr, "batchfit: Qt cannot draw SVG icons: its SVG plugins are missing (package "
                             "qt6-svg-plugins on Debian 13, libqt6svg6 on Debian 12)\n");
    window.restoreSettings();
    window.files()->setHeadless(!o.screenshot.isEmpty());
    openInitialModel(window, *settings, o);
    if (!o.chart.isEmpty()) window.showTab(o.chart);
    if (mode == QLatin1String("serving")) window.setServingMode(true);
    window.show();
    // Autosave, and the offer to restore what a crashed or killed session left (not for screenshots).
    std::unique_ptr<Autosave> autosave;
    if (o.screenshot.isEmpty()) {
        autosave = std::make_unique<Autosave>(window.document(), Autosave::defaultDirectory());
        QObject::connect(autosave.get(), &Autosave::failed, &window, [&window](const QString& message) {
            window.statusBar()->showMessage(message, 10000);
        });
        AutosaveRestore(Autosave::defaultDirectory()).offer(window.document(), &window, autosave.get());
        if (!o.testEdit.isEmpty()) applyTestEdit(window, o.testEdit);
    }
    if (!o.screenshot.isEmpty()) {
        const bool ok = saveScreenshot(window, o.screenshot);
        std::printf("cold start to estimate shown: %lld ms\n", static_cast<long long>(startTimer.elapsed()));
        std::printf("model %s\n", window.document()->model().name.c_str());
        if (!ok) {
            std::fprintf(stderr, "batchfit: cannot write %s\n", qPrintable(o.screenshot));
            return 1;
        }
        // What a layout check needs to know: where the first start put the window, on which screen.
        const QRect g = window.geometry();
        const QRect a = window.screen()->availableGeometry();
        std::printf("window %dx%d at %d,%d on a %dx%d screen (available %dx%d at %d,%d)%s\n", g.width(),
                    g.height(), g.x(), g.y(), window.screen()->size().width(),
                    window.screen()->size().height(), a.width(), a.height(), a.x(), a.y(),
                    window.isMaximized() ? ", maximized" : "");
        std::printf("wrote %s\n", qPrintable(QDir::toNativeSeparators(o.screenshot)));
        return 0;
    }
    return QApplication::exec();
}

} // namespace batchfit
