// A scalar kernel argument as the bytes of the C type a source-language kernel parameter has
// (the renderers' ScalarParam::passed_as): BOOL travels as a 32-bit int (0/1), FLOAT16 and
// BFLOAT16 as float, every other dtype as itself. OpenCL's clSetKernelArg and CUDA's kernel
// parameter arrays both take these bytes.
#pragma once

#include <tg/abi.h>

#include <cstddef>
#include <cstring>

namespace tg::sdk {

struct ScalarBytes {
  unsigned char bytes[8] = {};
  size_t size = 0;
  template <class T> void set(T v) {
    static_assert(sizeof(T) <= sizeof bytes);
    std::memcpy(bytes, &v, sizeof v);
    size = sizeof v;
  }
};

// Throws PluginError(INVALID_ARGUMENT) for a dtype no kernel parameter has.
ScalarBytes scalar_bytes(const tg_scalar_arg& scalar);

} // namespace tg::sdk
