// The MY device: properties, memory, and launches that run each work group in turn.
#include "device.hpp"

#include "buffer.hpp"
#include "compiler.hpp"
#include "program.hpp"

#include <chrono>
#include <vector>

namespace my {

tg_device_properties Device::properties() const {
  tg_device_properties p{};
  tg::sdk::copy_name(p.name, "MY (C compiled by the system compiler, one thread)");
  tg::sdk::copy_name(p.vendor, "tinygrad.cpp SDK example");
  tg::sdk::copy_name(p.arch, kTarget);
  p.memory_bytes = p.max_buffer_bytes = uint64_t(4) << 30; // a limit we chose, not the machine's
  p.max_local_size[0] = p.max_local_size[1] = p.max_local_size[2] = 1024;
  p.max_local_threads = 1024;
  p.max_global_size[0] = p.max_global_size[1] = p.max_global_size[2] = 0x7fffffffu;
  p.max_buffer_args = 64;
  p.max_scalar_args = 64;
  p.buffer_alignment = 64;
  p.compute_units = 1;
  p.subgroup_size = 1;
  for (tg_dtype d = TG_DTYPE_BOOL; d < TG_DTYPE_COUNT; ++d) p.dtype_mask |= TG_DTYPE_BIT(d);
  p.features = TG_FEATURE_HOST_MEMORY | TG_FEATURE_TIMING;
  return p;
}

std::string Device::target() const { return kTarget; }

std::vector<tg_matrix_unit> Device::matrix_units() const { return my::matrix_units(); }

std::unique_ptr<tg::sdk::Buffer> Device::alloc(uint64_t size, uint64_t alignment, uint32_t) {
  try {
    return std::make_unique<Buffer>(size, alignment ? alignment : 64);
  } catch (const std::bad_alloc&) {
    throw tg::sdk::PluginError(TG_ERROR_RESOURCE_EXHAUSTED,
                               "out of host memory for " + std::to_string(size) + " bytes");
  }
}

std::unique_ptr<tg::sdk::Program> Device::load_program(const tg::sdk::Blob& blob) {
  return std::make_unique<Program>(blob.payload);
}

uint64_t Device::launch(const tg::sdk::Launch& launch) {
  auto fn = static_cast<Program&>(launch.program).fn();
  std::vector<void*> buffers;
  for (const auto& arg : launch.buffers)
    buffers.push_back(static_cast<Buffer*>(arg.buffer)->data() + arg.offset);
  std::vector<uint64_t> scalars;
  for (const auto& s : launch.scalars) scalars.push_back(s.value.u);
  const auto [gx, gy, gz] = launch.global;
  const auto [lx, ly, lz] = launch.local;
  auto start = std::chrono::steady_clock::now();
  for (uint32_t z = 0; z < gz; ++z)
    for (uint32_t y = 0; y < gy; ++y)
      for (uint32_t x = 0; x < gx; ++x)
        fn(buffers.data(), scalars.data(), int32_t(x), int32_t(y), int32_t(z), int32_t(lx), int32_t(ly),
           int32_t(lz));
  return uint64_t(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
}

} // namespace my
