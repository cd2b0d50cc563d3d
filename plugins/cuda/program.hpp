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
  Program(CUcontext context, std::span<const std::byte> payload, std::function<void(CUfunction)> on_free);
  ~Program() override;
  CUfunction function() const { return function_; }

private:
  CUcontext context_;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  std::function<void(CUfunction)> on_free_;
};

} // namespace tg::cuda
