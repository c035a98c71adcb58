// An imported op BatchFit cannot map: carries its measured parameter and saved-activation bytes.
#include "ops/op_rule.h"

namespace batchfit {
namespace {

class OpaqueRule : public OpRule {
public:
    int maxInputs() const override { return 64; }
    Result<OpPlan> plan(const OpContext& c) const override {
        auto params = c.integer("params", 0, 0);
        if (!params) return params.error();
        auto perSample = c.integer("saved_bytes_per_sample", 0, 0);
        if (!perSample) return perSample.error();
        auto constant = c.integer("saved_bytes_constant", 0, 0);
        if (!constant) return constant.error();
        auto shape = c.attrs.getInts("output_shape", 0);
        if (!shape) return c.fail("opaque needs 'output_shape' (per sample)");
        for (auto d : *shape)
            if (d <= 0)
                return c.fail("opaque: output_shape " + shapeToString(*shape) + " has a non-positive dim");
        auto dt = parseDType(c.attrs.getString("output_dtype").value_or("float32"));
        if (!dt) return c.fail("opaque: unknown output_dtype");
        OpPlan p;
        p.outputs.push_back({*shape, *dt, true, true});
        if (*params > 0) p.params.push_back({"weight", {*params}});
        if (*perSample > 0) {
            p.created.push_back({{*perSample}, DType::UInt8, true, true});
            p.createdRoles.push_back("measured saved bytes");
            p.saved.push_back({SavedDecl::Kind::Created, 0});
        }
        if (*constant > 0) {
            p.created.push_back({{*constant}, DType::UInt8, false, true});
            p.createdRoles.push_back("measured saved bytes (constant)");
            p.saved.push_back({SavedDecl::Kind::Created, static_cast<int>(p.created.size()) - 1});
        }
        return p;
    }
};

} // namespace

void registerOpaqueOps() {
    addOpRule("opaque", std::make_unique<OpaqueRule>());
}

} // namespace batchfit
