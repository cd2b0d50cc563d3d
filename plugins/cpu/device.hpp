// The CPU device: the host CPU, its properties and attributes, the thread pool that runs work
// groups and the JIT that holds loaded programs. The host serializes calls on one device
// (abi.h), so nothing here is locked.
#pragma once

#include "program.hpp"
#include "thread_pool.hpp"

#include <tg/sdk/adaptor.hpp>

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tg::cpu {

class Device final : public sdk::Device {
public:
  Device();

  tg_device_properties properties() const override;
  std::vector<sdk::Attribute> attributes() const override;
  std::string target() const override; // "<triple>:<cpu>" of this host
  std::unique_ptr<sdk::Buffer> alloc(uint64_t size, uint64_t alignment, uint32_t flags) override;
  std::unique_ptr<sdk::Program> load_program(const sdk::Blob& blob) override;
  uint64_t launch(const sdk::Launch& launch) override;
  uint64_t launch_batch(std::span<const sdk::Launch> launches, bool timed) override; // ABI 1.1

private:
  Jit& jit(); // created on the first program load

  ThreadPool pool_;
  std::unique_ptr<Jit> jit_;
};

} // namespace tg::cpu
