#pragma once
// Element types of tensors.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace batchfit {

enum class DType { Float32, Float16, BFloat16, Float64, Int64, Int32, UInt8, Bool };

/// Bytes per element.
int dtypeSize(DType t);
/// Canonical name as in the model file: "float32", "float16", "bfloat16", "float64", "int64", "int32",
/// "uint8", "bool".
std::string_view dtypeName(DType t);
/// Parses a canonical name (also accepts "fp32", "fp16", "bf16", "half", "long", "int").
std::optional<DType> parseDType(std::string_view name);
bool isFloating(DType t);

} // namespace batchfit
