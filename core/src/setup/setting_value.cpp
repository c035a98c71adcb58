// Values of the settings table: range checks, the command-line text both ways, defaults.
#include "batchfit/settings.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace batchfit {
namespace {

constexpr double kTwo63 = 9223372036854775808.0;

std::uint64_t unitBytes(std::string_view unit) {
    if (unit == "KiB") return std::uint64_t{1} << 10;
    if (unit == "MiB") return std::uint64_t{1} << 20;
    if (unit == "GiB") return std::uint64_t{1} << 30;
    return 1;
}

/// A real in the shortest form that reads back to the same double (0.05, 0.123456789, 1e-07).
std::string shortestReal(double v) {
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

std::string integerText(double v) {
    if (v >= kTwo63) return "2^63";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    return buf;
}

/// "from 1 to 1000000", "in [0, 1)", "in (0, 1000000]"
std::string rangeText(const SettingInfo& s) {
    if (s.type == SettingType::Number)
        return std::string("in ") + (s.minExcluded ? "(" : "[") + shortestReal(s.min) + ", " +
               shortestReal(s.max) + (s.maxExcluded ? ")" : "]");
    return "from " + integerText(s.min) + " to " + integerText(s.max);
}

bool inRange(const SettingInfo& s, double v) {
    if (!std::isfinite(v)) return false;
    if (s.minExcluded ? v <= s.min : v < s.min) return false;
    return s.maxExcluded ? v < s.max : v <= s.max;
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
    return out;
}

Result<std::int64_t> wholeNumber(std::string_view t) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || end != t.data() + t.size()) return makeError("not a whole number");
    return v;
}

Result<double> realNumber(std::string_view t) {
    double v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v))
        return makeError("not a number");
    return v;
}

std::string_view trimmed(std::string_view t) {
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
    return t;
}

/// "a, b ,c" -> {"a", "b", "c"}; an empty item is an error.
Result<std::vector<std::string>> splitList(std::string_view text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string_view item = trimmed(text.substr(start, comma - start));
        if (item.empty()) return makeError("empty item");
        out.emplace_back(item);
        if (comma == text.size()) break;
        start = comma + 1;
    }
    return out;
}

/// Bytes on the command line: a number of the flag's unit ("1536" MiB, "0.5" GiB) or bytes with a suffix
/// ("123456789B", "2GiB").
Result<std::int64_t> parseBytes(const SettingInfo& s, std::string_view t) {
    std::uint64_t scale = unitBytes(s.unit);
    for (auto [suffix, bytes] : {std::pair<std::string_view, std::uint64_t>{"KiB", 1u << 10},
                                 {"MiB", 1u << 20},
                                 {"GiB", 1u << 30},
                                 {"B", 1}}) {
        if (t.size() > suffix.size() && t.substr(t.size() - suffix.size()) == suffix) {
            t.remove_suffix(suffix.size());
            scale = bytes;
            break;
        }
    }
    auto v = realNumber(t);
    if (!v || *v < 0) return makeError("not a size");
    const double bytes = std::round(*v * static_cast<double>(scale));
    if (bytes >= kTwo63) return makeError("too large");
    return static_cast<std::int64_t>(bytes);
}

} // namespace

std::string SettingInfo::group() const {
    const auto dot = key.find('.');
    return dot == std::string::npos ? std::string() : key.substr(0, dot);
}

std::string SettingInfo::name() const {
    const auto dot = key.find('.');
    return dot == std::string::npos ? key : key.substr(dot + 1);
}

Status checkSettingValue(const SettingInfo& s, const SettingValue& v) {
    if (std::holds_alternative<std::monostate>(v)) {
        if (s.optional) return Ok{};
        return makeError("a value is needed");
    }
    switch (s.type) {
    case SettingType::Switch:
        if (!std::holds_alternative<bool>(v)) return makeError("expected true or false");
        return Ok{};
    case SettingType::Integer:
    case SettingType::Bytes:
        if (!std::holds_alternative<std::int64_t>(v) ||
            !inRange(s, static_cast<double>(std::get<std::int64_t>(v))))
            return makeError("expected " +
                             std::string(s.type == SettingType::Bytes ? "a byte count" : "an integer") + " " +
                             rangeText(s));
        return Ok{};
    case SettingType::Number:
        if (!std::holds_alternative<double>(v) || !inRange(s, std::get<double>(v)))
            return makeError("expected a number " + rangeText(s));
        return Ok{};
    case SettingType::Choice:
        if (!std::holds_alternative<std::string>(v))
            return makeError("expected one of: " + joined(s.choices));
        for (const auto& c : s.choices)
            if (c == std::get<std::string>(v)) return Ok{};
        return makeError("expected one of: " + joined(s.choices));
    case SettingType::Text:
        if (!std::holds_alternative<std::string>(v)) return makeError("expected text");
        return Ok{};
    case SettingType::List: {
        if (!std::holds_alternative<std::vector<std::string>>(v))
            return makeError("expected a list of names");
        const auto& l = std::get<std::vector<std::string>>(v);
        if (l.size() > s.maxItems)
            return makeError("expected at most " + std::to_string(s.maxItems) + " names");
        for (const auto& item : l)
            if (item.empty() || item.size() > 1000)
                return makeError("expected names of 1 to 1000 characters");
        return Ok{};
    }
    case SettingType::Lengths: {
        if (!std::holds_alternative<std::vector<std::int64_t>>(v))
            return makeError("expected a list of lengths");
        const auto& l = std::get<std::vector<std::int64_t>>(v);
        if (l.size() > s.maxItems)
            return makeError("expected at most " + std::to_string(s.maxItems) + " lengths");
        for (std::int64_t n : l)
            if (!inRange(s, static_cast<double>(n))) return makeError("expected lengths " + rangeText(s));
        return Ok{};
    }
    }
    return makeError("unknown setting type");
}

Result<SettingValue> parseSettingText(const SettingInfo& s, std::string_view text) {
    const std::string who = s.flag.empty() ? s.key : s.flag;
    const std::string got = ", got '" + std::string(text) + "'";
    SettingValue v;
    switch (s.type) {
    case SettingType::Switch:
        if (text == "on" || text == "true" || text == "1")
            v = true;
        else if (text == "off" || text == "false" || text == "0")
            v = false;
        else
            return makeError(who + " must be on or off" + got);
        break;
    case SettingType::Integer: {
        auto n = wholeNumber(trimmed(text));
        if (!n || !inRange(s, static_cast<double>(*n)))
            return makeError(who + " must be an integer " + rangeText(s) + got);
        v = *n;
        break;
    }
    case SettingType::Number: {
        std::string_view t = trimmed(text);
        const bool percent = s.unit == "%" && !t.empty() && t.back() == '%';
        if (percent) t.remove_suffix(1);
        auto x = realNumber(t);
        if (x && percent) *x /= 100.0;
        if (!x || !inRange(s, *x))
            return makeError(who + " must be a number " + rangeText(s) +
                             (s.unit == "%" ? " (or a percentage such as 5%)" : "") + got);
        v = *x;
        break;
    }
    case SettingType::Bytes: {
        auto b = parseBytes(s, trimmed(text));
        if (!b || !inRange(s, static_cast<double>(*b)))
            return makeError(who + " must be a size in " + s.unit + " (or bytes with a B suffix) from " +
                             integerText(s.min) + " to " + integerText(s.max) + " bytes" + got);
        v = *b;
        break;
    }
    case SettingType::Choice:
    case SettingType::Text: {
        if (!s.canonical) {
            v = std::string(text);
            break;
        }
        auto c = s.canonical(text);
        if (!c) return makeError(who + ": " + c.error().message);
        v = *c;
        break;
    }
    case SettingType::List: {
        auto l = splitList(text);
        if (!l) return makeError(who + " expects comma-separated layer path patterns" + got);
        v = std::move(*l);
        break;
    }
    case SettingType::Lengths: {
        std::vector<std::int64_t> lengths;
        if (!trimmed(text).empty()) {
            auto l = splitList(text);
            if (!l) return makeError(who + ": expected comma-separated sequence lengths" + got);
            for (const auto& item : *l) {
                auto n = wholeNumber(item);
                if (!n) return makeError(who + ": expected comma-separated sequence lengths" + got);
                lengths.push_back(*n);
            }
        }
        v = std::move(lengths);
        break;
    }
    }
    if (auto st = checkSettingValue(s, v); !st) return makeError(who + ": " + st.error().message + got);
    return v;
}

std::string settingText(const SettingInfo& s, const SettingValue& v) {
    if (std::holds_alternative<std::monostate>(v)) return {};
    if (const bool* b = std::get_if<bool>(&v)) return *b ? "on" : "off";
    if (const double* d = std::get_if<double>(&v)) return shortestReal(*d);
    if (const std::string* t = std::get_if<std::string>(&v)) return *t;
    if (const auto* l = std::get_if<std::vector<std::string>>(&v)) {
        std::string out;
        for (const auto& i : *l) out += (out.empty() ? "" : ",") + i;
        return out;
    }
    if (const auto* l = std::get_if<std::vector<std::int64_t>>(&v)) {
        std::string out;
        for (std::int64_t n : *l) out += (out.empty() ? "" : ",") + std::to_string(n);
        return out;
    }
    const std::int64_t n = std::get<std::int64_t>(v);
    if (s.type != SettingType::Bytes) return std::to_string(n);
    const auto scale = static_cast<std::int64_t>(unitBytes(s.unit));
    return n % scale == 0 ? std::to_string(n / scale) : std::to_string(n) + "B";
}

bool isDefaultSetting(const SettingInfo& s, const SettingValue& v) {
    if (const auto* l = std::get_if<std::vector<std::string>>(&v)) return l->empty();
    if (const auto* l = std::get_if<std::vector<std::int64_t>>(&v)) return l->empty();
    return v == s.defaultValue;
}

} // namespace batchfit
