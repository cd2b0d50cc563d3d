// Realize: schedule, lower, compile (cached), allocate and launch. Prints what it does at
// DEBUG=1 (kernel count and time), 2 (each kernel: name, shape, time, GFLOPS, GB/s), 3 (the
// plugin's rendered source) and 4 (the graph at every stage).
#pragma once

#include "kernel/engine/prepared.hpp"
#include "kernel/runtime/allocator.hpp"

#include <ostream>
#include <span>

namespace tg {

// The lowering options for `device`: its properties (lower_options) and the attributes the
// heuristic honours (max_loop_iterations, work_group_execution); a malformed one throws Error.
LowerOptions kernel_options(const Device& device, bool optimize);

// kernel_options(device).parallel_groups() for the named device (opened if need be), computed once
// per open device: graph-building code asks it per operation (conv2d's weight panels, matmul
// packing, reduce splits), and each ask would otherwise query the plugin's attributes and units.
bool parallel_work_groups(const std::string& device);

// Whether the named device declares a matrix unit whose A and B operands are `dtype` (cached the
// same way): graph-building code chooses operand layouts the units read with 16-byte copies.
bool has_matrix_units(const std::string& device, DType dtype);

// Lowers and compiles one schedule item for the device of its output (cached in the engine's
// kernel cache by the item's structure, so the same computation on other buffers reuses it).
// The program keeps the plugin's rendered source when `want_source`, at DEBUG>=3 or under VIZ.
std::shared_ptr<PreparedKernel> prepare_kernel(const ScheduleItem& item, bool want_source = false);

// The DEBUG=2 line of one kernel launch: device, its index in the run, name, argument count, time,
// GFLOPS and GB/s, then `note` ("  (disk cache)", "  (jit)").
std::string kernel_line(const std::string& device, int index, const PreparedKernel& kernel, size_t args,
                        double ms, const char* note = "");

// Runs a schedule in order. Inputs must hold data; outputs get memory from the device's
// allocator. Returns the total kernel time in ms (measured only at DEBUG>=1, under VIZ or while a
// LaunchCounter counts; else 0). `kernels`, when given, gets the kernel each item ran (null for a
// copy or an empty output).
double run_schedule(const Schedule& schedule,
                    std::vector<std::shared_ptr<PreparedKernel>>* kernels = nullptr);

// Schedules and runs `targets` as create_schedule + run_schedule do, or replays the engine's
// cached schedule of an expression of the same structure (schedule_cache.hpp). Returns the
// schedule's `becomes` and `keep_alive` for the expression's own nodes; its `items` only when it
// was scheduled.
Schedule realize_schedule(const std::vector<UOpRef>& targets, const ScheduleOptions& options);

// Launches prepared kernels in order as run_schedule does (outputs allocated, JIT capture,
// launch counter, DEBUG lines); returns the total kernel time in ms as run_schedule does.
double run_prepared(std::span<const PreparedLaunch> launches);

// Launches prepared kernels in order as one Device::launch_batch (ABI 1.1; the CUDA plugin runs
// it as a CUDA graph, graphs.hpp): one ABI call and one driver launch instead of one per kernel
// (3.3-4.5 us of host time each on the H200 hosts). Outputs are allocated first, in
// order. Applies only when nothing needs the kernels one at a time: a device with launch_batch,
// all kernels on it, at least 2 kernels, no JIT capture (it records each launch), no DEBUG>=1,
// VIZ or LaunchCounter (they time each kernel), and TG_EAGER_BATCH=1 (Config::eager_batch).
// Returns false (and does nothing) when it does not apply. A failing batch throws the plugin's
// DeviceError with the batch's kernels named in order.
// Off by default: on the H200 the eager training step runs slower with it (~4.3 vs ~3.9 ms;
// docs/cuda.md, "launch_batch as CUDA graphs"). The caching allocator hands every replay other
// buffers, so the CUDA plugin updates every node of its graph each time; the host's launch cost
// falls (3.9 -> 0.33-0.38 us per kernel) but the step does not.
bool run_prepared_as_batch(std::span<const PreparedLaunch> launches);

// The device memory behind a BUFFER node, allocating it if asked; throws Error if it has none.
DeviceStorage& storage_of(const UOpRef& buffer, bool allocate = false);

} // namespace tg
