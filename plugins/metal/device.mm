// The Metal device in Objective-C++ (ARC: -fobjc-arc). NEVER COMPILED OR RUN: written on Linux
// without Apple's SDK (docs/metal.md). What it does not call Metal for is in launch_plan.cpp and
// payload.cpp, which are tested on every platform.
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>

#include "compiler.hpp"
#include "device.hpp"
#include "launch_plan.hpp"
#include "payload.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace tg::metal {
namespace {

std::string text(NSError* error) {
  return error ? std::string(": ") + error.localizedDescription.UTF8String : std::string();
}

// The device's command queue and the last command buffer committed to it: host access to shared
// memory and synchronize wait for that one (a queue runs its command buffers in order).
struct Queue {
  id<MTLCommandQueue> queue;
  id<MTLCommandBuffer> last;

  void wait() {
    if (!last) return;
    [last waitUntilCompleted];
    id<MTLCommandBuffer> done = last;
    last = nil;
    if (done.status == MTLCommandBufferStatusError)
      throw sdk::PluginError(TG_ERROR_INTERNAL, "metal: a command buffer failed" + text(done.error));
  }
};

class Buffer final : public sdk::Buffer {
public:
  Buffer(id<MTLDevice> device, Queue& queue, uint64_t size) : queue_(queue) {
    // Shared storage: the CPU reads and writes the same memory the GPU uses (unified memory).
    buffer_ = [device newBufferWithLength:std::max<uint64_t>(size, 1) options:MTLResourceStorageModeShared];
    if (!buffer_)
      throw sdk::PluginError(TG_ERROR_RESOURCE_EXHAUSTED,
                             "metal: newBufferWithLength of " + std::to_string(size) + " bytes failed");
  }
  void copy_from_host(uint64_t offset, const void* src, uint64_t size) override {
    queue_.wait(); // queued kernels may still read or write it
    std::memcpy(static_cast<char*>(buffer_.contents) + offset, src, size);
  }
  void copy_to_host(uint64_t offset, void* dst, uint64_t size) override {
    queue_.wait();
    std::memcpy(dst, static_cast<const char*>(buffer_.contents) + offset, size);
  }
  void copy_from(uint64_t offset, sdk::Buffer& src, uint64_t src_offset, uint64_t size) override {
    queue_.wait();
    std::memmove(static_cast<char*>(buffer_.contents) + offset,
                 static_cast<const char*>(static_cast<Buffer&>(src).buffer_.contents) + src_offset, size);
  }
  id<MTLBuffer> buffer() const { return buffer_; }

private:
  Queue& queue_;
  id<MTLBuffer> buffer_;
};

class Program final : public sdk::Program {
public:
  Program(id<MTLDevice> device, const Payload& payload) : payload_(payload) {
    @autoreleasepool {
      MTLCompileOptions* options = [MTLCompileOptions new];
      options.fastMathEnabled = NO; // NaN and infinity semantics as the renderer assumes
      NSError* error = nil;
      id<MTLLibrary> library = [device newLibraryWithSource:@(payload.source.c_str())
                                                    options:options
                                                      error:&error];
      if (!library)
        throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT,
                               "metal: newLibraryWithSource(" + payload.entry + ")" + text(error));
      id<MTLFunction> function = [library newFunctionWithName:@(payload.entry.c_str())];
      if (!function) throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "metal: no function " + payload.entry);
      pipeline_ = [device newComputePipelineStateWithFunction:function error:&error];
      if (!pipeline_)
        throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT,
                               "metal: compute pipeline of " + payload.entry + text(error));
    }
  }
  const Payload& payload() const { return payload_; }
  id<MTLComputePipelineState> pipeline() const { return pipeline_; }

private:
  Payload payload_;
  id<MTLComputePipelineState> pipeline_;
};

class Device final : public sdk::Device {
public:
  explicit Device(id<MTLDevice> device) : device_(device) {
    queue_.queue = [device_ newCommandQueue];
    if (!queue_.queue) throw sdk::PluginError(TG_ERROR_INTERNAL, "metal: newCommandQueue failed");
  }
  ~Device() override {
    try {
      queue_.wait();
    } catch (...) { // a failed command buffer at close has no one left to tell
    }
  }

  tg_device_properties properties() const override {
    tg_device_properties p{};
    sdk::copy_name(p.name, device_.name.UTF8String);
    sdk::copy_name(p.vendor, "Apple");
    sdk::copy_name(p.arch, kTarget);
    p.memory_bytes = device_.recommendedMaxWorkingSetSize;
    p.max_buffer_bytes = device_.maxBufferLength;
    p.local_memory_bytes = device_.maxThreadgroupMemoryLength;
    const MTLSize m = device_.maxThreadsPerThreadgroup;
    p.max_local_threads = 1024; // every Metal GPU family takes 1024 threads per threadgroup
    p.max_local_size[0] = uint32_t(m.width), p.max_local_size[1] = uint32_t(m.height);
    p.max_local_size[2] = uint32_t(m.depth);
    for (uint32_t& g : p.max_global_size) g = UINT32_MAX;
    p.max_buffer_args = 31 / 2; // 31 [[buffer(n)]] slots, shared by buffers and scalars
    p.max_scalar_args = 31 - p.max_buffer_args;
    p.buffer_alignment = 256;
    p.compute_units = 0;  // Metal does not say
    p.subgroup_size = 32; // the SIMD-group width of Apple GPUs
    p.vector_bytes = 16;
    for (tg_dtype dt = TG_DTYPE_BOOL; dt <= TG_DTYPE_FLOAT64; ++dt)
      if (dt != TG_DTYPE_FLOAT64) p.dtype_mask |= TG_DTYPE_BIT(dt); // Metal has no double
    p.features = TG_FEATURE_LOCAL_MEMORY | TG_FEATURE_BARRIER | TG_FEATURE_TIMING | TG_FEATURE_ASYNC;
    return p;
  }
  std::string target() const override { return kTarget; }

  std::unique_ptr<sdk::Buffer> alloc(uint64_t size, uint64_t, uint32_t) override {
    return std::make_unique<Buffer>(device_, queue_, size);
  }
  std::unique_ptr<sdk::Program> load_program(const sdk::Blob& blob) override {
    return std::make_unique<Program>(device_, decode(blob.payload));
  }
  uint64_t launch(const sdk::Launch& launch) override { return launch_batch({&launch, 1}, launch.timed); }

  // One command buffer, one serial compute encoder: the dispatches run in order, each seeing the
  // previous one's writes.
  uint64_t launch_batch(std::span<const sdk::Launch> launches, bool timed) override {
    @autoreleasepool {
      id<MTLCommandBuffer> commands = [queue_.queue commandBuffer];
      id<MTLComputeCommandEncoder> encoder = [commands computeCommandEncoder];
      for (const sdk::Launch& l : launches) {
        const auto& program = static_cast<const Program&>(l.program);
        const Dispatch d = plan_dispatch(l.global, l.local, program.pipeline().maxTotalThreadsPerThreadgroup);
        [encoder setComputePipelineState:program.pipeline()];
        for (const EncodedArg& a : encode_arguments(program.payload(), l.buffers, l.scalars)) {
          if (a.buffer)
            [encoder setBuffer:static_cast<Buffer*>(a.buffer)->buffer() offset:a.offset atIndex:a.slot];
          else
            [encoder setBytes:a.bytes.bytes length:a.bytes.size atIndex:a.slot];
        }
        [encoder dispatchThreadgroups:MTLSizeMake(d.threadgroups[0], d.threadgroups[1], d.threadgroups[2])
                threadsPerThreadgroup:MTLSizeMake(d.threads_per_threadgroup[0], d.threads_per_threadgroup[1],
                                                  d.threads_per_threadgroup[2])];
      }
      [encoder endEncoding];
      [commands commit];
      queue_.last = commands;
      if (!timed) return 0;
      queue_.wait();
      return uint64_t((commands.GPUEndTime - commands.GPUStartTime) * 1e9);
    }
  }
  void synchronize() override { queue_.wait(); }

private:
  id<MTLDevice> device_;
  Queue queue_;
};

NSArray<id<MTLDevice>>* all_devices() {
#if TARGET_OS_OSX
  return MTLCopyAllDevices();
#else
  id<MTLDevice> d = MTLCreateSystemDefaultDevice();
  return d ? @[ d ] : @[];
#endif
}

} // namespace

int32_t metal_device_count() {
  @autoreleasepool {
    const NSUInteger n = all_devices().count;
    if (n == 0)
      throw sdk::PluginError(TG_ERROR_UNAVAILABLE, "metal: no Metal device (MTLCopyAllDevices is empty)");
    return int32_t(n);
  }
}

std::unique_ptr<sdk::Device> open_metal_device(int32_t index) {
  @autoreleasepool {
    NSArray<id<MTLDevice>>* devices = all_devices();
    if (NSUInteger(index) >= devices.count)
      throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "metal: no device " + std::to_string(index));
    return std::make_unique<Device>(devices[NSUInteger(index)]);
  }
}

} // namespace tg::metal
