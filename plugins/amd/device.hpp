// The AMD device (not written yet, docs/amd.md): properties, memory, programs and launches. The host
// serializes every call on one device (abi.h), so per-device state needs no lock.
#pragma once

#include <tg/sdk/adaptor.hpp>

namespace tg::amd {

class Device final : public sdk::Device {
public:
  explicit Device(int32_t index);

  tg_device_properties properties() const override;
  std::vector<sdk::Attribute> attributes() const override;
  std::unique_ptr<sdk::Buffer> alloc(uint64_t size, uint64_t alignment, uint32_t flags) override;
  std::unique_ptr<sdk::Program> load_program(const sdk::Blob& blob) override;
  uint64_t launch(const sdk::Launch& launch) override;
  void synchronize() override;
};

} // namespace tg::amd
