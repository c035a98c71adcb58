#include "batchfit/estimator.h"
#include "batchfit/presets.h"
#include "catch_compat.h"
#include "gui/document/layer_path_index.h"
#include "gui/models/layer_tree_model.h"
#include "gui_test_support.h"

#include <QAbstractItemModelTester>
#include <functional>
#include <string_view>

using namespace batchfit;

namespace {

QStringList g_warnings;

void collect(QtMsgType type, const QMessageLogContext&, const QString& msg) {
    if (type != QtDebugMsg && type != QtInfoMsg) g_warnings << msg;
}

Model preset(const char* id) {
    auto m = loadPreset(id);
    REQUIRE(m);
    return *m;
}

} // namespace

TEST_CASE("a preset fills the layer tree and passes QAbstractItemModelTester", "[tree]") {
    test::app();
    g_warnings.clear();
    const auto previous = qInstallMessageHandler(collect);
    {
        LayerTreeModel tree;
        QAbstractItemModelTester tester(&tree, QAbstractItemModelTester::FailureReportingMode::Warning);
        const Model m = preset("resnet50");
        tree.setModel(m);
        // The input row, then every top-level layer.
        REQUIRE(tree.rowCount() == static_cast<int>(m.layers.size()) + 1);
        CHECK(tree.isInputRow(tree.index(0, 0)));
        CHECK(tree.data(tree.index(0, LayerTreeModel::OutputColumn)).toString() ==
              QStringLiteral("[3,224,224]"));
        CHECK(tree.data(tree.index(1, 0)).toString() == QString::fromStdString(m.layers[0].name));

        // A block expands; a repeated block shows its repeat count.
        int blockRow = -1;
        for (int r = 1; r < tree.rowCount(); ++r)
            if (m.layers[static_cast<std::size_t>(r - 1)].isBlock()) {
                blockRow = r;
                break;
            }
        REQUIRE(blockRow > 0);
        const QModelIndex block = tree.index(blockRow, 0);
        CHECK(tree.rowCount(block) > 0);
        bool sawRepeat = false;
        std::function<void(const QModelIndex&)> walk = [&](const QModelIndex& parent) {
            for (int r = 0; r < tree.rowCount(parent); ++r) {
                const QModelIndex i = tree.index(r, LayerTreeModel::TypeColumn, parent);
                if (tree.data(i).toString().contains(QStringLiteral("× "))) sawRepeat = true;
                walk(tree.index(r, 0, parent));
            }
        };
        walk({});
        CHECK(sawRepeat);

        // Activation columns come from the core's per-layer rows; a block shows the sum of its layers.
        auto est = Estimator::create(m, TrainingConfig{});
        REQUIRE(est);
        auto e = est->estimate(32);
        REQUIRE(e);
        tree.setEstimate(&*e);
        const auto blockBytes =
            tree.data(tree.index(blockRow, LayerTreeModel::ActivationColumn), LayerTreeModel::kValueRole)
                .toULongLong();
        CHECK(blockBytes > 0);
        std::uint64_t total = 0;
        for (int r = 0; r < tree.rowCount(); ++r)
            total += tree.data(tree.index(r, LayerTreeModel::ActivationColumn), LayerTreeModel::kValueRole)
                         .toULongLong();
        std::uint64_t coreTotal = 0;
        for (const auto& row : e->layers) coreTotal += row.savedBytes;
        CHECK(total == coreTotal); // every core row lands in exactly one top-level row

        // Parameters: the top-level rows add up to the model's 25,557,032 (buffers not counted); a layer
        // shows its output shape with the batch as B.
        std::uint64_t params = 0;
        for (int r = 0; r < tree.rowCount(); ++r)
            params += tree.data(tree.index(r, LayerTreeModel::ParametersColumn), LayerTreeModel::kValueRole)
                          .toULongLong();
        CHECK(params == 25'557'032);
        CHECK(params == e->parameterCount);
        CHECK(tree.data(tree.index(1, LayerTreeModel::ParametersColumn), LayerTreeModel::kValueRole)
                  .toULongLong() == 64 * 3 * 7 * 7); // conv1, no bias
        CHECK(tree.data(tree.index(1, LayerTreeModel::OutputColumn)).toString() ==
              QStringLiteral("B×64×112×112"));

        // Addresses round-trip through indexOf().
        const QModelIndex child = tree.index(0, 0, block);
        CHECK(tree.indexOf(tree.addressOf(child)) == child);
        tree.setEstimate(nullptr);
        tree.setModel(preset("llama-2-7b"));
        CHECK(tree.rowCount() > 3);
    }
    qInstallMessageHandler(previous);
    INFO(g_warnings.join(QLatin1Char('\n')).toStdString());
    CHECK(g_warnings.filter(QStringLiteral("FAIL")).isEmpty());
}

TEST_CASE("layer paths match the core's per-layer rows for every preset", "[tree]") {
    for (const auto& p : presetList()) {
        INFO(p.id);
        const Model m = preset(p.id.c_str());
        auto est = Estimator::create(m, TrainingConfig{});
        REQUIRE(est);
        auto e = est->estimate(2);
        REQUIRE(e);
        const LayerPathIndex index(m);
        const auto addresses = index.resolve(e->layers);
        REQUIRE(addresses.size() == e->layers.size());
        CHECK(addresses[0].isEmpty()); // "(input batch)"
        int unresolved = 0;
        for (std::size_t i = 1; i < addresses.size(); ++i) {
            if (addresses[i].isEmpty() && e->layers[i].path != "loss") ++unresolved;
            if (!addresses[i].isEmpty()) CHECK(addresses[i].resolve(m) != nullptr);
        }
        CHECK(unresolved == 0);
    }
}

TEST_CASE("a language model's unnamed residual halves are shown as attention and MLP", "[tree]") {
    test::app();
    for (const char* preset : {"gpt2-small", "llama-2-7b", "transformer-12"}) {
        INFO(preset);
        auto model = loadPreset(preset);
        REQUIRE(model);
        LayerTreeModel tree;
        tree.setModel(*model);
        QStringList names;
        std::function<void(const QModelIndex&)> walk = [&](const QModelIndex& parent) {
            for (int r = 0; r < tree.rowCount(parent); ++r) {
                const QModelIndex i = tree.index(r, LayerTreeModel::NameColumn, parent);
                names << i.data().toString();
                walk(i);
            }
        };
        walk({});
        CHECK_FALSE(names.contains(QStringLiteral("(unnamed)")));
        if (std::string_view(preset) != "transformer-12") { // its blocks have names
            CHECK(names.contains(QStringLiteral("(attention)")));
            CHECK(names.contains(QStringLiteral("(MLP)")));
        }
    }
}
