// Matrix units as data (ABI 1.4, tg_matrix_unit): which matrix element each cooperating work item
// holds, where a local-memory unit (ABI 1.5) reads its operands' tiles, checks that a declaration is well
// formed, and helpers to write one. The interpreter, the core's lowering, tg conform and the plugins read the
// same description (docs/abi.md, "Matrix units").
#pragma once

#include <tg/abi.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace tg::sdk {

// Row and column of a matrix element.
struct MatrixElement {
  int row = 0, col = 0;
  bool operator==(const MatrixElement&) const = default;
};

enum class MatrixOperand { a, b, c };
const char* operand_name(MatrixOperand op); // "A", "B", "C"

inline uint32_t matrix_items(const tg_matrix_unit& u) { return 1u << u.item_bits; }
inline uint32_t matrix_lanes(const tg_matrix_layout& l) { return 1u << l.element_bits; }
const tg_matrix_layout& matrix_layout(const tg_matrix_unit& u, MatrixOperand op);
// Rows x columns of an operand: A m x k, B k x n, C/D m x n.
MatrixElement matrix_extent(const tg_matrix_unit& u, MatrixOperand op);

// The position element `element` of work item `item` holds (abi.h: XOR of the entries of the
// set bits).
MatrixElement matrix_element(const tg_matrix_layout& l, uint32_t item, uint32_t element);

// The unit's name as a string (bounded by the field).
std::string matrix_unit_name(const tg_matrix_unit& u);
// "m16n8k16 float16*float16+float32 over 32 items": for messages and DEBUG output.
std::string matrix_unit_summary(const tg_matrix_unit& u);

// Why a declaration is not well formed (abi.h's rules: powers of two, entries inside the matrix,
// C held exactly once, A and B at least once, known dtypes and source), or "" when it is.
std::string matrix_unit_error(const tg_matrix_unit& u);

// Writing a layout: entry b of `items` is where bit b of the work item moves the position, entry b
// of `elements` where bit b of the element index does (abi.h). element_bits = elements.size().
tg_matrix_layout matrix_layout(std::initializer_list<MatrixElement> items,
                               std::initializer_list<MatrixElement> elements);
// A register-operand unit; struct_size set, the name truncated to fit.
tg_matrix_unit matrix_unit(const std::string& name, uint32_t m, uint32_t n, uint32_t k, uint32_t item_bits,
                           tg_dtype a_dtype, tg_dtype b_dtype, tg_dtype c_dtype, const tg_matrix_layout& a,
                           const tg_matrix_layout& b, const tg_matrix_layout& c);

// ---- ABI 1.5: units that read A and B from local memory (TG_MATRIX_SOURCE_LOCAL) ----

inline bool matrix_local(const tg_matrix_unit& u) { return u.operand_source == TG_MATRIX_SOURCE_LOCAL; }
const tg_matrix_atom& matrix_atom(const tg_matrix_unit& u, MatrixOperand op); // A or B
// The position element `offset` of an atom holds (abi.h: XOR of the entries of the set bits).
MatrixElement atom_element(const tg_matrix_atom& atom, uint32_t offset);
// R x C of a well-formed atom: one more than the OR of its row and col entries.
MatrixElement atom_extent(const tg_matrix_atom& atom);
// The inverse: the offset within the atom of (row, col), row < R and col < C (well formed).
uint32_t atom_offset(const tg_matrix_atom& atom, MatrixElement at);
// The offsets of each bit of a row and of a column (the inverse map is linear too):
// atom_offset(row, col) = XOR of row_bits[b] over the set bits of row, col_bits likewise.
struct AtomInverse {
  std::vector<uint32_t> row_bits, col_bits;
};
AtomInverse atom_inverse(const tg_matrix_atom& atom);
// Why an atom is not well formed (a bijection onto a rectangle of powers of two), or "".
std::string atom_error(const tg_matrix_atom& atom);

// MMA's arg1 in its local form: elements between atoms along each operand's rows and columns.
struct MatrixStrides {
  int64_t a_row = 0, a_col = 0, b_row = 0, b_col = 0;
};
int64_t matrix_strides_pack(const MatrixStrides& s); // 16 bits each, A rows first
MatrixStrides matrix_strides_unpack(int64_t arg1);
// Why strides cannot be packed (negative or above 65535), or "".
std::string matrix_strides_error(const MatrixStrides& s);
// The element of local memory the unit reads for operand position (row, col) of an operand that
// starts at element `start` (abi.h, MMA's local form).
uint64_t matrix_local_index(const tg_matrix_unit& u, MatrixOperand op, const MatrixStrides& s, uint64_t start,
                            int row, int col);

// Writing an atom: entry b is where bit b of the element offset moves the position.
tg_matrix_atom matrix_atom(std::initializer_list<MatrixElement> bits);
// A local-memory unit; a and b (register layouts) zero, struct_size set, the name truncated.
tg_matrix_unit matrix_unit_local(const std::string& name, uint32_t m, uint32_t n, uint32_t k,
                                 uint32_t item_bits, tg_dtype a_dtype, tg_dtype b_dtype, tg_dtype c_dtype,
                                 const tg_matrix_atom& a, const tg_matrix_atom& b, const tg_matrix_layout& c);

// IR 1.1 WMMA m16n8k16 (a 1.2/1.3 plugin's TG_FEATURE_TENSOR_CORES with the `tensor_cores`
// attribute naming m16n8k16) as a description, for the given input dtype (FLOAT16 or BFLOAT16):
// the host lowers such a device through it and emits WMMA instead of MMA.
tg_matrix_unit wmma_m16n8k16_unit(tg_dtype input);

} // namespace tg::sdk
