#include <tg/sdk/matrix_unit.hpp>

#include <algorithm>
#include <cstring>

namespace tg::sdk {
namespace {

bool power_of_two(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

bool known_dtype(tg_dtype d) { return d > TG_DTYPE_BOOL && d < TG_DTYPE_COUNT; }

std::string dtype_word(tg_dtype d) {
  static const char* names[] = {"void",   "bool",  "int8",   "uint8",   "int16",    "uint16",  "int32",
                                "uint32", "int64", "uint64", "float16", "bfloat16", "float32", "float64"};
  return d >= 0 && d < TG_DTYPE_COUNT ? names[d] : "dtype " + std::to_string(d);
}

} // namespace

const char* operand_name(MatrixOperand op) {
  return op == MatrixOperand::a ? "A" : op == MatrixOperand::b ? "B" : "C";
}

const tg_matrix_layout& matrix_layout(const tg_matrix_unit& u, MatrixOperand op) {
  return op == MatrixOperand::a ? u.a : op == MatrixOperand::b ? u.b : u.c;
}

MatrixElement matrix_extent(const tg_matrix_unit& u, MatrixOperand op) {
  if (op == MatrixOperand::a) return {int(u.m), int(u.k)};
  if (op == MatrixOperand::b) return {int(u.k), int(u.n)};
  return {int(u.m), int(u.n)};
}

MatrixElement matrix_element(const tg_matrix_layout& l, uint32_t item, uint32_t element) {
  MatrixElement e;
  for (int b = 0; b < TG_MATRIX_MAX_BITS; ++b) {
    if (item >> b & 1) {
      e.row ^= l.item_row[b];
      e.col ^= l.item_col[b];
    }
    if (element >> b & 1) {
      e.row ^= l.element_row[b];
      e.col ^= l.element_col[b];
    }
  }
  return e;
}

std::string matrix_unit_name(const tg_matrix_unit& u) {
  return std::string(u.name, strnlen(u.name, sizeof u.name));
}

std::string matrix_unit_summary(const tg_matrix_unit& u) {
  return "m" + std::to_string(u.m) + "n" + std::to_string(u.n) + "k" + std::to_string(u.k) + " " +
         dtype_word(u.a_dtype) + "*" + dtype_word(u.b_dtype) + "+" + dtype_word(u.c_dtype) + " over " +
         std::to_string(matrix_items(u)) + " work item" + (u.item_bits ? "s" : "");
}

std::string matrix_unit_error(const tg_matrix_unit& u) {
  const std::string who = "matrix unit \"" + matrix_unit_name(u) + "\": ";
  if (matrix_unit_name(u).empty() || strnlen(u.name, sizeof u.name) == sizeof u.name)
    return "matrix unit: the name is empty or not NUL-terminated within 32 bytes";
  if (u.operand_source != TG_MATRIX_SOURCE_REGISTERS)
    return who + "operand_source " + std::to_string(u.operand_source) +
           " is not one this host knows (registers: 0)";
  for (uint32_t v : {u.m, u.n, u.k})
    if (!power_of_two(v) || v > 256) return who + "m, n and k must be powers of two up to 256";
  if (u.item_bits > TG_MATRIX_MAX_BITS)
    return who + "item_bits is above " + std::to_string(TG_MATRIX_MAX_BITS);
  for (tg_dtype d : {u.a_dtype, u.b_dtype, u.c_dtype})
    if (!known_dtype(d)) return who + "operand dtype " + std::to_string(d) + " is not a numeric dtype";
  for (MatrixOperand op : {MatrixOperand::a, MatrixOperand::b, MatrixOperand::c}) {
    const tg_matrix_layout& l = matrix_layout(u, op);
    const std::string name = operand_name(op);
    if (l.element_bits > TG_MATRIX_MAX_BITS)
      return who + name + ": element_bits is above " + std::to_string(TG_MATRIX_MAX_BITS);
    for (uint32_t b = 0; b < TG_MATRIX_MAX_BITS; ++b) {
      if (b >= u.item_bits && (l.item_row[b] || l.item_col[b]))
        return who + name + ": item bit " + std::to_string(b) + " has an entry but the unit has " +
               std::to_string(matrix_items(u)) + " work items";
      if (b >= l.element_bits && (l.element_row[b] || l.element_col[b]))
        return who + name + ": element bit " + std::to_string(b) + " has an entry but each item holds " +
               std::to_string(matrix_lanes(l)) + " elements";
    }
    const MatrixElement ext = matrix_extent(u, op);
    std::vector<int> held(size_t(ext.row * ext.col), 0);
    for (uint32_t t = 0; t < matrix_items(u); ++t)
      for (uint32_t e = 0; e < matrix_lanes(l); ++e) {
        const MatrixElement p = matrix_element(l, t, e);
        if (p.row >= ext.row || p.col >= ext.col)
          return who + name + ": work item " + std::to_string(t) + " element " + std::to_string(e) +
                 " is at (" + std::to_string(p.row) + ", " + std::to_string(p.col) + "), outside its " +
                 std::to_string(ext.row) + "x" + std::to_string(ext.col) + " matrix";
        ++held[size_t(p.row * ext.col + p.col)];
      }
    for (size_t i = 0; i < held.size(); ++i) {
      const std::string at =
          "(" + std::to_string(i / size_t(ext.col)) + ", " + std::to_string(i % size_t(ext.col)) + ")";
      if (held[i] == 0) return who + name + ": no work item holds element " + at;
      if (op == MatrixOperand::c && held[i] > 1)
        return who + "C: element " + at + " is held " + std::to_string(held[i]) +
               " times (C and D need exactly once)";
    }
  }
  return "";
}

tg_matrix_layout matrix_layout(std::initializer_list<MatrixElement> items,
                               std::initializer_list<MatrixElement> elements) {
  tg_matrix_layout l{};
  l.element_bits = uint32_t(elements.size());
  size_t b = 0;
  for (const MatrixElement& e : items) {
    if (b < TG_MATRIX_MAX_BITS) {
      l.item_row[b] = uint16_t(e.row);
      l.item_col[b] = uint16_t(e.col);
    }
    ++b;
  }
  b = 0;
  for (const MatrixElement& e : elements) {
    if (b < TG_MATRIX_MAX_BITS) {
      l.element_row[b] = uint16_t(e.row);
      l.element_col[b] = uint16_t(e.col);
    }
    ++b;
  }
  return l;
}

tg_matrix_unit matrix_unit(const std::string& name, uint32_t m, uint32_t n, uint32_t k, uint32_t item_bits,
                           tg_dtype a_dtype, tg_dtype b_dtype, tg_dtype c_dtype, const tg_matrix_layout& a,
                           const tg_matrix_layout& b, const tg_matrix_layout& c) {
  tg_matrix_unit u{};
  u.struct_size = sizeof u;
  std::memcpy(u.name, name.data(), std::min(name.size(), sizeof u.name - 1));
  u.m = m;
  u.n = n;
  u.k = k;
  u.item_bits = item_bits;
  u.a_dtype = a_dtype;
  u.b_dtype = b_dtype;
  u.c_dtype = c_dtype;
  u.operand_source = TG_MATRIX_SOURCE_REGISTERS;
  u.a = a;
  u.b = b;
  u.c = c;
  return u;
}

// mma.sync m16n8k16 (PTX ISA, "Matrix Fragments for mma.m16n8k16"): lane = 4g + t. A: rows g and
// g + 8, columns 2t, 2t + 1 and those + 8; B: rows 2t, 2t + 1 (+ 8), column g; C: rows g (+ 8),
// columns 2t, 2t + 1.
tg_matrix_unit wmma_m16n8k16_unit(tg_dtype input) {
  // lane bits 0-1 are t, bits 2-4 are g
  const tg_matrix_layout a =
      matrix_layout({{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}}, {{0, 1}, {8, 0}, {0, 8}});
  const tg_matrix_layout b = matrix_layout({{2, 0}, {4, 0}, {0, 1}, {0, 2}, {0, 4}}, {{1, 0}, {8, 0}});
  const tg_matrix_layout c = matrix_layout({{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}}, {{0, 1}, {8, 0}});
  return matrix_unit(input == TG_DTYPE_BFLOAT16 ? "mma.m16n8k16.bf16" : "mma.m16n8k16.f16", 16, 8, 16, 5,
                     input, input, TG_DTYPE_FLOAT32, a, b, c);
}

} // namespace tg::sdk
