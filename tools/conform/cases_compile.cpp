// compile/*: malformed IR, ops and dtypes the device does not declare, concurrent compiles,
// the cache key, and compile results read by older and newer hosts.
#include "tools/conform/cases.hpp"

#include <tg/sdk/kernel_ir.hpp>

#include <cstring>
#include <thread>

namespace tg::conform {

using tg::sdk::KernelBuilder;
using Ref = KernelBuilder::Ref;

std::vector<std::byte> scale_kernel_ir() {
  KernelBuilder k("conform_scale");
  Ref a = k.global(0, TG_DTYPE_FLOAT32);
  Ref out = k.global(1, TG_DTYPE_FLOAT32);
  Ref s = k.var(0, TG_DTYPE_FLOAT32);
  Ref i = k.group_id(0);
  Ref x = k.load(k.index(a, i));
  Ref y = k.mul(x, s);
  k.store(k.index(out, i), y);
  return k.serialize();
}

tg_scalar_arg scalar_f32(float value) {
  tg_scalar_arg s{};
  s.dtype = TG_DTYPE_FLOAT32;
  s.value.f = double(value);
  return s;
}

const char* target_of(const Context& ctx) {
  return ctx.properties.arch[0] != '\0' ? ctx.properties.arch : nullptr;
}

namespace {

void need_compile() {
  if (!TG_CONFORM_HAS(compile)) throw CaseSkipped("the plugin has no compile function");
}

void expect_invalid_ir(std::span<const std::byte> ir, const std::string& what) {
  Compiled c = compile(ir, nullptr);
  expect(c.status.code == TG_ERROR_INVALID_ARGUMENT,
         what + ": expected INVALID_ARGUMENT, got " + (c.status.ok() ? "success" : c.status.describe()));
  expect(!c.status.message.empty(), what + ": INVALID_ARGUMENT without a message");
}

void malformed_ir(const Context&) {
  need_compile();
  auto good = scale_kernel_ir();
  Compiled ok = compile(good, nullptr);
  expect(ok.status.ok(), "a well-formed kernel failed to compile: " + ok.status.describe());
  auto bad_magic = good;
  bad_magic[0] = std::byte{'X'};
  expect_invalid_ir(bad_magic, "IR with a bad magic");
  for (size_t cut : {size_t(0), size_t(3), size_t(10), good.size() / 2, good.size() - 1})
    expect_invalid_ir(std::span(good).first(cut), "IR truncated to " + std::to_string(cut) + " bytes");
  KernelBuilder fwd("forward_reference");
  Ref out = fwd.global(0, TG_DTYPE_INT32);
  Ref idx = fwd.index(out, fwd.i32(0));
  fwd.emit({TG_OP_STORE, TG_DTYPE_VOID, 0, 1, 0, 0, {idx, 99}});
  expect_invalid_ir(tg::sdk::serialize_kernel_ir(fwd.ir()), "IR naming a source defined later");
  KernelBuilder op("unknown_op");
  op.emit({200, TG_DTYPE_INT32, 0, 1, 0, 0, {}});
  expect_invalid_ir(tg::sdk::serialize_kernel_ir(op.ir()), "IR with op code 200");
  tg_compile_args args{sizeof(args), nullptr, 16, nullptr, 0, 2};
  tg_compile_result* result = nullptr;
  expect_code(api().compile(&args, &result), TG_ERROR_INVALID_ARGUMENT, "compile of a NULL IR pointer");
  expect_code(api().compile(nullptr, &result), TG_ERROR_INVALID_ARGUMENT, "compile(NULL args)");
}

void expect_unimplemented(std::span<const std::byte> ir, const std::string& what, const char* target) {
  Compiled c = compile(ir, target);
  expect(c.status.code == TG_ERROR_UNIMPLEMENTED,
         what + ": expected UNIMPLEMENTED, got " + (c.status.ok() ? "success" : c.status.describe()));
  expect(!c.status.message.empty(), what + ": UNIMPLEMENTED without a message");
}

void undeclared_features(const Context& ctx) {
  need_compile();
  const uint64_t f = ctx.properties.features;
  if ((f & TG_FEATURE_BARRIER) && (f & TG_FEATURE_LOCAL_MEMORY))
    throw CaseSkipped("the device declares local memory and barriers");
  if (!(f & TG_FEATURE_BARRIER)) {
    KernelBuilder k("with_barrier");
    Ref out = k.global(0, TG_DTYPE_INT32);
    k.barrier();
    k.store(k.index(out, k.group_id(0)), k.i32(1));
    expect_unimplemented(k.serialize(), "BARRIER without TG_FEATURE_BARRIER", target_of(ctx));
  }
  if (!(f & TG_FEATURE_LOCAL_MEMORY)) {
    KernelBuilder k("with_local");
    Ref g = k.global(0, TG_DTYPE_INT32);
    Ref shared = k.local(16, TG_DTYPE_INT32);
    k.store(k.index(shared, k.local_id(0)), k.i32(1));
    k.store(k.index(g, k.group_id(0)), k.load(k.index(shared, k.i32(0))));
    expect_unimplemented(k.serialize(), "DEFINE_LOCAL without TG_FEATURE_LOCAL_MEMORY", target_of(ctx));
  }
}

void undeclared_dtypes(const Context& ctx) {
  need_compile();
  int checked = 0;
  for (tg_dtype dt = TG_DTYPE_BOOL; dt < TG_DTYPE_COUNT; ++dt) {
    if (ctx.properties.dtype_mask & TG_DTYPE_BIT(dt)) continue;
    KernelBuilder k(std::string("undeclared_") + tg::sdk::dtype_name(dt));
    Ref in = k.global(0, dt), out = k.global(1, dt);
    Ref i = k.group_id(0);
    k.store(k.index(out, i), k.load(k.index(in, i)));
    expect_unimplemented(k.serialize(),
                         std::string("a kernel of undeclared dtype ") + tg::sdk::dtype_name(dt),
                         target_of(ctx));
    ++checked;
  }
  if (checked == 0) throw CaseSkipped("the device declares every dtype");
}

void concurrent_compiles(const Context& ctx) {
  need_compile();
  auto ir = scale_kernel_ir();
  const auto reference = compile_or_fail(ir, target_of(ctx));
  constexpr size_t kThreads = 4;
  std::vector<std::string> problems(kThreads);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        for (int round = 0; round < 3; ++round) {
          Compiled c = compile(ir, target_of(ctx));
          if (!c.status.ok())
            problems[t] = "a concurrent compile failed: " + c.status.describe();
          else if (c.binary != reference)
            problems[t] = "concurrent compiles of one kernel gave different blobs";
        }
      } catch (const std::exception& e) {
        problems[t] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  for (const auto& p : problems) expect(p.empty(), p);
}

std::string cache_key(const char* target) {
  size_t length = 0;
  std::vector<char> buf(4096, '\x7f');
  check(api().compile_cache_key(target, buf.data(), buf.size(), &length), "compile_cache_key");
  expect(length <= 4095, "the cache key is longer than 4095 bytes");
  expect(strnlen(buf.data(), buf.size()) == length,
         "the cache key's length disagrees with its NUL terminator");
  return std::string(buf.data(), length);
}

void cache_key_stable(const Context& ctx) {
  if (!TG_CONFORM_HAS(compile_cache_key)) throw CaseSkipped("the plugin has no compile_cache_key");
  std::string a = cache_key(target_of(ctx));
  expect(!a.empty(), "the cache key is empty");
  expect(cache_key(target_of(ctx)) == a, "the cache key changed between two calls");
  char small[2];
  size_t length = 0;
  expect_code(api().compile_cache_key(target_of(ctx), small, sizeof small, &length),
              TG_ERROR_INVALID_ARGUMENT, "compile_cache_key into a 2-byte buffer");
  expect(length == a.size(), "a too-small buffer must still report the key's full length (" +
                                 std::to_string(a.size()) + "), got " + std::to_string(length));
}

void compile_output_structs(const Context& ctx) {
  need_compile();
  auto ir = scale_kernel_ir();
  Compiled with_source = compile(ir, target_of(ctx), TG_COMPILE_WANT_SOURCE);
  expect(with_source.status.ok(),
         "compile with TG_COMPILE_WANT_SOURCE failed: " + with_source.status.describe());
  expect(!with_source.binary.empty(), "compile returned an empty blob");
  tg_compile_args args{sizeof(args), ir.data(), ir.size(), target_of(ctx), 0, 2};
  tg_compile_result* result = nullptr;
  check(api().compile(&args, &result), "compile");
  // An older host's output struct (without source/log) must not be written past its end...
  std::vector<unsigned char> raw(sizeof(tg_compile_output) + 32, 0xCD);
  const size_t small = offsetof(tg_compile_output, source);
  std::memcpy(raw.data(), &small, sizeof small);
  tg_error* e = api().compile_result_get(result, reinterpret_cast<tg_compile_output*>(raw.data()));
  std::string problem;
  for (size_t i = small; i < raw.size() && problem.empty(); ++i)
    if (raw[i] != 0xCD)
      problem = "compile_result_get wrote byte " + std::to_string(i) + " beyond struct_size";
  // ...and a newer host's larger one is filled up to the plugin's own size.
  std::vector<unsigned char> big(sizeof(tg_compile_output) + 32, 0);
  const size_t large = big.size();
  std::memcpy(big.data(), &large, sizeof large);
  for (size_t i = sizeof(tg_compile_output); i < big.size(); ++i) big[i] = 0xEF;
  tg_error* e2 = api().compile_result_get(result, reinterpret_cast<tg_compile_output*>(big.data()));
  tg_compile_output full;
  std::memcpy(&full, big.data(), sizeof full);
  const bool log_ok = e2 != nullptr || full.log != nullptr;
  for (size_t i = sizeof(tg_compile_output); i < big.size() && problem.empty(); ++i)
    if (big[i] != 0xEF) problem = "compile_result_get wrote beyond its own struct for a larger struct_size";
  api().compile_result_destroy(result);
  check(e, "compile_result_get with struct_size " + std::to_string(small));
  check(e2, "compile_result_get with struct_size " + std::to_string(large));
  expect(problem.empty(), problem);
  expect(log_ok, "compile_result_get: log is NULL");
}

// program/*: blobs that are truncated, corrupt or noise are refused, never a crash.
void need_programs() {
  need_compile();
  if (!TG_CONFORM_HAS(program_load)) throw CaseSkipped("the plugin has no program_load");
}

Status load(const Device& d, std::span<const std::byte> bytes) {
  tg_program* program = nullptr;
  Status s = take(api().program_load(d.get(), bytes.data(), bytes.size(), &program));
  if (program != nullptr && s.ok()) api().program_free(program);
  return s;
}

void expect_refused(const Device& d, std::span<const std::byte> bytes, const std::string& what) {
  Status s = load(d, bytes);
  expect(s.code == TG_ERROR_INVALID_ARGUMENT,
         what + ": expected INVALID_ARGUMENT, got " + (s.ok() ? "success" : s.describe()));
}

void truncated_blobs(const Context& ctx) {
  need_programs();
  Device d(ctx.device_index);
  auto blob = compile_or_fail(scale_kernel_ir(), target_of(ctx));
  expect(load(d, blob).ok(), "the intact blob does not load");
  for (size_t cut :
       {size_t(0), size_t(1), size_t(7), size_t(16), blob.size() / 3, blob.size() / 2, blob.size() - 1})
    if (cut < blob.size())
      expect_refused(d, std::span(blob).first(cut), "a blob cut to " + std::to_string(cut) + " bytes");
  tg_program* program = nullptr;
  expect_code(api().program_load(d.get(), nullptr, 10, &program), TG_ERROR_INVALID_ARGUMENT,
              "program_load(NULL)");
}

void corrupt_blobs(const Context& ctx) {
  need_programs();
  Device d(ctx.device_index);
  auto blob = compile_or_fail(scale_kernel_ir(), target_of(ctx));
  for (size_t at : {size_t(0), size_t(5), blob.size() / 4, blob.size() / 2, blob.size() - 1}) {
    auto flipped = blob;
    flipped[at] ^= std::byte{0x5a};
    expect_refused(d, flipped,
                   "a blob with byte " + std::to_string(at) + " of " + std::to_string(blob.size()) +
                       " flipped");
  }
  uint32_t x = 1234;
  for (int round = 0; round < 16; ++round) {
    std::vector<std::byte> noise(size_t(64 + round * 97));
    for (auto& b : noise) b = std::byte((x = x * 1664525u + 1013904223u) >> 24);
    // Half of them start like the real blob, so they pass a magic check.
    if (round % 2 == 0) std::memcpy(noise.data(), blob.data(), std::min<size_t>(16, blob.size()));
    expect_refused(d, noise, "a blob of " + std::to_string(noise.size()) + " random bytes");
  }
}

void load_free_many(const Context& ctx) {
  need_programs();
  Device d(ctx.device_index);
  auto blob = compile_or_fail(scale_kernel_ir(), target_of(ctx));
  for (int round = 0; round < 20; ++round) Program p(d, blob);
}

} // namespace

void add_compile_cases(std::vector<Case>& cases) {
  cases.push_back({"compile/malformed_ir_is_invalid_argument", true, malformed_ir});
  cases.push_back({"compile/undeclared_features_are_unimplemented", true, undeclared_features});
  cases.push_back({"compile/undeclared_dtypes_are_unimplemented", true, undeclared_dtypes});
  cases.push_back({"compile/concurrent_compiles", true, concurrent_compiles});
  cases.push_back({"compile/cache_key_is_stable", true, cache_key_stable});
  cases.push_back({"compile/output_struct_sizes", true, compile_output_structs});
}

void add_program_cases(std::vector<Case>& cases) {
  cases.push_back({"program/truncated_blobs_are_refused", true, truncated_blobs});
  cases.push_back({"program/corrupt_blobs_are_refused", true, corrupt_blobs});
  cases.push_back({"program/load_and_free_many", true, load_free_many});
}

} // namespace tg::conform
