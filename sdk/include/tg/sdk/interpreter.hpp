// The reference interpreter of the kernel IR: plain C++, no compiler, slow and simple. `tg conform`
// takes its expected outputs from here, so a plugin is never checked against another plugin.
// Semantics follow docs/abi.md section 5 (and the CPU plugin where the ABI leaves a choice):
// float16 ops are rounded to half after each op, bfloat16 ops computed in float and rounded,
// float -> int casts truncate, IDIV/MOD are C's, a false gate reads no memory.
#pragma once

#include <tg/abi.h>
#include <tg/sdk/kernel_ir.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

namespace tg::sdk {

// A run-time failure inside a kernel (an access outside its buffer, work items of a group that
// diverge at a BARRIER, an MMA the target's units do not describe or whose replicas differ). what() names the
// kernel, the instruction, the work item and the index.
class InterpreterError : public std::runtime_error {
public:
  InterpreterError(const std::string& what, int64_t instruction)
      : std::runtime_error(what), instruction_(instruction) {}
  int64_t instruction() const { return instruction_; }

private:
  int64_t instruction_;
};

// Runs `ir` over every work group (global = groups per axis) and every local id (local = group
// shape); the work items of a group are interleaved at BARRIERs. buffers[k] is the memory of
// DEFINE_GLOBAL k, starting at the launch argument's offset; scalars[k] binds DEFINE_VAR k.
// Every access is bounds-checked (InterpreterError); wrong argument counts or dtypes throw
// std::invalid_argument. Buffers are modified in place. `units` are the matrix units of the target
// the program was written for (ABI 1.4): MMA's arg0 indexes them, and each MMA runs from the
// unit's description (InterpreterError when it names no unit or does not match it, check_mma).
void interpret(const KernelIR& ir, std::array<uint32_t, 3> global, std::array<uint32_t, 3> local,
               std::span<const std::span<std::byte>> buffers, std::span<const tg_scalar_arg> scalars,
               std::span<const tg_matrix_unit> units = {});

// The 16-bit float formats, shared with the conformance kit's comparisons (round to nearest even).
uint16_t float_to_half_bits(double value);
double half_bits_to_double(uint16_t bits);
uint16_t float_to_bfloat16_bits(float value); // NaN stays NaN
double bfloat16_bits_to_double(uint16_t bits);

} // namespace tg::sdk
