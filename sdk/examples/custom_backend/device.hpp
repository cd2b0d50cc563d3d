// The MY device: one thread, host memory, timing with the steady clock.
#pragma once

#include <tg/sdk/adaptor.hpp>

namespace my {

class Device final : public tg::sdk::Device {
public:
  tg_device_properties properties() const override;
  std::string target() const override;
  std::vector<tg_matrix_unit> matrix_units() const override;
  std::unique_ptr<tg::sdk::Buffer> alloc(uint64_t size, uint64_t alignment, uint32_t flags) override;
  std::unique_ptr<tg::sdk::Program> load_program(const tg::sdk::Blob& blob) override;
  uint64_t launch(const tg::sdk::Launch& launch) override;
};

} // namespace my
