#include "kernel/ir/uop.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kernel/ir/alu.hpp"

namespace tg {
namespace {

__extension__ typedef __int128 i128;

std::size_t mix(std::size_t h, std::size_t v) {
  // splitmix64 finalizer over the running hash: cheap and well spread for pointer values.
  std::uint64_t x = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<std::size_t>(x ^ (x >> 31));
}

std::size_t dtype_hash(DType dt) {
  return static_cast<std::size_t>(dt.scalar) | (std::size_t{dt.count} << 8) | (std::size_t{dt.ptr} << 24) |
         (std::size_t{dt.local} << 25);
}

// Sharded weak intern table. An entry is erased by its node's destructor; a lookup only locks
// (promotes) an entry whose fields match, so it never drops the last reference under the lock.
// Each shard is an open-addressing table (linear probing, the hash kept in the slot): a lookup
// touches one run of adjacent slots instead of a bucket list's scattered nodes, and an insert
// allocates nothing. Every graph built runs through it (with a bucket list it was the largest
// single item of the eager training step's host time).
struct InternTable {
  struct Slot {
    std::size_t hash = 0;
    const UOp* raw = nullptr; // nullptr: never used; tombstone(): erased
    std::weak_ptr<const UOp> weak;
  };
  static const UOp* tombstone() { return reinterpret_cast<const UOp*>(alignof(UOp)); }
  struct Shard {
    std::mutex mu;
    std::vector<Slot> slots; // a power of two, at most half full (live + tombstones)
    std::size_t used = 0;    // slots not empty: entries and tombstones
    int bits = 0;            // log2(slots.size())

    // The start of h's probe run. The shard index came from bits 7..12 of h, so the slot takes
    // the high bits of a multiplicative hash instead of h's low bits.
    std::size_t start(std::size_t h) const { return (h * 0x9e3779b97f4a7c15ULL) >> (64 - bits); }
    std::size_t mask() const { return slots.size() - 1; }

    void insert(std::size_t h, const UOp* raw, std::weak_ptr<const UOp> weak) {
      if ((used + 1) * 2 > slots.size()) grow();
      for (std::size_t i = start(h);; i = (i + 1) & mask()) {
        Slot& s = slots[i];
        if (s.raw == nullptr || s.raw == tombstone()) {
          used += s.raw == nullptr;
          s = Slot{h, raw, std::move(weak)};
          return;
        }
      }
    }
    // Rehashes the entries (tombstones dropped) into a table twice the entries' need.
    void grow() {
      std::size_t live = 0;
      for (const auto& s : slots) live += s.raw != nullptr && s.raw != tombstone();
      std::size_t want = 64;
      while (want < (live + 1) * 4) want *= 2;
      std::vector<Slot> old = std::exchange(slots, std::vector<Slot>(want));
      bits = std::countr_zero(want);
      used = 0;
      for (auto& s : old)
        if (s.raw != nullptr && s.raw != tombstone()) insert(s.hash, s.raw, std::move(s.weak));
    }
  };
  static constexpr std::size_t kShards = 64;
  std::array<Shard, kShards> shards;
  std::atomic<std::size_t> live{0};
  Shard& shard(std::size_t h) { return shards[(h >> 7) % kShards]; }
};

InternTable& table() {
  static auto* t = new InternTable; // never destroyed: nodes may outlive static destruction order
  return *t;
}

thread_local std::vector<UOpRef>* pending_release = nullptr;

// ---------------- range analysis ----------------
struct Bounds {
  i128 lo, hi;
};

Bounds full(DType dt) { return {dt.int_min(), dt.int_max()}; }

Bounds of(const UOpRef& u) { return {u->vmin(), u->vmax()}; }

i128 tdiv(i128 a, i128 b) { return a / b; }

Bounds compute_bounds(Ops op, DType dt, const std::vector<UOpRef>& s, const Arg& arg) {
  if (dt.is_float() || dt.is_void() || dt.ptr || dt.count > 1) return full(dt);
  auto n = s.size();
  switch (op) {
  case Ops::CONST: {
    if (auto* b = std::get_if<bool>(&arg)) return {*b ? 1 : 0, *b ? 1 : 0};
    if (auto* i = std::get_if<std::int64_t>(&arg)) {
      if (dt.scalar == Scalar::UInt64 && *i < 0) return full(dt);
      return {*i, *i};
    }
    return full(dt);
  }
  case Ops::DEFINE_VAR:
    if (auto* v = std::get_if<VarArg>(&arg)) return {v->min, v->max};
    return full(dt);
  case Ops::RANGE:
    if (n == 2) return {s[0]->vmin(), std::max<i128>(s[0]->vmin(), i128{s[1]->vmax()} - 1)};
    return full(dt);
  case Ops::SPECIAL:
    if (n == 1) return {0, std::max<i128>(0, i128{s[0]->vmax()} - 1)};
    return full(dt);
  case Ops::BIND:
    return n >= 1 ? of(s[0]) : full(dt);
  case Ops::CAST: {
    if (n != 1 || s[0]->dtype().is_float()) return full(dt);
    return of(s[0]); // clamped to dt's range below
  }
  case Ops::NEG:
    if (n != 1 || dt.is_bool()) return full(dt);
    return {-i128{s[0]->vmax()}, -i128{s[0]->vmin()}};
  case Ops::TRUNC:
    return n == 1 ? of(s[0]) : full(dt);
  case Ops::WHERE: {
    if (n != 3) return full(dt);
    if (s[0]->vmin() == 1) return of(s[1]);
    if (s[0]->vmax() == 0) return of(s[2]);
    return {std::min(s[1]->vmin(), s[2]->vmin()), std::max(s[1]->vmax(), s[2]->vmax())};
  }
  default:
    break;
  }
  if (n != 2) return full(dt);
  Bounds a = of(s[0]), b = of(s[1]);
  switch (op) {
  case Ops::ADD:
    return {a.lo + b.lo, a.hi + b.hi};
  case Ops::SUB:
    return {a.lo - b.hi, a.hi - b.lo};
  case Ops::MUL: {
    if (dt.is_bool()) return {a.lo & b.lo, a.hi & b.hi};
    // Products of 64-bit bounds fit in 128 bits only up to 2^126; saturate beyond.
    auto big = [](i128 v) { return v > (i128{1} << 62) || v < -(i128{1} << 62); };
    if (big(a.lo) || big(a.hi) || big(b.lo) || big(b.hi)) return full(dt);
    std::array<i128, 4> p{a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
    return {*std::min_element(p.begin(), p.end()), *std::max_element(p.begin(), p.end())};
  }
  case Ops::IDIV: {
    if (b.lo <= 0 && b.hi >= 0) return full(dt);
    std::array<i128, 4> q{tdiv(a.lo, b.lo), tdiv(a.lo, b.hi), tdiv(a.hi, b.lo), tdiv(a.hi, b.hi)};
    return {*std::min_element(q.begin(), q.end()), *std::max_element(q.begin(), q.end())};
  }
  case Ops::MOD: {
    if (b.lo <= 0 && b.hi >= 0) return full(dt);
    i128 m = std::max(b.lo < 0 ? -b.lo : b.lo, b.hi < 0 ? -b.hi : b.hi) - 1;
    if (a.lo >= 0) return {0, std::min(a.hi, m)};
    if (a.hi <= 0) return {std::max(a.lo, -m), 0};
    return {std::max(a.lo, -m), std::min(a.hi, m)};
  }
  case Ops::MAX:
    return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
  case Ops::CMPLT:
    if (a.hi < b.lo) return {1, 1};
    if (a.lo >= b.hi) return {0, 0};
    return {0, 1};
  case Ops::CMPNE:
    if (a.hi < b.lo || b.hi < a.lo) return {1, 1};
    if (a.lo == a.hi && b.lo == b.hi && a.lo == b.lo) return {0, 0};
    return {0, 1};
  case Ops::CMPEQ:
    if (a.hi < b.lo || b.hi < a.lo) return {0, 0};
    if (a.lo == a.hi && b.lo == b.hi && a.lo == b.lo) return {1, 1};
    return {0, 1};
  case Ops::AND:
    if (dt.is_bool()) return {a.lo & b.lo, a.hi & b.hi};
    if (a.lo >= 0 && b.lo >= 0) return {0, std::min(a.hi, b.hi)};
    return full(dt);
  case Ops::OR:
  case Ops::XOR: {
    if (dt.is_bool()) return op == Ops::OR ? Bounds{a.lo | b.lo, a.hi | b.hi} : Bounds{0, 1};
    if (a.lo < 0 || b.lo < 0) return full(dt);
    i128 top = 1;
    while (top <= std::max(a.hi, b.hi)) top <<= 1;
    return {op == Ops::OR ? std::max(a.lo, b.lo) : 0, top - 1};
  }
  case Ops::SHL:
    if (b.lo != b.hi || b.lo < 0 || b.lo >= 62 || a.lo < 0) return full(dt);
    return {a.lo << static_cast<int>(b.lo), a.hi << static_cast<int>(b.lo)};
  case Ops::SHR:
    if (b.lo != b.hi || b.lo < 0 || b.lo >= 64) return full(dt);
    return {a.lo >> static_cast<int>(b.lo), a.hi >> static_cast<int>(b.lo)};
  default:
    return full(dt);
  }
}

bool src_equal(const std::vector<UOpRef>& a, const std::vector<UOpRef>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].get() != b[i].get()) return false;
  return true;
}

void validate(Ops op, DType dt, const std::vector<UOpRef>& src, const Arg& arg) {
  int arity = op_info(op).arity;
  for (const auto& s : src)
    if (!s) throw UOpError("UOp(" + std::string(op_name(op)) + "): null source");
  if (arity != kAnyArity && static_cast<int>(src.size()) != arity)
    throw UOpError("UOp(" + std::string(op_name(op)) + "): takes " + std::to_string(arity) +
                   " sources, got " + std::to_string(src.size()));
  if (op == Ops::CONST && std::holds_alternative<std::monostate>(arg))
    throw UOpError("UOp(CONST, " + dt.name() + "): missing value");
}

} // namespace

struct UOpInternals {
  static void set_bounds(UOp& u) {
    Bounds b = compute_bounds(u.op_, u.dtype_, u.src_, u.arg_);
    i128 lo = u.dtype_.int_min(), hi = u.dtype_.int_max();
    // Wrapping could put the value anywhere in the dtype's range, so an overflowing range is "full".
    if (b.lo < lo || b.hi > hi || b.lo > b.hi) b = {lo, hi};
    u.vmin_ = static_cast<std::int64_t>(b.lo);
    u.vmax_ = static_cast<std::int64_t>(b.hi);
  }
};

// ---------------- args ----------------
bool arg_equal(const Arg& a, const Arg& b) {
  if (a.index() != b.index()) return false;
  if (auto* d = std::get_if<double>(&a)) {
    double e = std::get<double>(b);
    return std::memcmp(d, &e, sizeof(double)) == 0;
  }
  if (auto* o = std::get_if<OpaqueArgRef>(&a)) {
    const auto& p = std::get<OpaqueArgRef>(b);
    if (o->get() == p.get()) return true;
    return *o && p && (*o)->equals(*p);
  }
  return a == b;
}

std::size_t arg_hash(const Arg& a) {
  std::size_t h = a.index();
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
        } else if constexpr (std::is_same_v<T, double>) {
          std::uint64_t bits;
          std::memcpy(&bits, &v, sizeof bits);
          h = mix(h, bits);
        } else if constexpr (std::is_same_v<T, std::string>) {
          h = mix(h, std::hash<std::string>{}(v));
        } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
          for (auto x : v) h = mix(h, static_cast<std::size_t>(x));
        } else if constexpr (std::is_same_v<T, VarArg>) {
          h = mix(mix(mix(h, std::hash<std::string>{}(v.name)), static_cast<std::size_t>(v.min)),
                  static_cast<std::size_t>(v.max));
        } else if constexpr (std::is_same_v<T, ReduceArg>) {
          h = mix(h, static_cast<std::size_t>(v.op));
          for (auto x : v.axes) h = mix(h, static_cast<std::size_t>(x));
        } else if constexpr (std::is_same_v<T, OpaqueArgRef>) {
          h = mix(h, v ? v->hash() : 0);
        } else {
          h = mix(h, static_cast<std::size_t>(v));
        }
      },
      a);
  return h;
}

namespace {
std::string float_str(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  std::ostringstream os;
  os.precision(17);
  os << d;
  std::string s = os.str();
  // Shortest form that reads back the same, with a '.0' for integral values like Python.
  for (int p = 1; p <= 17; ++p) {
    std::ostringstream t;
    t.precision(p);
    t << d;
    if (std::stod(t.str()) == d) {
      s = t.str();
      break;
    }
  }
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string tuple_str(const std::vector<std::int64_t>& v) {
  std::string s = "(";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}
} // namespace

std::string arg_str(const Arg& a) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>)
          return "None";
        else if constexpr (std::is_same_v<T, bool>)
          return v ? "True" : "False";
        else if constexpr (std::is_same_v<T, std::int64_t>)
          return std::to_string(v);
        else if constexpr (std::is_same_v<T, double>)
          return float_str(v);
        else if constexpr (std::is_same_v<T, std::string>)
          return "'" + v + "'";
        else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>)
          return tuple_str(v);
        else if constexpr (std::is_same_v<T, VarArg>)
          return "('" + v.name + "', " + std::to_string(v.min) + ", " + std::to_string(v.max) + ")";
        else if constexpr (std::is_same_v<T, ReduceArg>)
          return "(Ops." + std::string(op_name(v.op)) + ", " + tuple_str(v.axes) + ")";
        else
          return v ? v->str() : "None";
      },
      a);
}

// ---------------- UOp ----------------
UOp::UOp(Passkey, Ops op, DType dtype, std::vector<UOpRef> src, Arg arg, std::size_t hash)
    : op_(op), dtype_(dtype), src_(std::move(src)), arg_(std::move(arg)), hash_(hash) {
  UOpInternals::set_bounds(*this);
}

UOp::~UOp() {
  auto& t = table();
  {
    auto& sh = t.shard(hash_);
    std::lock_guard lock(sh.mu);
    if (!sh.slots.empty())
      for (std::size_t i = sh.start(hash_); sh.slots[i].raw != nullptr; i = (i + 1) & sh.mask()) {
        InternTable::Slot& s = sh.slots[i];
        if (s.raw == this) {
          s.raw = InternTable::tombstone();
          s.weak.reset();
          t.live.fetch_sub(1, std::memory_order_relaxed);
          break;
        }
      }
  }
  // Release sources iteratively: a long chain would otherwise recurse once per node.
  if (pending_release) {
    for (auto& s : src_) pending_release->push_back(std::move(s));
    return;
  }
  std::vector<UOpRef> work;
  pending_release = &work;
  for (auto& s : src_) work.push_back(std::move(s));
  while (!work.empty()) {
    UOpRef r = std::move(work.back());
    work.pop_back();
    r.reset();
  }
  pending_release = nullptr;
}

UOpRef UOp::make(Ops op, DType dtype, std::vector<UOpRef> src, Arg arg) {
  validate(op, dtype, src, arg);
  if (op == Ops::CONST) {
    if (auto* d = std::get_if<double>(&arg))
      arg = std::visit([](auto v) { return Arg{v}; }, normalize_const(dtype, *d));
    else if (auto* i = std::get_if<std::int64_t>(&arg))
      arg = std::visit([](auto v) { return Arg{v}; }, normalize_const(dtype, *i));
    else if (auto* b = std::get_if<bool>(&arg))
      arg = std::visit([](auto v) { return Arg{v}; }, normalize_const(dtype, *b));
  }
  std::size_t h = mix(static_cast<std::size_t>(op), dtype_hash(dtype));
  for (const auto& s : src) h = mix(h, reinterpret_cast<std::uintptr_t>(s.get()));
  h = mix(h, arg_hash(arg));

  auto& t = table();
  auto& sh = t.shard(h);
  std::lock_guard lock(sh.mu);
  if (!sh.slots.empty())
    for (std::size_t i = sh.start(h); sh.slots[i].raw != nullptr; i = (i + 1) & sh.mask()) {
      const InternTable::Slot& slot = sh.slots[i];
      const UOp* c = slot.raw;
      if (slot.hash != h || c == InternTable::tombstone()) continue;
      if (c->op_ != op || c->dtype_ != dtype || !src_equal(c->src_, src) || !arg_equal(c->arg_, arg))
        continue;
      if (auto alive = slot.weak.lock()) return alive;
    }
  auto node = std::make_shared<const UOp>(Passkey{}, op, dtype, std::move(src), std::move(arg), h);
  sh.insert(h, node.get(), node);
  t.live.fetch_add(1, std::memory_order_relaxed);
  return node;
}

std::size_t UOp::live_count() { return table().live.load(std::memory_order_relaxed); }

UOpRef UOp::constant(DType dt, ConstValue v) {
  ConstValue n = normalize_const(dt.base(), v);
  return make(Ops::CONST, dt, {}, std::visit([](auto x) { return Arg{x}; }, n));
}

UOpRef UOp::variable(std::string name, std::int64_t min, std::int64_t max, DType dt) {
  if (min > max)
    throw UOpError("variable '" + name + "': min " + std::to_string(min) + " > max " + std::to_string(max));
  return make(Ops::DEFINE_VAR, dt, {}, VarArg{std::move(name), min, max});
}

UOpRef UOp::range(const UOpRef& end, std::int64_t id, DType dt) {
  return make(Ops::RANGE, dt, {constant(dt, std::int64_t{0}), end}, id);
}
UOpRef UOp::range(std::int64_t end, std::int64_t id, DType dt) { return range(constant(dt, end), id, dt); }

ConstValue UOp::const_value() const {
  if (op_ != Ops::CONST) throw UOpError("const_value() on " + std::string(op_name(op_)));
  if (auto* b = std::get_if<bool>(&arg_)) return *b;
  if (auto* i = std::get_if<std::int64_t>(&arg_)) return *i;
  return std::get<double>(arg_);
}

std::int64_t UOp::arg_int() const {
  if (auto* i = std::get_if<std::int64_t>(&arg_)) return *i;
  throw UOpError("arg_int() on " + std::string(op_name(op_)) + " with arg " + arg_str(arg_));
}

const VarArg& UOp::var_arg() const {
  if (auto* v = std::get_if<VarArg>(&arg_)) return *v;
  throw UOpError("var_arg() on " + std::string(op_name(op_)));
}

// ---------------- graph utilities ----------------
namespace {

// The nodes a walk has visited: a linear scan over a fixed array while they are few (a tiny op's
// graph, where a hash set's allocations cost more than the walk), then a flat open-addressing set
// (linear probing, at most half full; the training step's walks visit ~1000 nodes several times
// per realize). The set is the thread's, kept between walks: each walk
// marks its entries with a new stamp, so an older walk's entries read as empty and nothing is
// cleared or allocated per walk. A set allocated per walk grows 256 -> 2048 slots each time and
// its allocations and frees cost ~3% of the eager training step's host time.
// One walk at a time per thread: toposort calls nothing that walks.
class SeenNodes {
public:
  SeenNodes() = default;
  SeenNodes(const SeenNodes&) = delete;
  SeenNodes& operator=(const SeenNodes&) = delete;
  ~SeenNodes() {
    if (!table_) return;
    // A huge walk's table is not kept for the thread's lifetime (1 MiB at most is).
    if (table_->slots.size() > (std::size_t(1) << 16)) *table_ = Table{};
  }

  bool insert(const UOp* u) { // true when u is new
    if (!table_) {
      if (std::find(few_.begin(), few_.begin() + std::ptrdiff_t(count_), u) !=
          few_.begin() + std::ptrdiff_t(count_))
        return false;
      if (count_ < few_.size()) {
        few_[count_++] = u;
        return true;
      }
      table_ = &thread_table();
      table_->begin_walk();
      for (const UOp* f : few_) table_->place(f);
    }
    return table_->insert(u);
  }

private:
  struct Slot {
    const UOp* node = nullptr;
    std::uint32_t stamp = 0; // the walk that placed it; another walk's slot is empty
  };
  struct Table {
    std::vector<Slot> slots; // a power of two, or empty before the first large walk
    int bits = 0;
    std::size_t count = 0;   // this walk's entries
    std::uint32_t stamp = 0; // this walk's

    void begin_walk() {
      count = 0;
      if (slots.empty()) resize(256);
      if (++stamp == 0) { // wrapped: old stamps could match again
        std::fill(slots.begin(), slots.end(), Slot{});
        stamp = 1;
      }
    }
    bool insert(const UOp* u) {
      if ((count + 1) * 2 > slots.size()) {
        std::vector<Slot> old = std::move(slots);
        resize(old.size() * 2);
        count = 0;
        for (const Slot& s : old)
          if (s.stamp == stamp) place(s.node);
      }
      return place(u);
    }
    void resize(std::size_t size) {
      slots.assign(size, Slot{});
      bits = std::countr_zero(size);
    }
    // Node addresses share their low bits (alignment): the slot takes a multiplicative hash's high bits.
    bool place(const UOp* u) {
      const std::size_t mask = slots.size() - 1;
      for (std::size_t i = (reinterpret_cast<std::uintptr_t>(u) * 0x9e3779b97f4a7c15ULL) >> (64 - bits);;
           i = (i + 1) & mask) {
        Slot& s = slots[i];
        if (s.stamp != stamp) {
          s = Slot{u, stamp};
          ++count;
          return true;
        }
        if (s.node == u) return false;
      }
    }
  };
  static Table& thread_table() {
    thread_local Table t;
    return t;
  }

  std::array<const UOp*, 32> few_{};
  std::size_t count_ = 0;
  Table* table_ = nullptr; // the thread's, once the walk outgrew few_
};

} // namespace

std::vector<UOpRef> toposort(const UOpRef& root) {
  std::vector<UOpRef> order;
  order.reserve(16); // one allocation for a small graph (a realize's key walk) instead of five
  SeenNodes seen;
  // The walk's stack, kept per thread: toposort runs on every realize (the schedule cache's key)
  // and calls nothing that sorts again.
  thread_local std::vector<std::pair<const UOpRef*, std::size_t>> stack;
  stack.clear();
  stack.push_back({&root, 0});
  seen.insert(root.get());
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    const auto& src = (*node)->src();
    if (next < src.size()) {
      const UOpRef* child = &src[next++];
      if (seen.insert(child->get())) stack.push_back({child, 0});
      continue;
    }
    order.push_back(*node);
    stack.pop_back();
  }
  return order;
}

std::vector<UOpRef> variables(const UOpRef& root) {
  std::vector<UOpRef> vars;
  for (auto& u : toposort(root))
    if (u->op() == Ops::DEFINE_VAR) vars.push_back(u);
  return vars;
}

UOpRef replace_src(const UOpRef& u, std::vector<UOpRef> new_src) {
  if (src_equal(u->src(), new_src)) return u;
  return UOp::make(u->op(), u->dtype(), std::move(new_src), u->arg());
}

UOpRef substitute(const UOpRef& root, const std::vector<std::pair<const UOp*, UOpRef>>& replacements) {
  std::unordered_map<const UOp*, UOpRef> done(replacements.begin(), replacements.end());
  for (const auto& n : toposort(root)) {
    if (done.count(n.get())) continue;
    std::vector<UOpRef> src;
    src.reserve(n->src().size());
    for (const auto& x : n->src()) {
      auto it = done.find(x.get());
      src.push_back(it == done.end() ? x : it->second);
    }
    done.emplace(n.get(), replace_src(n, std::move(src)));
  }
  return done.at(root.get());
}

bool depends_on(const UOpRef& root, const UOp* node) {
  std::vector<const UOp*> stack{root.get()};
  std::unordered_set<const UOp*> seen{root.get()};
  while (!stack.empty()) {
    const UOp* u = stack.back();
    stack.pop_back();
    if (u == node) return true;
    for (const auto& s : u->src())
      if (seen.insert(s.get()).second) stack.push_back(s.get());
  }
  return false;
}

namespace {
std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o;
}

std::string uop_label(const UOp& u) {
  std::string l = std::string(op_name(u.op()));
  if (!u.dtype().is_void()) l += " " + u.dtype().name();
  if (!std::holds_alternative<std::monostate>(u.arg())) l += " " + arg_str(u.arg());
  return l;
}
} // namespace

std::string to_dot(const UOpRef& root) {
  auto order = toposort(root);
  std::unordered_map<const UOp*, std::size_t> id;
  std::string out = "digraph uops {\n  node [shape=box];\n";
  for (std::size_t i = 0; i < order.size(); ++i) {
    id[order[i].get()] = i;
    std::string label = uop_label(*order[i]);
    std::string esc;
    for (char c : label) esc += (c == '"' ? std::string("\\\"") : std::string(1, c));
    out += "  n" + std::to_string(i) + " [label=\"" + esc + "\"];\n";
  }
  for (std::size_t i = 0; i < order.size(); ++i)
    for (const auto& s : order[i]->src())
      out += "  n" + std::to_string(id[s.get()]) + " -> n" + std::to_string(i) + ";\n";
  return out + "}\n";
}

std::string to_json(const UOpRef& root) {
  auto order = toposort(root);
  std::unordered_map<const UOp*, std::size_t> id;
  std::string out = "[";
  for (std::size_t i = 0; i < order.size(); ++i) {
    const UOp& u = *order[i];
    id[&u] = i;
    out += std::string(i ? ",\n " : "") + "{\"id\": " + std::to_string(i) + ", \"op\": \"" +
           std::string(op_name(u.op())) + "\", \"dtype\": \"" + json_escape(u.dtype().name()) +
           "\", \"arg\": \"" + json_escape(arg_str(u.arg())) + "\", \"src\": [";
    for (std::size_t k = 0; k < u.src().size(); ++k)
      out += (k ? ", " : "") + std::to_string(id[u.src()[k].get()]);
    out += "]}";
  }
  return out + "]\n";
}

namespace {
// str() and render() recurse along the graph: below this depth they print "..." instead (a
// message or a DEBUG listing gains nothing from a 100,000-deep chain, and the stack stays bounded).
constexpr int kMaxPrintDepth = 1024;
} // namespace

// tinygrad's pretty_print: a node referenced more than once prints as `xN:=UOp(...)` the first
// time and as `xN` afterwards.
std::string UOp::str() const {
  struct Info {
    std::size_t id = 0, refs = 0;
    bool printed = false;
  };
  std::unordered_map<const UOp*, Info> info;
  std::vector<const UOp*> stack{this};
  info[this];
  while (!stack.empty()) {
    const UOp* u = stack.back();
    stack.pop_back();
    for (const auto& s : u->src()) {
      auto [it, fresh] = info.try_emplace(s.get(), Info{info.size(), 0, false});
      if (++it->second.refs == 1) stack.push_back(s.get());
    }
  }
  std::string out;
  auto rec = [&](auto& self, const UOp* u, int depth) -> void {
    Info& in = info[u];
    out.append(static_cast<std::size_t>(depth), ' ');
    if (depth > 2 * kMaxPrintDepth) {
      out += "...";
      return;
    }
    if (in.printed) {
      out += " x" + std::to_string(in.id);
      return;
    }
    in.printed = true;
    if (in.refs > 1) out += "x" + std::to_string(in.id) + ":=";
    out += "UOp(Ops." + std::string(op_name(u->op())) + ", " + u->dtype().repr() +
           ", arg=" + arg_str(u->arg()) + ", src=(";
    for (const auto& s : u->src()) {
      out += "\n";
      self(self, s.get(), depth + 2);
      out += ",";
    }
    out += "))";
  };
  rec(rec, this, 0);
  return out;
}

namespace {
std::string render_at(const UOp& u, int depth) {
  if (u.op() == Ops::CONST) return arg_str(u.arg());
  if (u.op() == Ops::DEFINE_VAR) return u.var_arg().name;
  if (u.op() == Ops::RANGE) return "r" + arg_str(u.arg());
  if (depth >= kMaxPrintDepth) return "...";
  auto r = [depth](const UOpRef& s) { return render_at(*s, depth + 1); };
  static const std::unordered_map<Ops, const char*> kInfix{
      {Ops::ADD, "+"}, {Ops::SUB, "-"},   {Ops::MUL, "*"},    {Ops::IDIV, "//"},  {Ops::FDIV, "/"},
      {Ops::MOD, "%"}, {Ops::CMPLT, "<"}, {Ops::CMPNE, "!="}, {Ops::CMPEQ, "=="}, {Ops::AND, "&"},
      {Ops::OR, "|"},  {Ops::XOR, "^"},   {Ops::SHL, "<<"},   {Ops::SHR, ">>"}};
  const auto& src = u.src();
  if (auto it = kInfix.find(u.op()); it != kInfix.end() && src.size() == 2)
    return "(" + r(src[0]) + it->second + r(src[1]) + ")";
  std::string s = std::string(op_name(u.op())) + "(";
  for (std::size_t i = 0; i < src.size(); ++i) s += (i ? ", " : "") + r(src[i]);
  return s + ")";
}
} // namespace

std::string UOp::render() const { return render_at(*this, 0); }

// ---------------- builders ----------------
UOpRef const_like(const UOpRef& like, ConstValue v) { return UOp::constant(like->dtype(), v); }

UOpRef alu(Ops op, std::vector<UOpRef> src) {
  if (src.empty() || !src[0]) throw UOpError("alu(" + std::string(op_name(op)) + "): no sources");
  DType dt = src[0]->dtype();
  if (op == Ops::WHERE) dt = src.at(1)->dtype();
  if (is_comparison(op)) dt = DType{Scalar::Bool, src[0]->dtype().count};
  for (std::size_t i = (op == Ops::WHERE ? 1 : 0); i < src.size(); ++i) {
    if (op == Ops::SHL || op == Ops::SHR) break;
    if (src[i]->dtype() != src[op == Ops::WHERE ? 1 : 0]->dtype())
      throw UOpError("alu(" + std::string(op_name(op)) + "): mixed dtypes " + src[0]->dtype().name() +
                     " and " + src[i]->dtype().name());
  }
  return UOp::make(op, dt, std::move(src));
}

UOpRef cast(const UOpRef& x, DType dt) {
  if (x->dtype() == dt) return x;
  return UOp::make(Ops::CAST, dt, {x});
}
UOpRef bitcast(const UOpRef& x, DType dt) { return UOp::make(Ops::BITCAST, dt, {x}); }
UOpRef where(const UOpRef& c, const UOpRef& a, const UOpRef& b) { return alu(Ops::WHERE, {c, a, b}); }
UOpRef lt(const UOpRef& a, const UOpRef& b) { return alu(Ops::CMPLT, {a, b}); }
UOpRef ne(const UOpRef& a, const UOpRef& b) { return alu(Ops::CMPNE, {a, b}); }
UOpRef eq(const UOpRef& a, const UOpRef& b) { return alu(Ops::CMPEQ, {a, b}); }
UOpRef maximum(const UOpRef& a, const UOpRef& b) { return alu(Ops::MAX, {a, b}); }
UOpRef idiv(const UOpRef& a, const UOpRef& b) { return alu(Ops::IDIV, {a, b}); }
UOpRef logical_not(const UOpRef& x) { return ne(x, UOp::constant(x->dtype(), true)); }

UOpRef operator+(const UOpRef& a, const UOpRef& b) { return alu(Ops::ADD, {a, b}); }
UOpRef operator-(const UOpRef& a, const UOpRef& b) { return alu(Ops::SUB, {a, b}); }
UOpRef operator*(const UOpRef& a, const UOpRef& b) { return alu(Ops::MUL, {a, b}); }
UOpRef operator/(const UOpRef& a, const UOpRef& b) {
  return alu(a->dtype().is_float() ? Ops::FDIV : Ops::IDIV, {a, b});
}
UOpRef operator%(const UOpRef& a, const UOpRef& b) { return alu(Ops::MOD, {a, b}); }
UOpRef operator&(const UOpRef& a, const UOpRef& b) { return alu(Ops::AND, {a, b}); }
UOpRef operator|(const UOpRef& a, const UOpRef& b) { return alu(Ops::OR, {a, b}); }
UOpRef operator^(const UOpRef& a, const UOpRef& b) { return alu(Ops::XOR, {a, b}); }
UOpRef operator-(const UOpRef& a) { return alu(Ops::NEG, {a}); }

} // namespace tg
