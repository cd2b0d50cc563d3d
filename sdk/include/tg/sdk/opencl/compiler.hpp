// The compiler of an OpenCL plugin: kernel IR -> OpenCL C (kernel_source.hpp) -> a program binary
// built by the driver for the device whose target string the request names ("" = the first
// device). It needs no opened device: it finds the device itself and keeps one context per target.
// Thread-safe: the target table is locked, builds run unlocked (clBuildProgram is thread-safe).
#pragma once

#include <tg/sdk/adaptor.hpp>
#include <tg/sdk/opencl/devices.hpp>
#include <tg/sdk/opencl/handles.hpp>
#include <tg/sdk/opencl/policy.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tg::sdk::opencl {

// Build options for an opt_level (0 -> -cl-opt-disable); part of the cache key.
std::string build_options(unsigned opt_level);

class Compiler final : public tg::sdk::Compiler {
public:
  explicit Compiler(const Policy& policy) : policy_(policy) {}
  CompileOutput compile(const CompileRequest& request) override;
  std::string cache_key(const std::string& target) override;

private:
  struct Target {
    DeviceEntry entry;
    Context context; // created on the first compile for this target
  };
  Target& find(const std::string& target);

  const Policy& policy_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Target>> targets_; // filled on first use
};

} // namespace tg::sdk::opencl
