// A loaded program: the module (cubin, or PTX the driver compiles now) and its one kernel.
#pragma once

#include "driver.hpp"

#include <tg/sdk/adaptor.hpp>

#include <functional>
#include <span>

namespace tg::cuda {

class Program final : public sdk::Program {
public:
  // on_free runs before the module unloads (the device drops graphs that use the kernel).
  // max_shared_bytes: the device's opt-in maximum of shared memory per block; a kernel whose
  // dynamic shared memory exceeds it is refused here (RESOURCE_EXHAUSTED), not at launch.
  Program(CUcontext context, std::span<const std::byte> payload, uint32_t max_shared_bytes,
          std::function<void(CUfunction)> on_free);
  ~Program() override;
  CUfunction function() const { return function_; }
  uint32_t dynamic_shared_bytes() const { return dynamic_shared_bytes_; } // every launch passes it

private:
  CUcontext context_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  uint32_t dynamic_shared_bytes_ = 0;
  std::function<void(CUfunction)> on_free_;
};

} // namespace tg::cuda
