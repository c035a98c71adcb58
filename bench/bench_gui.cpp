// Speed target (issue 3): one tick of the batch slider -> the window repainted in <= 8 ms, for ResNet-50 and
// Llama-2-7B. Measures MainWindow::setBatch + the event loop's repaint, as in the app, CPU time of this
// thread. Run: QT_QPA_PLATFORM=offscreen build/bench/batchfit_gui_bench
#include "batchfit/gpu.h"
#include "gui/document/document.h"
#include "gui/files/file_controller.h"
#include "gui/shell/app_settings.h"
#include "gui/shell/main_window.h"

#include <QApplication>
#include <QTemporaryDir>
#include <benchmark/benchmark.h>

using namespace batchfit;

namespace {

void sliderTick(benchmark::State& s, const char* preset, double gpuGib) {
    QTemporaryDir dir;
    AppSettings settings(dir.filePath(QStringLiteral("bench.ini")));
    MainWindow w(&settings);
    w.restoreSettings();
    w.resize(1400, 900);
    w.show();
    w.document()->setGpu(customGpu(gpuGib));
    if (!w.files()->loadPreset(QString::fromLatin1(preset), false) || !w.waitForIdle(60000)) {
        s.SkipWithError("the preset did not load");
        return;
    }
    std::int64_t batch = 1;
    for (auto _ : s) {
        batch = batch % 60 + 1; // 1..60, as a slider drag
        w.setBatch(batch);
        QCoreApplication::processEvents();
    }
}

void BM_SliderTickResnet50(benchmark::State& s) {
    sliderTick(s, "resnet50", 24.0);
}
BENCHMARK(BM_SliderTickResnet50)->Unit(benchmark::kMillisecond);

void BM_SliderTickLlama7b(benchmark::State& s) {
    sliderTick(s, "llama-2-7b", 80.0);
}
BENCHMARK(BM_SliderTickLlama7b)->Unit(benchmark::kMillisecond);

} // namespace

int main(int argc, char** argv) {
    if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
