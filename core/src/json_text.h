#pragma once
// How file parsers name a JSON value in their messages ("expected an integer, got a string").
#include "batchfit/result.h"
#include "bounded_file.h"

#include <algorithm>
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

/// The JSON library's message in words, with the line and column of a syntax error counted in `text`:
/// "line 3, column 25: unexpected ']', expected '}' (in an object)" instead of
/// "[json.exception.parse_error.101] parse error at line 3, column 25: syntax error while parsing object -
/// ...".
inline std::string errorInWords(const std::string& text, const nlohmann::json::exception& e) {
    std::string what = e.what();
    if (what.rfind("[json.exception.", 0) == 0)
        if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    const auto* pe = dynamic_cast<const nlohmann::json::parse_error*>(&e);
    if (!pe) return what; // out_of_range (a number like 1e999), type errors: the library's words
    std::size_t line = 1, column = 1;
    const std::size_t end = std::min<std::size_t>(pe->byte > 0 ? pe->byte - 1 : 0, text.size());
    for (std::size_t i = 0; i < end; ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else if ((static_cast<unsigned char>(text[i]) & 0xC0) !=
                   0x80) { // count characters, not UTF-8 bytes
            ++column;
        }
    }
    std::string detail = what;
    if (auto p = detail.find(": "); detail.rfind("parse error", 0) == 0 && p != std::string::npos)
        detail = detail.substr(p + 2);
    std::string context;
    if (detail.rfind("syntax error while parsing ", 0) == 0) {
        const auto dash = detail.find(" - ");
        context = detail.substr(27, dash == std::string::npos ? std::string::npos : dash - 27);
        detail = dash == std::string::npos ? std::string() : detail.substr(dash + 3);
    }
    if (auto p = detail.find("; expected "); p != std::string::npos) detail.replace(p, 2, ", ");
    if (auto p = detail.find("; last read: "); p != std::string::npos) detail.replace(p, 13, " after ");
    if (text.empty() || end >= text.size())
        detail += detail.empty() ? "the file ends too early" : " (the file ends here)";
    std::string out = "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + detail;
    if (!context.empty() && context != "value")
        out +=
            " (in " + std::string(context == "object" || context == "array" ? "an " : "a ") + context + ")";
    return out;
}

/// A file's text (at most maxBytes, `what` names the kind of file) parsed and handed to read(root); the JSON
/// library's exceptions become "<source>: not valid JSON: line 3, column 25: ..." or "<source>: ..." errors.
template <class T, class Read>
Result<T> parseFileText(const std::string& text, const std::string& source, std::uint64_t maxBytes,
                        const std::string& what, Read read) {
    if (text.size() > maxBytes) return makeError(tooLargeMessage(source, text.size(), maxBytes, what));
    nlohmann::json root;
    try {
        root = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) { // parse_error, and out_of_range for numbers like 1e999
        return makeError(source + ": not valid JSON: " + errorInWords(text, e));
    }
    try {
        return read(root);
    } catch (const nlohmann::json::exception& e) {
        return makeError(source + ": " + errorInWords(text, e));
    }
}

} // namespace batchfit::jsontext
