#pragma once
// Start-up of the desktop app: command-line options, language, settings, the first model, and --screenshot.
#include <QString>
#include <cstdint>

namespace batchfit {

class MainWindow;
class AppSettings;

/// What `batchfit` was asked to do on its command line.
struct StartupOptions {
    QString preset;
    QString modelFile;
    QString hfConfig; ///< --hf-config: a config.json, or a model id found in the local Hugging Face cache
    std::int64_t batch = 0; ///< 0: keep the remembered batch
    QString gpu;
    QString language;
    QString screenshot; ///< render the window to this PNG and exit
    bool logScale = false;
    bool logMemory = false;
    QString chart;    ///< --chart (--tab) heatmap, segments, ...: that tab in front (MainWindow::showTab)
    QString testEdit; ///< hidden: replaces the model with this file as one edit (autosave test)
};

/// The app's main(): `gui_main.cpp` only calls run().
class BatchFitApp {
public:
    static int run(int argc, char** argv);
    /// Loads the first model (options, else the last one, else ResNet-50) and applies the options.
    static void openInitialModel(MainWindow& window, AppSettings& settings, const StartupOptions& options);
    /// Hidden --test-edit: replaces the model with the file's as one undoable edit (no user needed).
    static void applyTestEdit(MainWindow& window, const QString& path);
    /// Renders the window to a PNG once the estimate is shown. Returns false if it could not be written.
    static bool saveScreenshot(MainWindow& window, const QString& path);
};

} // namespace batchfit
