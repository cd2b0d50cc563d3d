#include "program.hpp"
#include "memory.hpp"

#include <cstring>

namespace tg::amd {
namespace {

// The explicit arguments are the signature's buffers (global pointers), then its scalars (i64):
// the shape hsaco.cpp gives the kernel. Anything else is a code object this plugin did not make.
void check_layout(const KernelLayout& layout, const sdk::Signature& signature) {
  const size_t buffers = signature.buffers.size(), explicit_args = buffers + signature.scalars.size();
  auto refuse = [&](const std::string& why) {
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "amd: the code object of " + signature.kernel_name +
                                                          " does not match its signature: " + why);
  };
  if (layout.args.size() < explicit_args)
    refuse("it declares " + std::to_string(layout.args.size()) + " arguments, the signature has " +
           std::to_string(explicit_args));
  for (size_t i = 0; i < layout.args.size(); ++i) {
    const KernelArg& a = layout.args[i];
    const char* want = i < buffers ? "global_buffer" : i < explicit_args ? "by_value" : nullptr;
    if (!want) {
      if (a.value_kind.rfind("hidden_", 0) != 0) refuse("argument " + std::to_string(i) + " is not hidden");
      continue;
    }
    if (a.value_kind != want || a.size != 8)
      refuse("argument " + std::to_string(i) + " is " + a.value_kind + " of " + std::to_string(a.size) +
             " bytes, not " + want + " of 8");
    if (a.offset + a.size > layout.kernarg_segment_size)
      refuse("argument " + std::to_string(i) + " lies beyond the kernarg segment");
  }
}

} // namespace

Program::Program(int device, std::span<const std::byte> code_object, const sdk::Signature& signature)
    : device_(device), layout_(read_kernel_layout(code_object, signature.kernel_name)) {
  check_layout(layout_, signature);
  const HipRuntime& h = hip_runtime();
  check(h.hipSetDevice(device_), "hipSetDevice");
  const hip::Error loaded = h.hipModuleLoadData(&module_, code_object.data());
  if (loaded == hip::kInvalidImage || loaded == hip::kNoBinaryForGpu)
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "amd: HIP refuses the code object of " +
                                                          signature.kernel_name + " (" + error_text(loaded) +
                                                          "): built for another gfx target?");
  check(loaded, "hipModuleLoadData(" + signature.kernel_name + ")");
  if (const hip::Error found = h.hipModuleGetFunction(&function_, module_, signature.kernel_name.c_str());
      found != hip::kSuccess) {
    h.hipModuleUnload(module_);
    check(found, "hipModuleGetFunction(" + signature.kernel_name + ")");
  }
}

Program::~Program() {
  const HipRuntime& h = hip_runtime();
  h.hipSetDevice(device_);
  h.hipModuleUnload(module_);
}

std::vector<std::byte> Program::kernargs(const sdk::Launch& launch) const {
  std::vector<std::byte> bytes(layout_.kernarg_segment_size);
  size_t arg = 0;
  for (const sdk::BufferArg& b : launch.buffers) {
    const uint64_t address = static_cast<const Buffer*>(b.buffer)->device_address() + b.offset;
    std::memcpy(bytes.data() + layout_.args[arg++].offset, &address, sizeof address);
  }
  for (const tg_scalar_arg& s : launch.scalars) {
    static_assert(sizeof s.value == 8);
    std::memcpy(bytes.data() + layout_.args[arg++].offset, &s.value, sizeof s.value);
  }
  return bytes;
}

} // namespace tg::amd
