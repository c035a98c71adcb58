#pragma once
// How file parsers name a JSON value in their messages ("expected an integer, got a string").
#include "batchfit/result.h"
#include "bounded_file.h"

#include <cstdint>
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

/// A file's text (at most maxBytes, `what` names the kind of file) parsed and handed to read(root); the JSON
/// library's exceptions become "<source>: not valid JSON: ..." or "<source>: ..." errors.
template <class T, class Read>
Result<T> parseFileText(const std::string& text, const std::string& source, std::uint64_t maxBytes,
                        const std::string& what, Read read) {
    if (text.size() > maxBytes) return makeError(tooLargeMessage(source, text.size(), maxBytes, what));
    nlohmann::json root;
    try {
        root = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) { // parse_error, and out_of_range for numbers like 1e999
        return makeError(source + ": not valid JSON: " + e.what());
    }
    try {
        return read(root);
    } catch (const nlohmann::json::exception& e) {
        return makeError(source + ": " + e.what());
    }
}

} // namespace batchfit::jsontext
