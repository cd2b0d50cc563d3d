// Compiling for a target without opening it: enumerate once, build in a context of that device.
#include <tg/sdk/opencl/compiler.hpp>
#include <tg/sdk/opencl/error.hpp>
#include <tg/sdk/opencl/kernel_source.hpp>
#include <tg/sdk/opencl/program.hpp>

namespace tg::sdk::opencl {

std::string build_options(unsigned opt_level) { return opt_level == 0 ? "-cl-opt-disable" : ""; }

Compiler::Target& Compiler::find(const std::string& target) {
  std::lock_guard lock(mutex_);
  if (targets_.empty())
    for (DeviceEntry& e : find_devices(policy_))
      targets_.push_back(std::make_unique<Target>(Target{std::move(e), {}}));
  Target* found = nullptr;
  std::string known;
  for (auto& t : targets_) {
    if (target.empty() || t->entry.target == target) {
      found = t.get();
      break;
    }
    known += (known.empty() ? "\"" : ", \"") + t->entry.target + "\"";
  }
  if (!found)
    throw PluginError(TG_ERROR_INVALID_ARGUMENT, "unknown target \"" + target +
                                                     "\": no such OpenCL device here (devices: " + known +
                                                     ")");
  if (!found->context) {
    cl_int status = CL_SUCCESS;
    const cl_context_properties properties[] = {
        CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(found->entry.platform), 0};
    found->context = Context(clCreateContext(properties, 1, &found->entry.device, nullptr, nullptr, &status));
    check(status, "clCreateContext for " + found->entry.name);
  }
  return *found;
}

CompileOutput Compiler::compile(const CompileRequest& request) {
  Target& target = find(request.target);
  KernelSource source = render_kernel(request.ir, target.entry.has_extension("cl_khr_fp16"));
  BuiltProgram built = build_program(target.context.get(), target.entry.device, source.text, source.entry,
                                     build_options(request.opt_level));
  CompileOutput out;
  out.target = target.entry.target;
  out.payload = std::move(built.payload);
  if (request.want_source) out.source = std::move(source.text);
  out.log = std::move(built.log);
  return out;
}

std::string Compiler::cache_key(const std::string& target) {
  // The target string already names the device, platform and driver versions (devices.cpp); fp16
  // follows from the device. Build options follow from opt_level, which the host keys on itself.
  const DeviceEntry& entry = find(target).entry;
  return "opencl-c|" + entry.target + "|fp16=" + (entry.has_extension("cl_khr_fp16") ? "1" : "0");
}

} // namespace tg::sdk::opencl
