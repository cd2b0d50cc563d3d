#include <tg/sdk/plugin.hpp>
#include <tg/sdk/scalar_bytes.hpp>

#include <cstdint>
#include <string>

namespace tg::sdk {

ScalarBytes scalar_bytes(const tg_scalar_arg& s) {
  ScalarBytes out;
  switch (s.dtype) {
  case TG_DTYPE_BOOL:
    out.set(int32_t(s.value.i != 0));
    break;
  case TG_DTYPE_INT8:
    out.set(int8_t(s.value.i));
    break;
  case TG_DTYPE_UINT8:
    out.set(uint8_t(s.value.u));
    break;
  case TG_DTYPE_INT16:
    out.set(int16_t(s.value.i));
    break;
  case TG_DTYPE_UINT16:
    out.set(uint16_t(s.value.u));
    break;
  case TG_DTYPE_INT32:
    out.set(int32_t(s.value.i));
    break;
  case TG_DTYPE_UINT32:
    out.set(uint32_t(s.value.u));
    break;
  case TG_DTYPE_INT64:
    out.set(int64_t(s.value.i));
    break;
  case TG_DTYPE_UINT64:
    out.set(uint64_t(s.value.u));
    break;
  case TG_DTYPE_FLOAT16:
  case TG_DTYPE_BFLOAT16:
  case TG_DTYPE_FLOAT32:
    out.set(float(s.value.f));
    break;
  case TG_DTYPE_FLOAT64:
    out.set(double(s.value.f));
    break;
  default:
    throw PluginError(TG_ERROR_INVALID_ARGUMENT, "scalar of dtype " + std::to_string(s.dtype));
  }
  return out;
}

} // namespace tg::sdk
