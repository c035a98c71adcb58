#pragma once
// Reading a whole input file with its size limit checked before a byte is read: a file far over the limit is
// refused at once, never loaded into memory.
#include "batchfit/result.h"

#include <cstdint>
#include <string>

namespace batchfit {

/// "<source>: file is N bytes, more than the M <what> may have" (what: e.g. "a model file").
std::string tooLargeMessage(const std::string& source, std::uint64_t size, std::uint64_t maxBytes,
                            const std::string& what);

/// The file's bytes, or "<path>: cannot read: <reason>" / tooLargeMessage().
Result<std::string> readBoundedFile(const std::string& path, std::uint64_t maxBytes, const std::string& what);

} // namespace batchfit
