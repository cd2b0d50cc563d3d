// Kernel IR: builder, reader and printer for the serialized linear program that crosses the ABI.
// The format itself is defined in abi/include/tg/abi.h and docs/abi.md.
#pragma once

#include <tg/abi.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace tg::sdk {

// Malformed IR: says which instruction (or the header) and why.
class IRError : public std::runtime_error {
public:
  IRError(const std::string& what, int64_t instruction)
      : std::runtime_error(what), instruction_(instruction) {}
  int64_t instruction() const { return instruction_; } // -1 for header errors
private:
  int64_t instruction_;
};

struct Instruction {
  tg_op op = 0;
  tg_dtype dtype = TG_DTYPE_VOID;
  uint8_t flags = 0;
  uint16_t vcount = 1;
  int64_t arg0 = 0;
  int64_t arg1 = 0;
  std::vector<uint32_t> src;

  bool is_pointer() const { return (flags & TG_IR_FLAG_POINTER) != 0; }
  bool is_local() const { return (flags & TG_IR_FLAG_LOCAL) != 0; }
  double const_float() const; // CONST of a float dtype: the stored double
};

struct KernelIR {
  std::string name;
  std::vector<Instruction> instructions;
  uint32_t buffer_count = 0;           // number of DEFINE_GLOBALs (dense indices 0..n-1)
  uint32_t scalar_count = 0;           // number of DEFINE_VARs (dense indices 0..n-1)
  std::vector<tg_dtype> buffer_dtypes; // by buffer index
  std::vector<tg_dtype> scalar_dtypes; // by scalar index
  // By buffer index: the byte alignment the kernel assumes of each buffer argument's address
  // (its DEFINE_GLOBAL's arg1, or the element size where that is 0); launches must keep it.
  std::vector<uint32_t> buffer_alignments;
};

// Names and sizes of the stable codes.
const char* op_name(tg_op op);       // "ADD", or nullptr if unknown
const char* dtype_name(tg_dtype dt); // "float32", or nullptr if unknown
size_t dtype_size(tg_dtype dt);      // bytes; 0 for VOID or unknown
bool dtype_is_float(tg_dtype dt);
bool dtype_is_signed_int(tg_dtype dt);
bool dtype_is_unsigned_int(tg_dtype dt); // includes BOOL
bool op_is_comparison(tg_op op);
// Whether a program uses an IR 1.1 op (WMMA): it is then written, and must be read, as IR 1.1.
bool uses_wmma(const KernelIR& ir);
// Whether a program uses the IR 1.2 op WGMMA: it is then written, and must be read, as IR 1.2.
bool uses_wgmma(const KernelIR& ir);
// Whether a program uses the IR 1.3 op MMA: it is then written, and must be read, as IR 1.3.
bool uses_mma(const KernelIR& ir);
// Whether a program has a LOAD gated per lane (a bool vector gate, IR 1.4): it is then written, and
// must be read, as IR 1.4.
bool uses_lane_gates(const KernelIR& ir);
// Checks every MMA against the units the compile target declares (tg_matrix_unit, ABI 1.4): a
// known index, A, B and C with the unit's dtypes and lane counts (a local-memory unit's A and B:
// INDEXes into local memory of its dtypes, and strides that its atoms allow). Throws IRError naming the
// instruction and the unit.
void check_mma(const KernelIR& ir, std::span<const tg_matrix_unit> units);

// Parses and validates: header, known ops and dtypes, source counts and kinds, sources before
// use, properly nested RANGE/IF, dense buffer/scalar indices. Throws IRError.
KernelIR parse_kernel_ir(std::span<const std::byte> bytes);
KernelIR parse_kernel_ir(const void* data, size_t size);

// Re-validates an in-memory program (the builder's output goes through this in serialize()).
void validate_kernel_ir(KernelIR& ir);

std::vector<std::byte> serialize_kernel_ir(const KernelIR& ir);

// One line per instruction: "  %3 = ADD float32 %1, %2".
std::string to_string(const KernelIR& ir);

// Builds a kernel one instruction at a time; each method returns the new instruction's index.
class KernelBuilder {
public:
  using Ref = uint32_t;
  explicit KernelBuilder(std::string name);

  // alignment: bytes the kernel assumes the buffer's address (base + offset) is a multiple of;
  // 0 = the element size. The launch refuses an offset that breaks it (docs/abi.md §5.3).
  Ref global(uint32_t index, tg_dtype element, uint32_t alignment = 0);
  Ref var(uint32_t index, tg_dtype dtype);
  Ref local(int64_t count, tg_dtype element);
  Ref special(int kind, int axis);
  Ref group_id(int axis) { return special(TG_SPECIAL_GROUP_ID, axis); }
  Ref local_id(int axis) { return special(TG_SPECIAL_LOCAL_ID, axis); }
  Ref const_int(tg_dtype dtype, int64_t value);
  Ref const_float(tg_dtype dtype, double value);
  Ref i32(int32_t value) { return const_int(TG_DTYPE_INT32, value); }
  Ref f32(float value) { return const_float(TG_DTYPE_FLOAT32, value); }

  Ref range(Ref start, Ref end);
  void end_range(Ref range);
  Ref if_(Ref condition);
  void end_if(Ref if_instruction);
  void barrier();

  Ref index(Ref buffer, Ref element);
  // alignment: bytes the address is a multiple of (0 = the element's); at most the buffer's.
  Ref load(Ref pointer, uint16_t vcount = 1, uint32_t alignment = 0);
  Ref load_gated(Ref pointer, Ref gate, Ref alternative);
  void store(Ref pointer, Ref value, uint32_t alignment = 0);
  void store_gated(Ref pointer, Ref value, Ref gate, uint32_t alignment = 0);
  Ref acc(Ref initial);
  Ref assign(Ref accumulator, Ref value);

  // ALU: the result dtype is the first value operand's (BOOL for comparisons; for WHERE, src1's).
  Ref alu(tg_op op, Ref a);
  Ref alu(tg_op op, Ref a, Ref b);
  Ref alu(tg_op op, Ref a, Ref b, Ref c);
  Ref add(Ref a, Ref b) { return alu(TG_OP_ADD, a, b); }
  Ref mul(Ref a, Ref b) { return alu(TG_OP_MUL, a, b); }
  Ref cmplt(Ref a, Ref b) { return alu(TG_OP_CMPLT, a, b); }
  Ref cast(Ref value, tg_dtype to);
  Ref bitcast(Ref value, tg_dtype to);
  Ref vectorize(std::span<const Ref> lanes);
  Ref gep(Ref vector, uint16_t lane);
  // IR 1.1: one warp-wide D = A * B + C of a TG_WMMA_* shape (tg/sdk/wmma.hpp); dtype of c.
  Ref wmma(Ref a, Ref b, Ref c, int64_t shape);
  // IR 1.2: one warpgroup D = A * B + C of a TG_WGMMA_* shape; a and b are INDEXes into local
  // memory, strides the packed core-matrix strides (wgmma_pack in tg/sdk/wmma.hpp); dtype of c.
  Ref wgmma(Ref a, Ref b, Ref c, int64_t shape, int64_t strides);
  // IR 1.3: D = A * B + C on matrix unit `unit` of the target (tg_matrix_unit); dtype of c. For a
  // local-memory unit (ABI 1.5) a and b are INDEXes into local memory, `unit` may carry TG_MMA_*
  // flags and `strides` is the packed atom strides (matrix_strides_pack).
  Ref mma(Ref a, Ref b, Ref c, int64_t unit, int64_t strides = 0);

  // Appends any instruction as given (for tests that need malformed or unusual programs).
  Ref emit(Instruction instruction);

  const KernelIR& ir() const { return ir_; }
  // Validates and serializes; throws IRError if the program is malformed.
  std::vector<std::byte> serialize();

private:
  const Instruction& at(Ref ref) const;
  KernelIR ir_;
};

} // namespace tg::sdk
