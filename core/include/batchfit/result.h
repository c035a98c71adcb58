#pragma once
// Errors as values: every fallible core call returns Result<T>.
#include <string>
#include <utility>
#include <variant>

namespace batchfit {

/// A failure, with a message that names the file, the JSON path or layer path, and what was expected.
struct Error {
    std::string message;
    std::string attribute; ///< the layer attribute whose value is wrong, when the error is about one
};

/// Either a value or an Error (a small std::expected stand-in; C++20 has none).
template <class T> class Result {
public:
    Result(T value) : m_data(std::move(value)) {}
    Result(Error error) : m_data(std::move(error)) {}

    bool ok() const { return m_data.index() == 0; }
    explicit operator bool() const { return ok(); }
    T& value() & { return std::get<0>(m_data); }
    const T& value() const& { return std::get<0>(m_data); }
    T&& value() && { return std::get<0>(std::move(m_data)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    const Error& error() const { return std::get<1>(m_data); }

private:
    std::variant<T, Error> m_data;
};

/// Result of an operation with no value.
struct Ok {};
using Status = Result<Ok>;

inline Error makeError(std::string message) {
    return Error{std::move(message), {}};
}

} // namespace batchfit
