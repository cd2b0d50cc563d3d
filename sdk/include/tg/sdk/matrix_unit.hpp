// Matrix units as data (ABI 1.4, tg_matrix_unit): which matrix element each cooperating work item
// holds, checks that a declaration is well formed, and helpers to write one. The interpreter, the
// core's lowering, tg conform and the plugins read the same description (docs/abi.md, "Matrix
// units").
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

// IR 1.1 WMMA m16n8k16 (a 1.2/1.3 plugin's TG_FEATURE_TENSOR_CORES with the `tensor_cores`
// attribute naming m16n8k16) as a description, for the given input dtype (FLOAT16 or BFLOAT16):
// the host lowers such a device through it and emits WMMA instead of MMA.
tg_matrix_unit wmma_m16n8k16_unit(tg_dtype input);

} // namespace tg::sdk
