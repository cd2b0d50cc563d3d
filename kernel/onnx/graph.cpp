#include "kernel/onnx/graph.hpp"

#include <array>
#include <cstring>

namespace tg::onnx {

namespace {

struct TypeName {
  int64_t onnx;
  const char* name;
  std::optional<DType> dtype;
};

// TensorProto.DataType, ONNX 1.12
const std::array<TypeName, 17> kTypes{{
    {0, "UNDEFINED", std::nullopt},
    {1, "FLOAT", dtypes::float32},
    {2, "UINT8", dtypes::uint8},
    {3, "INT8", dtypes::int8},
    {4, "UINT16", dtypes::uint16},
    {5, "INT16", dtypes::int16},
    {6, "INT32", dtypes::int32},
    {7, "INT64", dtypes::int64},
    {8, "STRING", std::nullopt},
    {9, "BOOL", dtypes::bool_},
    {10, "FLOAT16", dtypes::float16},
    {11, "DOUBLE", dtypes::float64},
    {12, "UINT32", dtypes::uint32},
    {13, "UINT64", dtypes::uint64},
    {14, "COMPLEX64", std::nullopt},
    {15, "COMPLEX128", std::nullopt},
    {16, "BFLOAT16", dtypes::bfloat16},
}};

template <class T> T read_as(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

double half_to_double(uint16_t h) {
  uint32_t sign = uint32_t(h >> 15) << 31, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: normalize
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

double element(const HostTensor& t, int64_t i) {
  const std::byte* p = t.data.data() + i * t.dtype.itemsize();
  switch (t.dtype.scalar) {
  case Scalar::Bool:
    return read_as<uint8_t>(p) != 0;
  case Scalar::Int8:
    return read_as<int8_t>(p);
  case Scalar::UInt8:
    return read_as<uint8_t>(p);
  case Scalar::Int16:
    return read_as<int16_t>(p);
  case Scalar::UInt16:
    return read_as<uint16_t>(p);
  case Scalar::Int32:
    return read_as<int32_t>(p);
  case Scalar::UInt32:
    return read_as<uint32_t>(p);
  case Scalar::Int64:
    return double(read_as<int64_t>(p));
  case Scalar::UInt64:
    return double(read_as<uint64_t>(p));
  case Scalar::Float16:
    return half_to_double(read_as<uint16_t>(p));
  case Scalar::BFloat16: {
    uint32_t bits = uint32_t(read_as<uint16_t>(p)) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  case Scalar::Float32:
    return read_as<float>(p);
  case Scalar::Float64:
    return read_as<double>(p);
  default:
    throw OnnxError("host tensor of dtype " + t.dtype.name() + " cannot be read as numbers");
  }
}

} // namespace

DType dtype_from_onnx(int64_t onnx_type, const std::string& where) {
  if (onnx_type < 0 || onnx_type >= int64_t(kTypes.size()))
    throw OnnxError(where + ": unknown ONNX data type " + std::to_string(onnx_type));
  const TypeName& t = kTypes[size_t(onnx_type)];
  if (!t.dtype) {
    if (onnx_type == 0) throw OnnxError(where + ": data type UNDEFINED");
    throw OnnxUnsupportedError(where + ": data type " + t.name + " is not supported");
  }
  return *t.dtype;
}

std::string onnx_dtype_name(int64_t onnx_type) {
  if (onnx_type >= 0 && onnx_type < int64_t(kTypes.size())) return kTypes[size_t(onnx_type)].name;
  return "UNKNOWN(" + std::to_string(onnx_type) + ")";
}

int64_t onnx_type_of(DType dtype) {
  for (const auto& t : kTypes)
    if (t.dtype && *t.dtype == dtype) return t.onnx;
  throw OnnxError("dtype " + dtype.name() + " has no ONNX data type");
}

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

#ifndef TG_ONNX_PARSE_ONLY // the loader's fuzz target (tools/fuzz) builds without libtg
Tensor HostTensor::to_tensor(const std::string& device) const {
  return Tensor::from_bytes(data, shape, dtype, device);
}
#endif

std::vector<int64_t> HostTensor::as_ints() const {
  std::vector<int64_t> out(static_cast<size_t>(numel()));
  const std::byte* p = data.data();
  for (size_t i = 0; i < out.size(); ++i, p += dtype.itemsize()) {
    switch (dtype.scalar) {
    case Scalar::Int64:
      out[i] = read_as<int64_t>(p);
      break;
    case Scalar::UInt64:
      out[i] = int64_t(read_as<uint64_t>(p));
      break;
    default:
      if (!dtype.is_int() && dtype.scalar != Scalar::Bool)
        throw OnnxError("expected integers, got a tensor of " + dtype.name());
      out[i] = int64_t(element(*this, int64_t(i)));
    }
  }
  return out;
}

std::vector<double> HostTensor::as_doubles() const {
  std::vector<double> out(static_cast<size_t>(numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = element(*this, int64_t(i));
  return out;
}

std::string Node::describe() const {
  std::string s = "node";
  if (!name.empty()) s += " '" + name + "'";
  s += " (" + (domain.empty() ? "" : domain + ":") + op_type + ")";
  return s;
}

} // namespace tg::onnx
