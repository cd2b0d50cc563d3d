// The CUDA plugin without a GPU: NVRTC builds every golden-corpus kernel into an sm_90 cubin (an
// ELF image inside the blob), refuses other targets; device_count says why nothing runs.
#include "../tools/conform/wgmma_kernel.hpp"
// The plugin's unit list (plugins/cuda/matrix_units.cpp is built into this test too: the plugin
// itself lists units per device only).
#include "plugin_fixture.hpp"
#include "plugins/cuda/matrix_units.hpp"
#include "render/big_local_kernel.hpp"
#include "render/test_kernels.hpp"

#include <tg/sdk/blob.hpp>
#include <tg/sdk/interpreter.hpp>
#include <tg/sdk/matrix_unit.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <tuple>

namespace {

// The payload's fields (compiler.hpp: entry NUL dynamic-shared-bytes NUL code).
struct Payload {
  std::string entry, shared_bytes;
  std::span<const std::byte> code;
};
Payload fields_of(const tg::sdk::Blob& blob) {
  const char* begin = reinterpret_cast<const char*>(blob.payload.data());
  const char* first = static_cast<const char*>(std::memchr(begin, 0, blob.payload.size()));
  BOOST_REQUIRE(first != nullptr);
  const char* second =
      static_cast<const char*>(std::memchr(first + 1, 0, blob.payload.size() - size_t(first + 1 - begin)));
  BOOST_REQUIRE(second != nullptr);
  return {std::string(begin, first), std::string(first + 1, second),
          std::span(blob.payload).subspan(size_t(second + 1 - begin))};
}
std::span<const std::byte> code_of(const tg::sdk::Blob& blob) { return fields_of(blob).code; }

BOOST_AUTO_TEST_CASE(corpus_compiles_to_sm90_cubin) {
  int compiled = 0;
  for (const auto& k : tgtest::render_test_kernels()) {
    BOOST_TEST_CONTEXT("kernel " << k.name) {
      tgtest::Compiled c;
      tgtest::Status s = tgtest::try_compile(k.ir, &c, 0, 2, "sm_90");
      BOOST_REQUIRE_MESSAGE(s.ok(), s.message + "\n" + s.log);
      tg::sdk::Blob blob = tg::sdk::open_blob(c.binary, "cuda", "sm_90");
      auto code = code_of(blob);
      BOOST_REQUIRE(code.size() > 4);
      BOOST_TEST(std::memcmp(code.data(),
                             "\x7f"
                             "ELF",
                             4) == 0);
      ++compiled;
    }
  }
  BOOST_TEST(compiled > 40);
}

BOOST_AUTO_TEST_CASE(bad_targets_are_refused) {
  const auto kernels = tgtest::render_test_kernels();
  const auto& k = kernels.front();
  tgtest::Compiled c;
  BOOST_TEST(tgtest::try_compile(k.ir, &c, 0, 2, "sm_50").code == TG_ERROR_INVALID_ARGUMENT);
  BOOST_TEST(tgtest::try_compile(k.ir, &c, 0, 2, "gfx90a").code == TG_ERROR_INVALID_ARGUMENT);
}

BOOST_AUTO_TEST_CASE(device_count_says_what_is_missing) {
  int32_t count = 0;
  tgtest::Status s = tgtest::take(tgtest::api().device_count(&count));
  if (s.ok()) return; // a GPU machine
  BOOST_TEST(s.code == TG_ERROR_UNAVAILABLE);
  BOOST_TEST_MESSAGE(s.message);
  BOOST_TEST((s.message.find("no NVIDIA driver") != std::string::npos ||
              s.message.find("driver present but") != std::string::npos));
  // ctest names the driver it loads (TG_CUDA_DRIVER) and the reason that driver must produce
  if (const char* expect = std::getenv("TG_TEST_CUDA_UNAVAILABLE"))
    BOOST_TEST(s.message.find(expect) != std::string::npos,
               "'" << s.message << "' should say '" << expect << "'");
}

} // namespace

// More than 48 KiB of local memory (render/big_local_kernel.hpp): the payload says how many
// bytes of dynamic shared memory a launch passes (0 for a kernel that fits static arrays); on a GPU
// the kernel loads (opting in past 48 KiB), runs through launch and through a launch batch (a
// CUDA graph: the kernel nodes pass the size too) and matches the reference; a kernel needing
// more than the device allows is refused at load with a message that says so.
BOOST_AUTO_TEST_CASE(local_memory_over_48k_runs_as_dynamic_shared_memory) {
  auto big = tgtest::big_local_kernel();
  tgtest::Compiled c;
  const tgtest::Status s = tgtest::try_compile(big.serialize(), &c, 0, 2, "sm_80");
  BOOST_REQUIRE_MESSAGE(s.ok(), s.message + "\n" + s.log);
  const Payload p = fields_of(tg::sdk::open_blob(c.binary, "cuda", "sm_80"));
  BOOST_TEST(p.entry == "tg_kernel_big_local");
  BOOST_TEST(p.shared_bytes == "65536");
  tg::sdk::KernelBuilder small("small"); // no local memory (not the stored corpus: absent on a GPU machine)
  small.store(small.index(small.global(0, TG_DTYPE_FLOAT32), small.local_id(0)), small.f32(1));
  tgtest::Compiled plain;
  BOOST_REQUIRE(tgtest::try_compile(small.serialize(), &plain, 0, 2, "sm_80").ok());
  BOOST_TEST(fields_of(tg::sdk::open_blob(plain.binary, "cuda", "sm_80")).shared_bytes == "0");

  tg::sdk::KernelBuilder huge("huge_local"); // 256 KiB: more than any GPU's opt-in maximum
  const auto out = huge.global(0, TG_DTYPE_FLOAT32);
  const auto l = huge.local(65536, TG_DTYPE_FLOAT32);
  const auto t = huge.local_id(0);
  huge.store(huge.index(l, t), huge.f32(1));
  huge.barrier();
  huge.store(huge.index(out, t), huge.load(huge.index(l, t)));
  tgtest::Compiled too_big;
  const tgtest::Status hs = tgtest::try_compile(huge.serialize(), &too_big, 0, 2, "sm_80");
  BOOST_REQUIRE_MESSAGE(hs.ok(), hs.message + "\n" + hs.log);

  int32_t count = 0;
  if (!tgtest::take(tgtest::api().device_count(&count)).ok() || count == 0) return; // no GPU here
  tgtest::Device device;
  tgtest::Compiled native; // for the GPU's own target
  BOOST_REQUIRE(tgtest::try_compile(big.serialize(), &native, 0, 2, device.properties().arch).ok());
  std::vector<float> in(size_t(tgtest::kBigLocalA + tgtest::kBigLocalB));
  std::mt19937 rng(7);
  for (auto& x : in) x = std::uniform_real_distribution<float>(-4, 4)(rng);
  const std::vector<float> want = tgtest::big_local_reference(in);
  tgtest::Buffer din(device, in), dout(device, in.size() * 4);
  const tgtest::Program program(device, native.binary);
  program.launch({1, 1, 1}, {uint32_t(tgtest::kBigLocalThreads), 1, 1}, {dout.arg(), din.arg()});
  BOOST_TEST(dout.download<float>(in.size()) == want, boost::test_tools::per_element());

  tgtest::Buffer dout2(device, in.size() * 4);
  const std::vector<tg_buffer_arg> first{dout.arg(), din.arg()}, second{dout2.arg(), din.arg()};
  std::vector<tg_launch_args> launches(2);
  std::vector<const tg_launch_args*> pointers;
  for (size_t i = 0; i < 2; ++i) {
    tg_launch_args& a = launches[i];
    a.struct_size = sizeof a;
    a.program = program.get();
    for (int k = 0; k < 3; ++k) a.global_size[k] = 1, a.local_size[k] = k == 0 ? tgtest::kBigLocalThreads : 1;
    a.buffers = (i ? second : first).data();
    a.buffer_count = 2;
    pointers.push_back(&a);
  }
  tg_launch_batch_args batch{sizeof(batch), device.get(), pointers.data(), 2, 0, nullptr};
  BOOST_REQUIRE(tgtest::take(tgtest::api().launch_batch(&batch)).ok());
  BOOST_TEST(dout2.download<float>(in.size()) == want, boost::test_tools::per_element());

  tgtest::Compiled huge_native;
  BOOST_REQUIRE(tgtest::try_compile(huge.serialize(), &huge_native, 0, 2, device.properties().arch).ok());
  tg_program* refused = nullptr;
  const tgtest::Status load = tgtest::take(tgtest::api().program_load(device.get(), huge_native.binary.data(),
                                                                      huge_native.binary.size(), &refused));
  BOOST_TEST(load.code == TG_ERROR_RESOURCE_EXHAUSTED, load.message);
  BOOST_TEST(load.message.find("262144 bytes of shared memory") != std::string::npos, load.message);
}

// IR 1.2 WGMMA (tools/conform/wgmma_kernel.hpp): the plugin builds it for sm_90a only (sm_90 as
// the target; sm_80 is refused as unimplemented); on a Hopper GPU the kernel runs and matches a
// double matmul of the same 16-bit inputs (two warpgroups, three k steps, padded tile strides).
// Also with both tiles 128-byte swizzled (kWgmmaSwizzle128), up to two atom columns of 64 k.
BOOST_AUTO_TEST_CASE(wgmma_builds_for_sm_90a_and_runs_on_hopper) {
  for (bool swz : {false, true})
    for (bool bn : {false, true}) // B k-major, and n-major (kWgmmaBNMajor: wgmma's transpose bit)
      for (tg_dtype dt : {TG_DTYPE_FLOAT16, TG_DTYPE_BFLOAT16})
        for (auto [n, k, groups] :
             {std::array<int, 3>{64, 16, 1}, {128, 48, 2}, {256, 32, 1}, {128, 128, 2}}) {
          const auto w = tg::conform::wgmma_matmul_kernel(dt, n, k, groups, bn, swz);
          BOOST_TEST_CONTEXT(tg::sdk::dtype_name(dt)
                             << " n " << n << " k " << k << " groups " << groups << (bn ? " B n-major" : "")
                             << (swz ? " swizzled" : "")) {
            tgtest::Compiled c;
            const tgtest::Status s = tgtest::try_compile(w.ir, &c, 0, 2, "sm_90");
            BOOST_REQUIRE_MESSAGE(s.ok(), s.message + "\n" + s.log);
            const tgtest::Status old = tgtest::try_compile(w.ir, &c, 0, 2, "sm_80");
            BOOST_TEST(old.code == TG_ERROR_UNIMPLEMENTED);
            BOOST_TEST(old.message.find("sm_90a") != std::string::npos, old.message);
            int32_t count = 0;
            if (!tgtest::take(tgtest::api().device_count(&count)).ok() || count == 0) continue; // no GPU here
            tgtest::Device device;
            if (std::string(device.properties().arch) != "sm_90") {
              BOOST_TEST_MESSAGE("not a Hopper GPU: the WGMMA kernel is not run");
              continue;
            }
            std::mt19937 rng(5);
            std::vector<uint16_t> a(size_t(w.m * w.k)), b(size_t(w.k * w.n));
            std::vector<double> av, bv;
            for (auto* v : {&a, &b})
              for (auto& x : *v) {
                const double r = std::uniform_real_distribution<double>(-2, 2)(rng);
                x = dt == TG_DTYPE_FLOAT16 ? tg::sdk::float_to_half_bits(r)
                                           : tg::sdk::float_to_bfloat16_bits(float(r));
                (v == &a ? av : bv)
                    .push_back(dt == TG_DTYPE_FLOAT16 ? tg::sdk::half_bits_to_double(x)
                                                      : tg::sdk::bfloat16_bits_to_double(x));
              }
            tgtest::Buffer da(device, a), db(device, b), dd(device, uint64_t(w.m * w.n) * 4);
            const tgtest::Program program(device, c.binary);
            program.launch({1, 1, 1}, {uint32_t(w.threads), 1, 1}, {dd.arg(), da.arg(), db.arg()});
            const auto got = dd.download<float>(size_t(w.m * w.n));
            double worst = 0;
            for (int i = 0; i < w.m; ++i)
              for (int j = 0; j < w.n; ++j) {
                double want = 0, scale = 0;
                for (int kk = 0; kk < w.k; ++kk) {
                  want += av[size_t(i * w.k + kk)] * bv[size_t(kk * w.n + j)];
                  scale += std::fabs(av[size_t(i * w.k + kk)] * bv[size_t(kk * w.n + j)]);
                }
                worst = std::max(worst,
                                 std::fabs(double(got[size_t(i * w.n + j)]) - want) / std::max(scale, 1.0));
              }
            BOOST_TEST(worst < 1e-4, "worst error " << worst); // a layout error is O(1)
          }
        }
}

namespace {

bool has_gpu() {
  int32_t count = 0;
  return tgtest::take(tgtest::api().device_count(&count)).ok() && count > 0;
}

constexpr int32_t kSteps = 4'000'000; // milliseconds for one thread: far longer than a launch

// out[t] = in[t] after kSteps steps of x = x * x + 1013904223 (uint32, wrapping), for the threads
// of each block (every block writes the same values): a kernel that runs long enough for a
// synchronize that returned early to be seen. A square, not an affine step: the compiler may
// compose affine steps of an unrolled loop into one (an LCG of 4M steps ran in 0.16 ms).
tgtest::Compiled squaring_kernel() {
  tg::sdk::KernelBuilder b("squaring");
  auto out = b.global(0, TG_DTYPE_UINT32), in = b.global(1, TG_DTYPE_UINT32);
  auto t = b.local_id(0);
  auto acc = b.acc(b.load(b.index(in, t)));
  auto i = b.range(b.i32(0), b.i32(kSteps));
  b.assign(acc, b.add(b.mul(acc, acc), b.const_int(TG_DTYPE_UINT32, 1013904223)));
  b.end_range(i);
  b.store(b.index(out, t), acc);
  return tgtest::compile(b.serialize());
}

} // namespace

// A launch of one block carries the completion word (plugins/cuda/stream.hpp): synchronize right
// after it waits for the kernel's own store instead of the driver. It must still wait for the
// kernel, and where more work was queued after that launch (here a launch of two blocks, which
// carries no word), for that too. The wait is compared with the kernel's time from a timed launch.
BOOST_AUTO_TEST_CASE(synchronize_waits_for_one_block_launches_and_what_follows,
                     *boost::unit_test::precondition([](boost::unit_test::test_unit_id) {
                       return has_gpu();
                     })) {
  tgtest::Device device;
  const tgtest::Compiled binary = squaring_kernel();
  const tgtest::Program program(device, binary.binary);
  std::vector<uint32_t> in(32);
  for (size_t i = 0; i < in.size(); ++i) in[i] = uint32_t(i * 2654435761u);
  std::vector<uint32_t> want = in;
  for (auto& x : want)
    for (int32_t s = 0; s < kSteps; ++s) x = x * x + 1013904223u;
  tgtest::Buffer din(device, in), dout(device, in.size() * 4), dout2(device, in.size() * 4);

  uint64_t kernel_ns = 0; // a timed launch waits through the driver's events
  BOOST_REQUIRE(program.try_launch({1, 1, 1}, {32, 1, 1}, {dout.arg(), din.arg()}, {}, &kernel_ns).ok());
  BOOST_TEST_REQUIRE(kernel_ns > 2'000'000u, "the kernel ran " << kernel_ns << " ns: too short to tell");
  BOOST_TEST(dout.download<uint32_t>(in.size()) == want, boost::test_tools::per_element());

  auto synchronize_ms = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    tgtest::check(tgtest::api().synchronize(device.get()), "synchronize");
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  const double kernel_ms = double(kernel_ns) / 1e6;
  program.launch({1, 1, 1}, {32, 1, 1}, {dout2.arg(), din.arg()}); // one block: the word
  const double word_ms = synchronize_ms();
  BOOST_TEST(word_ms > 0.5 * kernel_ms,
             "synchronize after one block took " << word_ms << " ms, the kernel " << kernel_ms << " ms");
  BOOST_TEST(dout2.download<uint32_t>(in.size()) == want, boost::test_tools::per_element());

  tgtest::Buffer dquick(device, in.size() * 4), dout3(device, in.size() * 4);
  program.launch({1, 1, 1}, {32, 1, 1}, {dquick.arg(), din.arg()}); // a word ...
  program.launch({2, 1, 1}, {32, 1, 1}, {dout3.arg(), din.arg()});  // ... then two blocks after it
  const double after_ms = synchronize_ms();
  BOOST_TEST(after_ms > 1.5 * kernel_ms,
             "synchronize after two kernels took " << after_ms << " ms, each " << kernel_ms << " ms");
  BOOST_TEST(dout3.download<uint32_t>(in.size()) == want, boost::test_tools::per_element());
}

// ---- matrix units (ABI 1.4/1.5): mma.sync from registers, wgmma from shared memory ----

namespace {

// Sets (or with nullptr, unsets) an environment variable for one scope, then restores it.
class ScopedEnv {
public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { had_ ? setenv(name_, old_.c_str(), 1) : unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

std::vector<std::string> unit_names(int cc) {
  std::vector<std::string> out;
  for (const tg_matrix_unit& u : tg::cuda::matrix_units(cc)) out.push_back(tg::sdk::matrix_unit_name(u));
  return out;
}

// The index of the declared unit named `name` on sm_90 (-1 where there is none).
int64_t unit_index(const std::string& name) {
  const auto names = unit_names(90);
  const auto at = std::find(names.begin(), names.end(), name);
  return at == names.end() ? -1 : int64_t(at - names.begin());
}

} // namespace

// sm_90: the two mma.sync units, then wgmma m64nNk16 from shared memory, preferred first (the
// host's heuristic takes the first that fits), f16 then bf16 for each layout and N; every unit well
// formed. sm_80 and newer targets without wgmma: the mma.sync units only; sm_75 none;
// TG_CUDA_MATRIX_UNITS=0 or TG_CUDA_TENSOR_CORES=0: none; TG_CUDA_WGMMA=0: no wgmma units.
BOOST_AUTO_TEST_CASE(matrix_units_per_target) {
  const ScopedEnv units("TG_CUDA_MATRIX_UNITS", nullptr), tc("TG_CUDA_TENSOR_CORES", nullptr),
      wg("TG_CUDA_WGMMA", nullptr);
  const std::vector<std::string> mma_sync{"mma.m16n8k16.f16", "mma.m16n8k16.bf16"};
  std::vector<std::string> want = mma_sync;
  const std::pair<int, const char*> order[] = {
      {256, ".sw128.bn"}, {256, ".sw128"}, {128, ".sw128.bn"}, {128, ".sw128"}, {128, ".bn"}, {128, ""},
      {64, ".sw128.bn"},  {64, ".sw128"},  {64, ".bn"},        {64, ""},        {256, ".bn"}, {256, ""}};
  for (const auto& [n, layout] : order)
    for (const char* dt : {"f16", "bf16"})
      want.push_back("wgmma.m64n" + std::to_string(n) + "k16." + dt + layout);
  BOOST_TEST(unit_names(90) == want, boost::test_tools::per_element());
  const auto sm90 = tg::cuda::matrix_units(90);
  for (size_t i = 0; i < sm90.size(); ++i)
    BOOST_TEST_CONTEXT("unit " << i << " " << tg::sdk::matrix_unit_name(sm90[i])) {
      BOOST_TEST(tg::sdk::matrix_unit_error(sm90[i]) == "");
      BOOST_TEST(tg::sdk::matrix_local(sm90[i]) == (i >= 2));
      if (i >= 2) {
        const std::string name = tg::sdk::matrix_unit_name(sm90[i]);
        const int64_t flags = tg::sdk::wgmma_unit_flags(sm90[i]);
        BOOST_TEST(((flags & tg::sdk::kWgmmaSwizzle128) != 0) == (name.find(".sw128") != std::string::npos));
        BOOST_TEST(((flags & tg::sdk::kWgmmaBNMajor) != 0) == (name.find(".bn") != std::string::npos));
        BOOST_TEST(sm90[i].m == 64u);
        BOOST_TEST(sm90[i].k == 16u);
        BOOST_TEST(sm90[i].c_dtype == TG_DTYPE_FLOAT32);
        BOOST_TEST(sm90[i].a_dtype ==
                   (name.find(".bf16") != std::string::npos ? TG_DTYPE_BFLOAT16 : TG_DTYPE_FLOAT16));
      }
    }
  for (int cc : {80, 86, 89, 100, 120}) BOOST_TEST(unit_names(cc) == mma_sync, "sm_" << cc);
  BOOST_TEST(unit_names(75).empty());
  {
    const ScopedEnv off("TG_CUDA_WGMMA", "0");
    BOOST_TEST(unit_names(90) == mma_sync);
  }
  for (const char* var : {"TG_CUDA_MATRIX_UNITS", "TG_CUDA_TENSOR_CORES"}) {
    const ScopedEnv off(var, "0");
    BOOST_TEST(unit_names(90).empty(), var);
    BOOST_TEST(unit_names(80).empty(), var);
  }
}

namespace {

// One warpgroup's loop of 2 steps: copy A (64 x 64) and B (64 x n) into tiles in the layout of
// `flags` (sdk::wgmma_unit), then 4 k steps of m64nNk16 chained into the accumulator, written as
// MMA in local form on the declared unit (`local`) or as the equivalent hand-written IR 1.2 WGMMA.
// Atoms (elements): A 8 x 8 core matrices, 8 along k then the next 8 rows (a_col 64, a_row 512), or
// swizzled one 8 x 64 atom per 8 rows (a_row 512); B k-major likewise with n for m; B n-major 8 k x
// 8 n (b_col 64, b_row 8n), or swizzled 8 k x 64 n (b_col 512, b_row 8n).
std::vector<std::byte> tile_loop(bool local, int n, tg_dtype dt, int64_t flags, bool defer) {
  using tg::sdk::KernelBuilder;
  const bool sw = (flags & tg::sdk::kWgmmaSwizzle128) != 0, bn = (flags & tg::sdk::kWgmmaBNMajor) != 0;
  tg::sdk::MatrixStrides atoms; // local form's strides, elements
  atoms.a_row = 512;
  atoms.a_col = sw ? 0 : 64;
  atoms.b_row = bn ? 8 * n : sw ? 0 : 64;
  atoms.b_col = bn && !sw ? 64 : 512;
  tg::sdk::WgmmaStrides bytes; // WGMMA's, bytes (docs/abi.md 5.7)
  bytes.a_k = sw ? 16 : 128;
  bytes.a_m = 1024;
  bytes.b_k = bn ? 16 * n : sw ? 16 : 128;
  bytes.b_n = bn && !sw ? 128 : 1024;
  KernelBuilder b("tile_loop");
  const auto out = b.global(0, TG_DTYPE_FLOAT32), ga = b.global(1, dt), gb = b.global(2, dt);
  const auto la = b.local(64 * 64, dt), lb = b.local(64 * n, dt);
  const auto t = b.local_id(0);
  auto acc = b.acc(b.vectorize(std::vector<KernelBuilder::Ref>(size_t(n / 2), b.f32(0))));
  const auto step = b.range(b.i32(0), b.i32(2));
  b.barrier();
  for (auto [tile, global, count] : {std::tuple{la, ga, 64 * 64}, std::tuple{lb, gb, 64 * n}}) {
    const auto j = b.range(b.i32(0), b.i32(count / 128));
    const auto e = b.add(t, b.mul(j, b.i32(128)));
    b.store(b.index(tile, e), b.load(b.index(global, b.add(e, b.mul(step, b.i32(count))))));
    b.end_range(j);
  }
  b.barrier();
  auto c = acc;
  for (int s = 0; s < 4; ++s) { // the element at (0, 0) of this k step's A and B
    const int a_at = sw ? 16 * s : 128 * s, b_at = bn ? 16 * n * s : sw ? 16 * s : 128 * s;
    const auto pa = b.index(la, b.i32(a_at)), pb = b.index(lb, b.i32(b_at));
    c = local ? b.mma(pa, pb, c,
                      unit_index(tg::sdk::matrix_unit_name(tg::sdk::wgmma_unit(n, dt, flags))) |
                          (defer ? TG_MMA_DEFER_READS : 0),
                      tg::sdk::matrix_strides_pack(atoms))
              : b.wgmma(pa, pb, c, tg::sdk::wgmma_code(n) | flags | (defer ? tg::sdk::kWgmmaDeferReads : 0),
                        tg::sdk::wgmma_pack(bytes));
  }
  b.assign(acc, c);
  b.end_range(step);
  for (int i = 0; i < n / 2; ++i)
    b.store(b.index(out, b.add(b.mul(t, b.i32(n / 2)), b.i32(i))), b.gep(acc, uint16_t(i)));
  return b.serialize();
}

} // namespace

// An MMA in local form on a wgmma unit compiles exactly as the equivalent IR 1.2 WGMMA: the same
// CUDA source (descriptors, fences, commit/wait, the 1024-byte alignment of swizzled tiles) and the
// same cubin, for each layout (N 64 f16, and N 256 bf16 with deferred reads). sm_80 refuses it.
BOOST_AUTO_TEST_CASE(local_mma_renders_as_wgmma) {
  for (int64_t flags : {int64_t(0), tg::sdk::kWgmmaBNMajor, tg::sdk::kWgmmaSwizzle128,
                        tg::sdk::kWgmmaSwizzle128 | tg::sdk::kWgmmaBNMajor})
    for (auto [n, dt, defer] :
         {std::tuple{64, TG_DTYPE_FLOAT16, false}, std::tuple{256, TG_DTYPE_BFLOAT16, true}})
      BOOST_TEST_CONTEXT(tg::sdk::matrix_unit_name(tg::sdk::wgmma_unit(n, dt, flags))
                         << (defer ? " deferred" : "")) {
        BOOST_TEST_REQUIRE(unit_index(tg::sdk::matrix_unit_name(tg::sdk::wgmma_unit(n, dt, flags))) >= 2);
        tgtest::Compiled mma, wgmma;
        const tgtest::Status sm = tgtest::try_compile(tile_loop(true, n, dt, flags, defer), &mma,
                                                      TG_COMPILE_WANT_SOURCE, 2, "sm_90");
        BOOST_REQUIRE_MESSAGE(sm.ok(), sm.message + "\n" + sm.log);
        const tgtest::Status sw = tgtest::try_compile(tile_loop(false, n, dt, flags, defer), &wgmma,
                                                      TG_COMPILE_WANT_SOURCE, 2, "sm_90");
        BOOST_REQUIRE_MESSAGE(sw.ok(), sw.message + "\n" + sw.log);
        BOOST_TEST(mma.source == wgmma.source);
        BOOST_TEST(mma.source.find("wgmma.mma_async") != std::string::npos);
        BOOST_TEST((mma.source.find("__align__(1024)") != std::string::npos) ==
                   ((flags & tg::sdk::kWgmmaSwizzle128) != 0));
        const auto mma_blob = tg::sdk::open_blob(mma.binary, "cuda", "sm_90"),
                   wgmma_blob = tg::sdk::open_blob(wgmma.binary, "cuda", "sm_90"); // code_of views them
        const auto code = code_of(mma_blob), want = code_of(wgmma_blob);
        BOOST_TEST((code.size() == want.size() && std::memcmp(code.data(), want.data(), code.size()) == 0));
        const tgtest::Status old =
            tgtest::try_compile(tile_loop(true, n, dt, flags, defer), nullptr, 0, 2, "sm_80");
        BOOST_TEST(old.code == TG_ERROR_INVALID_ARGUMENT, old.message);
        BOOST_TEST(old.message.find("is not declared") != std::string::npos, old.message);
      }
  const auto ir = tile_loop(true, 64, TG_DTYPE_FLOAT16, 0, false);
  const ScopedEnv off("TG_CUDA_MATRIX_UNITS", "0"); // no units declared: the old paths only
  const tgtest::Status none = tgtest::try_compile(ir, nullptr, 0, 2, "sm_90");
  BOOST_TEST(none.code == TG_ERROR_INVALID_ARGUMENT, none.message);
  BOOST_TEST(none.message.find("is not declared (the target has 0)") != std::string::npos, none.message);
}

// check_mma against the declared units: a wgmma unit given register values, and mma.sync given
// INDEXes into local memory, are refused with messages naming the unit.
BOOST_AUTO_TEST_CASE(check_mma_refuses_operands_of_the_wrong_source) {
  using tg::sdk::KernelBuilder;
  {
    KernelBuilder b("wgmma_from_registers");
    const auto out = b.global(0, TG_DTYPE_FLOAT32);
    const auto h = b.cast(b.f32(1), TG_DTYPE_FLOAT16);
    const auto a = b.vectorize(std::vector<KernelBuilder::Ref>(8, h)),
               bv = b.vectorize(std::vector<KernelBuilder::Ref>(4, h));
    const auto c = b.vectorize(std::vector<KernelBuilder::Ref>(128, b.f32(0)));
    const auto d = b.mma(a, bv, c, 2); // wgmma.m64n256k16.f16.sw128.bn
    b.store(b.index(out, b.local_id(0)), b.gep(d, 0));
    const tgtest::Status s = tgtest::try_compile(b.serialize(), nullptr, 0, 2, "sm_90");
    BOOST_TEST(s.code == TG_ERROR_INVALID_ARGUMENT, s.message);
    BOOST_TEST(s.message.find("wgmma.m64n256k16.f16.sw128.bn") != std::string::npos, s.message);
    BOOST_TEST(s.message.find("local memory") != std::string::npos, s.message);
  }
  {
    KernelBuilder b("mma_sync_from_local");
    const auto out = b.global(0, TG_DTYPE_FLOAT32);
    const auto l = b.local(1024, TG_DTYPE_FLOAT16);
    const auto c = b.vectorize(std::vector<KernelBuilder::Ref>(4, b.f32(0)));
    const auto d = b.mma(b.index(l, b.i32(0)), b.index(l, b.i32(512)), c, 0);
    b.store(b.index(out, b.local_id(0)), b.gep(d, 0));
    const tgtest::Status s = tgtest::try_compile(b.serialize(), nullptr, 0, 2, "sm_90");
    BOOST_TEST(s.code == TG_ERROR_INVALID_ARGUMENT, s.message);
    BOOST_TEST(s.message.find("mma.m16n8k16.f16") != std::string::npos, s.message);
  }
}
