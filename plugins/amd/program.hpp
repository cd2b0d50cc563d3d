// A loaded AMD program: the code object's module (hipModuleLoadData), its one kernel
// (hipModuleGetFunction) and the kernel's argument layout from the code object's metadata note,
// by which every launch packs its kernarg buffer.
#pragma once

#include "code_object.hpp"
#include "hip.hpp"

#include <tg/sdk/adaptor.hpp>

#include <span>
#include <vector>

namespace tg::amd {

class Program final : public sdk::Program {
public:
  // Throws PluginError(INVALID_ARGUMENT) when HIP refuses the code object (another gfx target) or
  // its metadata does not declare the signature's buffers then scalars, 8 bytes each.
  Program(int device, std::span<const std::byte> code_object, const sdk::Signature& signature);
  ~Program() override;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  hip::Function function() const { return function_; }
  const KernelLayout& layout() const { return layout_; }
  // The kernarg bytes of a launch: each buffer's device address (its start plus the offset), then
  // each scalar's 64 bits (tg_scalar_arg::value, as the kernel reads them), at the offsets the
  // metadata declares. Hidden arguments are left to HIP, which fills them at launch.
  std::vector<std::byte> kernargs(const sdk::Launch& launch) const;

private:
  int device_;
  hip::Module module_ = nullptr;
  hip::Function function_ = nullptr;
  KernelLayout layout_;
};

} // namespace tg::amd
