// Kernel IR -> LLVM IR (see tg/sdk/llvm_renderer.hpp).
#include <tg/sdk/llvm_renderer.hpp>

#include <tg/sdk/plugin.hpp>
#include <tg/sdk/scopes.hpp>

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/Passes/PassBuilder.h>

#include <bit>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tg::sdk {
namespace {

[[noreturn]] void unimplemented(const std::string& what) { throw PluginError(TG_ERROR_UNIMPLEMENTED, what); }

// Round a float to the nearest bfloat16 (ties to even), as a float.
float bf16_round_host(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return std::bit_cast<float>((bits | 0x00400000u) & 0xffff0000u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return std::bit_cast<float>(bits & 0xffff0000u);
}

class Renderer {
public:
  using V = llvm::Value*;

  Renderer(const KernelIR& ir, llvm::Module& module, LlvmKernelShape& shape, const LlvmRenderOptions& options)
      : ir_(ir), ctx_(module.getContext()), mod_(module), shape_(shape), options_(options), b_(ctx_) {}

  void render(const std::string& fn_name);

private:
  using Loop = LlvmLoop;

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
      unimplemented(std::string("dtype ") + (dtype_name(dt) ? dtype_name(dt) : "?") + " has no value type");
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
  static bool is_float(tg_dtype dt) { return dtype_is_float(dt); }
  static bool is_signed(tg_dtype dt) { return dtype_is_signed_int(dt); }

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
  // A matrix unit operand's bits. bfloat16 values that are still widened bits (a load's, as
  // bf16_bits_to_float makes them) give those bits back: rounding them again changes nothing but
  // costs instructions next to every MMA.
  V mma_operand(V v, tg_dtype dt, unsigned vc) {
    if (dt == TG_DTYPE_BFLOAT16)
      if (auto* cast = llvm::dyn_cast<llvm::BitCastInst>(v))
        if (auto* shl = llvm::dyn_cast<llvm::BinaryOperator>(cast->getOperand(0));
            shl && shl->getOpcode() == llvm::Instruction::Shl)
          if (auto* ext = llvm::dyn_cast<llvm::ZExtInst>(shl->getOperand(0));
              ext && ext->getOperand(0)->getType() == mem_type(dt, vc) &&
              shl->getOperand(1) == llvm::ConstantInt::get(shl->getType(), 16))
            return ext->getOperand(0);
    return reg_to_mem(v, dt, vc);
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

  void emit(uint32_t i);
  V emit_alu(const Instruction& ins);
  V exp2_polynomial(V x, unsigned vc); // x: float, or vc floats
  V intrinsic(llvm::Intrinsic::ID id, std::initializer_list<V> args) {
    llvm::Function* f = llvm::Intrinsic::getDeclaration(&mod_, id, {(*args.begin())->getType()});
    return b_.CreateCall(f, args);
  }

  const KernelIR& ir_;
  llvm::LLVMContext& ctx_;
  llvm::Module& mod_;
  LlvmKernelShape& shape_;
  const LlvmRenderOptions& options_;
  llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;
  std::vector<V> vals_;
  std::vector<llvm::AllocaInst*> slots_; // accumulators and values used outside their scope
  std::vector<char> spill_;
  std::unordered_map<uint32_t, Loop> loops_;
  std::unordered_map<uint32_t, llvm::BasicBlock*> ifs_; // IF -> its merge block
};

void Renderer::render(const std::string& fn_name) {
  // A value defined inside a RANGE or IF and used after it closes does not dominate the use in
  // LLVM IR: such values live in an alloca (mem2reg turns them back into registers/phis).
  spill_ = values_used_outside_scope(ir_);

  fn_ = shape_.create_function(mod_, fn_name);
  entry_ = llvm::BasicBlock::Create(ctx_, "entry", fn_);
  b_.SetInsertPoint(entry_);

  const auto& ins_list = ir_.instructions;
  vals_.assign(ins_list.size(), nullptr);
  slots_.assign(ins_list.size(), nullptr);

  // Arguments are read once, in the entry block.
  for (size_t i = 0; i < ins_list.size(); ++i) {
    const auto& ins = ins_list[i];
    if (ins.op == TG_OP_DEFINE_GLOBAL) {
      V raw = shape_.buffer_pointer(b_, uint32_t(ins.arg0));
      vals_[i] = b_.CreateBitCast(raw, mem_scalar_type(ins.dtype)->getPointerTo());
    } else if (ins.op == TG_OP_DEFINE_LOCAL) {
      V raw = shape_.local_memory(b_, mem_scalar_type(ins.dtype), uint64_t(ins.arg0),
                                  "local" + std::to_string(i));
      vals_[i] = b_.CreateBitCast(raw, mem_scalar_type(ins.dtype)->getPointerTo());
    } else if (ins.op == TG_OP_DEFINE_VAR) {
      V raw = shape_.scalar_bits(b_, uint32_t(ins.arg0));
      if (is_float(ins.dtype))
        vals_[i] = cast_value(b_.CreateBitCast(raw, b_.getDoubleTy()), TG_DTYPE_FLOAT64, ins.dtype, 1);
      else if (ins.dtype == TG_DTYPE_BOOL)
        vals_[i] = b_.CreateICmpNE(raw, b_.getInt64(0));
      else
        vals_[i] = b_.CreateTrunc(raw, scalar_type(ins.dtype)); // no-op for 64-bit
    }
  }

  shape_.begin_work_items(b_);
  for (uint32_t i = 0; i < ins_list.size(); ++i) {
    emit(i);
    if (spill_[i] && vals_[i] != nullptr) {
      slots_[i] = make_slot(vals_[i]->getType(), "spill" + std::to_string(i));
      b_.CreateStore(vals_[i], slots_[i]);
    }
  }
  shape_.end_work_items(b_);
  b_.CreateRetVoid();
}

void Renderer::emit(uint32_t i) {
  const auto& ins = ir_.instructions[i];
  const unsigned vc = ins.vcount;
  auto src_ins = [&](size_t k) -> const Instruction& { return ir_.instructions[ins.src[k]]; };
  switch (ins.op) {
  case TG_OP_DEFINE_GLOBAL:
  case TG_OP_DEFINE_LOCAL:
  case TG_OP_DEFINE_VAR:
    return; // done in the entry block
  case TG_OP_BARRIER:
    shape_.barrier(b_);
    return;
  case TG_OP_SPECIAL:
    vals_[i] = shape_.special(b_, int(ins.arg0), int(ins.arg1));
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
    Loop loop = open_llvm_loop(b_, get(ins.src[0]), get(ins.src[1]), "r" + std::to_string(i));
    loops_[i] = loop;
    vals_[i] = loop.counter;
    return;
  }
  case TG_OP_ENDRANGE:
    close_llvm_loop(b_, loops_.at(ins.src[0]));
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
    llvm::Type* elem = mem_scalar_type(src_ins(0).dtype);
    const bool sg = is_signed(src_ins(1).dtype);
    // x + c as two steps, base + x then + c: the loads of a window (x + 0, x + 1, x + 56, ...)
    // share base + x and take c as an address displacement. One GEP of the 32-bit sum would be
    // widened after the add (LLVM 14 does not split sext(add nsw)): an add and a sign extension
    // per load, a third of a depthwise convolution's inner loop. The core's index narrowing
    // (kernel/codegen/index_width.cpp) gives 32-bit indices only where no sum overflows.
    const Instruction& ix = src_ins(1);
    if (ix.op == TG_OP_ADD && ix.vcount == 1 && sg)
      for (int k = 0; k < 2; ++k) {
        const Instruction& c = ir_.instructions[ix.src[size_t(k)]];
        const Instruction& x = ir_.instructions[ix.src[size_t(1 - k)]];
        if (c.op != TG_OP_CONST || x.vcount != 1) continue;
        V base = b_.CreateGEP(elem, get(ins.src[0]),
                              b_.CreateIntCast(get(ix.src[size_t(1 - k)]), b_.getInt64Ty(), sg));
        vals_[i] = b_.CreateGEP(elem, base, b_.getInt64(uint64_t(c.arg0)));
        return;
      }
    V idx = b_.CreateIntCast(get(ins.src[1]), b_.getInt64Ty(), sg);
    vals_[i] = b_.CreateGEP(elem, get(ins.src[0]), idx);
    return;
  }
  case TG_OP_LOAD: {
    V ptr = get(ins.src[0]);
    tg_dtype dt = ins.dtype;
    auto load = [&]() -> V {
      llvm::Type* mt = mem_type(dt, vc);
      V p = vc > 1 ? b_.CreateBitCast(ptr, mt->getPointerTo()) : ptr;
      return mem_to_reg(b_.CreateAlignedLoad(mt, p, llvm::Align(dtype_size(dt))), dt);
    };
    if (ins.src.size() == 1) {
      vals_[i] = load();
    } else if (src_ins(1).vcount > 1) { // gated per lane (IR 1.4): a masked load reads no masked lane
      llvm::Type* mt = mem_type(dt, vc);
      V mask = get(ins.src[1]);
      V p = b_.CreateBitCast(ptr, mt->getPointerTo());
      V loaded = mem_to_reg(b_.CreateMaskedLoad(mt, p, llvm::Align(dtype_size(dt)), mask), dt);
      vals_[i] = b_.CreateSelect(mask, loaded, get(ins.src[2], vc));
    } else {
      vals_[i] = gated(scalar_gate(ins.src[1], "LOAD"), get(ins.src[2], vc), load);
    }
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
      b_.CreateAlignedStore(m, p, llvm::Align(dtype_size(dt)));
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
  case TG_OP_MMA: {
    // The unit works on bit patterns: operands go in, and D comes back, in memory representation.
    V operands[3];
    for (size_t k = 0; k < 3; ++k)
      operands[k] = mma_operand(get(ins.src[k]), src_ins(k).dtype, src_ins(k).vcount);
    V d = shape_.mma(b_, ins.arg0, operands[0], operands[1], operands[2]);
    if (d == nullptr || d->getType() != mem_type(ins.dtype, vc))
      throw PluginError(TG_ERROR_INTERNAL, "MMA on matrix unit " + std::to_string(ins.arg0) +
                                               " gave a value of another type than its C operand");
    vals_[i] = mem_to_reg(d, ins.dtype);
    return;
  }
  default:
    if (ins.op >= TG_OP_NEG && ins.op <= TG_OP_MULACC) {
      vals_[i] = emit_alu(ins);
      return;
    }
    unimplemented(std::string("op ") + (op_name(ins.op) ? op_name(ins.op) : std::to_string(ins.op)) +
                  " is not supported");
  }
}

// 2^x for float (scalar or vector) without a call: x = n + f with n = rint(x), |f| <= 1/2; 2^f by
// its Taylor series to degree 7 (truncation under 1e-8 relative), evaluated by fused
// multiply-adds; times 2^n made of two powers of two in the normal range, so a result below
// FLT_MIN comes out of one rounding. Within 2 ulp of exp2f; NaN stays NaN, +inf gives +inf and
// -inf gives 0. libm's exp2f is a call per lane, which keeps a softmax's kernel scalar.
Renderer::V Renderer::exp2_polynomial(V x, unsigned vc) {
  llvm::Type* ft = x->getType();
  llvm::Type* it = vec(b_.getInt32Ty(), vc);
  auto f = [&](double v) { return llvm::ConstantFP::get(ft, v); };
  auto i = [&](int64_t v) { return llvm::ConstantInt::get(it, uint64_t(v), true); };
  // beyond [-151, 129] the result is 0 or inf already
  V xc = b_.CreateMinNum(b_.CreateMaxNum(x, f(-151.0)), f(129.0));
  V n = b_.CreateUnaryIntrinsic(llvm::Intrinsic::rint, xc);
  V frac = b_.CreateFSub(xc, n);
  double coef[8] = {1.0};
  for (int k = 1; k < 8; ++k) coef[k] = coef[k - 1] * 0.6931471805599453 / k; // ln(2)^k / k!
  V p = f(coef[7]);
  for (int k = 6; k >= 0; --k) p = intrinsic(llvm::Intrinsic::fmuladd, {p, frac, f(coef[k])});
  V ni = b_.CreateFPToSI(n, it);
  V half = b_.CreateAShr(ni, i(1));
  auto power = [&](V e) { return b_.CreateBitCast(b_.CreateShl(b_.CreateAdd(e, i(127)), i(23)), ft); };
  V r = b_.CreateFMul(b_.CreateFMul(p, power(half)), power(b_.CreateSub(ni, half)));
  return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, r);
}

Renderer::V Renderer::emit_alu(const Instruction& ins) {
  const unsigned vc = ins.vcount;
  const tg_op op = ins.op;
  // Operand dtype: the sources' (comparisons yield bool; WHERE's condition is bool).
  const tg_dtype dt = op == TG_OP_WHERE ? ins.dtype : ir_.instructions[ins.src[0]].dtype;
  std::vector<V> a;
  for (uint32_t s : ins.src) a.push_back(get(s, vc));
  const bool fl = is_float(dt), sg = is_signed(dt), bl = dt == TG_DTYPE_BOOL;
  llvm::Type* t = a[0]->getType();
  auto need_float = [&] {
    if (!fl) unimplemented(std::string(op_name(op)) + " on " + dtype_name(dt) + " is not supported");
  };
  auto need_int = [&] {
    if (fl) unimplemented(std::string(op_name(op)) + " on " + dtype_name(dt) + " is not supported");
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
  auto via_float = [&](const std::function<V(V)>& fn) -> V {
    need_float();
    if (dt != TG_DTYPE_FLOAT16 || !options_.half_math_in_float) return fn(a[0]);
    return b_.CreateFPTrunc(fn(b_.CreateFPExt(a[0], vec(b_.getFloatTy(), vc))), t);
  };
  auto math_via_float = [&](llvm::Intrinsic::ID id) {
    return via_float([&](V x) { return intrinsic(id, {x}); });
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
    // (the polynomial works on float: not on float64, nor on half rendered natively for tests)
    if (options_.polynomial_exp2 && dt != TG_DTYPE_FLOAT64 &&
        (dt != TG_DTYPE_FLOAT16 || options_.half_math_in_float))
      r = via_float([&](V x) { return exp2_polynomial(x, vc); });
    else
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

} // namespace

LlvmLoop open_llvm_loop(llvm::IRBuilder<>& b, llvm::Value* start, llvm::Value* end, const std::string& name) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& ctx = b.getContext();
  llvm::BasicBlock* pre = b.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(ctx, name + ".head", fn);
  auto* body = llvm::BasicBlock::Create(ctx, name + ".body", fn);
  auto* exit = llvm::BasicBlock::Create(ctx, name + ".exit");
  b.CreateBr(header);
  b.SetInsertPoint(header);
  auto* phi = b.CreatePHI(start->getType(), 2, name);
  phi->addIncoming(start, pre);
  b.CreateCondBr(b.CreateICmpSLT(phi, end), body, exit);
  b.SetInsertPoint(body);
  return {header, exit, phi};
}

void close_llvm_loop(llvm::IRBuilder<>& b, const LlvmLoop& loop) {
  llvm::Value* next = b.CreateAdd(loop.counter, llvm::ConstantInt::get(loop.counter->getType(), 1));
  loop.counter->addIncoming(next, b.GetInsertBlock());
  b.CreateBr(loop.header);
  loop.exit->insertInto(b.GetInsertBlock()->getParent());
  b.SetInsertPoint(loop.exit);
}

llvm::Value* LlvmKernelShape::local_memory(llvm::IRBuilder<>&, llvm::Type*, uint64_t, const std::string&) {
  unimplemented("DEFINE_LOCAL needs work-group local memory, which this device does not provide "
                "(it does not declare TG_FEATURE_LOCAL_MEMORY)");
}

void LlvmKernelShape::barrier(llvm::IRBuilder<>&) {
  unimplemented("BARRIER needs work-group synchronization, which this device does not provide "
                "(it does not declare TG_FEATURE_BARRIER)");
}

llvm::Value* LlvmKernelShape::mma(llvm::IRBuilder<>&, int64_t unit, llvm::Value*, llvm::Value*,
                                  llvm::Value*) {
  unimplemented("MMA on matrix unit " + std::to_string(unit) +
                " needs a matrix unit, and this device declares none");
}

void render_llvm_kernel(const KernelIR& ir, llvm::Module& module, LlvmKernelShape& shape,
                        const std::string& fn_name, const LlvmRenderOptions& options) {
  Renderer(ir, module, shape, options).render(fn_name);
}

void optimize_llvm_module(llvm::Module& module, llvm::TargetMachine& tm, unsigned opt_level) {
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

} // namespace tg::sdk
