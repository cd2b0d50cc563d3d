#include <tg/sdk/opencl/buffer.hpp>
#include <tg/sdk/opencl/error.hpp>

#include <algorithm>

namespace tg::sdk::opencl {

Buffer::Buffer(cl_context context, cl_command_queue queue, uint64_t size) : context_(context), queue_(queue) {
  cl_int status = CL_SUCCESS;
  mem_ = Memory(clCreateBuffer(context, CL_MEM_READ_WRITE, std::max<uint64_t>(size, 1), nullptr, &status));
  check(status, "clCreateBuffer of " + std::to_string(size) + " bytes");
}

void Buffer::copy_from_host(uint64_t offset, const void* src, uint64_t size) {
  check(clEnqueueWriteBuffer(queue_, mem(), CL_TRUE, offset, size, src, 0, nullptr, nullptr),
        "clEnqueueWriteBuffer");
}

void Buffer::copy_to_host(uint64_t offset, void* dst, uint64_t size) {
  check(clEnqueueReadBuffer(queue_, mem(), CL_TRUE, offset, size, dst, 0, nullptr, nullptr),
        "clEnqueueReadBuffer");
}

void Buffer::copy_from(uint64_t offset, tg::sdk::Buffer& src, uint64_t src_offset, uint64_t size) {
  cl_mem from = static_cast<Buffer&>(src).mem();
  const bool overlap = from == mem() && offset < src_offset + size && src_offset < offset + size;
  if (!overlap) {
    check(clEnqueueCopyBuffer(queue_, from, mem(), src_offset, offset, size, 0, nullptr, nullptr),
          "clEnqueueCopyBuffer");
    return;
  }
  // OpenCL refuses overlapping copies (CL_MEM_COPY_OVERLAP): go through a temporary buffer.
  Buffer staging(context_, queue_, size);
  check(clEnqueueCopyBuffer(queue_, from, staging.mem(), src_offset, 0, size, 0, nullptr, nullptr),
        "clEnqueueCopyBuffer to staging");
  check(clEnqueueCopyBuffer(queue_, staging.mem(), mem(), 0, offset, size, 0, nullptr, nullptr),
        "clEnqueueCopyBuffer from staging");
}

} // namespace tg::sdk::opencl
