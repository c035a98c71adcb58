// libFuzzer target "onnx_parse": see fuzz_entries.h for the input format and the properties checked.
#include "fuzz_entries.h"

#include <cstdio>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string violation = batchfit::fuzz::onnxParseEntry(data, size);
    if (!violation.empty()) {
        std::fprintf(stderr, "property violated: %s\n", violation.c_str());
        __builtin_trap();
    }
    return 0;
}
