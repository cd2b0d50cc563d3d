// A CPU device: the host CPU, its properties and attributes, the thread pool that runs work
// groups and the JIT that holds loaded programs. The plugin's logical devices (CPU:0 .. CPU:N-1,
// logical_devices.hpp) share one pool and each keep their own JIT. The host serializes calls on
// one device (abi.h), so nothing here is locked; the pool locks itself.
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
  // pool: shared with the plugin's other logical devices; a pool of its own by default.
  explicit Device(std::shared_ptr<ThreadPool> pool = std::make_shared<ThreadPool>());

  tg_device_properties properties() const override;
  std::vector<sdk::Attribute> attributes() const override;
  std::string target() const override; // "<triple>:<cpu>" of this host
  std::unique_ptr<sdk::Buffer> alloc(uint64_t size, uint64_t alignment, uint32_t flags) override;
  std::unique_ptr<sdk::Program> load_program(const sdk::Blob& blob) override;
  uint64_t launch(const sdk::Launch& launch) override;
  uint64_t launch_batch(std::span<const sdk::Launch> launches, bool timed) override; // ABI 1.1
  // ABI 1.3: any host memory will do; the adaptor runs `release` once the Buffer is gone.
  std::unique_ptr<sdk::Buffer> import_buffer(uint64_t address, uint64_t size,
                                             std::function<void()> release) override;

private:
  Jit& jit(); // created on the first program load

  std::shared_ptr<ThreadPool> pool_; // never null
  std::unique_ptr<Jit> jit_;
};

} // namespace tg::cpu
