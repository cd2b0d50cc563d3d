#include <tg/sdk/opencl/buffer.hpp>
#include <tg/sdk/opencl/device.hpp>
#include <tg/sdk/opencl/error.hpp>
#include <tg/sdk/opencl/program.hpp>

#include <tg/sdk/scalar_bytes.hpp>

#include <CL/cl_ext.h>

#include <algorithm>
#include <limits>

namespace tg::sdk::opencl {
namespace {

uint32_t clamp32(uint64_t v) { return uint32_t(std::min<uint64_t>(v, std::numeric_limits<uint32_t>::max())); }

// The SIMD width the device reports through a vendor query, else OpenCL 3.0's preferred work-group
// size multiple, else 1 (unknown).
uint32_t subgroup_size(const DeviceEntry& e) {
  if (e.has_extension("cl_nv_device_attribute_query"))
    if (cl_uint warp = device_value_or<cl_uint>(e.device, CL_DEVICE_WARP_SIZE_NV, 0)) return warp;
  if (e.has_extension("cl_amd_device_attribute_query"))
    if (cl_uint wave = device_value_or<cl_uint>(e.device, CL_DEVICE_WAVEFRONT_WIDTH_AMD, 0)) return wave;
  if (e.has_extension("cl_intel_required_subgroup_size")) {
    size_t sizes[8] = {};
    size_t bytes = 0;
    if (clGetDeviceInfo(e.device, CL_DEVICE_SUB_GROUP_SIZES_INTEL, sizeof sizes, sizes, &bytes) ==
            CL_SUCCESS &&
        bytes >= sizeof(size_t))
      return clamp32(*std::max_element(sizes, sizes + bytes / sizeof(size_t)));
  }
  if (size_t multiple = device_value_or<size_t>(e.device, CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, 0))
    return clamp32(multiple);
  return 1;
}

} // namespace

tg_device_properties read_properties(const DeviceEntry& e, const Policy& policy) {
  tg_device_properties p{};
  const bool native_half = e.has_extension("cl_khr_fp16");
  copy_name(p.name, e.name + (native_half ? "" : policy.without_fp16_note));
  copy_name(p.vendor, e.vendor);
  copy_name(p.arch, e.target);
  p.memory_bytes = device_value<cl_ulong>(e.device, CL_DEVICE_GLOBAL_MEM_SIZE);
  p.max_buffer_bytes = device_value<cl_ulong>(e.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  p.local_memory_bytes = device_value<cl_ulong>(e.device, CL_DEVICE_LOCAL_MEM_SIZE);
  size_t item_sizes[3] = {1, 1, 1};
  check(clGetDeviceInfo(e.device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof item_sizes, item_sizes, nullptr),
        "clGetDeviceInfo(CL_DEVICE_MAX_WORK_ITEM_SIZES)");
  p.max_local_threads = clamp32(device_value<size_t>(e.device, CL_DEVICE_MAX_WORK_GROUP_SIZE));
  p.subgroup_size = subgroup_size(e);
  if (policy.work_groups_of_whole_waves && p.subgroup_size > 1 && p.max_local_threads >= p.subgroup_size)
    p.max_local_threads -= p.max_local_threads % p.subgroup_size;
  for (int axis = 0; axis < 3; ++axis) {
    p.max_local_size[axis] = std::min(clamp32(item_sizes[axis]), p.max_local_threads);
    p.max_global_size[axis] = uint32_t(std::numeric_limits<int32_t>::max()); // get_group_id is read as int
  }
  // Kernel arguments share CL_DEVICE_MAX_PARAMETER_SIZE: half for buffers (a pointer and a ulong
  // offset each), half for scalars (at most 8 bytes each).
  const size_t parameter_bytes = device_value<size_t>(e.device, CL_DEVICE_MAX_PARAMETER_SIZE);
  p.max_buffer_args = clamp32(parameter_bytes / 2 / 16);
  p.max_scalar_args = clamp32(parameter_bytes / 2 / 8);
  p.buffer_alignment =
      std::max<uint32_t>(1, device_value<cl_uint>(e.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8);
  p.compute_units = device_value<cl_uint>(e.device, CL_DEVICE_MAX_COMPUTE_UNITS);
  p.vector_bytes =
      4 * std::max<cl_uint>(1, device_value<cl_uint>(e.device, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT));

  for (tg_dtype d = TG_DTYPE_BOOL; d <= TG_DTYPE_FLOAT32; ++d) p.dtype_mask |= TG_DTYPE_BIT(d);
  // FLOAT16 without cl_khr_fp16 is stored as half and computed in float (vload_half/vstore_half).
  const bool embedded = device_string(e.device, CL_DEVICE_PROFILE) == "EMBEDDED_PROFILE";
  if (embedded && !e.has_extension("cles_khr_int64"))
    p.dtype_mask &= ~(TG_DTYPE_BIT(TG_DTYPE_INT64) | TG_DTYPE_BIT(TG_DTYPE_UINT64));
  if (e.has_extension("cl_khr_fp64")) p.dtype_mask |= TG_DTYPE_BIT(TG_DTYPE_FLOAT64);

  p.features = TG_FEATURE_LOCAL_MEMORY | TG_FEATURE_BARRIER | TG_FEATURE_TIMING | TG_FEATURE_ASYNC;
  if (native_half) p.features |= TG_FEATURE_FP16_MATH;
  if (device_value_or<cl_bool>(e.device, CL_DEVICE_HOST_UNIFIED_MEMORY, CL_FALSE))
    p.features |= TG_FEATURE_HOST_MEMORY;
  if (device_value_or<cl_uint>(e.device, CL_DEVICE_MAX_NUM_SUB_GROUPS, 0) > 0)
    p.features |= TG_FEATURE_SUBGROUPS;
  return p;
}

Device::Device(DeviceEntry entry, const Policy& policy)
    : entry_(std::move(entry)), properties_(read_properties(entry_, policy)) {
  cl_int status = CL_SUCCESS;
  const cl_context_properties context_properties[] = {
      CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(entry_.platform), 0};
  context_ = Context(clCreateContext(context_properties, 1, &entry_.device, nullptr, nullptr, &status));
  check(status, "clCreateContext for " + entry_.name);
  queue_ = Queue(clCreateCommandQueue(context_.get(), entry_.device, CL_QUEUE_PROFILING_ENABLE, &status));
  check(status, "clCreateCommandQueue for " + entry_.name);
}

std::vector<Attribute> Device::attributes() const {
  const bool native_half = entry_.has_extension("cl_khr_fp16");
  std::vector<Attribute> attrs = {
      {"opencl.platform", entry_.platform_info.name + " (" + entry_.platform_info.vendor + ")"},
      {"opencl.platform_version", entry_.platform_info.version},
      {"opencl.device_version", entry_.device_version},
      {"opencl.c_version", entry_.c_version},
      {"opencl.driver_version", entry_.driver_version},
      {"opencl.half", native_half
                          ? "native (cl_khr_fp16)"
                          : "storage only: vload_half/vstore_half, computed in float (no cl_khr_fp16)"},
      {"opencl.extensions", entry_.extensions}};
  // A CPU device (PoCL) runs a work group's items as a loop on one core: the core's CPU-style
  // choices (one item per group, contiguous work per item) beat GPU-style ones there.
  if (entry_.cpu) attrs.push_back({"work_group_execution", "serial"});
  return attrs;
}

std::unique_ptr<tg::sdk::Buffer> Device::alloc(uint64_t size, uint64_t, uint32_t) {
  // Alignment: the host never sees device addresses, and every cl_mem starts at
  // CL_DEVICE_MEM_BASE_ADDR_ALIGN, which covers every element type the kernels read.
  return std::make_unique<Buffer>(context_.get(), queue_.get(), size);
}

std::unique_ptr<tg::sdk::Program> Device::load_program(const Blob& blob) {
  return std::make_unique<Program>(context_.get(), entry_.device, blob.payload);
}

uint64_t Device::launch(const Launch& launch) {
  cl_kernel kernel = static_cast<Program&>(launch.program).kernel();
  cl_uint arg = 0;
  for (const BufferArg& b : launch.buffers) {
    cl_mem mem = static_cast<Buffer*>(b.buffer)->mem();
    cl_ulong offset = b.offset;
    check(clSetKernelArg(kernel, arg++, sizeof mem, &mem), "clSetKernelArg(buffer)");
    check(clSetKernelArg(kernel, arg++, sizeof offset, &offset), "clSetKernelArg(buffer offset)");
  }
  for (const tg_scalar_arg& s : launch.scalars) {
    ScalarBytes value = scalar_bytes(s);
    check(clSetKernelArg(kernel, arg++, value.size, value.bytes), "clSetKernelArg(scalar)");
  }
  size_t global[3];
  size_t local[3];
  for (int axis = 0; axis < 3; ++axis) {
    local[axis] = launch.local[axis];
    global[axis] = size_t(launch.global[axis]) * launch.local[axis];
  }
  cl_event raw_event = nullptr;
  cl_int status = clEnqueueNDRangeKernel(queue_.get(), kernel, 3, nullptr, global, local, 0, nullptr,
                                         launch.timed ? &raw_event : nullptr);
  Event event(raw_event);
  if (status == CL_INVALID_WORK_GROUP_SIZE || status == CL_INVALID_WORK_ITEM_SIZE)
    throw PluginError(TG_ERROR_INVALID_ARGUMENT,
                      "work group " + std::to_string(local[0]) + "x" + std::to_string(local[1]) + "x" +
                          std::to_string(local[2]) + " is too large for kernel " +
                          launch.signature.kernel_name + " on this device (" + status_name(status) + ")");
  check(status, "clEnqueueNDRangeKernel(" + launch.signature.kernel_name + ")");
  if (!launch.timed) return 0;
  check(clWaitForEvents(1, &raw_event), "clWaitForEvents(" + launch.signature.kernel_name + ")");
  cl_ulong start = 0;
  cl_ulong end = 0;
  check(clGetEventProfilingInfo(raw_event, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr),
        "clGetEventProfilingInfo(START)");
  check(clGetEventProfilingInfo(raw_event, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr),
        "clGetEventProfilingInfo(END)");
  return end > start ? end - start : 0;
}

void Device::synchronize() { check(clFinish(queue_.get()), "clFinish"); }

} // namespace tg::sdk::opencl
