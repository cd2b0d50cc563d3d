#include <tg/sdk/matrix_unit.hpp>

#include <algorithm>
#include <bit>
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
         std::to_string(matrix_items(u)) + " work item" + (u.item_bits ? "s" : "") +
         (matrix_local(u) ? ", A and B from local memory" : "");
}

std::string matrix_unit_error(const tg_matrix_unit& u) {
  const std::string who = "matrix unit \"" + matrix_unit_name(u) + "\": ";
  if (matrix_unit_name(u).empty() || strnlen(u.name, sizeof u.name) == sizeof u.name)
    return "matrix unit: the name is empty or not NUL-terminated within 32 bytes";
  if (u.operand_source != TG_MATRIX_SOURCE_REGISTERS && u.operand_source != TG_MATRIX_SOURCE_LOCAL)
    return who + "operand_source " + std::to_string(u.operand_source) +
           " is not one this host knows (registers: 0, local: 1)";
  for (uint32_t v : {u.m, u.n, u.k})
    if (!power_of_two(v) || v > 256) return who + "m, n and k must be powers of two up to 256";
  if (u.item_bits > TG_MATRIX_MAX_BITS)
    return who + "item_bits is above " + std::to_string(TG_MATRIX_MAX_BITS);
  for (tg_dtype d : {u.a_dtype, u.b_dtype, u.c_dtype})
    if (!known_dtype(d)) return who + "operand dtype " + std::to_string(d) + " is not a numeric dtype";
  if (matrix_local(u))
    for (MatrixOperand op : {MatrixOperand::a, MatrixOperand::b})
      if (const std::string why = atom_error(matrix_atom(u, op)); !why.empty())
        return who + operand_name(op) + "'s atom: " + why;
  for (MatrixOperand op : {MatrixOperand::a, MatrixOperand::b, MatrixOperand::c}) {
    if (matrix_local(u) && op != MatrixOperand::c) continue; // read from local memory: no registers
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

const tg_matrix_atom& matrix_atom(const tg_matrix_unit& u, MatrixOperand op) {
  return op == MatrixOperand::a ? u.a_atom : u.b_atom;
}

MatrixElement atom_element(const tg_matrix_atom& atom, uint32_t offset) {
  MatrixElement e;
  for (uint32_t b = 0; b < TG_MATRIX_ATOM_MAX_BITS; ++b)
    if (offset >> b & 1) {
      e.row ^= atom.row[b];
      e.col ^= atom.col[b];
    }
  return e;
}

MatrixElement atom_extent(const tg_matrix_atom& atom) {
  MatrixElement e;
  for (uint32_t b = 0; b < TG_MATRIX_ATOM_MAX_BITS; ++b) {
    e.row |= atom.row[b];
    e.col |= atom.col[b];
  }
  return {e.row + 1, e.col + 1};
}

std::string atom_error(const tg_matrix_atom& atom) {
  if (atom.offset_bits > TG_MATRIX_ATOM_MAX_BITS)
    return "offset_bits " + std::to_string(atom.offset_bits) + " is above " +
           std::to_string(TG_MATRIX_ATOM_MAX_BITS);
  for (uint32_t b = atom.offset_bits; b < TG_MATRIX_ATOM_MAX_BITS; ++b)
    if (atom.row[b] || atom.col[b])
      return "offset bit " + std::to_string(b) + " has an entry but the atom holds " +
             std::to_string(1u << atom.offset_bits) + " elements";
  const MatrixElement ext = atom_extent(atom);
  if (!power_of_two(uint32_t(ext.row)) || !power_of_two(uint32_t(ext.col)) ||
      uint64_t(ext.row) * uint64_t(ext.col) != uint64_t(1) << atom.offset_bits)
    return "its entries do not span a " + std::to_string(ext.row) + "x" + std::to_string(ext.col) +
           " rectangle of powers of two with one element per position";
  std::vector<uint8_t> seen(size_t(1) << atom.offset_bits, 0);
  for (uint32_t o = 0; o < seen.size(); ++o) {
    const MatrixElement p = atom_element(atom, o);
    uint8_t& hit = seen[size_t(p.row) * size_t(ext.col) + size_t(p.col)];
    if (hit)
      return "elements hold position (" + std::to_string(p.row) + ", " + std::to_string(p.col) +
             ") twice (the map is not a bijection)";
    hit = 1;
  }
  return "";
}

AtomInverse atom_inverse(const tg_matrix_atom& atom) {
  // Gaussian elimination over GF(2) (O(bits^2), not a walk over the whole atom): a position is the
  // vector row | col << row_bits; pivot[p] is an (offset, position) pair whose highest bit is p.
  const MatrixElement ext = atom_extent(atom);
  const int row_bits = std::countr_zero(uint32_t(ext.row)),
            bits = row_bits + std::countr_zero(uint32_t(ext.col));
  std::vector<std::pair<uint32_t, uint64_t>> pivot(size_t(std::max(bits, 0)), {0, 0});
  for (uint32_t b = 0; b < std::min<uint32_t>(atom.offset_bits, TG_MATRIX_ATOM_MAX_BITS); ++b) {
    uint32_t off = 1u << b;
    uint64_t pos = uint64_t(atom.row[b]) | uint64_t(atom.col[b]) << row_bits;
    while (pos != 0) {
      const size_t p = size_t(std::bit_width(pos) - 1);
      if (p >= pivot.size()) break; // outside the extent: not well formed
      if (pivot[p].second == 0) {
        pivot[p] = {off, pos};
        break;
      }
      off ^= pivot[p].first;
      pos ^= pivot[p].second;
    }
  }
  std::vector<uint32_t> unit(pivot.size(), 0); // the offset of each position bit alone
  for (size_t p = 0; p < pivot.size(); ++p) {
    uint32_t off = pivot[p].first;
    for (size_t q = 0; q < p; ++q)
      if (pivot[p].second >> q & 1) off ^= unit[q];
    unit[p] = off;
  }
  AtomInverse inv;
  inv.row_bits.assign(unit.begin(), unit.begin() + row_bits);
  inv.col_bits.assign(unit.begin() + row_bits, unit.end());
  return inv;
}

uint32_t atom_offset(const tg_matrix_atom& atom, MatrixElement at) {
  const AtomInverse inv = atom_inverse(atom);
  uint32_t o = 0;
  for (size_t b = 0; b < inv.row_bits.size(); ++b)
    if (uint32_t(at.row) >> b & 1) o ^= inv.row_bits[b];
  for (size_t b = 0; b < inv.col_bits.size(); ++b)
    if (uint32_t(at.col) >> b & 1) o ^= inv.col_bits[b];
  return o;
}

int64_t matrix_strides_pack(const MatrixStrides& s) {
  return int64_t(uint64_t(s.a_row) | uint64_t(s.a_col) << 16 | uint64_t(s.b_row) << 32 |
                 uint64_t(s.b_col) << 48);
}

MatrixStrides matrix_strides_unpack(int64_t arg1) {
  const auto u = uint64_t(arg1);
  return {int64_t(u & 0xFFFF), int64_t(u >> 16 & 0xFFFF), int64_t(u >> 32 & 0xFFFF),
          int64_t(u >> 48 & 0xFFFF)};
}

std::string matrix_strides_error(const MatrixStrides& s) {
  for (int64_t v : {s.a_row, s.a_col, s.b_row, s.b_col})
    if (v < 0 || v > 0xFFFF)
      return "an atom stride of " + std::to_string(v) + " elements does not fit MMA's 16-bit field";
  return "";
}

uint64_t matrix_local_index(const tg_matrix_unit& u, MatrixOperand op, const MatrixStrides& s, uint64_t start,
                            int row, int col) {
  const tg_matrix_atom& atom = matrix_atom(u, op);
  const MatrixElement ext = atom_extent(atom);
  const uint32_t within = atom_offset(atom, {row % ext.row, col % ext.col});
  const int64_t row_stride = op == MatrixOperand::a ? s.a_row : s.b_row;
  const int64_t col_stride = op == MatrixOperand::a ? s.a_col : s.b_col;
  return (start ^ within) + uint64_t(row / ext.row * row_stride + col / ext.col * col_stride);
}

tg_matrix_atom matrix_atom(std::initializer_list<MatrixElement> bits) {
  tg_matrix_atom a{};
  a.offset_bits = uint32_t(bits.size());
  size_t b = 0;
  for (const MatrixElement& e : bits) {
    if (b < TG_MATRIX_ATOM_MAX_BITS) {
      a.row[b] = uint16_t(e.row);
      a.col[b] = uint16_t(e.col);
    }
    ++b;
  }
  return a;
}

tg_matrix_unit matrix_unit_local(const std::string& name, uint32_t m, uint32_t n, uint32_t k,
                                 uint32_t item_bits, tg_dtype a_dtype, tg_dtype b_dtype, tg_dtype c_dtype,
                                 const tg_matrix_atom& a, const tg_matrix_atom& b,
                                 const tg_matrix_layout& c) {
  tg_matrix_unit u = matrix_unit(name, m, n, k, item_bits, a_dtype, b_dtype, c_dtype, {}, {}, c);
  u.operand_source = TG_MATRIX_SOURCE_LOCAL;
  u.a_atom = a;
  u.b_atom = b;
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
