#pragma once
// How file parsers name a JSON value in their messages ("expected an integer, got a string").
#include <nlohmann/json.hpp>
#include <string>

namespace batchfit::jsontext {

/// "null", "a boolean", "an integer", "a number", "a string", "an array" or "an object".
inline std::string kind(const nlohmann::json& j) {
    if (j.is_null()) return "null";
    if (j.is_boolean()) return "a boolean";
    if (j.is_number_integer() || j.is_number_unsigned()) return "an integer";
    if (j.is_number()) return "a number";
    if (j.is_string()) return "a string";
    if (j.is_array()) return "an array";
    return "an object";
}

/// A value for messages, at most 64 characters. Never dumps a container: dump() recurses, and a file nested a
/// million levels deep would overflow the stack.
inline std::string describe(const nlohmann::json& j) {
    if (j.is_array() || j.is_object()) return kind(j);
    std::string s = j.dump();
    if (s.size() > 64) s = s.substr(0, 60) + "...";
    return s;
}

} // namespace batchfit::jsontext
