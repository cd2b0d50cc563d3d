#include "device.hpp"

#include "buffer.hpp"
#include "compiler.hpp"
#include "instance.hpp"
#include "program.hpp"
#include "vk_error.hpp"

#include <tg/sdk/bytes.hpp>

#include <algorithm>
#include <cstring>
#include <span>
#include <thread>

namespace tg::vulkan {
namespace {

std::string vendor_name(uint32_t id) {
  switch (id) {
  case 0x1002:
    return "AMD";
  case 0x10DE:
    return "NVIDIA";
  case 0x8086:
    return "Intel";
  case 0x13B5:
    return "ARM";
  case 0x5143:
    return "Qualcomm";
  case 0x106B:
    return "Apple";
  case 0x10005:
    return "Mesa";
  default:
    return "vendor 0x" + sdk::hex64(id);
  }
}

const char* device_type_name(VkPhysicalDeviceType type) {
  switch (type) {
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
    return "integrated GPU";
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
    return "discrete GPU";
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
    return "virtual GPU";
  case VK_PHYSICAL_DEVICE_TYPE_CPU:
    return "CPU";
  default:
    return "other";
  }
}

std::string version_string(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}

// The dtypes the enabled features let a shader load, store and compute with (the glsl dialect's
// needs: 8-bit types need 8-bit storage and Int8, 16-bit ones 16-bit storage and Int16, float16
// also Float16, float64 also Int64 for its bit casts).
uint64_t dtype_mask(const Capabilities& c) {
  uint64_t m = TG_DTYPE_BIT(TG_DTYPE_INT32) | TG_DTYPE_BIT(TG_DTYPE_UINT32) | TG_DTYPE_BIT(TG_DTYPE_FLOAT32);
  if (c.storage_8bit && c.shader_int8)
    m |= TG_DTYPE_BIT(TG_DTYPE_BOOL) | TG_DTYPE_BIT(TG_DTYPE_INT8) | TG_DTYPE_BIT(TG_DTYPE_UINT8);
  const bool int16 = c.storage_16bit && c.features.shaderInt16;
  if (int16)
    m |= TG_DTYPE_BIT(TG_DTYPE_INT16) | TG_DTYPE_BIT(TG_DTYPE_UINT16) | TG_DTYPE_BIT(TG_DTYPE_BFLOAT16);
  if (int16 && c.shader_float16) m |= TG_DTYPE_BIT(TG_DTYPE_FLOAT16);
  if (c.features.shaderInt64) m |= TG_DTYPE_BIT(TG_DTYPE_INT64) | TG_DTYPE_BIT(TG_DTYPE_UINT64);
  if (c.features.shaderInt64 && c.features.shaderFloat64) m |= TG_DTYPE_BIT(TG_DTYPE_FLOAT64);
  return m;
}

uint64_t device_local_bytes(const VkPhysicalDeviceMemoryProperties& memory) {
  uint64_t largest = 0;
  for (uint32_t i = 0; i < memory.memoryHeapCount; ++i)
    if (memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      largest = std::max<uint64_t>(largest, memory.memoryHeaps[i].size);
  return largest;
}

// The largest buffer a shader can address: one storage-buffer binding, one allocation.
uint64_t max_buffer_bytes(const Capabilities& c) {
  uint64_t limit = c.properties.limits.maxStorageBufferRange;
  if (c.maintenance3.maxMemoryAllocationSize)
    limit = std::min<uint64_t>(limit, c.maintenance3.maxMemoryAllocationSize);
  return limit & ~uint64_t(15); // allocations round up to 16 bytes (buffer.cpp)
}

// A scalar argument's bytes as the push-constant block holds it (payload.hpp).
void put_scalar(std::byte* at, const PushScalar& slot, const tg_scalar_arg& arg) {
  switch (slot.passed_as) {
  case TG_DTYPE_FLOAT32: {
    float f = float(arg.value.f);
    std::memcpy(at, &f, 4);
    return;
  }
  case TG_DTYPE_FLOAT64:
    std::memcpy(at, &arg.value.f, 8);
    return;
  case TG_DTYPE_INT32:
  case TG_DTYPE_UINT32: {
    uint32_t u = uint32_t(arg.value.u); // the low word: two's complement for signed values
    std::memcpy(at, &u, 4);
    return;
  }
  default: // INT64, UINT64
    std::memcpy(at, &arg.value.u, 8);
    return;
  }
}

} // namespace

Device::Device(std::shared_ptr<const Instance> instance, VkPhysicalDevice physical)
    : context_(std::make_shared<Context>(std::move(instance), physical)) {}

tg_device_properties Device::properties() const {
  const Capabilities& c = context_->caps();
  const VkPhysicalDeviceLimits& l = c.properties.limits;
  tg_device_properties p{};
  sdk::copy_name(p.name, c.properties.deviceName);
  sdk::copy_name(p.vendor, vendor_name(c.properties.vendorID));
  sdk::copy_name(p.arch, kTarget);
  p.memory_bytes = device_local_bytes(c.memory);
  p.max_buffer_bytes = max_buffer_bytes(c);
  p.local_memory_bytes = l.maxComputeSharedMemorySize;
  for (int k = 0; k < 3; ++k) {
    p.max_local_size[k] = l.maxComputeWorkGroupSize[k];
    p.max_global_size[k] = l.maxComputeWorkGroupCount[k];
  }
  p.max_local_threads = l.maxComputeWorkGroupInvocations;
  p.max_buffer_args = std::min(l.maxPerStageDescriptorStorageBuffers, l.maxDescriptorSetStorageBuffers);
  p.max_scalar_args = l.maxPushConstantsSize / 8; // a scalar takes at most 8 bytes
  p.buffer_alignment = std::max<uint32_t>(16, uint32_t(l.minStorageBufferOffsetAlignment));
  // Vulkan has no portable core count: a CPU device runs on the host's threads; a GPU's comes
  // from its vendor's extension where it has one (read_core_count), else 1, the honest "unknown".
  p.compute_units = c.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU
                        ? std::max(1u, std::thread::hardware_concurrency())
                        : std::max(1u, c.compute_units);
  p.subgroup_size = std::max(1u, c.subgroup.subgroupSize);
  p.vector_bytes = 0; // the glsl dialect renders lane by lane
  p.dtype_mask = dtype_mask(c);
  if (l.maxComputeSharedMemorySize > 0) p.features |= TG_FEATURE_LOCAL_MEMORY | TG_FEATURE_BARRIER;
  if (context_->timestamps() != VK_NULL_HANDLE) p.features |= TG_FEATURE_TIMING;
  if (c.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) p.features |= TG_FEATURE_HOST_MEMORY;
  return p;
}

std::vector<sdk::Attribute> Device::attributes() const {
  const Capabilities& c = context_->caps();
  const VkPhysicalDeviceLimits& l = c.properties.limits;
  std::vector<sdk::Attribute> attrs = {
      {"device_type", device_type_name(c.properties.deviceType)},
      {"vulkan_version", version_string(c.properties.apiVersion)},
      {"driver_version", std::to_string(c.properties.driverVersion)},
      {"max_storage_buffer_range", std::to_string(l.maxStorageBufferRange)},
      {"min_storage_buffer_offset_alignment", std::to_string(l.minStorageBufferOffsetAlignment)},
      {"max_push_constants_size", std::to_string(l.maxPushConstantsSize)},
      {"timestamp_period_ns", std::to_string(l.timestampPeriod)},
      {"codegen", "GLSL 450 (SDK renderer) -> SPIR-V (shaderc, validated)"},
      {"validation_layer", context_->instance().validation() ? "on" : "off"},
  };
  attrs.push_back({"compute_units_source", c.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU
                                               ? "host threads"
                                           : c.compute_units ? c.compute_units_source
                                                             : "unknown (1)"});
  // the core keeps each work item's loops below it (DeviceLimits::max_loop_iterations)
  if (uint64_t n = c.max_loop_iterations()) attrs.push_back({"max_loop_iterations", std::to_string(n)});
  return attrs;
}

std::string Device::target() const { return kTarget; }

std::unique_ptr<sdk::Buffer> Device::alloc(uint64_t size, uint64_t, uint32_t) {
  // The adaptor has refused sizes above max_buffer_bytes (maxStorageBufferRange: a shader binds a
  // whole buffer). Every buffer has its own allocation, whose offset 0 meets any alignment.
  return std::make_unique<Buffer>(context_, size);
}

std::unique_ptr<sdk::Program> Device::load_program(const sdk::Blob& blob) {
  return std::make_unique<Program>(context_, blob);
}

namespace {

// Writes the launch's buffer arguments into `set` (none when it is VK_NULL_HANDLE) and returns
// its push-constant bytes.
std::vector<std::byte> bind_arguments(const Context& context, Program& program, const sdk::Launch& launch,
                                      VkDescriptorSet set) {
  const Payload& layout = program.layout();
  const Capabilities& c = context.caps();
  const VkDeviceSize align = c.properties.limits.minStorageBufferOffsetAlignment;
  std::vector<VkDescriptorBufferInfo> infos(launch.buffers.size());
  std::vector<VkWriteDescriptorSet> writes(launch.buffers.size());
  for (size_t k = 0; k < launch.buffers.size(); ++k) {
    const auto& arg = launch.buffers[k];
    const auto& buffer = static_cast<const Buffer&>(*arg.buffer);
    if (arg.offset % align != 0)
      throw sdk::PluginError(TG_ERROR_UNIMPLEMENTED,
                             "buffer argument " + std::to_string(k) + " of " + launch.signature.kernel_name +
                                 " starts at byte offset " + std::to_string(arg.offset) +
                                 "; Vulkan binds storage buffers only at multiples of "
                                 "minStorageBufferOffsetAlignment (" +
                                 std::to_string(align) + " bytes)");
    const uint64_t range =
        std::min<uint64_t>(buffer.allocated() - arg.offset, c.properties.limits.maxStorageBufferRange);
    infos[k] = {buffer.handle(), arg.offset, range};
    writes[k] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[k].dstSet = set;
    writes[k].dstBinding = layout.bindings[k];
    writes[k].descriptorCount = 1;
    writes[k].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[k].pBufferInfo = &infos[k];
  }
  if (!writes.empty())
    vkUpdateDescriptorSets(context.device(), uint32_t(writes.size()), writes.data(), 0, nullptr);
  std::vector<std::byte> push(layout.push_constant_bytes);
  for (size_t k = 0; k < launch.scalars.size(); ++k)
    put_scalar(push.data() + layout.scalars[k].offset, layout.scalars[k], launch.scalars[k]);
  return push;
}

void record_dispatch(VkCommandBuffer cb, Program& program, VkPipeline pipeline, VkDescriptorSet set,
                     const std::vector<std::byte>& push, const std::array<uint32_t, 3>& global) {
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  if (set != VK_NULL_HANDLE)
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, program.pipeline_layout(), 0, 1, &set, 0,
                            nullptr);
  if (!push.empty())
    vkCmdPushConstants(cb, program.pipeline_layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, uint32_t(push.size()),
                       push.data());
  vkCmdDispatch(cb, global[0], global[1], global[2]);
}

// Nanoseconds between the two timestamps of `queries` (after the submit has finished).
uint64_t elapsed_ns(const Context& context, VkQueryPool queries) {
  const Capabilities& c = context.caps();
  uint64_t ticks[2] = {0, 0};
  check(vkGetQueryPoolResults(context.device(), queries, 0, 2, sizeof ticks, ticks, sizeof(uint64_t),
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
  const uint64_t mask = c.timestamp_bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << c.timestamp_bits) - 1;
  const double ns = double((ticks[1] - ticks[0]) & mask) * double(c.properties.limits.timestampPeriod);
  return std::max<uint64_t>(1, uint64_t(ns)); // below the clock's resolution is still "ran", not "unmeasured"
}

// A descriptor pool with one set per launch of a batch: a recorded command buffer reads its sets
// when it runs, so launches of one program in one batch cannot share the program's own set.
class BatchSets {
public:
  BatchSets(VkDevice device, std::span<const sdk::Launch> launches) : device_(device) {
    uint32_t sets = 0, buffers = 0;
    for (const auto& l : launches)
      if (!l.buffers.empty()) {
        ++sets;
        buffers += uint32_t(l.buffers.size());
      }
    if (sets == 0) return;
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, buffers};
    VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    info.maxSets = sets;
    info.poolSizeCount = 1;
    info.pPoolSizes = &size;
    check(vkCreateDescriptorPool(device, &info, nullptr, &pool_), "vkCreateDescriptorPool (launch_batch)");
  }
  ~BatchSets() {
    if (pool_ != VK_NULL_HANDLE) vkDestroyDescriptorPool(device_, pool_, nullptr);
  }
  BatchSets(const BatchSets&) = delete;
  BatchSets& operator=(const BatchSets&) = delete;
  VkDescriptorSet allocate(VkDescriptorSetLayout layout) {
    VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    alloc.descriptorPool = pool_;
    alloc.descriptorSetCount = 1;
    alloc.pSetLayouts = &layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    check(vkAllocateDescriptorSets(device_, &alloc, &set), "vkAllocateDescriptorSets (launch_batch)");
    return set;
  }

private:
  VkDevice device_;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
};

} // namespace

uint64_t Device::launch(const sdk::Launch& launch) {
  auto& program = static_cast<Program&>(launch.program);
  const VkDescriptorSet set = launch.buffers.empty() ? VK_NULL_HANDLE : program.descriptor_set();
  const std::vector<std::byte> push = bind_arguments(*context_, program, launch, set);
  const VkPipeline pipeline = program.pipeline(launch.local);
  const VkQueryPool timestamps = launch.timed ? context_->timestamps() : VK_NULL_HANDLE;
  context_->submit([&](VkCommandBuffer cb) {
    if (timestamps) {
      vkCmdResetQueryPool(cb, timestamps, 0, 2);
      vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, timestamps, 0);
    }
    record_dispatch(cb, program, pipeline, set, push, launch.global);
    if (timestamps) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timestamps, 1);
  });
  return timestamps ? elapsed_ns(*context_, timestamps) : 0;
}

uint64_t Device::launch_batch(std::span<const sdk::Launch> launches, bool timed) {
  // One command buffer, one submit and one fence wait for the whole list; a barrier between
  // dispatches orders each kernel's writes before the next one's reads, as separate submits did.
  BatchSets sets(context_->device(), launches);
  struct Recorded {
    Program* program;
    VkPipeline pipeline;
    VkDescriptorSet set;
    std::vector<std::byte> push;
  };
  std::vector<Recorded> recorded;
  recorded.reserve(launches.size());
  for (const sdk::Launch& l : launches) {
    auto& program = static_cast<Program&>(l.program);
    const VkDescriptorSet set = l.buffers.empty() ? VK_NULL_HANDLE : sets.allocate(program.set_layout());
    recorded.push_back(
        {&program, program.pipeline(l.local), set, bind_arguments(*context_, program, l, set)});
  }
  const VkQueryPool timestamps = timed ? context_->timestamps() : VK_NULL_HANDLE;
  context_->submit([&](VkCommandBuffer cb) {
    if (timestamps) {
      vkCmdResetQueryPool(cb, timestamps, 0, 2);
      vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, timestamps, 0);
    }
    for (size_t i = 0; i < recorded.size(); ++i) {
      if (i > 0) {
        VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
        barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                             0, 1, &barrier, 0, nullptr, 0, nullptr);
      }
      const Recorded& r = recorded[i];
      record_dispatch(cb, *r.program, r.pipeline, r.set, r.push, launches[i].global);
    }
    if (timestamps) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timestamps, 1);
  });
  return timestamps ? elapsed_ns(*context_, timestamps) : 0;
}

} // namespace tg::vulkan
