#include "kernel/tensor/external.hpp"

#include "kernel/engine/realize.hpp"
#include "kernel/engine/realized_cache.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/schedule/buffer.hpp"

namespace tg {

std::optional<MemoryView> memory_view(const Tensor& t) {
  if (t.numel() == 0) return std::nullopt;
  OpenDevice dev = open_device(t.device());
  if (!dev.device->plugin().has(&tg_plugin_api::buffer_address)) return std::nullopt; // before any work
  Tensor stored = t;
  stored.realize();
  UOpRef buffer = stored_buffer(stored.uop());
  if (!buffer || buffer_arg(buffer).size() != stored.numel()) { // a strided or partial view: copy it out
    stored = stored.contiguous();
    stored.realize();
    buffer = stored_buffer(stored.uop());
  }
  storage_of(buffer); // throws if the buffer holds nothing
  auto storage = std::static_pointer_cast<DeviceStorage>(buffer_arg(buffer).storage());
  const Buffer& memory = storage->buffer();
  memory.device()->synchronize();
  std::optional<uint64_t> address = memory.address();
  if (!address) return std::nullopt;
  MemoryView view;
  view.address = *address;
  view.host = (memory.device()->properties().features & TG_FEATURE_HOST_MEMORY) != 0;
  view.device = t.device();
  view.plugin = memory.device()->plugin().name();
  view.device_index = memory.device()->index();
  view.dtype = t.dtype();
  view.shape = t.shape();
  view.owner = std::move(storage);
  return view;
}

std::optional<Tensor> tensor_from_memory(uint64_t address, Dims shape, DType dtype, const std::string& device,
                                         std::function<void()> release) {
  Tensor::check_element_dtype("tensor_from_memory", dtype);
  for (auto d : shape)
    if (d < 0) throw TensorError("tensor_from_memory: negative dimension in shape " + dims_str(shape));
  const std::string name = device.empty() ? default_device() : parse_device_name(device).canonical();
  int64_t count = 1, bytes = 0;
  for (auto d : shape)
    if (__builtin_mul_overflow(count, d, &count))
      throw TensorError("tensor_from_memory: shape " + dims_str(shape) + " has too many elements");
  if (__builtin_mul_overflow(count, int64_t(dtype.itemsize()), &bytes))
    throw TensorError("tensor_from_memory: shape " + dims_str(shape) + " needs too many bytes");
  if (address == 0 && bytes != 0) throw TensorError("tensor_from_memory: address is 0 (NULL)");
  OpenDevice dev = open_device(name);
  if (!dev.device->can_import()) return std::nullopt;
  const uint64_t alignment = dev.device->properties().buffer_alignment;
  if (alignment > 1 && address % alignment != 0) return std::nullopt;
  Buffer memory;
  try {
    memory = dev.device->import(address, uint64_t(bytes), std::move(release));
  } catch (const UnimplementedError&) { // the plugin declined this import
    return std::nullopt;
  }
  // No allocator: the storage frees the imported buffer itself, never into a cache for reuse.
  auto storage = std::make_shared<DeviceStorage>(nullptr, std::move(memory));
  UOpRef buffer = make_buffer(name, dtype, count);
  buffer_arg(buffer).set_storage(std::move(storage));
  UOpRef view =
      shape.size() == 1 ? buffer : UOp::make(Ops::RESHAPE, dtype, {buffer}, std::vector<int64_t>(shape));
  return Tensor(view, std::move(shape), name);
}

} // namespace tg
