// Launch validation: every argument checked against the program's signature and the device's
// limits before the plugin's launch runs, so a bad launch changes nothing and every plugin
// rejects it with the same message.
#include "handles.hpp"

#include <array>

namespace tg::sdk::detail {
namespace {

[[noreturn]] void invalid(const std::string& why) { throw PluginError(TG_ERROR_INVALID_ARGUMENT, why); }

std::string dtype_text(tg_dtype d) {
  const char* name = dtype_name(d);
  return name != nullptr ? name : "unknown dtype " + std::to_string(d);
}

void check_counts(const tg_launch_args& a, const Signature& sig, const tg_device_properties& p) {
  auto kernel = [&] { return " (kernel '" + sig.kernel_name + "')"; }; // built only on failure
  if (a.buffer_count != sig.buffers.size())
    invalid("buffer_count is " + std::to_string(a.buffer_count) + ", the program takes " +
            std::to_string(sig.buffers.size()) + kernel());
  if (a.scalar_count != sig.scalars.size())
    invalid("scalar_count is " + std::to_string(a.scalar_count) + ", the program takes " +
            std::to_string(sig.scalars.size()) + kernel());
  if (a.buffer_count > p.max_buffer_args)
    invalid("buffer_count " + std::to_string(a.buffer_count) + " exceeds the device's max_buffer_args " +
            std::to_string(p.max_buffer_args));
  if (a.scalar_count > p.max_scalar_args)
    invalid("scalar_count " + std::to_string(a.scalar_count) + " exceeds the device's max_scalar_args " +
            std::to_string(p.max_scalar_args));
  if (a.buffer_count > 0) require(a.buffers, "args->buffers");
  if (a.scalar_count > 0) require(a.scalars, "args->scalars");
}

// Writes the launch's buffer arguments to out[0, buffer_count) (checked by check_counts first).
void check_buffers(const tg_launch_args& a, const Signature& sig, const tg_device* device, BufferArg* out) {
  for (uint32_t i = 0; i < a.buffer_count; ++i) {
    const tg_buffer_arg& arg = a.buffers[i];
    auto which = [i] { return "buffers[" + std::to_string(i) + "]"; }; // built only on failure
    if (arg.buffer == nullptr) invalid(which() + ".buffer is NULL");
    if (arg.buffer->device != device) invalid(which() + " belongs to another device");
    if (arg.offset > arg.buffer->size)
      invalid(which() + ".offset " + std::to_string(arg.offset) + " is beyond the buffer's " +
              std::to_string(arg.buffer->size) + " bytes");
    size_t element = dtype_size(sig.buffers[i]);
    if (element > 1 && arg.offset % element != 0)
      invalid(which() + ".offset " + std::to_string(arg.offset) + " is not a multiple of the " +
              std::to_string(element) + "-byte " + dtype_text(sig.buffers[i]) + " element");
    // The program's DEFINE_GLOBAL may assume more (aligned vector loads, docs/abi.md §5.3); buffer
    // bases keep the device's buffer_alignment, so a base below the claim is refused as well.
    if (!sig.alignments.empty() && sig.alignments[i] > element) {
      const uint32_t want = sig.alignments[i];
      if (arg.offset % want != 0 || device->properties.buffer_alignment % want != 0)
        invalid(which() + ".offset " + std::to_string(arg.offset) + " breaks the " + std::to_string(want) +
                "-byte alignment the program assumes of its buffer " + std::to_string(i) + " (kernel '" +
                sig.kernel_name + "', device buffer_alignment " +
                std::to_string(device->properties.buffer_alignment) + ")");
    }
    out[i] = {arg.buffer->impl.get(), arg.offset};
  }
}

void check_scalars(const tg_launch_args& a, const Signature& sig) {
  for (uint32_t i = 0; i < a.scalar_count; ++i)
    if (a.scalars[i].dtype != sig.scalars[i])
      invalid("scalars[" + std::to_string(i) + "].dtype is " + dtype_text(a.scalars[i].dtype) +
              ", the program's DEFINE_VAR " + std::to_string(i) + " is " + dtype_text(sig.scalars[i]));
}

void check_grid(const tg_launch_args& a, const tg_device_properties& p) {
  uint64_t threads = 1;
  for (int k = 0; k < 3; ++k) {
    auto axis = [k] { return "[" + std::to_string(k) + "]"; };
    if (a.local_size[k] == 0 || a.local_size[k] > p.max_local_size[k])
      invalid("local_size" + axis() + " is " + std::to_string(a.local_size[k]) + ", must be 1.." +
              std::to_string(p.max_local_size[k]));
    threads *= a.local_size[k];
    if (a.global_size[k] > p.max_global_size[k])
      invalid("global_size" + axis() + " is " + std::to_string(a.global_size[k]) + ", the limit is " +
              std::to_string(p.max_global_size[k]));
  }
  if (threads > p.max_local_threads)
    invalid("local size " + std::to_string(a.local_size[0]) + "x" + std::to_string(a.local_size[1]) + "x" +
            std::to_string(a.local_size[2]) + " has " + std::to_string(threads) + " threads, the limit is " +
            std::to_string(p.max_local_threads));
}

void check_timing(const tg_device_properties& p) {
  if ((p.features & TG_FEATURE_TIMING) == 0)
    throw PluginError(TG_ERROR_UNIMPLEMENTED,
                      "elapsed_ns was requested, but this device does not declare TG_FEATURE_TIMING");
}

bool empty_grid(const tg_launch_args& a) {
  return a.global_size[0] == 0 || a.global_size[1] == 0 || a.global_size[2] == 0;
}

// Checks one launch: first the program and the argument counts, then `buffers(count)` (where the
// buffer arguments go, count already checked) is filled, then scalars and grid.
template <class Storage> void check_launch(const tg_launch_args& a, Storage&& buffers) {
  tg_program* program = require(a.program, "args->program");
  const tg_device_properties& p = program->device->properties;
  if (a.elapsed_ns != nullptr) check_timing(p);
  check_counts(a, program->signature, p);
  check_buffers(a, program->signature, program->device, buffers(a.buffer_count));
  check_scalars(a, program->signature);
  check_grid(a, p);
}

Launch make_launch(const tg_launch_args& a, std::span<const BufferArg> buffers, bool timed) {
  return Launch{*a.program->impl,
                a.program->signature,
                {a.global_size[0], a.global_size[1], a.global_size[2]},
                {a.local_size[0], a.local_size[1], a.local_size[2]},
                buffers,
                {a.scalars, a.scalar_count},
                timed};
}

} // namespace

void validate_and_launch(const tg_launch_args& a) {
  // The buffer arguments on the stack for the common launch (no heap allocation per launch).
  std::array<BufferArg, 16> near{};
  std::vector<BufferArg> far;
  std::span<const BufferArg> buffers;
  check_launch(a, [&](uint32_t count) {
    BufferArg* out = near.data();
    if (count > near.size()) {
      far.resize(count);
      out = far.data();
    }
    buffers = {out, count};
    return out;
  });
  uint64_t elapsed = 0;
  if (!empty_grid(a))
    elapsed = a.program->device->impl->launch(make_launch(a, buffers, a.elapsed_ns != nullptr));
  if (a.elapsed_ns != nullptr) *a.elapsed_ns = elapsed;
}

void validate_and_launch_batch(const tg_launch_batch_args& b) {
  tg_device* device = require(b.device, "args->device");
  if (b.launch_count > 0) require(b.launches, "args->launches");
  const bool timed = b.elapsed_ns != nullptr;
  if (timed) check_timing(device->properties);
  // Few allocations however long the list: the arguments of all launches in one array.
  std::vector<tg_launch_args> args(b.launch_count);
  std::vector<BufferArg> buffers;
  std::vector<size_t> first(b.launch_count + 1, 0); // launch i's buffers: [first[i], first[i + 1])
  for (uint32_t i = 0; i < b.launch_count; ++i) {
    try {
      args[i] = read_args(b.launches[i], "args->launches[i]");
      if (args[i].elapsed_ns != nullptr) invalid("elapsed_ns must be NULL (the batch's elapsed_ns times it)");
      check_launch(args[i], [&](uint32_t count) {
        buffers.resize(first[i] + count);
        return buffers.data() + first[i];
      });
      if (args[i].program->device != device) invalid("its program belongs to another device");
    } catch (const PluginError& e) {
      throw PluginError(e.code(), "launches[" + std::to_string(i) + "]: " + e.what(), e.log());
    }
    first[i + 1] = buffers.size();
  }
  std::vector<Launch> launches;
  launches.reserve(b.launch_count);
  for (uint32_t i = 0; i < b.launch_count; ++i)
    if (!empty_grid(args[i]))
      launches.push_back(
          make_launch(args[i], std::span(buffers).subspan(first[i], first[i + 1] - first[i]), false));
  uint64_t elapsed = launches.empty() ? 0 : device->impl->launch_batch(launches, timed);
  if (timed) *b.elapsed_ns = elapsed;
}

} // namespace tg::sdk::detail

namespace tg::sdk {

uint64_t Device::launch_batch(std::span<const Launch> launches, bool timed) {
  uint64_t total = 0;
  for (const Launch& one : launches) {
    Launch l = one;
    l.timed = timed;
    total += launch(l);
  }
  return total;
}

} // namespace tg::sdk
