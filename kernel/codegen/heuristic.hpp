// The hand-coded optimization choices: one function from a kernel's shape and the device's
// properties to an optimization list (opt.hpp). No timing, no search: BEAM will replace it where
// asked to. NOOPT=1 skips it (an empty list).
#pragma once

#include "kernel/codegen/opt.hpp"
#include "kernel/ir/ops.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace tg {

// A matrix unit as the TC opt sees it.
struct MatrixUnitChoice {
  tg_matrix_unit unit{};
  int64_t index = 0; // MMA's arg0: its index in the device's list
  bool wmma = false; // the host's description of IR 1.1 WMMA m16n8k16: emitted as WMMA
  // The host's description of IR 1.2 WGMMA (sdk::wgmma_unit): emitted as WGMMA with these layout
  // flags; -1 for any other unit.
  int64_t wgmma = -1;
};

// What the target device offers; filled from tg_device_properties (lower.hpp: lower_options).
struct DeviceLimits {
  uint32_t compute_units = 1;
  uint32_t max_groups = 0x7fffffffu; // work groups along the one grid axis codegen uses
  uint32_t vector_bytes = 0;         // vector register width; 0 = emit scalar lanes only
  std::array<uint32_t, 3> max_local_size{1, 1, 1};
  uint32_t max_local_threads = 1;
  uint64_t local_memory_bytes = 0; // 0: no work-group local memory (no GROUP)
  // The most local memory a kernel may use when it asks for more (CUDA's opt-in maximum through
  // dynamic shared memory: the device's `max_local_memory_bytes` attribute); 0: local_memory_bytes.
  // The heuristics plan with local_memory_bytes; a STAGE that names more is valid up to this.
  uint64_t max_local_memory_bytes = 0;
  uint64_t local_memory_limit() const { return std::max(local_memory_bytes, max_local_memory_bytes); }
  uint32_t subgroup_size = 1;
  // Loop iterations a work item may run in all (0: no limit). lavapipe stops loops past 65535
  // without an error, so the heuristic splits long reduces to stay below it (the Vulkan plugin's
  // `max_loop_iterations` attribute; kernel/runtime reads it).
  uint64_t max_loop_iterations = 0;
  // The device runs a work group's threads one after another on one core (a CPU behind OpenCL:
  // the `work_group_execution=serial` attribute): it gets the CPU-style choices although it has
  // local memory. Opts that use local memory stay valid (BEAM may still pick them).
  bool serial_work_groups = false;
  // The matrix units the TC opt may use, in the order its amount names them: the units the device
  // declares (ABI 1.4, emitted as MMA), or for a 1.2/1.3 plugin with TG_FEATURE_TENSOR_CORES whose
  // `tensor_cores` attribute names m16n8k16, the host's description of IR 1.1 WMMA
  // (sdk::wmma_m16n8k16_unit, emitted as WMMA), and where it names "m64n128k16...@wg", those of
  // IR 1.2 WGMMA (sdk::wgmma_unit, emitted as WGMMA).
  std::vector<MatrixUnitChoice> matrix_units;
  bool tensor_cores() const { return !matrix_units.empty(); }
  // A unit that reads A and B from local memory, with every copy into its tiles a 16-byte row
  // moved without registers (async_local_copies): the tile loop copies this many tiles ahead, in
  // prefetch + 2 sets where they fit the opt-in maximum (else 3 sets, one tile ahead): a copy then
  // has `prefetch` steps to land, and each step's barrier waits only for the oldest copies
  // (BARRIER's in-flight count, docs/abi.md). 1 keeps three sets.
  int stage_prefetch = 2;
  // The heuristic may stage a matmul's operands in local memory (STAGE); TG_STAGE=0 turns it off,
  // and lower_kernel does when the kernel refuses it.
  bool staging = true;
  // The device moves a 16-byte global -> local copy without registers (its attribute
  // async_local_copies; CUDA sm_80+: cp.async): a double-buffered plain STAGE's 16-byte copies
  // then lead the step instead of trailing it (lower_stage.cpp, stage_copies).
  bool async_local_copies = false;
  // The device reads a vector of consecutive elements under a gate per lane (its attribute
  // lane_gates = "load", IR 1.4; the CPU's masked loads): lanes whose gates differ (a padded
  // convolution's edge lanes) still load as one vector.
  bool lane_gates = false;
  // Work groups of many threads sharing local memory: the GPU-style choices. Otherwise one
  // thread per work group and work groups as CPU tasks.
  bool parallel_groups() const {
    return local_memory_bytes > 0 && max_local_threads > 1 && !serial_work_groups;
  }
};

// One axis of a kernel as the heuristic and the validity checks see it.
struct AxisInfo {
  int64_t size = 1;
  bool reduce = false;
  int64_t reuse = 0;         // inputs whose index ignores this axis (their loads serve every lane)
  bool contiguous = false;   // some input is contiguous along it (stride 1)
  bool every_second = false; // some input reads every second element along it (stride 2)
  bool continues_inner =
      false;            // a reduce axis whose stride is the next reduce axis's size (that one contiguous)
  bool selects = false; // a selection sum's (KernelInfo::selection) equality varies along it
  bool masked = false;  // some read is valid on at most half of it (a cat's or stack's pieces)
  bool gated = false;   // some read's validity depends on it (set only where some axis is masked)
};

// A reduce the TC opt can run on a matrix unit: the sum over k of a[m, k] * b[k, n] (a and b
// possibly cast to the sum's dtype), m and n output axes, k the reduce axis.
struct MatmulAxes {
  int m = -1, n = -1, k = -1; // axis numbers as Opt names them
  tg_dtype a = 0, b = 0;      // the operands' dtypes (without a CAST around them)
  bool float_sum = true;      // the sum is of a float dtype (else an integer one)
  // The axis along which a (b) is contiguous in memory (stride 1), or -1: a local-memory unit
  // whose atom runs along it takes 16-byte copies.
  int a_inner = -1, b_inner = -1;
  int m2 = -1; // the output axis before m that only a varies along too (a convolution's y), or -1
};

struct KernelInfo {
  std::vector<AxisInfo> axes; // output dims, then the first reduce's reduced dims of size > 1
  size_t output_dims = 0;
  int reduce_count = 0;        // REDUCE_AXIS nodes in the kernel
  bool nested_reduces = false; // a reduce inside another's input (a fused softmax: plain loops)
  Ops reduce_op = Ops::ADD;
  int itemsize = 4;                  // of the output
  int store_inner = -1;              // the output axis the store is contiguous along, or -1
  int transcendental = 0;            // EXP2, LOG2 and SIN nodes (library calls on some devices)
  std::optional<MatmulAxes> matmul;  // set when the kernel is such a reduce
  std::optional<MatmulAxes> product; // the same axes for a sum of products of any dtype (STAGE)
  // A reduce axis of a one-hot sum (sum over j of `e == j ? x[j] : 0`, Embedding's and gather's
  // form), which lowering folds into one load of x[e]; -1 for none. The heuristic leaves it whole.
  int one_hot = -1;
  // A float sum of `c ? x : 0` whose c is an equality no fold removes (an embedding's gradient,
  // one_hot(i)^T @ g): lowering gates x's reads by c and each step's add runs under IF(c)
  // (linearize.cpp), so a step costs c's reads and compare; AxisInfo::selects marks where c moves.
  bool selection = false;
  int64_t output_count() const;
  int64_t reduce_count_elems() const; // product of the reduced axes
};

std::vector<Opt> heuristic_opts(const KernelInfo& kernel, const DeviceLimits& device);

// Whether matrix unit `u` can run the matmul: its A and B dtypes are the operands', its C dtype of
// the sum's kind (float or integer).
bool unit_fits(const tg_matrix_unit& u, const MatmulAxes& mm);
// The units of `device` that fit the matmul, as indices into device.matrix_units.
std::vector<int> fitting_units(const KernelInfo& kernel, const DeviceLimits& device);

// The heuristic's pieces shared between its files (heuristic.cpp: the GPU-style lists and the
// dispatch; heuristic_cpu.cpp: the CPU-style lists); not for use outside them.
namespace heuristic_detail {

// The largest divisor of n that is at most cap.
int64_t largest_divisor(int64_t n, int64_t cap);
// The upcast a selection sum's thread takes (heuristic.cpp), or nothing.
std::optional<Opt> selection_upcast(const KernelInfo& k, int64_t most, int64_t least_items);
// An elementwise kernel's stacked axes upcast whole (heuristic.cpp), or nothing.
std::vector<Opt> masked_upcasts(const KernelInfo& k);
// CPU-style devices' list (heuristic_cpu.cpp).
std::vector<Opt> cpu_opts(const KernelInfo& k, const DeviceLimits& d);

} // namespace heuristic_detail

} // namespace tg
