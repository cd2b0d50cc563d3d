// Kernel IR -> LLVM IR (IRBuilder, LLVM 14 typed pointers), and the generic optimization
// pipeline. Library tg::sdk_llvm: only plugins that generate code through LLVM link it (and LLVM).
//
// What differs between targets is how the kernel function meets its launcher: its parameters,
// where buffer and scalar arguments come from, and how work-group and local ids are produced.
// That is an LlvmKernelShape the plugin provides: the CPU plugin wraps the body in loops over
// work groups and local ids; a GPU plugin would read its id intrinsics instead.
//
// The renderer's semantics for every op and dtype: bfloat16 is computed in float and rounded after
// each operation; bool is i1 in registers and a byte in memory; integer division and modulo by 0
// give 0 (INT_MIN / -1 wraps); shifts use the amount modulo the bit width; MAX propagates NaN;
// float16 EXP2/LOG2/SIN are computed in float. BARRIER, DEFINE_LOCAL and MMA are rendered through
// the shape (local_memory, barrier, mma); shapes without work-group memory or matrix units refuse
// them.
#pragma once

#include <tg/sdk/kernel_ir.hpp>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <cstdint>
#include <string>

namespace tg::sdk {

// How the kernel function is shaped for one kind of launcher. Called by render_llvm_kernel in
// this order: create_function; buffer_pointer/scalar_bits for each argument (in the entry block);
// begin_work_items; special wherever a SPECIAL is; end_work_items; then the function returns.
class LlvmKernelShape {
public:
  virtual ~LlvmKernelShape() = default;
  // Creates the kernel function (parameters, attributes) in `module`.
  virtual llvm::Function* create_function(llvm::Module& module, const std::string& name) = 0;
  // The start of buffer argument `index` (already offset), as i8*.
  virtual llvm::Value* buffer_pointer(llvm::IRBuilder<>& b, uint32_t index) = 0;
  // The raw 64 bits of scalar argument `index` (tg_scalar_arg::value), as i64.
  virtual llvm::Value* scalar_bits(llvm::IRBuilder<>& b, uint32_t index) = 0;
  // Opens whatever runs the body once per work item (loops, or nothing on SIMT targets).
  virtual void begin_work_items(llvm::IRBuilder<>& b) = 0;
  // TG_SPECIAL_GROUP_ID / TG_SPECIAL_LOCAL_ID of `axis` as i32. SPECIAL values may be used in any
  // scope, so the value must dominate the whole body (make it in begin_work_items).
  virtual llvm::Value* special(llvm::IRBuilder<>& b, int kind, int axis) = 0;
  // Closes what begin_work_items opened.
  virtual void end_work_items(llvm::IRBuilder<>& b) = 0;
  // DEFINE_LOCAL: `count` elements of `element` shared by the work items of one group, as a
  // generic pointer (called in the entry block, before begin_work_items). The default throws
  // PluginError(UNIMPLEMENTED): the device has no TG_FEATURE_LOCAL_MEMORY.
  virtual llvm::Value* local_memory(llvm::IRBuilder<>& b, llvm::Type* element, uint64_t count,
                                    const std::string& name);
  // BARRIER: every work item of the group waits here, and local memory written before it is
  // visible after it. The default throws PluginError(UNIMPLEMENTED) (no TG_FEATURE_BARRIER).
  virtual void barrier(llvm::IRBuilder<>& b);
  // MMA (IR 1.3): D = A * B + C on the device's matrix unit `unit` (MMA's arg0; the plugin has
  // checked the program with check_mma). a, b and c are this work item's operands in memory
  // representation (bfloat16 as i16 bits, bool as i8), vectors of the unit's lanes; the result is
  // D the same way, of c's type. The default throws PluginError(UNIMPLEMENTED): the device
  // declares no matrix units.
  virtual llvm::Value* mma(llvm::IRBuilder<>& builder, int64_t unit, llvm::Value* a, llvm::Value* b,
                           llvm::Value* c);
};

struct LlvmRenderOptions {
  // float16 EXP2/LOG2/SIN through float (no CPU has half instructions for them; LLVM cannot select
  // the half intrinsics where half is a legal type). false renders them in half: tests only.
  bool half_math_in_float = true;
  // EXP2 of float32, bfloat16 and (through float) float16 as a polynomial in the kernel (within 2
  // ulp of exp2f; vectorizes) instead of llvm.exp2, which a CPU target lowers to a libm call per
  // lane. For targets without an exp2 instruction.
  bool polynomial_exp2 = false;
};

// Appends the kernel as function `fn_name` to `module` (whose context, triple and data layout the
// caller set). Throws PluginError(UNIMPLEMENTED) for what it cannot render: BARRIER and
// DEFINE_LOCAL where the shape refuses them, vector gates, gathers, ops on dtypes they do not apply to.
void render_llvm_kernel(const KernelIR& ir, llvm::Module& module, LlvmKernelShape& shape,
                        const std::string& fn_name, const LlvmRenderOptions& options = {});

// A counted loop in the function being built: `counter` runs from start while < end (signed).
// open_llvm_loop leaves the builder in the body; close_llvm_loop in the exit block.
struct LlvmLoop {
  llvm::BasicBlock* header;
  llvm::BasicBlock* exit;
  llvm::PHINode* counter;
};
LlvmLoop open_llvm_loop(llvm::IRBuilder<>& b, llvm::Value* start, llvm::Value* end, const std::string& name);
void close_llvm_loop(llvm::IRBuilder<>& b, const LlvmLoop& loop);

// The new pass manager's default module pipeline for `tm` at opt_level 1 (O1), 2 (O2 with loop
// and SLP vectorization, no unrolling or interleaving) or 3 (O3, all of it).
void optimize_llvm_module(llvm::Module& module, llvm::TargetMachine& tm, unsigned opt_level);

} // namespace tg::sdk
