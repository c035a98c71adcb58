#include "batchfit/dtype.h"

#include <algorithm>

namespace batchfit {

int dtypeSize(DType t) {
    switch (t) {
    case DType::Float64:
    case DType::Int64:
        return 8;
    case DType::Float32:
    case DType::Int32:
        return 4;
    case DType::Float16:
    case DType::BFloat16:
        return 2;
    case DType::UInt8:
    case DType::Bool:
        return 1;
    }
    return 4;
}

std::string_view dtypeName(DType t) {
    switch (t) {
    case DType::Float32:
        return "float32";
    case DType::Float16:
        return "float16";
    case DType::BFloat16:
        return "bfloat16";
    case DType::Float64:
        return "float64";
    case DType::Int64:
        return "int64";
    case DType::Int32:
        return "int32";
    case DType::UInt8:
        return "uint8";
    case DType::Bool:
        return "bool";
    }
    return "float32";
}

std::optional<DType> parseDType(std::string_view name) {
    struct Alias {
        std::string_view name;
        DType type;
    };
    static constexpr Alias aliases[] = {
        {"float32", DType::Float32},   {"fp32", DType::Float32},  {"float", DType::Float32},
        {"float16", DType::Float16},   {"fp16", DType::Float16},  {"half", DType::Float16},
        {"bfloat16", DType::BFloat16}, {"bf16", DType::BFloat16}, {"float64", DType::Float64},
        {"double", DType::Float64},    {"int64", DType::Int64},   {"long", DType::Int64},
        {"int32", DType::Int32},       {"int", DType::Int32},     {"uint8", DType::UInt8},
        {"bool", DType::Bool},
    };
    for (const auto& a : aliases)
        if (a.name == name) return a.type;
    return std::nullopt;
}

bool isFloating(DType t) {
    return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16 || t == DType::Float64;
}

} // namespace batchfit
