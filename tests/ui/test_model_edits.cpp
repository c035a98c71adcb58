#include "catch_compat.h"
#include "gui/document/model_edits.h"

using namespace batchfit;

namespace {

Layer op(const char* name, const char* type) {
    Layer l;
    l.name = name;
    l.op = type;
    return l;
}

Model small() {
    Model m;
    m.name = "small";
    m.inputShape = {16};
    Layer block;
    block.name = "blk";
    block.repeat = 2;
    block.layers = {op("fc", "linear"), op("act", "relu")};
    m.layers = {op("a", "linear"), block, op("loss", "cross_entropy")};
    return m;
}

} // namespace

TEST_CASE("structural edits of the layer tree", "[edits]") {
    SECTION("insert after a nested layer gets a unique name") {
        Model m = small();
        const LayerAddress at = LayerAddress::top(1).child(LayerAddress::Branch::Main, 0);
        const LayerAddress added = ModelEdits::insertAfter(m, at, op("fc", "linear"));
        REQUIRE(added == LayerAddress::top(1).child(LayerAddress::Branch::Main, 1));
        CHECK(added.resolve(m)->name == "fc_2");
        CHECK(m.layers[1].layers.size() == 3);
    }
    SECTION("duplicate, then duplicate the copy") {
        Model m = small();
        const LayerAddress a = ModelEdits::duplicate(m, LayerAddress::top(0));
        CHECK(a.resolve(m)->name == "a_2");
        const LayerAddress b = ModelEdits::duplicate(m, a);
        CHECK(b.resolve(m)->name == "a_3");
        CHECK(m.layers.size() == 5);
    }
    SECTION("delete selects the neighbour") {
        Model m = small();
        bool removed = false;
        const LayerAddress next = ModelEdits::remove(m, LayerAddress::top(2), &removed);
        CHECK(removed);
        CHECK(next == LayerAddress::top(1));
        CHECK(m.layers.size() == 2);
    }
    SECTION("move up and down, not past the ends") {
        Model m = small();
        CHECK(ModelEdits::move(m, LayerAddress::top(0), -1).isEmpty());
        const LayerAddress moved = ModelEdits::move(m, LayerAddress::top(0), 1);
        CHECK(moved == LayerAddress::top(1));
        CHECK(m.layers[1].name == "a");
        CHECK(m.layers[0].name == "blk");
    }
    SECTION("wrap in block and set repeat") {
        Model m = small();
        const LayerAddress block = ModelEdits::wrapInBlock(m, LayerAddress::top(0));
        REQUIRE(block.resolve(m)->isBlock());
        CHECK(block.resolve(m)->layers.at(0).name == "a");
        CHECK(block.resolve(m)->name == "block");
        CHECK(!ModelEdits::setRepeat(m, block, 4).isEmpty());
        CHECK(m.layers[0].repeat == 4);
        CHECK(ModelEdits::setRepeat(m, block, 0).isEmpty());
        CHECK(ModelEdits::setRepeat(m, LayerAddress::top(2), 3).isEmpty()); // not a block
    }
    SECTION("addresses outside the model resolve to nothing") {
        Model m = small();
        CHECK(LayerAddress::top(7).resolve(m) == nullptr);
        CHECK(LayerAddress::top(0).child(LayerAddress::Branch::Main, 0).resolve(m) == nullptr);
        CHECK(LayerAddress::top(1).child(LayerAddress::Branch::Shortcut, 0).resolve(m) == nullptr);
    }
}
