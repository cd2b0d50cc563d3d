// The adaptor's definitions of the opaque ABI handles: records around the plugin's objects that
// hold what the ABI edge needs (which device a buffer belongs to, its size, a program's signature,
// the device's properties and attribute strings). Private to the SDK's sources.
#pragma once

#include <tg/sdk/adaptor.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace tg::sdk::detail {

// An imported buffer's release callback (ABI 1.3). It runs once at most, whoever asks first
// (the plugin's Buffer or buffer_free), and only once armed: after the import succeeded.
struct ImportRelease {
  void (*fn)(void*) = nullptr;
  void* context = nullptr;
  bool armed = false;
  std::atomic<bool> done{false};
  void run() noexcept {
    if (armed && fn != nullptr && !done.exchange(true)) fn(context);
  }
};

} // namespace tg::sdk::detail

struct tg_device {
  tg::sdk::detail::PluginState* plugin;
  std::unique_ptr<tg::sdk::Device> impl;
  tg_device_properties properties;
  std::vector<tg::sdk::Attribute> attributes; // their c_str()s go to the host
  std::vector<tg_matrix_unit> matrix_units;   // checked at open (1.4)
  std::string target;
};

struct tg_buffer {
  tg_device* device;
  uint64_t size;
  std::unique_ptr<tg::sdk::Buffer> impl;
  std::shared_ptr<tg::sdk::detail::ImportRelease> release; // imported buffers only (1.3)
};

struct tg_program {
  tg_device* device;
  tg::sdk::Signature signature;
  std::unique_ptr<tg::sdk::Program> impl;
};

struct tg_comm {
  tg_device* device;
  int32_t rank;
  int32_t size;
  std::unique_ptr<tg::sdk::Comm> impl;
};

struct tg_compile_result {
  std::vector<std::byte> binary;
  std::string source;
  std::string log;
};

namespace tg::sdk::detail {

// Checks a launch against its program's signature and its device's limits (throws
// PluginError(INVALID_ARGUMENT) naming the argument, or UNIMPLEMENTED for a timing request the
// device cannot serve), then runs it unless the grid is empty. launch.cpp.
void validate_and_launch(const tg_launch_args& args);
// The same for every launch of a batch (errors name the launch's index), all before any runs;
// then Device::launch_batch with the non-empty ones.
void validate_and_launch_batch(const tg_launch_batch_args& args);
// ABI 1.2: checks the buffers and ranges (and, for a collective, the group, op, reduce, dtype and
// root), then calls the plugin's peer_copy / collective unless there is nothing to do.
// multi_device.cpp.
void validate_and_peer_copy(PluginState& s, const tg_peer_copy_args& args);
void validate_and_run_collective(PluginState& s, const tg_collective_args& args);
// ABI 1.6: checks the device, rank and size, then Plugin::comm_init. A collective on a comm goes
// through validate_and_run_collective too.
tg_comm* validate_and_init_comm(PluginState& s, const tg_comm_init_args& args);

} // namespace tg::sdk::detail
