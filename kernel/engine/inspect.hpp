// Kernel inspection for programs: what the engine makes of one schedule item on its device, with
// the current settings (NOOPT, BEAM): the kernel's name, the optimizations applied, its kernel IR
// and the source the plugin rendered. The same kernel the next realize of that item launches
// (it is prepared through the kernel cache).
#pragma once

#include "kernel/codegen/opt.hpp"
#include "kernel/schedule/schedule.hpp"

#include <string>
#include <vector>

namespace tg {

struct KernelReport {
  std::string name;         // e.g. "r_16_4"
  std::string opts;         // the optimizations and the launch grid, as DEBUG=3 prints them
  std::vector<Opt> applied; // the optimizations applied (empty under NOOPT)
  std::string ir;           // the linearized kernel IR, as text
  std::string source;       // the plugin's rendered source
};

// Throws what lowering or compiling throws (Error, a plugin's DeviceError).
KernelReport inspect_kernel(const ScheduleItem& item);

} // namespace tg
