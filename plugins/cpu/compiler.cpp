#include "compiler.hpp"

#include "target.hpp"

#include "llvm_errors.hpp"
#include "program.hpp"
#include "test_hooks.hpp"

#include <tg/sdk/kernel_ir.hpp>
#include <tg/sdk/plugin.hpp>

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/Triple.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsAArch64.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

using tg::sdk::guard;
using tg::sdk::PluginError;
using tg::sdk::require;

namespace tg::cpu {
namespace {

[[noreturn]] void unimplemented(const std::string& what) {
  throw PluginError(TG_ERROR_UNIMPLEMENTED, "cpu: " + what);
}

// Round a float to the nearest bfloat16 (ties to even), as a float.
float bf16_round_host(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return std::bit_cast<float>((bits | 0x00400000u) & 0xffff0000u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return std::bit_cast<float>(bits & 0xffff0000u);
}

std::string symbol_name(const std::string& kernel_name) {
  std::string s = "tg_kernel_";
  for (char c : kernel_name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return s;
}

// ------------------------------------------------------------------------------------------
// Kernel IR -> LLVM IR
// ------------------------------------------------------------------------------------------

class Renderer {
public:
  using V = llvm::Value*;

  Renderer(const tg::sdk::KernelIR& ir, llvm::Module& module)
      : ir_(ir), ctx_(module.getContext()), mod_(module), b_(ctx_) {}

  void render(const std::string& fn_name, const TargetSpec& spec);

private:
  struct Loop {
    llvm::BasicBlock* header;
    llvm::BasicBlock* exit;
    llvm::PHINode* counter;
  };

  // ---- types ----
  llvm::Type* scalar_type(tg_dtype dt) {
    switch (dt) {
    case TG_DTYPE_BOOL:
      return b_.getInt1Ty();
    case TG_DTYPE_INT8:
    case TG_DTYPE_UINT8:
      return b_.getInt8Ty();
    case TG_DTYPE_INT16:
    case TG_DTYPE_UINT16:
      return b_.getInt16Ty();
    case TG_DTYPE_INT32:
    case TG_DTYPE_UINT32:
      return b_.getInt32Ty();
    case TG_DTYPE_INT64:
    case TG_DTYPE_UINT64:
      return b_.getInt64Ty();
    case TG_DTYPE_FLOAT16:
      return b_.getHalfTy();
    case TG_DTYPE_BFLOAT16: // computed in float, rounded to bfloat16 after every operation
    case TG_DTYPE_FLOAT32:
      return b_.getFloatTy();
    case TG_DTYPE_FLOAT64:
      return b_.getDoubleTy();
    default:
      unimplemented(std::string("dtype ") + (tg::sdk::dtype_name(dt) ? tg::sdk::dtype_name(dt) : "?") +
                    " has no value type");
    }
  }
  llvm::Type* mem_scalar_type(tg_dtype dt) {
    if (dt == TG_DTYPE_BOOL) return b_.getInt8Ty();
    if (dt == TG_DTYPE_BFLOAT16) return b_.getInt16Ty();
    return scalar_type(dt);
  }
  static llvm::Type* vec(llvm::Type* t, unsigned vc) {
    return vc > 1 ? llvm::FixedVectorType::get(t, vc) : t;
  }
  llvm::Type* reg_type(tg_dtype dt, unsigned vc) { return vec(scalar_type(dt), vc); }
  llvm::Type* mem_type(tg_dtype dt, unsigned vc) { return vec(mem_scalar_type(dt), vc); }
  static bool is_float(tg_dtype dt) { return tg::sdk::dtype_is_float(dt); }
  static bool is_signed(tg_dtype dt) { return tg::sdk::dtype_is_signed_int(dt); }

  V splat(V v, unsigned vc) {
    if (vc > 1 && !v->getType()->isVectorTy()) return b_.CreateVectorSplat(vc, v);
    return v;
  }

  // ---- bfloat16 and memory representations ----
  V bf16_bits_to_float(V bits) { // i16 (or vector) -> float
    llvm::Type* i32 =
        bits->getType()->isVectorTy()
            ? vec(b_.getInt32Ty(),
                  unsigned(llvm::cast<llvm::FixedVectorType>(bits->getType())->getNumElements()))
            : b_.getInt32Ty();
    llvm::Type* f32 =
        i32->isVectorTy()
            ? vec(b_.getFloatTy(), unsigned(llvm::cast<llvm::FixedVectorType>(i32)->getNumElements()))
            : b_.getFloatTy();
    return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(bits, i32), 16), f32);
  }
  V float_to_bf16_bits(V f) { // float (or vector) -> i16, round to nearest even, NaN stays NaN
    llvm::Type* ft = f->getType();
    unsigned vc = ft->isVectorTy() ? unsigned(llvm::cast<llvm::FixedVectorType>(ft)->getNumElements()) : 1;
    llvm::Type* i32 = vec(b_.getInt32Ty(), vc);
    V bits = b_.CreateBitCast(f, i32);
    V hi = b_.CreateLShr(bits, 16);
    V lsb = b_.CreateAnd(hi, llvm::ConstantInt::get(i32, 1));
    V rounded = b_.CreateLShr(b_.CreateAdd(bits, b_.CreateAdd(lsb, llvm::ConstantInt::get(i32, 0x7fff))), 16);
    V nan = b_.CreateOr(hi, llvm::ConstantInt::get(i32, 0x40));
    V r = b_.CreateSelect(b_.CreateFCmpUNO(f, f), nan, rounded);
    return b_.CreateTrunc(r, vec(b_.getInt16Ty(), vc));
  }
  V bf16_round(V f) { return bf16_bits_to_float(float_to_bf16_bits(f)); }
  V mem_to_reg(V v, tg_dtype dt) {
    if (dt == TG_DTYPE_BOOL) return b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
    if (dt == TG_DTYPE_BFLOAT16) return bf16_bits_to_float(v);
    return v;
  }
  V reg_to_mem(V v, tg_dtype dt, unsigned vc) {
    if (dt == TG_DTYPE_BOOL) return b_.CreateZExt(v, mem_type(dt, vc));
    if (dt == TG_DTYPE_BFLOAT16) return float_to_bf16_bits(v);
    return v;
  }

  // ---- conversions ----
  V cast_value(V v, tg_dtype from, tg_dtype to, unsigned vc) {
    if (from == to) return v;
    llvm::Type* t = reg_type(to, vc);
    if (to == TG_DTYPE_BOOL)
      return is_float(from) ? b_.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()))
                            : b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
    if (is_float(to)) {
      V r = is_float(from)    ? b_.CreateFPCast(v, t)
            : is_signed(from) ? b_.CreateSIToFP(v, t)
                              : b_.CreateUIToFP(v, t);
      return to == TG_DTYPE_BFLOAT16 ? bf16_round(r) : r;
    }
    if (is_float(from)) return is_signed(to) ? b_.CreateFPToSI(v, t) : b_.CreateFPToUI(v, t);
    return b_.CreateIntCast(v, t, is_signed(from));
  }
  V bitcast_value(V v, tg_dtype from, tg_dtype to, unsigned vc) {
    if (from == to) return v;
    V m = reg_to_mem(v, from, vc);
    return mem_to_reg(b_.CreateBitCast(m, mem_type(to, vc)), to);
  }

  // ---- values ----
  llvm::AllocaInst* make_slot(llvm::Type* t, const llvm::Twine& name) {
    llvm::IRBuilder<> entry(entry_, entry_->getFirstInsertionPt());
    return entry.CreateAlloca(t, nullptr, name);
  }
  // The value of instruction s where it is used now.
  V get(uint32_t s) {
    const auto& ins = ir_.instructions[s];
    if (ins.op == TG_OP_DEFINE_ACC) return b_.CreateLoad(slots_[s]->getAllocatedType(), slots_[s]);
    if (ins.op == TG_OP_ASSIGN) {
      auto* slot = slots_[ins.src[0]];
      return b_.CreateLoad(slot->getAllocatedType(), slot);
    }
    if (spill_[s]) return b_.CreateLoad(slots_[s]->getAllocatedType(), slots_[s]);
    return vals_[s];
  }
  V get(uint32_t s, unsigned vc) { return splat(get(s), vc); }
  V scalar_gate(uint32_t s, const char* what) {
    V g = get(s);
    if (g->getType()->isVectorTy())
      unimplemented(std::string("vector gates on ") + what + " are not supported");
    return g;
  }

  // ---- control flow ----
  Loop open_loop(V start, V end, const char* name) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(ctx_, std::string(name) + ".head", fn_);
    auto* body = llvm::BasicBlock::Create(ctx_, std::string(name) + ".body", fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, std::string(name) + ".exit");
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    auto* phi = b_.CreatePHI(start->getType(), 2, name);
    phi->addIncoming(start, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(phi, end), body, exit);
    b_.SetInsertPoint(body);
    return {header, exit, phi};
  }
  void close_loop(const Loop& loop) {
    V next = b_.CreateAdd(loop.counter, llvm::ConstantInt::get(loop.counter->getType(), 1));
    loop.counter->addIncoming(next, b_.GetInsertBlock());
    b_.CreateBr(loop.header);
    loop.exit->insertInto(fn_);
    b_.SetInsertPoint(loop.exit);
  }
  // Runs emit() only when gate is true; returns the phi of its value and `otherwise` (or nullptr).
  template <class Emit> V gated(V gate, V otherwise, Emit&& emit) {
    llvm::BasicBlock* before = b_.GetInsertBlock();
    auto* then = llvm::BasicBlock::Create(ctx_, "gate.then", fn_);
    auto* merge = llvm::BasicBlock::Create(ctx_, "gate.end");
    b_.CreateCondBr(gate, then, merge);
    b_.SetInsertPoint(then);
    V v = emit();
    llvm::BasicBlock* then_end = b_.GetInsertBlock();
    b_.CreateBr(merge);
    merge->insertInto(fn_);
    b_.SetInsertPoint(merge);
    if (otherwise == nullptr) return nullptr;
    auto* phi = b_.CreatePHI(otherwise->getType(), 2);
    phi->addIncoming(v, then_end);
    phi->addIncoming(otherwise, before);
    return phi;
  }

  void analyze_scopes();
  void emit(uint32_t i);
  V emit_alu(const tg::sdk::Instruction& ins);
  V intrinsic(llvm::Intrinsic::ID id, std::initializer_list<V> args) {
    llvm::Function* f = llvm::Intrinsic::getDeclaration(&mod_, id, {(*args.begin())->getType()});
    return b_.CreateCall(f, args);
  }

  const tg::sdk::KernelIR& ir_;
  llvm::LLVMContext& ctx_;
  llvm::Module& mod_;
  llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;
  std::vector<V> vals_;
  std::vector<llvm::AllocaInst*> slots_; // accumulators and values used outside their scope
  std::vector<char> spill_;
  std::unordered_map<uint32_t, Loop> loops_;
  std::unordered_map<uint32_t, llvm::BasicBlock*> ifs_; // IF -> its merge block
  V group_[3] = {nullptr, nullptr, nullptr};
  V local_[3] = {nullptr, nullptr, nullptr};
};

// A value defined inside a RANGE or IF and used after it closes does not dominate the use in
// LLVM IR: such values live in an alloca (mem2reg turns them back into registers/phis).
void Renderer::analyze_scopes() {
  const auto& ins_list = ir_.instructions;
  std::vector<int> scope_of(ins_list.size(), 0);
  std::vector<int> parent{-1};
  std::vector<int> open{0};
  for (size_t i = 0; i < ins_list.size(); ++i) {
    tg_op op = ins_list[i].op;
    if (op == TG_OP_ENDRANGE || op == TG_OP_ENDIF) open.pop_back();
    if (op == TG_OP_RANGE || op == TG_OP_IF) {
      parent.push_back(open.back());
      open.push_back(int(parent.size()) - 1);
    }
    scope_of[i] = open.back();
  }
  auto encloses = [&](int outer, int inner) {
    for (int s = inner; s >= 0; s = parent[size_t(s)])
      if (s == outer) return true;
    return false;
  };
  spill_.assign(ins_list.size(), 0);
  for (size_t j = 0; j < ins_list.size(); ++j) {
    const auto& ins = ins_list[j];
    if (ins.op == TG_OP_ENDRANGE || ins.op == TG_OP_ENDIF) continue;
    for (uint32_t s : ins.src) {
      tg_op sop = ins_list[s].op;
      if (sop == TG_OP_CONST || sop == TG_OP_DEFINE_GLOBAL || sop == TG_OP_DEFINE_VAR ||
          sop == TG_OP_SPECIAL || sop == TG_OP_DEFINE_ACC || sop == TG_OP_ASSIGN || sop == TG_OP_INDEX)
        continue;
      if (!encloses(scope_of[s], scope_of[j])) spill_[s] = 1;
    }
  }
  // INDEX results are pointers recomputed where needed; an INDEX used outside its scope is rare:
  // treat it like any other value.
  for (size_t j = 0; j < ins_list.size(); ++j)
    for (uint32_t s : ins_list[j].src)
      if (ins_list[s].op == TG_OP_INDEX && ins_list[j].op != TG_OP_ENDRANGE &&
          !encloses(scope_of[s], scope_of[j]))
        spill_[s] = 1;
}

void Renderer::render(const std::string& fn_name, const TargetSpec& spec) {
  for (const auto& ins : ir_.instructions) {
    if (ins.op == TG_OP_BARRIER)
      unimplemented("BARRIER needs work-group synchronization, which this device does not provide "
                    "(it does not declare TG_FEATURE_BARRIER)");
    if (ins.op == TG_OP_DEFINE_LOCAL)
      unimplemented("DEFINE_LOCAL needs work-group local memory, which this device does not provide "
                    "(it does not declare TG_FEATURE_LOCAL_MEMORY)");
  }
  analyze_scopes();

  llvm::Type* i32 = b_.getInt32Ty();
  llvm::Type* buffers_t = b_.getInt8PtrTy()->getPointerTo();
  llvm::Type* scalars_t = b_.getInt64Ty()->getPointerTo();
  auto* fty = llvm::FunctionType::get(b_.getVoidTy(),
                                      {buffers_t, scalars_t, i32, i32, i32, i32, i32, i32, i32}, false);
  fn_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, fn_name, mod_);
  fn_->addFnAttr(llvm::Attribute::NoUnwind);
  fn_->addFnAttr("target-cpu", spec.cpu);
  if (!spec.features.empty()) fn_->addFnAttr("target-features", spec.features);
  for (unsigned a = 0; a < 2; ++a) {
    fn_->addParamAttr(a, llvm::Attribute::NoAlias);
    fn_->addParamAttr(a, llvm::Attribute::ReadOnly);
  }
  const char* arg_names[] = {"buffers", "scalars", "gx_begin", "gx_end", "gy",
                             "gz",      "local_x", "local_y",  "local_z"};
  for (unsigned a = 0; a < fty->getNumParams(); ++a) fn_->getArg(a)->setName(arg_names[a]);

  entry_ = llvm::BasicBlock::Create(ctx_, "entry", fn_);
  b_.SetInsertPoint(entry_);
  if (test_hooks::fatal(ir_.name)) { // another architecture's intrinsic: no selector for it here
    if (llvm::Triple(spec.triple).isX86())
      b_.CreateCall(llvm::Intrinsic::getDeclaration(&mod_, llvm::Intrinsic::aarch64_isb), {b_.getInt32(15)});
    else
      b_.CreateCall(llvm::Intrinsic::getDeclaration(&mod_, llvm::Intrinsic::x86_sse2_pause));
  }

  const auto& ins_list = ir_.instructions;
  vals_.assign(ins_list.size(), nullptr);
  slots_.assign(ins_list.size(), nullptr);

  // Arguments are read once, in the entry block.
  for (size_t i = 0; i < ins_list.size(); ++i) {
    const auto& ins = ins_list[i];
    if (ins.op == TG_OP_DEFINE_GLOBAL) {
      V slot = b_.CreateConstInBoundsGEP1_64(b_.getInt8PtrTy(), fn_->getArg(0), uint64_t(ins.arg0));
      V raw = b_.CreateLoad(b_.getInt8PtrTy(), slot, "buf" + std::to_string(ins.arg0));
      vals_[i] = b_.CreateBitCast(raw, mem_scalar_type(ins.dtype)->getPointerTo());
    } else if (ins.op == TG_OP_DEFINE_VAR) {
      V slot = b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), fn_->getArg(1), uint64_t(ins.arg0));
      V raw = b_.CreateLoad(b_.getInt64Ty(), slot, "var" + std::to_string(ins.arg0));
      if (is_float(ins.dtype))
        vals_[i] = cast_value(b_.CreateBitCast(raw, b_.getDoubleTy()), TG_DTYPE_FLOAT64, ins.dtype, 1);
      else if (ins.dtype == TG_DTYPE_BOOL)
        vals_[i] = b_.CreateICmpNE(raw, b_.getInt64(0));
      else
        vals_[i] = b_.CreateTrunc(raw, scalar_type(ins.dtype)); // no-op for 64-bit
    }
  }

  // Work groups [gx_begin, gx_end) of row (gy, gz); inside, local ids z, y, x.
  group_[1] = fn_->getArg(4);
  group_[2] = fn_->getArg(5);
  Loop gx = open_loop(fn_->getArg(2), fn_->getArg(3), "gx");
  group_[0] = gx.counter;
  Loop lz = open_loop(b_.getInt32(0), fn_->getArg(8), "lz");
  Loop ly = open_loop(b_.getInt32(0), fn_->getArg(7), "ly");
  Loop lx = open_loop(b_.getInt32(0), fn_->getArg(6), "lx");
  local_[0] = lx.counter;
  local_[1] = ly.counter;
  local_[2] = lz.counter;

  for (uint32_t i = 0; i < ins_list.size(); ++i) {
    emit(i);
    if (spill_[i] && vals_[i] != nullptr) {
      slots_[i] = make_slot(vals_[i]->getType(), "spill" + std::to_string(i));
      b_.CreateStore(vals_[i], slots_[i]);
    }
  }

  close_loop(lx);
  close_loop(ly);
  close_loop(lz);
  close_loop(gx);
  b_.CreateRetVoid();
}

void Renderer::emit(uint32_t i) {
  const auto& ins = ir_.instructions[i];
  const unsigned vc = ins.vcount;
  auto src_ins = [&](size_t k) -> const tg::sdk::Instruction& { return ir_.instructions[ins.src[k]]; };
  switch (ins.op) {
  case TG_OP_DEFINE_GLOBAL:
  case TG_OP_DEFINE_VAR:
    return; // done in the entry block
  case TG_OP_SPECIAL:
    vals_[i] = ins.arg0 == TG_SPECIAL_GROUP_ID ? group_[ins.arg1] : local_[ins.arg1];
    return;
  case TG_OP_CONST: {
    llvm::Type* t = scalar_type(ins.dtype);
    if (ins.dtype == TG_DTYPE_BFLOAT16)
      vals_[i] = llvm::ConstantFP::get(t, double(bf16_round_host(float(ins.const_float()))));
    else if (is_float(ins.dtype))
      vals_[i] = llvm::ConstantFP::get(t, ins.const_float());
    else if (ins.dtype == TG_DTYPE_BOOL)
      vals_[i] = b_.getInt1(ins.arg0 != 0);
    else
      vals_[i] = llvm::ConstantInt::get(t, uint64_t(ins.arg0), is_signed(ins.dtype));
    return;
  }
  case TG_OP_DEFINE_ACC: {
    slots_[i] = make_slot(reg_type(ins.dtype, vc), "acc" + std::to_string(i));
    b_.CreateStore(get(ins.src[0], vc), slots_[i]);
    return;
  }
  case TG_OP_ASSIGN: {
    V v = get(ins.src[1], vc);
    b_.CreateStore(v, slots_[ins.src[0]]);
    vals_[i] = v;
    return;
  }
  case TG_OP_RANGE: {
    if (ins.vcount != 1) unimplemented("vector RANGE");
    Loop loop = open_loop(get(ins.src[0]), get(ins.src[1]), ("r" + std::to_string(i)).c_str());
    loops_[i] = loop;
    vals_[i] = loop.counter;
    return;
  }
  case TG_OP_ENDRANGE:
    close_loop(loops_.at(ins.src[0]));
    return;
  case TG_OP_IF: {
    V cond = scalar_gate(ins.src[0], "IF");
    auto* then = llvm::BasicBlock::Create(ctx_, "if.then", fn_);
    auto* merge = llvm::BasicBlock::Create(ctx_, "if.end");
    b_.CreateCondBr(cond, then, merge);
    b_.SetInsertPoint(then);
    ifs_[i] = merge;
    return;
  }
  case TG_OP_ENDIF: {
    llvm::BasicBlock* merge = ifs_.at(ins.src[0]);
    b_.CreateBr(merge);
    merge->insertInto(fn_);
    b_.SetInsertPoint(merge);
    return;
  }
  case TG_OP_INDEX: {
    if (src_ins(1).vcount != 1) unimplemented("INDEX with a vector of indices (gather) is not supported");
    V idx = get(ins.src[1]);
    idx = b_.CreateIntCast(idx, b_.getInt64Ty(), is_signed(src_ins(1).dtype));
    vals_[i] = b_.CreateGEP(mem_scalar_type(src_ins(0).dtype), get(ins.src[0]), idx);
    return;
  }
  case TG_OP_LOAD: {
    V ptr = get(ins.src[0]);
    tg_dtype dt = ins.dtype;
    auto load = [&]() -> V {
      llvm::Type* mt = mem_type(dt, vc);
      V p = vc > 1 ? b_.CreateBitCast(ptr, mt->getPointerTo()) : ptr;
      return mem_to_reg(b_.CreateAlignedLoad(mt, p, llvm::Align(tg::sdk::dtype_size(dt))), dt);
    };
    if (ins.src.size() == 1)
      vals_[i] = load();
    else
      vals_[i] = gated(scalar_gate(ins.src[1], "LOAD"), get(ins.src[2], vc), load);
    return;
  }
  case TG_OP_STORE: {
    V ptr = get(ins.src[0]);
    tg_dtype dt = src_ins(0).dtype;
    unsigned svc = src_ins(1).vcount;
    V value = get(ins.src[1]);
    auto store = [&]() -> V {
      V m = reg_to_mem(value, dt, svc);
      V p = svc > 1 ? b_.CreateBitCast(ptr, mem_type(dt, svc)->getPointerTo()) : ptr;
      b_.CreateAlignedStore(m, p, llvm::Align(tg::sdk::dtype_size(dt)));
      return nullptr;
    };
    if (ins.src.size() == 2)
      store();
    else
      gated(scalar_gate(ins.src[2], "STORE"), nullptr, store);
    return;
  }
  case TG_OP_VECTORIZE: {
    V v = llvm::UndefValue::get(reg_type(ins.dtype, vc));
    for (unsigned k = 0; k < vc; ++k) {
      if (src_ins(k).vcount != 1) unimplemented("VECTORIZE of vectors");
      v = b_.CreateInsertElement(v, get(ins.src[k]), uint64_t(k));
    }
    vals_[i] = v;
    return;
  }
  case TG_OP_GEP: {
    V v = get(ins.src[0]);
    vals_[i] = v->getType()->isVectorTy() ? b_.CreateExtractElement(v, uint64_t(ins.arg0)) : v;
    return;
  }
  case TG_OP_CAST:
    vals_[i] = cast_value(get(ins.src[0], vc), src_ins(0).dtype, ins.dtype, vc);
    return;
  case TG_OP_BITCAST:
    vals_[i] = bitcast_value(get(ins.src[0], vc), src_ins(0).dtype, ins.dtype, vc);
    return;
  default:
    if (ins.op >= TG_OP_NEG && ins.op <= TG_OP_MULACC) {
      vals_[i] = emit_alu(ins);
      return;
    }
    unimplemented(std::string("op ") +
                  (tg::sdk::op_name(ins.op) ? tg::sdk::op_name(ins.op) : std::to_string(ins.op)) +
                  " is not supported");
  }
}

Renderer::V Renderer::emit_alu(const tg::sdk::Instruction& ins) {
  const unsigned vc = ins.vcount;
  const tg_op op = ins.op;
  // Operand dtype: the sources' (comparisons yield bool; WHERE's condition is bool).
  const tg_dtype dt = op == TG_OP_WHERE ? ins.dtype : ir_.instructions[ins.src[0]].dtype;
  std::vector<V> a;
  for (uint32_t s : ins.src) a.push_back(get(s, vc));
  const bool fl = is_float(dt), sg = is_signed(dt), bl = dt == TG_DTYPE_BOOL;
  llvm::Type* t = a[0]->getType();
  auto need_float = [&] {
    if (!fl)
      unimplemented(std::string(tg::sdk::op_name(op)) + " on " + tg::sdk::dtype_name(dt) +
                    " is not supported");
  };
  auto need_int = [&] {
    if (fl)
      unimplemented(std::string(tg::sdk::op_name(op)) + " on " + tg::sdk::dtype_name(dt) +
                    " is not supported");
  };
  auto safe_div = [&](bool rem) -> V { // C semantics; x/0 and x%0 give 0 instead of trapping
    V zero = llvm::Constant::getNullValue(t);
    V one = llvm::ConstantInt::get(t, 1);
    V is_zero = b_.CreateICmpEQ(a[1], zero);
    if (sg) {
      V is_m1 = b_.CreateICmpEQ(a[1], llvm::Constant::getAllOnesValue(t));
      V d = b_.CreateSelect(b_.CreateOr(is_zero, is_m1), one, a[1]);
      V q = rem ? b_.CreateSRem(a[0], d) : b_.CreateSDiv(a[0], d);
      q = b_.CreateSelect(is_m1, rem ? zero : b_.CreateSub(zero, a[0]), q); // INT_MIN / -1 wraps
      return b_.CreateSelect(is_zero, zero, q);
    }
    V d = b_.CreateSelect(is_zero, one, a[1]);
    V q = rem ? b_.CreateURem(a[0], d) : b_.CreateUDiv(a[0], d);
    return b_.CreateSelect(is_zero, zero, q);
  };
  // exp2/log2/sin of float16 are computed in float on every target and rounded once: no CPU has
  // half-precision instructions for them and libm has no half functions. LLVM widens them itself
  // only where half is not a legal type; where it is (AVX512-FP16, ARMv8.2 FP16) it cannot select
  // them and aborts ("Cannot select: f16 = fexp2"). Float is at least as accurate. Every other
  // op x dtype selects on all our targets (tests/plugins/cpu/targets_test.cpp checks each).
  auto math_via_float = [&](llvm::Intrinsic::ID id) -> V {
    need_float();
    if (dt != TG_DTYPE_FLOAT16 || test_hooks::native_half(ir_.name)) return intrinsic(id, {a[0]});
    return b_.CreateFPTrunc(intrinsic(id, {b_.CreateFPExt(a[0], vec(b_.getFloatTy(), vc))}), t);
  };
  V r = nullptr;
  switch (op) {
  case TG_OP_NEG:
    r = fl ? b_.CreateFNeg(a[0]) : bl ? b_.CreateNot(a[0]) : b_.CreateNeg(a[0]);
    break;
  case TG_OP_RECIP:
    need_float();
    r = b_.CreateFDiv(llvm::ConstantFP::get(t, 1.0), a[0]);
    break;
  case TG_OP_SQRT:
    need_float();
    r = intrinsic(llvm::Intrinsic::sqrt, {a[0]});
    break;
  case TG_OP_EXP2:
    r = math_via_float(llvm::Intrinsic::exp2);
    break;
  case TG_OP_LOG2:
    r = math_via_float(llvm::Intrinsic::log2);
    break;
  case TG_OP_SIN:
    r = math_via_float(llvm::Intrinsic::sin);
    break;
  case TG_OP_TRUNC:
    r = fl ? intrinsic(llvm::Intrinsic::trunc, {a[0]}) : a[0];
    break;
  case TG_OP_ADD:
    r = fl ? b_.CreateFAdd(a[0], a[1]) : bl ? b_.CreateOr(a[0], a[1]) : b_.CreateAdd(a[0], a[1]);
    break;
  case TG_OP_SUB:
    r = fl ? b_.CreateFSub(a[0], a[1]) : bl ? b_.CreateXor(a[0], a[1]) : b_.CreateSub(a[0], a[1]);
    break;
  case TG_OP_MUL:
    r = fl ? b_.CreateFMul(a[0], a[1]) : bl ? b_.CreateAnd(a[0], a[1]) : b_.CreateMul(a[0], a[1]);
    break;
  case TG_OP_IDIV:
    need_int();
    r = bl ? a[0] : safe_div(false);
    break;
  case TG_OP_MOD:
    need_int();
    r = bl ? llvm::Constant::getNullValue(t) : safe_div(true);
    break;
  case TG_OP_FDIV:
    need_float();
    r = b_.CreateFDiv(a[0], a[1]);
    break;
  case TG_OP_MAX:
    if (fl) { // NaN in either operand gives NaN
      V pick = b_.CreateSelect(b_.CreateFCmpOGT(a[0], a[1]), a[0], a[1]);
      r = b_.CreateSelect(b_.CreateFCmpUNO(a[0], a[0]), a[0], pick);
    } else {
      r = b_.CreateSelect(sg ? b_.CreateICmpSGT(a[0], a[1]) : b_.CreateICmpUGT(a[0], a[1]), a[0], a[1]);
    }
    break;
  case TG_OP_CMPLT:
    return fl   ? b_.CreateFCmpOLT(a[0], a[1])
           : sg ? b_.CreateICmpSLT(a[0], a[1])
                : b_.CreateICmpULT(a[0], a[1]);
  case TG_OP_CMPNE:
    return fl ? b_.CreateFCmpUNE(a[0], a[1]) : b_.CreateICmpNE(a[0], a[1]);
  case TG_OP_CMPEQ:
    return fl ? b_.CreateFCmpOEQ(a[0], a[1]) : b_.CreateICmpEQ(a[0], a[1]);
  case TG_OP_AND:
    need_int();
    r = b_.CreateAnd(a[0], a[1]);
    break;
  case TG_OP_OR:
    need_int();
    r = b_.CreateOr(a[0], a[1]);
    break;
  case TG_OP_XOR:
    need_int();
    r = b_.CreateXor(a[0], a[1]);
    break;
  case TG_OP_SHL:
  case TG_OP_SHR: {
    need_int();
    if (bl) unimplemented("shifts of bool are not supported");
    unsigned bits = t->getScalarSizeInBits();
    V amount = b_.CreateAnd(a[1], llvm::ConstantInt::get(t, bits - 1)); // no poison for large shifts
    r = op == TG_OP_SHL ? b_.CreateShl(a[0], amount)
        : sg            ? b_.CreateAShr(a[0], amount)
                        : b_.CreateLShr(a[0], amount);
    break;
  }
  case TG_OP_WHERE:
    r = b_.CreateSelect(a[0], a[1], a[2]);
    break;
  case TG_OP_MULACC:
    if (fl)
      r = intrinsic(llvm::Intrinsic::fmuladd, {a[0], a[1], a[2]});
    else if (bl)
      r = b_.CreateOr(b_.CreateAnd(a[0], a[1]), a[2]);
    else
      r = b_.CreateAdd(b_.CreateMul(a[0], a[1]), a[2]);
    break;
  default:
    unimplemented(std::string("op ") + std::to_string(op) + " is not supported");
  }
  if (dt == TG_DTYPE_BFLOAT16 && op != TG_OP_WHERE) r = bf16_round(r);
  return r;
}

// ------------------------------------------------------------------------------------------
// Optimization and code generation
// ------------------------------------------------------------------------------------------

void optimize(llvm::Module& module, llvm::TargetMachine& tm, unsigned opt_level) {
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  // Unrolling and interleaving double codegen time for little gain on memory-bound kernels.
  tuning.LoopUnrolling = opt_level >= 3;
  tuning.LoopInterleaving = opt_level >= 3;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = opt_level == 1   ? llvm::OptimizationLevel::O1
                                  : opt_level >= 3 ? llvm::OptimizationLevel::O3
                                                   : llvm::OptimizationLevel::O2;
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(level);
  mpm.run(module, mam);
}

// Everything LLVM works on during one compile. After an LLVM fatal error it is abandoned, never
// used or freed again (see run_catching_fatal_errors).
struct LlvmJob {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<llvm::TargetMachine> tm;
  llvm::legacy::PassManager codegen; // declared last: destroyed before the target machine
};

// Keeps abandoned jobs reachable (leak checkers stay quiet) for the life of the process: freeing
// objects whose destructors were skipped mid-operation is not safe. A few hundred KB per failure.
void abandon(std::unique_ptr<LlvmJob> job) {
  static std::mutex mutex;
  static std::vector<std::unique_ptr<LlvmJob>> abandoned;
  std::lock_guard lock(mutex);
  abandoned.push_back(std::move(job));
}

std::vector<char> emit_object(LlvmJob& job) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  if (job.tm->addPassesToEmitFile(job.codegen, os, nullptr, llvm::CGFT_ObjectFile))
    throw PluginError(TG_ERROR_INTERNAL, "the LLVM target cannot emit object files");
  job.codegen.run(*job.module);
  return std::vector<char>(buffer.begin(), buffer.end());
}

} // namespace

tg_error* compile(const tg_compile_args* args, tg_compile_result** out_result) {
  return guard("cpu.compile", [&] {
    auto a = tg::sdk::read_args(args, "args");
    require(out_result, "out_result");
    auto start = std::chrono::steady_clock::now();
    tg::sdk::KernelIR ir;
    try {
      ir = tg::sdk::parse_kernel_ir(a.ir, a.ir_size);
    } catch (const tg::sdk::IRError& e) {
      throw PluginError(TG_ERROR_INVALID_ARGUMENT, std::string("malformed kernel IR: ") + e.what());
    }
    TargetSpec spec = resolve_target(a.target);
    unsigned opt_level = std::min(a.opt_level, 3u);
    test_hooks::rendezvous(ir.name);

    using clock = std::chrono::steady_clock;
    auto us_since = [](clock::time_point t) {
      return std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - t).count());
    };
    auto phase = clock::now();
    std::string timings;
    auto result = std::make_unique<tg_compile_result>();
    const std::string entry = symbol_name(ir.name);
    std::vector<char> object;
    auto job = std::make_unique<LlvmJob>();
    // From here on LLVM may report a fatal error (an operation the target cannot select): it
    // becomes TG_ERROR_INTERNAL instead of aborting the host process.
    std::optional<std::string> fatal = run_catching_fatal_errors([&] {
      job->module = std::make_unique<llvm::Module>(ir.name, job->context);
      job->tm = make_target_machine(spec, opt_level);
      timings += "target " + us_since(phase) + " us";
      phase = clock::now();
      job->module->setTargetTriple(spec.triple);
      job->module->setDataLayout(job->tm->createDataLayout());
      Renderer(ir, *job->module).render(entry, spec);

      std::string verify_log;
      llvm::raw_string_ostream verify_os(verify_log);
      if (llvm::verifyModule(*job->module, &verify_os)) {
        verify_os.flush();
        throw PluginError(TG_ERROR_INVALID_ARGUMENT,
                          "kernel IR of '" + ir.name + "' lowers to invalid LLVM IR (see the log)",
                          verify_log);
      }
      timings += ", render " + us_since(phase) + " us";
      phase = clock::now();
      if (opt_level > 0) optimize(*job->module, *job->tm, opt_level);
      timings += ", optimize " + us_since(phase) + " us";
      if (a.flags & TG_COMPILE_WANT_SOURCE) {
        llvm::raw_string_ostream os(result->source);
        job->module->print(os, nullptr);
        os.flush();
      }
      phase = clock::now();
      object = emit_object(*job);
      timings += ", codegen " + us_since(phase) + " us";
    });
    if (fatal) {
      abandon(std::move(job));
      throw PluginError(TG_ERROR_INTERNAL, "LLVM failed on '" + ir.name + "' for " + spec.triple + " " +
                                               spec.cpu + ": " + *fatal);
    }
    job.reset();

    BlobContents blob;
    blob.llvm_version[0] = LLVM_VERSION_MAJOR;
    blob.llvm_version[1] = LLVM_VERSION_MINOR;
    blob.llvm_version[2] = LLVM_VERSION_PATCH;
    blob.triple = spec.triple;
    blob.cpu = spec.cpu;
    blob.features = spec.features;
    blob.entry = entry;
    blob.kernel_name = ir.name;
    blob.buffer_dtypes = ir.buffer_dtypes;
    blob.scalar_dtypes = ir.scalar_dtypes;
    blob.object = std::move(object);
    result->binary = encode_blob(blob);
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start)
                  .count();
    result->log = "cpu: compiled '" + ir.name + "' for " + spec.cpu + " at O" + std::to_string(opt_level) +
                  " in " + std::to_string(us) + " us (" + std::to_string(blob.object.size()) +
                  " byte object; " + timings + ")";
    *out_result = result.release();
  });
}

tg_error* compile_result_get(const tg_compile_result* result, tg_compile_output* out) {
  return guard("cpu.compile_result_get", [&] {
    require(result, "result");
    tg_compile_output full{};
    full.struct_size = sizeof(full);
    full.binary = result->binary.data();
    full.binary_size = result->binary.size();
    full.source = result->source.empty() ? nullptr : result->source.c_str();
    full.log = result->log.c_str();
    tg::sdk::write_out(out, full, "out");
  });
}

void compile_result_destroy(tg_compile_result* result) { delete result; }

tg_error* compile_cache_key(const char* target, char* buf, size_t buf_size, size_t* out_length) {
  return guard("cpu.compile_cache_key", [&] {
    std::string key = cache_key_for(resolve_target(target));
    if (out_length != nullptr) *out_length = key.size();
    if (buf == nullptr || buf_size < key.size() + 1)
      throw PluginError(TG_ERROR_INVALID_ARGUMENT, "buffer of " + std::to_string(buf_size) +
                                                       " bytes is too small for the " +
                                                       std::to_string(key.size() + 1) + "-byte cache key");
    std::memcpy(buf, key.c_str(), key.size() + 1);
  });
}

} // namespace tg::cpu
