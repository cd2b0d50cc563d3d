// A device buffer: one cl_mem. Copies to and from the host block (the host may reuse its memory at
// once); a copy between buffers is queued in order behind earlier launches.
#pragma once

#include <tg/sdk/adaptor.hpp>
#include <tg/sdk/opencl/handles.hpp>

namespace tg::sdk::opencl {

class Buffer final : public tg::sdk::Buffer {
public:
  // size 0 allocates one byte (OpenCL has no empty buffers) that is never read.
  Buffer(cl_context context, cl_command_queue queue, uint64_t size);
  cl_mem mem() const { return mem_.get(); }

  void copy_from_host(uint64_t offset, const void* src, uint64_t size) override;
  void copy_to_host(uint64_t offset, void* dst, uint64_t size) override;
  void copy_from(uint64_t offset, tg::sdk::Buffer& src, uint64_t src_offset, uint64_t size) override;

private:
  cl_context context_;
  cl_command_queue queue_;
  Memory mem_;
};

} // namespace tg::sdk::opencl
