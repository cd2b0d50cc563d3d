// Memory shared with other libraries without a copy (numpy on the CPU device, DLPack/PyTorch on
// CUDA): a realized tensor's memory as an address, and a tensor over memory someone else owns.
// Needs a plugin with the ABI 1.3 entries buffer_address / buffer_import (docs/abi.md, 3.7); with
// a plugin that lacks them both functions answer nullopt and the caller copies.
#pragma once

#include "kernel/tensor/tensor.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace tg {

// A tensor's memory as other libraries (numpy, DLPack) see it: contiguous, row-major.
struct MemoryView {
  uint64_t address = 0; // a host pointer when `host`, else the device's native address
  bool host = false;    // the device keeps buffers in host memory (TG_FEATURE_HOST_MEMORY)
  std::string device;   // canonical name, e.g. "CPU", "CUDA:0"
  std::string plugin;   // the plugin's name, e.g. "cpu", "cuda"
  int device_index = 0; // the device's index within its plugin
  DType dtype;
  Dims shape;
  std::shared_ptr<const void> owner; // keeps the memory alive while held
};

// Realizes t (copying it into a contiguous buffer first when it is a strided or partial view, as
// Tensor::to_bytes does), synchronizes its device, and returns its memory; nullopt when the plugin
// cannot give buffer addresses, and for a tensor of zero elements (no memory to share). The memory
// is the tensor's own: writes through it change the tensor, and later in-place ops on the tensor
// (assign) show through it. Read or write it only while no realize on its device is running.
std::optional<MemoryView> memory_view(const Tensor& t);

// A realized tensor over memory someone else owns, without a copy, when `device`'s plugin can import
// it (and the address meets the device's alignment); `release` runs once when the tensor's buffer is
// freed. nullopt (release not run, nothing changed) when the plugin cannot import: the caller copies.
// `release` may run on any thread that drops the last reference to the buffer. Memory the device
// cannot reach (CUDA: not device memory of that GPU) throws InvalidArgumentError; a null address
// for a non-empty shape, a negative dim or a non-element dtype throws TensorError.
std::optional<Tensor> tensor_from_memory(uint64_t address, Dims shape, DType dtype, const std::string& device,
                                         std::function<void()> release);

} // namespace tg
