#include "bounded_file.h"

#include <filesystem>
#include <fstream>
#include <system_error>

namespace batchfit {

std::string tooLargeMessage(const std::string& source, std::uint64_t size, std::uint64_t maxBytes,
                            const std::string& what) {
    return source + ": file is " + std::to_string(size) + " bytes, more than the " +
           std::to_string(maxBytes) + " " + what + " may have";
}

Result<std::string> readBoundedFile(const std::string& path, std::uint64_t maxBytes,
                                    const std::string& what) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return makeError(path + ": cannot read: it is a folder");
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec) return makeError(path + ": cannot read: " + ec.message());
    if (size > maxBytes) return makeError(tooLargeMessage(path, size, maxBytes, what));
    std::ifstream in(path, std::ios::binary);
    if (!in) return makeError(path + ": cannot read: cannot open the file");
    std::string bytes(static_cast<std::size_t>(size), '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(size));
    if (in.gcount() != static_cast<std::streamsize>(size))
        return makeError(path + ": cannot read: the file changed while it was read");
    return bytes;
}

} // namespace batchfit
