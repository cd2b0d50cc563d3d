// One AMD GPU (AMD:N) through HIP: properties (gcnArchName picks the compile target), one stream
// every launch and copy goes to (TG_FEATURE_ASYNC: launches return at once; synchronize and
// downloads wait), events for timing, the caching allocator. The host serializes calls per device
// (abi.h); each call makes the device current on the calling thread first.
#pragma once

#include "hip.hpp"
#include "memory.hpp"

#include <tg/sdk/adaptor.hpp>

#include <memory>

namespace tg::amd {

class Device final : public sdk::Device {
public:
  explicit Device(int32_t index);
  ~Device() override;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  tg_device_properties properties() const override { return properties_; }
  std::vector<sdk::Attribute> attributes() const override;
  // The units of the device's processor (matrix_units.hpp), as the compiler checks them.
  std::vector<tg_matrix_unit> matrix_units() const override;
  std::unique_ptr<sdk::Buffer> alloc(uint64_t size, uint64_t alignment, uint32_t flags) override;
  std::unique_ptr<sdk::Program> load_program(const sdk::Blob& blob) override;
  uint64_t launch(const sdk::Launch& launch) override;
  uint64_t launch_batch(std::span<const sdk::Launch> launches, bool timed) override;
  void synchronize() override;

private:
  void bind() const; // hipSetDevice
  void enqueue(const sdk::Launch& launch);
  uint64_t elapsed_since_start();

  int index_;
  std::string arch_name_; // gcnArchName, e.g. "gfx90a:sramecc+:xnack-"
  hip::Stream stream_ = nullptr;
  hip::Event start_ = nullptr;
  hip::Event end_ = nullptr;
  tg_device_properties properties_{};
  std::unique_ptr<Memory> memory_;
};

} // namespace tg::amd
