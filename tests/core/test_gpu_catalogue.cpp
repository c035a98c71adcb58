// The GPU catalogue (issue 32): every card people train and serve on, each figure with its source.
#include "batchfit/gpu.h"
#include "test_util.h"

#include <algorithm>
#include <cctype>
#include <set>

using namespace batchfit;

TEST_CASE("every catalogue entry has a source, an architecture with its source and a family; ids are unique",
          "[gpu][catalogue]") {
    std::set<std::string> ids;
    const auto& families = gpuFamilies();
    REQUIRE(families.size() >= 8);
    for (const GpuSpec& g : gpuCatalogue()) {
        INFO(g.id);
        std::string lower = g.id;
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char c) { return std::tolower(c); });
        CHECK(ids.insert(lower).second); // findGpu is case-insensitive: ids must differ in more than case
        CHECK(lower != "custom");
        CHECK_FALSE(g.name.empty());
        CHECK_FALSE(g.source.empty());
        CHECK_FALSE(g.archSource.empty());
        CHECK((g.arch.rfind("sm_", 0) == 0 || g.arch.rfind("gfx", 0) == 0));
        CHECK(std::find(families.begin(), families.end(), g.family) != families.end());
        CHECK(g.memoryBytes > (std::uint64_t{4} << 30));
        CHECK(g.contextBytes > 0);
        // bf16 from Ampere (sm_80) and CDNA2 on; fp8 from Ada (sm_89), Hopper and CDNA3
        if (g.arch.rfind("sm_", 0) == 0) {
            const int cc = std::stoi(g.arch.substr(3));
            CHECK(g.bf16 == (cc >= 80));
            CHECK(g.fp8 == (cc >= 89));
        }
    }
    // every family is used, in the picker's order
    for (const std::string& f : families) {
        INFO(f);
        CHECK(std::any_of(gpuCatalogue().begin(), gpuCatalogue().end(),
                          [&](const GpuSpec& g) { return g.family == f; }));
    }
}

TEST_CASE("the cards of issue 32 are in the catalogue", "[gpu][catalogue]") {
    for (const char* id : {"rtx-2080-ti",
                           "titan-rtx",
                           "quadro-rtx-8000",
                           "h100-pcie",
                           "h100-nvl",
                           "h800",
                           "h20",
                           "gh200-96gb",
                           "gh200-144gb",
                           "b100",
                           "gb200",
                           "rtx-pro-6000",
                           "rtx-5080",
                           "rtx-5070-ti",
                           "a100-pcie-40gb",
                           "a100-pcie-80gb",
                           "a800-40gb",
                           "a800-80gb",
                           "a30",
                           "a10g",
                           "l20",
                           "l40",
                           "rtx-4090-d",
                           "rtx-4000-ada",
                           "rtx-5000-ada",
                           "mi210",
                           "mi325x"}) {
        INFO(id);
        auto g = findGpu(id);
        REQUIRE(g);
    }
    CHECK(gpuCatalogue().size() >= 60);
    // China-market cards carry their Chinese note
    for (const char* id : {"a800-80gb", "h800", "h20", "l20", "rtx-4090-d"}) {
        INFO(id);
        CHECK_FALSE(findGpu(id)->noteZh.empty());
    }
    // a card with the same board as another has the same capacity
    CHECK(findGpu("a800-80gb")->memoryBytes == findGpu("a100-80gb")->memoryBytes);
}
