#include "ops/op_rule.h"

#include <algorithm>
#include <map>
#include <mutex>

namespace batchfit {
namespace {

struct Registry {
    std::map<std::string, std::unique_ptr<OpRule>> rules;
    std::vector<std::string> order;
};

Registry& registry() {
    static Registry r;
    return r;
}

void ensureRegistered() {
    static std::once_flag once;
    std::call_once(once, [] {
        registerLinearOps();
        registerConvOps();
        registerNormOps();
        registerEmbeddingOps();
        registerActivationOps();
        registerPoolOps();
        registerShapeOps();
        registerElementwiseOps();
        registerPointwiseOps();
        registerAttentionOps();
        registerMoeOps();
        registerMoeGroupedOps();
        registerMlaOps();
        registerMoeRouterOps();
        registerSdpaOps();
        registerQuantLinearOps();
        registerDoraOps();
        registerParallelOps();
        registerLossOps();
        registerLmLossOps();
        registerOpaqueOps();
    });
}

} // namespace

void addOpRule(const std::string& type, std::unique_ptr<OpRule> rule, bool internal) {
    auto& r = registry();
    if (!internal) r.order.push_back(type);
    r.rules[type] = std::move(rule);
}

const OpRule* findOpRule(const std::string& type) {
    ensureRegistered();
    auto& r = registry();
    auto it = r.rules.find(type);
    return it == r.rules.end() ? nullptr : it->second.get();
}

std::vector<std::string> opTypes() {
    ensureRegistered();
    return registry().order;
}

bool isPublicOpType(const std::string& type) {
    ensureRegistered();
    const auto& order = registry().order;
    return std::find(order.begin(), order.end(), type) != order.end();
}

namespace {
/// The largest integer attribute: no layer dimension of a published model comes near 2^32 (the largest
/// vocabularies and embedding tables are below 2^30), and 10^12 channels is a typo, not a model.
constexpr std::int64_t kMaxAttributeValue = std::int64_t{1} << 32;
} // namespace

Error OpContext::failAttribute(const std::string& key, const std::string& msg) const {
    Error e = fail(msg);
    e.attribute = key;
    return e;
}

Result<std::int64_t> OpContext::positive(const std::string& key) const {
    if (!attrs.has(key)) return fail("missing attribute '" + key + "' (expected a positive integer)");
    auto v = attrs.getInt(key);
    if (!v || *v <= 0)
        return failAttribute(key, "attribute '" + key + "' must be a positive integer, got " +
                                      attrToString(*attrs.find(key)));
    if (*v > kMaxAttributeValue)
        return failAttribute(key, "attribute '" + key + "' = " + std::to_string(*v) +
                                      " is too large (at most " + std::to_string(kMaxAttributeValue) + ")");
    return *v;
}

Result<std::int64_t> OpContext::integer(const std::string& key, std::int64_t def, std::int64_t min) const {
    if (!attrs.has(key)) return def;
    auto v = attrs.getInt(key);
    if (!v)
        return failAttribute(key, "attribute '" + key + "' must be an integer, got " +
                                      attrToString(*attrs.find(key)));
    if (*v < min)
        return failAttribute(key, "attribute '" + key + "' must be at least " + std::to_string(min) +
                                      ", got " + std::to_string(*v));
    if (*v > kMaxAttributeValue)
        return failAttribute(key, "attribute '" + key + "' = " + std::to_string(*v) +
                                      " is too large (at most " + std::to_string(kMaxAttributeValue) + ")");
    return *v;
}

Result<std::optional<Shape>> OpContext::shapeList(const std::string& key) const {
    if (!attrs.has(key)) return std::optional<Shape>{};
    auto v = attrs.getInts(key, 0);
    if (!v || v->empty() ||
        std::any_of(v->begin(), v->end(), [](std::int64_t d) { return d <= 0 || d > kMaxAttributeValue; }))
        return failAttribute(key, "'" + key + "' must be a list of positive integers");
    return std::optional<Shape>{Shape(v->begin(), v->end())};
}

} // namespace batchfit
