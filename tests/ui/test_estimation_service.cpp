#include "batchfit/presets.h"
#include "catch_compat.h"
#include "gui/estimation/estimation_service.h"
#include "gui_test_support.h"

#include <QSignalSpy>

using namespace batchfit;

TEST_CASE("the estimation service delivers only the latest request", "[service]") {
    test::app();
    EstimationService service;
    QSignalSpy ready(&service, &EstimationService::resultReady);
    auto resnet = loadPreset("resnet50");
    auto llama = loadPreset("llama-2-7b");
    REQUIRE(resnet);
    REQUIRE(llama);
    const GpuSpec gpu = customGpu(24.0);
    service.request(*llama, TrainingConfig{}, gpu, 1);
    service.request(*llama, TrainingConfig{}, customGpu(80.0), 1);
    const auto last = service.request(*resnet, TrainingConfig{}, gpu, 64);
    CHECK(service.isBusy());
    for (int i = 0; i < 200 && service.isBusy(); ++i) ready.wait(100);
    REQUIRE_FALSE(service.isBusy());
    REQUIRE(service.current());
    CHECK(service.current()->generation == last);
    CHECK(service.current()->gpu.memoryBytes == gpu.memoryBytes);
    CHECK(service.current()->maxBatch.largest > 0);
    CHECK_FALSE(service.current()->sweep.empty());
    CHECK(ready.count() <= 2); // the middle request is dropped or its result ignored

    QSignalSpy failed(&service, &EstimationService::resultFailed);
    Model bad = *resnet;
    bad.layers.clear();
    service.request(bad, TrainingConfig{}, gpu, 1);
    REQUIRE(failed.wait(10000));
    CHECK(service.current()->generation == last); // the last good result stays
    CHECK_FALSE(failed.first().first().toString().isEmpty());
}
