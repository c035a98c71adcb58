#pragma once
// Layer attributes: the op-specific keys of a layer in the model file.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace batchfit {

using AttrValue = std::variant<bool, std::int64_t, double, std::string, std::vector<std::int64_t>>;

/// Sorted by key, so saving is canonical.
class Attributes {
public:
    bool has(const std::string& key) const { return m_values.count(key) != 0; }
    void set(const std::string& key, AttrValue value) { m_values[key] = std::move(value); }
    void erase(const std::string& key) { m_values.erase(key); }
    const AttrValue* find(const std::string& key) const;
    const std::map<std::string, AttrValue>& values() const { return m_values; }

    std::optional<std::int64_t> getInt(const std::string& key) const;
    std::optional<double> getDouble(const std::string& key) const;
    std::optional<bool> getBool(const std::string& key) const;
    std::optional<std::string> getString(const std::string& key) const;
    /// An int list, or a single int repeated `rank` times.
    std::optional<std::vector<std::int64_t>> getInts(const std::string& key, std::size_t rank) const;

    bool operator==(const Attributes&) const = default;

private:
    std::map<std::string, AttrValue> m_values;
};

std::string attrToString(const AttrValue& v);

} // namespace batchfit
