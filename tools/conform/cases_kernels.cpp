// kernels/*: each kernel is compiled by the plugin and launched on seeded random inputs with
// guard bands around every buffer; the SDK interpreter computes the expected contents of every
// buffer from the same inputs. A kernel the device cannot run (an undeclared dtype or feature, a
// limit) is skipped with the reason.
#include "tools/conform/cases.hpp"
#include "tools/conform/corpus.hpp"
#include "tools/conform/values.hpp"

#include <tg/sdk/bytes.hpp>
#include <tg/sdk/interpreter.hpp>
#include <tg/sdk/kernel_ir.hpp>
#include <tg/sdk/wmma.hpp>

#include <cstring>

namespace tg::conform {
namespace {

constexpr uint64_t kGuard = 64; // bytes of known pattern before and after every buffer

std::byte guard_byte(size_t i) { return std::byte(0xA5 ^ (i * 29)); }

// Why this device cannot run the kernel, or empty.
std::string unsupported(const KernelCase& k, const tg::sdk::KernelIR& ir, const tg_device_properties& p) {
  for (const auto& ins : ir.instructions) {
    if (ins.dtype != TG_DTYPE_VOID && !(p.dtype_mask & TG_DTYPE_BIT(ins.dtype)))
      return std::string("the device does not declare dtype ") + tg::sdk::dtype_name(ins.dtype);
    if (ins.op == TG_OP_DEFINE_LOCAL && !(p.features & TG_FEATURE_LOCAL_MEMORY))
      return "the device does not declare TG_FEATURE_LOCAL_MEMORY";
    if (ins.op == TG_OP_BARRIER && !(p.features & TG_FEATURE_BARRIER))
      return "the device does not declare TG_FEATURE_BARRIER";
    if (ins.vcount > 1 && p.vector_bytes == 0) return "the device takes scalar code only (vector_bytes is 0)";
  }
  if (ir.buffer_count > p.max_buffer_args)
    return std::to_string(ir.buffer_count) + " buffers exceed max_buffer_args " +
           std::to_string(p.max_buffer_args);
  if (ir.scalar_count > p.max_scalar_args)
    return std::to_string(ir.scalar_count) + " scalars exceed max_scalar_args " +
           std::to_string(p.max_scalar_args);
  uint64_t threads = 1;
  for (size_t a = 0; a < 3; ++a) {
    if (k.local[a] > p.max_local_size[a] || k.global[a] > p.max_global_size[a])
      return "the grid exceeds the device's limits on axis " + std::to_string(a);
    threads *= k.local[a];
  }
  if (threads > p.max_local_threads) return "the work group exceeds max_local_threads";
  return {};
}

// The device's attribute `key`, or empty when it has none (or no attribute functions).
std::string attribute(const Context& ctx, const std::string& key) {
  if (!TG_CONFORM_HAS(device_attribute_count) || !TG_CONFORM_HAS(device_attribute)) return {};
  Device device(ctx.device_index);
  int32_t count = 0;
  check(api().device_attribute_count(device.get(), &count), "device_attribute_count");
  for (int32_t i = 0; i < count; ++i) {
    const char *k = nullptr, *value = nullptr;
    check(api().device_attribute(device.get(), i, &k, &value), "device_attribute");
    if (k && value && key == k) return value;
  }
  return {};
}

// IR 1.2 WGMMA runs only where the device names its shape with "@wg" in the tensor_cores
// attribute (docs/abi.md 5.7); empty when it does, or the program has none.
std::string unnamed_wgmma_shape(const Context& ctx, const tg::sdk::KernelIR& ir) {
  std::string want;
  for (const auto& ins : ir.instructions)
    if (ins.op == TG_OP_WGMMA)
      want = "m64n" + std::to_string(tg::sdk::wgmma_shape(tg::sdk::wgmma_shape_code(ins.arg0))->n) +
             "k16:f16,bf16->f32@wg";
  if (want.empty()) return {};
  if ((ctx.properties.features & TG_FEATURE_TENSOR_CORES) &&
      attribute(ctx, "tensor_cores").find(want) != std::string::npos)
    return {};
  return "the device does not name " + want + " in its tensor_cores attribute";
}

// IR 1.4 loads gated per lane run only where the device's lane_gates attribute is "load".
std::string undeclared_lane_gates(const Context& ctx, const tg::sdk::KernelIR& ir) {
  if (!tg::sdk::uses_lane_gates(ir) || attribute(ctx, "lane_gates") == "load") return {};
  return "the device does not declare lane_gates=load (IR 1.4 loads gated per lane)";
}

void run_kernel(const Context& ctx, const KernelCase& k) {
  tg::sdk::KernelIR ir = tg::sdk::parse_kernel_ir(k.ir);
  if (std::string why = unsupported(k, ir, ctx.properties); !why.empty()) throw CaseSkipped(why);
  if (std::string why = unnamed_wgmma_shape(ctx, ir); !why.empty()) throw CaseSkipped(why);
  if (std::string why = undeclared_lane_gates(ctx, ir); !why.empty()) throw CaseSkipped(why);
  if (!TG_CONFORM_HAS(compile) || !TG_CONFORM_HAS(program_load) || !TG_CONFORM_HAS(launch))
    throw CaseSkipped("the plugin lacks compile, program_load or launch");
  expect(k.buffers.size() == ir.buffer_count, "kernel description and IR disagree on the buffer count");

  // Host images: guard + seeded random payload + guard.
  const uint64_t seed = tg::sdk::fnv1a64(k.ir);
  std::vector<std::vector<std::byte>> images;
  for (size_t b = 0; b < k.buffers.size(); ++b) {
    auto payload = random_values(k.buffers[b].dtype, k.buffers[b].elements, seed + b);
    std::vector<std::byte> image(payload.size() + 2 * kGuard);
    for (size_t i = 0; i < image.size(); ++i) image[i] = guard_byte(i);
    if (!payload.empty())
      std::memcpy(image.data() + kGuard, payload.data(), payload.size()); // data() may be null
    images.push_back(std::move(image));
  }

  // Expected contents from the interpreter, on copies of the payloads.
  std::vector<std::vector<std::byte>> expected;
  std::vector<std::span<std::byte>> spans;
  for (const auto& image : images) expected.emplace_back(image.begin() + kGuard, image.end() - kGuard);
  for (auto& e : expected) spans.emplace_back(e);
  std::vector<tg_matrix_unit> units; // MMA (IR 1.3) runs on the device's declared units
  if (tg::sdk::uses_mma(ir)) units = read_matrix_units(Device(ctx.device_index));
  try {
    tg::sdk::interpret(ir, k.global, k.local, spans, k.scalars, units);
  } catch (const std::exception& e) {
    throw CaseFailed(std::string("the reference interpreter refused the kernel itself: ") + e.what());
  }

  Device device(ctx.device_index);
  Program program(device, compile_or_fail(k.ir, target_of(ctx)));
  std::vector<Buffer> buffers;
  std::vector<tg_buffer_arg> args;
  for (const auto& image : images) {
    buffers.emplace_back(device, image.size());
    buffers.back().upload(image);
  }
  for (const auto& b : buffers) args.push_back({b.get(), kGuard});
  Status st = program.try_launch(k.global, k.local, args, k.scalars);
  expect(st.ok(), "launch failed: " + st.describe());
  synchronize(device);

  std::string problems;
  for (size_t b = 0; b < buffers.size(); ++b) {
    auto got = buffers[b].download(images[b].size());
    for (size_t i = 0; i < got.size(); ++i) {
      if (i >= kGuard && i < got.size() - kGuard) continue;
      if (got[i] != guard_byte(i)) {
        const bool before = i < kGuard;
        problems += "buffer " + std::to_string(b) + ": write outside the buffer, " +
                    std::to_string(before ? kGuard - i : i - (got.size() - kGuard) + 1) + " byte(s) " +
                    (before ? "before its start" : "past its end") + "; ";
        break;
      }
    }
    std::string diff =
        compare_values(k.buffers[b].dtype, std::span(got).subspan(kGuard, expected[b].size()), expected[b]);
    if (!diff.empty()) problems += "buffer " + std::to_string(b) + ": " + diff + "; ";
  }
  expect(problems.empty(), problems.substr(0, problems.size() > 2 ? problems.size() - 2 : 0));
}

} // namespace

void add_kernel_cases(std::vector<Case>& cases, const std::string& group, std::vector<KernelCase> kernels) {
  for (auto& k : kernels) {
    auto shared = std::make_shared<KernelCase>(std::move(k));
    cases.push_back({"kernels/" + group + "/" + shared->name, true,
                     [shared](const Context& ctx) { run_kernel(ctx, *shared); }});
  }
}

// The golden corpus lowered for this device (the reference device when none was probed).
void add_golden_cases(std::vector<Case>& cases, const tg_device_properties& probed) {
  const tg_device_properties props = probed.max_global_size[0] != 0 ? probed : reference_properties();
  std::vector<KernelCase> kernels;
  try {
    for (auto& c : golden_corpus(props)) {
      std::vector<KernelBuffer> buffers;
      for (const auto& b : c.buffers) buffers.push_back({b.dtype, b.elements});
      kernels.push_back(
          {c.name, std::move(c.ir), c.global, c.local, std::move(buffers), std::move(c.scalars)});
    }
  } catch (const std::exception& e) {
    std::string why =
        std::string("the core's codegen failed to make the corpus for this device: ") + e.what();
    cases.push_back({"kernels/golden/generate", false, [why](const Context&) { throw CaseFailed(why); }});
    return;
  }
  add_kernel_cases(cases, "golden", std::move(kernels));
}

std::vector<Case> all_cases(const tg_device_properties& properties,
                            const std::vector<std::string>& unit_names) {
  std::vector<Case> cases;
  add_loader_cases(cases);
  add_device_cases(cases);
  add_memory_cases(cases);
  add_compile_cases(cases);
  add_program_cases(cases);
  add_launch_cases(cases);
  add_multi_device_cases(cases);
  add_golden_cases(cases, properties);
  add_kernel_cases(cases, "builtin", builtin_kernels());
  add_matrix_unit_cases(cases, unit_names);
  return cases;
}

} // namespace tg::conform
