#pragma once
// Builders for the settings table (settings_table.cpp, settings_table_groups.cpp): a setting from its field.
#include "batchfit/settings.h"

#include <optional>
#include <string>
#include <utility>

namespace batchfit::settingdef {

/// Key, flag, value name, label and help: what every entry names.
struct Names {
    std::string key, flag, metavar, label, help;
};

inline SettingInfo base(Names n, SettingType type) {
    SettingInfo s;
    s.key = std::move(n.key);
    s.flag = std::move(n.flag);
    s.metavar = std::move(n.metavar);
    s.label = std::move(n.label);
    s.help = std::move(n.help);
    s.type = type;
    return s;
}

/// A field reached by `field(setup)` (a generic lambda: [](auto& s) -> auto& { return s.config.x; }).
template <class Field> void bindBool(SettingInfo& s, Field field) {
    s.get = [field](const TrainingSetup& t) -> SettingValue { return field(t); };
    s.set = [field](TrainingSetup& t, const SettingValue& v) { field(t) = std::get<bool>(v); };
}

template <class Field> void bindInt(SettingInfo& s, Field field) {
    s.get = [field](const TrainingSetup& t) -> SettingValue { return static_cast<std::int64_t>(field(t)); };
    s.set = [field](TrainingSetup& t, const SettingValue& v) {
        field(t) = static_cast<std::remove_reference_t<decltype(field(t))>>(std::get<std::int64_t>(v));
    };
}

/// An integer field where `unset` (0) means "not set".
template <class Field> void bindIntOrUnset(SettingInfo& s, Field field, std::int64_t unset) {
    s.optional = true;
    s.get = [field, unset](const TrainingSetup& t) -> SettingValue {
        if (static_cast<std::int64_t>(field(t)) == unset) return std::monostate{};
        return static_cast<std::int64_t>(field(t));
    };
    s.set = [field, unset](TrainingSetup& t, const SettingValue& v) {
        const auto* n = std::get_if<std::int64_t>(&v);
        using T = std::remove_reference_t<decltype(field(t))>;
        field(t) = static_cast<T>(n ? *n : unset);
    };
}

template <class Field> void bindReal(SettingInfo& s, Field field) {
    s.get = [field](const TrainingSetup& t) -> SettingValue { return field(t); };
    s.set = [field](TrainingSetup& t, const SettingValue& v) { field(t) = std::get<double>(v); };
}

/// std::optional<T> fields: unset <-> std::monostate.
template <class Field> void bindOptional(SettingInfo& s, Field field) {
    s.optional = true;
    s.get = [field](const TrainingSetup& t) -> SettingValue {
        const auto& o = field(t);
        if (!o) return std::monostate{};
        using T = std::decay_t<decltype(*o)>;
        if constexpr (std::is_floating_point_v<T>)
            return static_cast<double>(*o);
        else
            return static_cast<std::int64_t>(*o);
    };
    s.set = [field](TrainingSetup& t, const SettingValue& v) {
        auto& o = field(t);
        using T = std::decay_t<decltype(*o)>;
        if (std::holds_alternative<std::monostate>(v))
            o.reset();
        else if constexpr (std::is_floating_point_v<T>)
            o = std::get<double>(v);
        else
            o = static_cast<T>(std::get<std::int64_t>(v));
    };
}

template <class Field> void bindStrings(SettingInfo& s, Field field) {
    s.get = [field](const TrainingSetup& t) -> SettingValue { return field(t); };
    s.set = [field](TrainingSetup& t, const SettingValue& v) {
        field(t) = std::get<std::vector<std::string>>(v);
    };
}

/// An enum field with its name and parse functions (optimizerName / parseOptimizer, ...).
template <class Field, class E>
void bindChoice(SettingInfo& s, Field field, std::string_view (*name)(E),
                Result<E> (*parse)(std::string_view), const std::vector<E>& all) {
    for (E e : all) s.choices.emplace_back(name(e));
    s.get = [field, name](const TrainingSetup& t) -> SettingValue { return std::string(name(field(t))); };
    s.set = [field, parse](TrainingSetup& t, const SettingValue& v) {
        if (auto e = parse(std::get<std::string>(v))) field(t) = *e;
    };
    s.canonical = [name, parse](std::string_view text) -> Result<std::string> {
        auto e = parse(text);
        if (!e) return e.error();
        return std::string(name(*e));
    };
}

/// Ranges of numeric settings.
inline SettingInfo& range(SettingInfo& s, double min, double max) {
    s.min = min;
    s.max = max;
    return s;
}

} // namespace batchfit::settingdef
