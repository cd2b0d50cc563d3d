// An opened OpenCL device: a context and one in-order queue with profiling, its properties read
// from clGetDeviceInfo (docs/opencl.md lists where each comes from), buffers, programs from
// binaries, and launches (queued; a timed launch waits on its event's profiling times).
#pragma once

#include <tg/sdk/adaptor.hpp>
#include <tg/sdk/opencl/devices.hpp>
#include <tg/sdk/opencl/handles.hpp>
#include <tg/sdk/opencl/policy.hpp>

namespace tg::sdk::opencl {

// What the device reports, computed without a context (tests compare it with clinfo-like queries).
tg_device_properties read_properties(const DeviceEntry& entry, const Policy& policy);

class Device final : public tg::sdk::Device {
public:
  Device(DeviceEntry entry, const Policy& policy);

  tg_device_properties properties() const override { return properties_; }
  std::vector<Attribute> attributes() const override;
  std::string target() const override { return entry_.target; }
  std::unique_ptr<tg::sdk::Buffer> alloc(uint64_t size, uint64_t alignment, uint32_t flags) override;
  std::unique_ptr<tg::sdk::Program> load_program(const Blob& blob) override;
  uint64_t launch(const Launch& launch) override;
  void synchronize() override;

private:
  DeviceEntry entry_;
  tg_device_properties properties_;
  Context context_;
  Queue queue_;
};

} // namespace tg::sdk::opencl
