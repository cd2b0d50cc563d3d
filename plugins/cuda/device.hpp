// One GPU (CUDA:N): its primary context, one stream every launch and copy goes to
// (TG_FEATURE_ASYNC: launches return at once; synchronize and downloads wait), events for
// timing, the caching allocator and launch_batch's graphs. The host serializes calls per device
// (abi.h); each call makes the device's context current on the calling thread first.
#pragma once

#include "driver.hpp"
#include "graphs.hpp"
#include "memory.hpp"
#include "stream.hpp"

#include <tg/sdk/adaptor.hpp>

#include <memory>

namespace tg::cuda {

class Device final : public sdk::Device {
public:
  explicit Device(int32_t index);
  ~Device() override;

  tg_device_properties properties() const override { return properties_; }
  std::vector<sdk::Attribute> attributes() const override;
  std::vector<tg_matrix_unit> matrix_units() const override;
  std::unique_ptr<sdk::Buffer> alloc(uint64_t size, uint64_t alignment, uint32_t flags) override;
  std::unique_ptr<sdk::Program> load_program(const sdk::Blob& blob) override;
  uint64_t launch(const sdk::Launch& launch) override;
  uint64_t launch_batch(std::span<const sdk::Launch> launches, bool timed) override;
  void synchronize() override;
  // ABI 1.3: device memory of this GPU another library owns (a PyTorch tensor in this process:
  // the plugin runs on the primary context, as the CUDA runtime does). Anything else ->
  // INVALID_ARGUMENT. The adaptor runs `release` once the Buffer is gone.
  std::unique_ptr<sdk::Buffer> import_buffer(uint64_t address, uint64_t size,
                                             std::function<void()> release) override;

  // For the 1.2 entries between devices (peer.cpp, collectives.cpp).
  CUdevice ordinal() const { return device_; }
  CUcontext context() const { return context_; }
  CUstream stream() const { return stream_->get(); } // to queue work on (stream.hpp)

private:
  void bind() const; // makes the context current on this thread
  uint64_t elapsed_since_start();

  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  std::unique_ptr<Stream> stream_;
  CUevent start_ = nullptr;
  CUevent end_ = nullptr;
  tg_device_properties properties_{};
  uint32_t max_shared_bytes_ = 0; // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
  std::unique_ptr<Memory> memory_;
  std::unique_ptr<Graphs> graphs_;
  bool use_graphs_ = true;
  // launch's packing scratch, reused (the host serializes calls on a device: abi.h)
  KernelCall call_{};
  std::vector<void*> params_;
};

} // namespace tg::cuda
