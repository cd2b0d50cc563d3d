// The golden corpus: see corpus.hpp. Codegen cases are tensor expressions over placeholder BUFFER
// nodes (no data, no device opened), scheduled and lowered exactly as realize() would.
#include "tools/conform/corpus.hpp"

#include "kernel/codegen/linearize.hpp"
#include "kernel/codegen/lower.hpp"
#include "kernel/schedule/buffer.hpp"
#include "kernel/tensor/tensor.hpp"

#include <tg/sdk/bytes.hpp>
#include <tg/sdk/kernel_ir.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace tg::conform {

namespace {

// Scheduling needs a device name only as a label; nothing is opened or allocated.
constexpr const char* kDevice = "CPU";

Tensor input(Dims shape, DType dt = dtypes::float32) {
  UOpRef buffer = make_buffer(kDevice, dt, dims_prod(shape));
  UOpRef view =
      shape.size() == 1 ? buffer : UOp::make(Ops::RESHAPE, dt, {buffer}, std::vector<int64_t>(shape));
  return Tensor(view, std::move(shape), kDevice);
}

uint64_t dtypes_used(const tg::sdk::KernelIR& ir) {
  uint64_t mask = 0;
  for (const auto& ins : ir.instructions)
    if (ins.dtype != TG_DTYPE_VOID) mask |= TG_DTYPE_BIT(ins.dtype);
  return mask;
}

uint64_t features_used(const tg::sdk::KernelIR& ir) {
  uint64_t f = 0;
  for (const auto& ins : ir.instructions) {
    if (ins.op == TG_OP_DEFINE_LOCAL) f |= TG_FEATURE_LOCAL_MEMORY;
    if (ins.op == TG_OP_BARRIER) f |= TG_FEATURE_BARRIER;
  }
  return f;
}

// Fills the fields that follow from the IR itself.
void finish(CorpusKernel& k) {
  auto ir = tg::sdk::parse_kernel_ir(k.ir);
  k.dtype_mask = dtypes_used(ir);
  k.features = features_used(ir);
  if (ir.buffer_count != k.buffers.size() || ir.scalar_count != k.scalars.size())
    throw std::logic_error("corpus kernel " + k.name + ": argument lists do not match its IR");
}

struct CodegenCase {
  std::string name;
  std::string expression;
  std::function<Tensor()> build;
};

void add_codegen(std::vector<CorpusKernel>& out, const CodegenCase& c, const LowerOptions& options) {
  Tensor result = c.build();
  std::vector<ScheduleItem> items = result.schedule();
  int part = 0;
  for (const auto& item : items) {
    if (item.ast->src(0)->op() == Ops::COPY || dims_prod(item.shape) == 0) continue;
    LoweredKernel lowered = lower_kernel(item, options);
    LinearKernel linear = linearize(lowered.sink, lowered.name);
    CorpusKernel k;
    k.name = items.size() == 1 ? c.name : c.name + "_" + std::to_string(part);
    k.origin =
        "codegen: " + c.expression + (items.size() == 1 ? "" : " (kernel " + std::to_string(part) + ")");
    k.ir = std::move(linear.ir);
    k.global = lowered.global;
    k.local = lowered.local;
    for (const auto& b : item.buffers)
      k.buffers.push_back({to_abi(b->dtype()), uint64_t(buffer_arg(b).size())});
    finish(k);
    out.push_back(std::move(k));
    ++part;
  }
}

std::vector<CodegenCase> codegen_cases() {
  std::vector<CodegenCase> cases = {
      {"add_f32_odd", "a[1000] + b[1000]", [] { return input({1000}) + input({1000}); }},
      {"mul_add_relu", "(a * b + a).relu(), 257 elements",
       [] {
         Tensor a = input({257});
         return (a * input({257}) + a).relu();
       }},
      {"unary_math", "exp2, sin, sqrt(|b|), log2(|b| + 1), 1/(|b| + 0.5) summed, 333 elements",
       [] {
         Tensor a = input({333}), b = input({333});
         return a.exp2() + a.sin() + b.abs().sqrt() + (b.abs() + 1).log2() + (b.abs() + 0.5).reciprocal();
       }},
      {"where_compare", "a < b ? a : b * 2, 128 elements",
       [] {
         Tensor a = input({128}), b = input({128});
         return a.lt(b).where(a, b * 2);
       }},
      {"int32_arith", "idiv, mod, xor, shifts of int32 (b != 0 where the host guards)",
       [] {
         Tensor a = input({200}, dtypes::int32), b = input({200}, dtypes::int32);
         return a.idiv(b) + a.mod(b) + a.bitwise_xor(b) + a.lshift(2) + b.rshift(1) - a * b;
       }},
      {"broadcast_add", "a[64,1] + b[1,48]",
       [] {
         return input({64, 1}) + input({1, 48});
       }},
      {"sum_axis1", "a[32,100].sum(1)",
       [] {
         return input({32, 100}).sum({1});
       }},
      {"max_axis0", "a[100,32].max(0)",
       [] {
         return input({100, 32}).max({0});
       }},
      {"sum_all", "a[4096].sum()", [] { return input({4096}).sum(); }},
      {"softmax", "a[16,50].softmax(1)",
       [] {
         return input({16, 50}).softmax(1);
       }},
      {"matmul", "a[64,48] @ b[48,32]",
       [] {
         return input({64, 48}).matmul(input({48, 32}));
       }},
      {"matmul_odd", "a[33,17] @ b[17,9]",
       [] {
         return input({33, 17}).matmul(input({17, 9}));
       }},
      {"conv2d", "x[2,3,10,10] conv2d w[4,3,3,3] + bias[4], padding 1",
       [] {
         return input({2, 3, 10, 10}).conv2d(input({4, 3, 3, 3}), input({4}), 1, 1);
       }},
      {"pad_gated", "a[10,10].pad((1,2),(3,0)) + 1 (gated loads)",
       [] {
         return input({10, 10}).pad({{1, 2}, {3, 0}}) + 1;
       }},
      {"max_pool2d", "x[1,2,8,8].max_pool2d(2)",
       [] {
         return input({1, 2, 8, 8}).max_pool2d(2);
       }},
      {"cumsum", "a[64].cumsum()", [] { return input({64}).cumsum(0); }},
      {"many_buffers", "sum of 12 inputs of 100 elements",
       [] {
         Tensor s = input({100});
         for (int i = 1; i < 12; ++i) s = s + input({100}) * double(i);
         return s;
       }},
  };
  // Every dtype: arithmetic in the dtype, then a conversion to float32 (defined for every value).
  const std::vector<DType> all = {dtypes::bool_,  dtypes::int8,    dtypes::uint8,    dtypes::int16,
                                  dtypes::uint16, dtypes::int32,   dtypes::uint32,   dtypes::int64,
                                  dtypes::uint64, dtypes::float16, dtypes::bfloat16, dtypes::float32,
                                  dtypes::float64};
  for (DType dt : all) {
    if (dt.is_bool()) {
      cases.push_back({"dtype_bool", "(a and b) or (a != b), cast to float32", [] {
                         Tensor a = input({67}, dtypes::bool_), b = input({67}, dtypes::bool_);
                         return a.logical_and(b).logical_or(a.ne(b)).cast(dtypes::float32);
                       }});
      continue;
    }
    const std::string name = tg::sdk::dtype_name(to_abi(dt));
    cases.push_back({"dtype_" + name, "max(a * b + a, b) in " + name + ", cast to float32", [dt] {
                       Tensor a = input({67}, dt), b = input({67}, dt);
                       return (a * b + a).maximum(b).cast(dtypes::float32);
                     }});
    cases.push_back({"sum_" + name, "a[5,31] in " + name + " summed over axis 1", [dt] {
                       return input({5, 31}, dt).sum({1});
                     }});
  }
  return cases;
}

CorpusKernel hand_built(std::string name, std::string origin, std::vector<std::byte> ir,
                        std::array<uint32_t, 3> global, std::array<uint32_t, 3> local,
                        std::vector<CorpusBuffer> buffers) {
  CorpusKernel k;
  k.name = std::move(name);
  k.origin = "hand-built: " + std::move(origin);
  k.ir = std::move(ir);
  k.global = global;
  k.local = local;
  k.buffers = std::move(buffers);
  return k;
}

// Hand-built kernels for what codegen does not emit yet.
void add_hand_built(std::vector<CorpusKernel>& out) {
  using tg::sdk::KernelBuilder;
  { // scalar arguments and a gated store: out[i] = a[i] * s0 + float(s1) for i < n (s2)
    KernelBuilder b("scalars_gated_store");
    auto o = b.global(0, TG_DTYPE_FLOAT32), a = b.global(1, TG_DTYPE_FLOAT32);
    auto s0 = b.var(0, TG_DTYPE_FLOAT32), s1 = b.var(1, TG_DTYPE_INT64), n = b.var(2, TG_DTYPE_INT32);
    auto i = b.group_id(0);
    auto v = b.alu(TG_OP_ADD, b.mul(b.load(b.index(a, i)), s0), b.cast(s1, TG_DTYPE_FLOAT32));
    b.store_gated(b.index(o, i), v, b.cmplt(i, n));
    CorpusKernel k =
        hand_built("scalars_gated_store", "out[i] = a[i] * s0 + float(s1) stored only for i < n",
                   b.serialize(), {100, 1, 1}, {1, 1, 1}, {{TG_DTYPE_FLOAT32, 100}, {TG_DTYPE_FLOAT32, 100}});
    tg_scalar_arg f{}, l{}, c{};
    f.dtype = TG_DTYPE_FLOAT32;
    f.value.f = 1.5;
    l.dtype = TG_DTYPE_INT64;
    l.value.i = -3;
    c.dtype = TG_DTYPE_INT32;
    c.value.i = 77;
    k.scalars = {f, l, c};
    finish(k);
    out.push_back(std::move(k));
  }
  { // a work-group reduction through local memory and a barrier: out[g] = sum(a[g*16 .. g*16+15])
    KernelBuilder b("local_reduce");
    auto o = b.global(0, TG_DTYPE_FLOAT32), a = b.global(1, TG_DTYPE_FLOAT32);
    auto shared = b.local(16, TG_DTYPE_FLOAT32);
    auto g = b.group_id(0), l = b.local_id(0);
    b.store(b.index(shared, l), b.load(b.index(a, b.add(b.mul(g, b.i32(16)), l))));
    b.barrier();
    auto first = b.if_(b.alu(TG_OP_CMPEQ, l, b.i32(0)));
    auto acc = b.acc(b.f32(0));
    auto r = b.range(b.i32(0), b.i32(16));
    b.assign(acc, b.add(acc, b.load(b.index(shared, r))));
    b.end_range(r);
    b.store(b.index(o, g), acc);
    b.end_if(first);
    CorpusKernel k =
        hand_built("local_reduce", "16-wide work-group sum through local memory and a barrier", b.serialize(),
                   {8, 1, 1}, {16, 1, 1}, {{TG_DTYPE_FLOAT32, 8}, {TG_DTYPE_FLOAT32, 128}});
    finish(k);
    out.push_back(std::move(k));
  }
  { // every grid axis, odd sizes: out[(z*5 + y)*3 + x] = x + 10y + 100z
    KernelBuilder b("grid_3d");
    auto o = b.global(0, TG_DTYPE_INT32);
    auto x = b.group_id(0), y = b.group_id(1), z = b.group_id(2);
    auto idx = b.add(b.mul(b.add(b.mul(z, b.i32(5)), y), b.i32(3)), x);
    b.store(b.index(o, idx), b.add(b.add(x, b.mul(y, b.i32(10))), b.mul(z, b.i32(100))));
    CorpusKernel k = hand_built("grid_3d", "a 3 x 5 x 7 grid writing its own ids", b.serialize(), {3, 5, 7},
                                {1, 1, 1}, {{TG_DTYPE_INT32, 105}});
    finish(k);
    out.push_back(std::move(k));
  }
  { // an empty grid: launching it must write nothing
    KernelBuilder b("empty_grid");
    auto o = b.global(0, TG_DTYPE_FLOAT32);
    auto i = b.group_id(0);
    b.store(b.index(o, i), b.f32(42));
    CorpusKernel k = hand_built("empty_grid", "global size 0 on axis 0, so nothing runs", b.serialize(),
                                {0, 1, 1}, {1, 1, 1}, {{TG_DTYPE_FLOAT32, 4}});
    finish(k);
    out.push_back(std::move(k));
  }
}

} // namespace

tg_device_properties reference_properties() {
  tg_device_properties p{};
  p.struct_size = sizeof p;
  p.max_local_size[0] = p.max_local_size[1] = p.max_local_size[2] = 256;
  p.max_local_threads = 256;
  p.max_global_size[0] = p.max_global_size[1] = p.max_global_size[2] = 65535;
  p.max_buffer_args = 32;
  p.max_scalar_args = 16;
  p.compute_units = 4;
  p.subgroup_size = 1;
  p.vector_bytes = 32;
  p.local_memory_bytes = 32768;
  for (tg_dtype d = TG_DTYPE_BOOL; d < TG_DTYPE_COUNT; ++d) p.dtype_mask |= TG_DTYPE_BIT(d);
  p.features = TG_FEATURE_LOCAL_MEMORY | TG_FEATURE_BARRIER;
  return p;
}

std::vector<CorpusKernel> golden_corpus(const tg_device_properties& props) {
  const LowerOptions options = lower_options(props, true);
  std::vector<CorpusKernel> out;
  for (const auto& c : codegen_cases()) add_codegen(out, c, options);
  add_hand_built(out);
  return out;
}

// ---- stored form ----

namespace {

nlohmann::json scalar_json(const tg_scalar_arg& s) {
  nlohmann::json j{{"dtype", tg::sdk::dtype_name(s.dtype)}};
  if (tg::sdk::dtype_is_float(s.dtype))
    j["value"] = s.value.f;
  else if (tg::sdk::dtype_is_unsigned_int(s.dtype))
    j["value"] = s.value.u;
  else
    j["value"] = s.value.i;
  return j;
}

tg_dtype dtype_by_name(const std::string& name, const std::string& where) {
  for (tg_dtype d = 0; d < TG_DTYPE_COUNT; ++d)
    if (const char* n = tg::sdk::dtype_name(d); n && name == n) return d;
  throw std::runtime_error(where + ": unknown dtype \"" + name + "\"");
}

std::array<uint32_t, 3> dims3(const nlohmann::json& j, const std::string& where) {
  if (!j.is_array() || j.size() != 3) throw std::runtime_error(where + ": expected 3 sizes");
  return {j[0].get<uint32_t>(), j[1].get<uint32_t>(), j[2].get<uint32_t>()};
}

} // namespace

void write_corpus(const std::filesystem::path& dir, const std::vector<CorpusKernel>& kernels) {
  std::filesystem::create_directories(dir);
  nlohmann::json manifest = nlohmann::json::array();
  for (const auto& k : kernels) {
    std::span<const std::byte> ir(k.ir);
    tg::sdk::write_file_durably(dir / (k.name + ".tgir"), std::span(&ir, 1));
    nlohmann::json buffers = nlohmann::json::array(), scalars = nlohmann::json::array();
    for (const auto& b : k.buffers)
      buffers.push_back({{"dtype", tg::sdk::dtype_name(b.dtype)}, {"elements", b.elements}});
    for (const auto& s : k.scalars) scalars.push_back(scalar_json(s));
    manifest.push_back({{"name", k.name},
                        {"origin", k.origin},
                        {"global", k.global},
                        {"local", k.local},
                        {"buffers", buffers},
                        {"scalars", scalars},
                        {"features", k.features},
                        {"dtype_mask", k.dtype_mask}});
  }
  std::string text = manifest.dump(1) + "\n";
  std::span<const std::byte> bytes = std::as_bytes(std::span(text.data(), text.size()));
  tg::sdk::write_file_durably(dir / "manifest.json", std::span(&bytes, 1));
}

std::vector<CorpusKernel> read_corpus(const std::filesystem::path& dir) {
  const auto manifest_path = dir / "manifest.json";
  std::vector<std::byte> bytes = tg::sdk::read_file(manifest_path);
  nlohmann::json manifest;
  try {
    manifest = nlohmann::json::parse(reinterpret_cast<const char*>(bytes.data()),
                                     reinterpret_cast<const char*>(bytes.data()) + bytes.size());
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(manifest_path.string() + ": " + e.what());
  }
  std::vector<CorpusKernel> out;
  try {
    for (const auto& j : manifest) {
      CorpusKernel k;
      k.name = j.at("name").get<std::string>();
      const std::string where = manifest_path.string() + " kernel " + k.name;
      k.origin = j.at("origin").get<std::string>();
      k.global = dims3(j.at("global"), where);
      k.local = dims3(j.at("local"), where);
      for (const auto& b : j.at("buffers"))
        k.buffers.push_back(
            {dtype_by_name(b.at("dtype").get<std::string>(), where), b.at("elements").get<uint64_t>()});
      for (const auto& s : j.at("scalars")) {
        tg_scalar_arg a{};
        a.dtype = dtype_by_name(s.at("dtype").get<std::string>(), where);
        if (tg::sdk::dtype_is_float(a.dtype))
          a.value.f = s.at("value").get<double>();
        else if (tg::sdk::dtype_is_unsigned_int(a.dtype))
          a.value.u = s.at("value").get<uint64_t>();
        else
          a.value.i = s.at("value").get<int64_t>();
        k.scalars.push_back(a);
      }
      k.ir = tg::sdk::read_file(dir / (k.name + ".tgir"));
      try {
        finish(k);
      } catch (const std::exception& e) {
        throw std::runtime_error(where + ": " + e.what());
      }
      if (k.features != j.at("features").get<uint64_t>() ||
          k.dtype_mask != j.at("dtype_mask").get<uint64_t>())
        throw std::runtime_error(where + ": features or dtype_mask disagree with its IR");
      out.push_back(std::move(k));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(manifest_path.string() + ": " + e.what());
  }
  return out;
}

} // namespace tg::conform
