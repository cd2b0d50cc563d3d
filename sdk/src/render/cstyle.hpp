// The C-family base renderer: walks a validated KernelIR once and emits statements; a dialect
// subclass supplies the spellings (types, literals, casts, memory access, ids, math) and the
// frame around the body (signature, parameters, helpers). Private to tg_sdk_render.
#pragma once

#include <tg/sdk/render/render.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tg::sdk::render {

class CStyle {
public:
  CStyle(Dialect dialect, const KernelIR& ir, const Options& options);
  virtual ~CStyle() = default;
  CStyle(const CStyle&) = delete;
  CStyle& operator=(const CStyle&) = delete;

  Source render();

protected:
  // ---- what the dialect spells (scalar types are value dtypes: never FLOAT16/BFLOAT16) ----
  virtual std::string type(tg_dtype dt) const = 0;                // "float", "int64_t", "bool"
  virtual std::string memory_type(tg_dtype dt, bool local) const; // element type in memory
  virtual std::string cast(tg_dtype to, const std::string& x) const {
    return "((" + type(to) + ")(" + x + "))";
  }
  virtual std::string int_literal(int64_t v, tg_dtype dt) const;
  virtual std::string suffix64(bool is_unsigned) const { return is_unsigned ? "ULL" : "LL"; }
  virtual std::string float_suffix() const { return "f"; }
  virtual std::string double_suffix() const { return ""; }
  virtual std::string float_literal(double v, tg_dtype dt) const;         // dt FLOAT32 or FLOAT64
  virtual std::string nonfinite_literal(double v, tg_dtype dt) const = 0; // inf, -inf, NaN
  virtual std::string special(int64_t kind, int64_t axis) const = 0;
  virtual std::string barrier() const = 0;
  // A BARRIER that lets the latest `in_flight` groups of async copies stay in flight (its arg0,
  // docs/abi.md): a dialect without such groups waits for all, as barrier() does.
  virtual std::string barrier_in_flight(int64_t) const { return barrier(); }
  virtual std::string local_array(const std::string& name, tg_dtype dt, int64_t count) const = 0;
  // SQRT/EXP2/LOG2/SIN/TRUNC of a float or double: the overloaded name (OpenCL, Metal, GLSL);
  // C and CUDA add the `f` suffix for float.
  virtual std::string math(tg_op op, tg_dtype dt, const std::string& x) const;
  static const char* math_name(tg_op op);
  // Element access and the conversions between memory and value representations.
  virtual std::string element(const std::string& base, const std::string& idx, bool local) const;
  virtual std::string load(tg_dtype dt, const std::string& base, const std::string& idx, bool local) const;
  // A type whose one read loads n consecutive elements of local memory (the lowering emits such
  // vector LOADs only at multiples of their size: 16 bytes, or 4 for a float16/bfloat16 pair read
  // as a tensor-core fragment word), else "": one read per lane.
  virtual std::string local_vector_type(tg_dtype /*dt*/, unsigned /*n*/) const { return ""; }
  // The value (a float for float16/bfloat16) of lane k of such a vector variable.
  virtual std::string local_vector_lane(tg_dtype /*dt*/, const std::string& var, unsigned k) const {
    return var + "." + "xyzw"[k];
  }
  // A whole-vector type for a LOAD/STORE whose arg0 says its address is aligned to the vector's
  // size (CUDA: float4, uint4), its lanes as values, and a vector of it built from lanes; "" = none.
  virtual std::string aligned_vector_type(tg_dtype /*dt*/, unsigned /*n*/) const { return ""; }
  virtual std::string aligned_vector_lane(tg_dtype /*dt*/, const std::string& /*var*/, unsigned /*k*/) const {
    return "";
  }
  virtual std::string aligned_vector_make(tg_dtype /*dt*/, const std::vector<std::string>& /*lanes*/) const {
    return "";
  }
  virtual std::string store(tg_dtype dt, const std::string& base, const std::string& idx, bool local,
                            const std::string& value) const;
  // Rounding a float value to float16/bfloat16 (result is float).
  virtual std::string round_half(const std::string& x) const { return "tg_h2f(tg_f2h(" + x + "))"; }
  virtual std::string round_bf16(const std::string& x) const { return "tg_bf2f(tg_f2bf(" + x + "))"; }
  // Bits of a float value as the unsigned integer of its width (16: float16, 32, 64) and back.
  virtual std::string float_bits(int width, const std::string& x) const = 0;
  virtual std::string bits_float(int width, const std::string& u) const = 0;
  virtual std::string bf16_bits(const std::string& x) const { return "tg_f2bf(" + x + ")"; }
  virtual std::string bits_bf16(const std::string& u) const {
    return "tg_bf2f(" + cast(TG_DTYPE_UINT32, u) + ")";
  }
  virtual std::string mod(tg_dtype dt, const std::string& a, const std::string& b) const;
  // Integer + - * << wrap: false where the language already wraps (GLSL).
  virtual bool wraps_natively() const { return false; }
  // Refuses what the dialect cannot do (called once per instruction before rendering).
  virtual void check(uint32_t i, const Instruction& ins) const;
  // How scalars arrive; value expression of scalar k inside the body.
  virtual tg_dtype passed_as(tg_dtype dt) const;
  virtual std::string scalar_value(uint32_t k, tg_dtype dt) const;
  virtual std::string scalar_name(uint32_t k) const { return "s" + std::to_string(k); }
  // IR 1.1 WMMA: the statement that updates the D lanes `d` (float variables holding C) with
  // A * B from the lanes `a` and `b` (float values of `input` dtype); "" where the dialect has no
  // matrix unit (check refuses the op then). `a_words`/`b_words` hold, per pair of lanes (2j,
  // 2j+1), a vector variable from local memory whose lanes (0, 1) are that pair, else "" (then the
  // pair is packed from the float lanes).
  virtual std::string wmma(int64_t /*shape*/, tg_dtype /*input*/, const std::vector<std::string>& /*a*/,
                           const std::vector<std::string>& /*b*/, const std::vector<std::string>& /*d*/,
                           const std::vector<std::string>& /*a_words*/,
                           const std::vector<std::string>& /*b_words*/) const {
    return "";
  }
  virtual bool has_wmma() const { return false; }
  // IR 1.2 WGMMA: the statement that updates the D lanes `d` (float variables holding C) of this
  // work item with A * B, A and B read by the warpgroup from local memory at the addresses `a` and
  // `b` (C expressions of pointers) in the core-matrix layout with the packed strides (wmma.hpp).
  // `first`: no WGMMA of this run of consecutive ones was issued before it; `last`: the run ends
  // here (the next instruction that is not index arithmetic is not a WGMMA), so the results must be
  // complete after the statement. "" where the dialect has none (check refuses the op then).
  virtual std::string wgmma(int64_t /*shape*/, tg_dtype /*input*/, const std::string& /*a*/,
                            const std::string& /*b*/, int64_t /*strides*/,
                            const std::vector<std::string>& /*d*/, bool /*first*/, bool /*last*/) const {
    return "";
  }
  virtual bool has_wgmma() const { return false; }
  // A 16-byte copy from global to local memory that does not pass through registers (CUDA:
  // cp.async.cg), as one statement from the addresses `local` and `global` (C pointer
  // expressions); "" where the dialect has none or does not want it for this program. The renderer
  // uses it for a STORE into local memory of a 16-byte LOAD from a global buffer that the program
  // never stores to, the LOAD read by nothing else and in the STORE's scope (async_copy_loads_);
  // the dialect's barrier() must then first wait for the copies (async_copies_).
  virtual std::string async_copy(const std::string& /*local*/, const std::string& /*global*/) const {
    return "";
  }
  // A line to put before the loop that RANGE instruction i opens (a pragma), or "".
  virtual std::string loop_pragma(uint32_t /*i*/) const { return ""; }
  // A line to put after the loop that RANGE instruction i opens (CUDA: the wait for WGMMAs whose
  // reads were deferred, kWgmmaDeferReads), or "".
  virtual std::string loop_end(uint32_t /*i*/) const { return ""; }
  // Indentation level of the body's statements inside the entry function.
  virtual int body_depth() const { return 1; }
  // The whole translation unit around the body lines (already indented by one level).
  virtual std::string assemble(const std::string& body) = 0;
  virtual std::string entry_name() const { return "tg_kernel_" + sanitized_name(); }

  [[noreturn]] void refuse(uint32_t i, const std::string& why) const;
  std::string sanitized_name() const;
  bool uses(tg_dtype dt) const; // any value, buffer or scalar of this dtype
  std::string value_type(tg_dtype dt) const { return type(value_dtype(dt)); }
  static tg_dtype value_dtype(tg_dtype dt);         // FLOAT16/BFLOAT16 -> FLOAT32
  std::string literal(double v, tg_dtype dt) const; // a value of dt (floats or ints)
  std::string convert(tg_dtype from, tg_dtype to, const std::string& x) const; // CAST semantics
  std::string narrow(tg_dtype dt, const std::string& x) const;  // back to a < 32-bit integer type
  std::string rounded(tg_dtype dt, const std::string& x) const; // to float16/bfloat16 if dt is one

  const Dialect dialect_;
  const KernelIR& ir_;
  const Options& options_;
  Source out_;
  std::vector<std::string> locals_; // DEFINE_LOCAL declarations
  bool async_copies_ = false;       // some STORE is an async_copy: barrier() waits for them first

private:
  std::string lane(uint32_t s, unsigned k) const; // lane k of value s (scalars broadcast)
  std::string lane_name(uint32_t i, unsigned k) const;
  void define(uint32_t i, unsigned k, const std::string& type_name, const std::string& expr);
  void line(const std::string& text);
  void emit(uint32_t i);
  std::string alu(uint32_t i, unsigned k) const;
  std::string bool_alu(uint32_t i, tg_op op, const std::vector<std::string>& a) const;
  std::string int_arith(tg_dtype dt, const char* op, const std::string& a, const std::string& b) const;
  std::string bitcast(tg_dtype from, tg_dtype to, const std::string& x) const;
  std::string element_index(uint32_t index_ins, unsigned k) const;

  std::vector<std::vector<std::string>> lanes_; // per instruction: expression of each lane
  std::vector<char> hoisted_;                   // declared at the top of the body
  std::map<uint32_t, std::string> pair_loads_;  // 2-lane vector LOADs of local memory -> variable
  std::vector<char> async_copy_loads_;          // LOADs moved by their STORE as async_copy
  void find_async_copies();
  std::pair<uint32_t, unsigned> origin(uint32_t i, unsigned k) const;
  std::vector<std::string> words(uint32_t fragment) const;
  // Whether WGMMA i ends its run of WGMMAs (see wgmma above).
  bool wgmma_run_ends(uint32_t i) const;
  std::vector<uint32_t> users(uint32_t v) const;
  bool wgmma_chain_into_accumulator(uint32_t i) const;
  bool wgmma_open_ = false;           // a WGMMA run was started and not yet completed
  std::vector<tg_dtype> index_dtype_; // INDEX: dtype of its index variable
  std::vector<std::string> decls_, body_;
  int depth_ = 1;
};

// Helper functions for float16/bfloat16 <-> float in plain integer code, spelled for a dialect:
// `fn` prefixes each function ("static inline " in C), u16/u32/f32 name the types,
// cast_u16/cast_u32/cast_f32 open a conversion ("(uint16_t)(" or "uint16_t("),
// as_u32/as_f32 open a bit reinterpretation call.
struct HelperSpelling {
  std::string fn, u16, u32, f32, cast_u16, cast_u32, cast_f32, as_u32, as_f32;
};
std::string half_helpers(const HelperSpelling& s); // tg_f2h, tg_h2f
std::string bf16_helpers(const HelperSpelling& s); // tg_f2bf, tg_bf2f

// Host-side rounding of constants, matching what the kernels compute.
double round_to_half(double v);
double round_to_bf16(double v);

} // namespace tg::sdk::render
