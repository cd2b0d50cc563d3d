// RAII owners for OpenCL objects: each releases its one reference when it goes away. Move-only.
#pragma once

#include <CL/cl.h>

#include <utility>

namespace tg::sdk::opencl {

template <class T, cl_int (*Release)(T)> class Handle {
public:
  Handle() = default;
  explicit Handle(T raw) : raw_(raw) {}
  ~Handle() { reset(); }
  Handle(Handle&& other) noexcept : raw_(std::exchange(other.raw_, nullptr)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      raw_ = std::exchange(other.raw_, nullptr);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  T get() const { return raw_; }
  explicit operator bool() const { return raw_ != nullptr; }
  void reset() {
    if (raw_) Release(raw_);
    raw_ = nullptr;
  }

private:
  T raw_ = nullptr;
};

using Context = Handle<cl_context, clReleaseContext>;
using Queue = Handle<cl_command_queue, clReleaseCommandQueue>;
using Memory = Handle<cl_mem, clReleaseMemObject>;
using ProgramHandle = Handle<cl_program, clReleaseProgram>;
using Kernel = Handle<cl_kernel, clReleaseKernel>;
using Event = Handle<cl_event, clReleaseEvent>;

} // namespace tg::sdk::opencl
