#include "batchfit/attributes.h"

#include <cmath>
#include <sstream>

namespace batchfit {

const AttrValue* Attributes::find(const std::string& key) const {
    auto it = m_values.find(key);
    return it == m_values.end() ? nullptr : &it->second;
}

std::optional<std::int64_t> Attributes::getInt(const std::string& key) const {
    const AttrValue* v = find(key);
    if (!v) return std::nullopt;
    if (auto* i = std::get_if<std::int64_t>(v)) return *i;
    if (auto* d = std::get_if<double>(v)) {
        if (std::isfinite(*d) && std::floor(*d) == *d && std::fabs(*d) < 9.0e18)
            return static_cast<std::int64_t>(*d);
    }
    return std::nullopt;
}

std::optional<double> Attributes::getDouble(const std::string& key) const {
    const AttrValue* v = find(key);
    if (!v) return std::nullopt;
    if (auto* d = std::get_if<double>(v)) return *d;
    if (auto* i = std::get_if<std::int64_t>(v)) return static_cast<double>(*i);
    return std::nullopt;
}

std::optional<bool> Attributes::getBool(const std::string& key) const {
    const AttrValue* v = find(key);
    if (!v) return std::nullopt;
    if (auto* b = std::get_if<bool>(v)) return *b;
    return std::nullopt;
}

std::optional<std::string> Attributes::getString(const std::string& key) const {
    const AttrValue* v = find(key);
    if (!v) return std::nullopt;
    if (auto* s = std::get_if<std::string>(v)) return *s;
    return std::nullopt;
}

std::optional<std::vector<std::int64_t>> Attributes::getInts(const std::string& key, std::size_t rank) const {
    const AttrValue* v = find(key);
    if (!v) return std::nullopt;
    if (auto* l = std::get_if<std::vector<std::int64_t>>(v)) {
        if (rank && l->size() == 1) return std::vector<std::int64_t>(rank, (*l)[0]);
        return *l;
    }
    if (auto i = getInt(key)) return std::vector<std::int64_t>(rank ? rank : 1, *i);
    return std::nullopt;
}

std::string attrToString(const AttrValue& v) {
    std::ostringstream os;
    std::visit(
        [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, bool>)
                os << (x ? "true" : "false");
            else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
                os << "[";
                for (std::size_t i = 0; i < x.size(); ++i) os << (i ? "," : "") << x[i];
                os << "]";
            } else
                os << x;
        },
        v);
    return os.str();
}

} // namespace batchfit
