// Readers of ONNX protobuf tensors and node attributes, and the small numeric helpers of the mapper.
#include "import/onnx_proto_util.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace batchfit::onnximport {

std::string printable(const std::string& s, std::size_t max) {
    std::string out;
    for (unsigned char c : s) {
        if (out.size() >= max) {
            out += "...";
            break;
        }
        out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
    }
    return out;
}

float halfToFloat(std::uint16_t h) {
    const std::uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
    std::uint32_t bits;
    if (exp == 0) {
        if (man == 0)
            bits = sign;
        else { // subnormal
            float f = std::ldexp(static_cast<float>(man), -24);
            return sign ? -f : f;
        }
    } else if (exp == 31)
        bits = sign | 0x7f800000u | (man << 13);
    else
        bits = sign | ((exp + 112) << 23) | (man << 13);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

float bf16ToFloat(std::uint16_t h) {
    const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

std::size_t elemSize(int t) {
    switch (t) {
    case TensorProto::FLOAT:
    case TensorProto::INT32:
    case TensorProto::UINT32:
        return 4;
    case TensorProto::DOUBLE:
    case TensorProto::INT64:
    case TensorProto::UINT64:
    case TensorProto::COMPLEX64:
        return 8;
    case TensorProto::COMPLEX128:
        return 16;
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
    case TensorProto::INT16:
    case TensorProto::UINT16:
        return 2;
    case TensorProto::INT8:
    case TensorProto::UINT8:
    case TensorProto::BOOL:
        return 1;
    default:
        return 0;
    }
}

std::optional<DType> toDType(int t) {
    switch (t) {
    case TensorProto::FLOAT:
        return DType::Float32;
    case TensorProto::FLOAT16:
        return DType::Float16;
    case TensorProto::BFLOAT16:
        return DType::BFloat16;
    case TensorProto::DOUBLE:
        return DType::Float64;
    case TensorProto::INT64:
        return DType::Int64;
    case TensorProto::INT32:
        return DType::Int32;
    case TensorProto::UINT8:
        return DType::UInt8;
    case TensorProto::BOOL:
        return DType::Bool;
    default:
        return std::nullopt;
    }
}

std::optional<std::uint64_t> tensorNumel(const TensorProto& t) {
    std::uint64_t n = 1;
    for (auto d : t.dims()) {
        if (d < 0 || d > kMaxDim) return std::nullopt;
        if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(d), &n) || n > kMaxElements)
            return std::nullopt;
    }
    return n;
}

std::optional<std::vector<SVal>> readTensor(const TensorProto& t) {
    if constexpr (std::endian::native != std::endian::little) return std::nullopt;
    auto numel = tensorNumel(t);
    if (!numel || *numel > kMaxStaticElements) return std::nullopt;
    if (t.has_data_location() && t.data_location() == TensorProto::EXTERNAL) return std::nullopt;
    const std::size_t n = static_cast<std::size_t>(*numel);
    const std::size_t es = elemSize(t.data_type());
    std::vector<SVal> out;
    out.reserve(n);
    const std::string& raw = t.raw_data();
    const bool useRaw = !raw.empty() || (n == 0 && t.has_raw_data());
    if (useRaw && (es == 0 || raw.size() != n * es)) return std::nullopt;
    auto rawAt = [&](std::size_t i, void* dst) { std::memcpy(dst, raw.data() + i * es, es); };
    switch (t.data_type()) {
    case TensorProto::INT64:
        if (!useRaw && static_cast<std::size_t>(t.int64_data_size()) != n) return std::nullopt;
        for (std::size_t i = 0; i < n; ++i) {
            std::int64_t v;
            if (useRaw)
                rawAt(i, &v);
            else
                v = t.int64_data(static_cast<int>(i));
            out.push_back(SVal::known(v));
        }
        return out;
    case TensorProto::INT32:
    case TensorProto::INT16:
    case TensorProto::INT8:
    case TensorProto::UINT8:
    case TensorProto::UINT16:
    case TensorProto::BOOL:
        if (!useRaw && static_cast<std::size_t>(t.int32_data_size()) != n) return std::nullopt;
        for (std::size_t i = 0; i < n; ++i) {
            std::int64_t v = 0;
            if (useRaw) {
                switch (t.data_type()) {
                case TensorProto::INT32: {
                    std::int32_t x;
                    rawAt(i, &x);
                    v = x;
                    break;
                }
                case TensorProto::INT16: {
                    std::int16_t x;
                    rawAt(i, &x);
                    v = x;
                    break;
                }
                case TensorProto::INT8: {
                    std::int8_t x;
                    rawAt(i, &x);
                    v = x;
                    break;
                }
                case TensorProto::UINT16: {
                    std::uint16_t x;
                    rawAt(i, &x);
                    v = x;
                    break;
                }
                default: {
                    std::uint8_t x;
                    rawAt(i, &x);
                    v = x;
                    break;
                }
                }
            } else
                v = t.int32_data(static_cast<int>(i));
            out.push_back(SVal::known(v));
        }
        return out;
    case TensorProto::FLOAT:
        if (!useRaw && static_cast<std::size_t>(t.float_data_size()) != n) return std::nullopt;
        for (std::size_t i = 0; i < n; ++i) {
            float v;
            if (useRaw)
                rawAt(i, &v);
            else
                v = t.float_data(static_cast<int>(i));
            out.push_back(SVal::real(v));
        }
        return out;
    case TensorProto::DOUBLE:
        if (!useRaw && static_cast<std::size_t>(t.double_data_size()) != n) return std::nullopt;
        for (std::size_t i = 0; i < n; ++i) {
            double v;
            if (useRaw)
                rawAt(i, &v);
            else
                v = t.double_data(static_cast<int>(i));
            out.push_back(SVal::real(v));
        }
        return out;
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
        if (!useRaw && static_cast<std::size_t>(t.int32_data_size()) != n) return std::nullopt;
        for (std::size_t i = 0; i < n; ++i) {
            std::uint16_t bits;
            if (useRaw)
                rawAt(i, &bits);
            else
                bits = static_cast<std::uint16_t>(t.int32_data(static_cast<int>(i)));
            out.push_back(
                SVal::real(t.data_type() == TensorProto::FLOAT16 ? halfToFloat(bits) : bf16ToFloat(bits)));
        }
        return out;
    default:
        return std::nullopt;
    }
}

double roundFloat(float f) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.7g", static_cast<double>(f));
    return std::strtod(buf, nullptr);
}

double tidy(double v) {
    const float f = static_cast<float>(v);
    return static_cast<double>(f) == v ? roundFloat(f) : v;
}

AttrValue intsAttr(const std::vector<std::int64_t>& v) {
    if (!v.empty() && std::all_of(v.begin(), v.end(), [&](std::int64_t x) { return x == v[0]; })) return v[0];
    return v;
}

bool allEqual(const std::vector<std::int64_t>& v, std::int64_t x) {
    return std::all_of(v.begin(), v.end(), [&](std::int64_t e) { return e == x; });
}

const AttributeProto* findAttr(const NodeProto& n, const char* name) {
    for (const auto& a : n.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

std::int64_t attrInt(const NodeProto& n, const char* name, std::int64_t def) {
    const AttributeProto* a = findAttr(n, name);
    return a && a->type() == AttributeProto::INT ? a->i() : def;
}

double attrFloat(const NodeProto& n, const char* name, double def) {
    const AttributeProto* a = findAttr(n, name);
    return a && a->type() == AttributeProto::FLOAT ? roundFloat(a->f()) : def;
}

std::string attrString(const NodeProto& n, const char* name, const std::string& def) {
    const AttributeProto* a = findAttr(n, name);
    return a && a->type() == AttributeProto::STRING ? a->s() : def;
}

std::optional<std::vector<std::int64_t>> attrInts(const NodeProto& n, const char* name) {
    const AttributeProto* a = findAttr(n, name);
    if (!a || a->type() != AttributeProto::INTS) return std::nullopt;
    return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
}

Outcome unsupported(std::string reason) {
    return {false, std::move(reason)};
}

} // namespace batchfit::onnximport
