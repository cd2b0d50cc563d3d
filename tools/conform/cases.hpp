// The conformance cases: a name ("memory/round_trip_odd_sizes"), what it needs, and a body that
// returns (pass) or throws CaseFailed / CaseSkipped. Each group lives in its own cases_*.cpp.
#pragma once

#include "tools/conform/kernel_case.hpp"
#include "tools/conform/plugin_access.hpp"

#include <tg/abi.h>

#include <functional>
#include <string>
#include <vector>

namespace tg::conform {

// What every case may read: the plugin and the device under test, as probed before the run.
struct Context {
  RawPlugin plugin;
  int32_t device_index = 0;
  int32_t device_count = 0;
  tg_device_properties properties{}; // of device_index (zero when no device is available)
};

struct Case {
  std::string name;
  bool needs_device = true; // false: runs without hardware (loader cases)
  std::function<void(const Context&)> run;
};

void add_loader_cases(std::vector<Case>& cases);
void add_device_cases(std::vector<Case>& cases);
void add_memory_cases(std::vector<Case>& cases);
void add_compile_cases(std::vector<Case>& cases);
void add_program_cases(std::vector<Case>& cases);
void add_launch_cases(std::vector<Case>& cases);
void add_multi_device_cases(std::vector<Case>& cases); // ABI 1.2: peer_copy, collective
// ABI 1.4: "matrix_units/well_formed" and one "matrix_units/<name>" per declared unit (the names
// as the probe read them, in the device's order; none: a "matrix_units/mma" case that skips).
void add_matrix_unit_cases(std::vector<Case>& cases, const std::vector<std::string>& unit_names);
// The device's matrix units through the raw table, read as the host reads them (empty without the
// entries); a failing entry fails the case.
std::vector<tg_matrix_unit> read_matrix_units(const Device& device);
// One case per kernel: "kernels/<group>/<name>".
void add_kernel_cases(std::vector<Case>& cases, const std::string& group, std::vector<KernelCase> kernels);

// Every case, in run order, for a device with these properties and matrix units (names).
std::vector<Case> all_cases(const tg_device_properties& properties,
                            const std::vector<std::string>& unit_names = {});

// out[g] = a[g] * s for float32 buffers a (0), out (1) and scalar s; one work group per element.
// The compile, program and launch cases use it.
std::vector<std::byte> scale_kernel_ir();
tg_scalar_arg scalar_f32(float value);

// The device under test's compile target (properties.arch), or NULL for the plugin's default.
const char* target_of(const Context& ctx);

} // namespace tg::conform
