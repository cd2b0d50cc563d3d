// A loaded kernel: the compiler's shared object, dlopen'ed from a private temporary file.
#pragma once

#include <tg/sdk/adaptor.hpp>
#include <tg/sdk/render/render.hpp>

#include <span>

namespace my {

class Program final : public tg::sdk::Program {
public:
  explicit Program(std::span<const std::byte> payload);
  ~Program() override;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  tg::sdk::render::CKernelFn fn() const { return fn_; }

private:
  void* handle_ = nullptr;
  tg::sdk::render::CKernelFn fn_ = nullptr;
};

} // namespace my
