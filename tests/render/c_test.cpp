// The C dialect: every corpus kernel is rendered, compiled by the system C compiler into a shared
// object, run group by group through dlopen on random inputs, and compared with the CPU plugin
// (an independent implementation: kernel IR -> LLVM IR) running the same IR on the same inputs.
#include "render_test_util.hpp"

#include "plugin_fixture.hpp"

#include <tg/sdk/plugin.hpp>
#include <tg/sdk/render/render.hpp>

#include <boost/test/unit_test.hpp>

#include <dlfcn.h>

#include <cmath>

namespace {

using tg::sdk::render::Dialect;

struct SharedObject {
  void* handle = nullptr;
  explicit SharedObject(const std::string& path) : handle(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {}
  ~SharedObject() {
    if (handle) dlclose(handle);
  }
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;
};

double element_as_double(tg_dtype dt, const std::byte* p) {
  auto get = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (dt) {
  case TG_DTYPE_FLOAT16: {
    uint16_t h = get(uint16_t{});
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0    ? std::ldexp(m, -24)
               : e == 31 ? (m ? std::nan("") : HUGE_VAL)
                         : std::ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
  }
  case TG_DTYPE_BFLOAT16: {
    uint32_t bits = uint32_t(get(uint16_t{})) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  case TG_DTYPE_FLOAT32:
    return get(float{});
  default:
    return get(double{});
  }
}

// Exact for integers and bools; floats within a relative tolerance (float16/bfloat16: one ulp of
// double rounding is allowed), NaN equals NaN.
std::string compare(tg_dtype dt, const std::vector<std::byte>& want, const std::vector<std::byte>& got) {
  size_t size = tg::sdk::dtype_size(dt);
  for (size_t e = 0; e * size < want.size(); ++e) {
    const std::byte* w = want.data() + e * size;
    const std::byte* g = got.data() + e * size;
    if (!tg::sdk::dtype_is_float(dt)) {
      if (std::memcmp(w, g, size) != 0) return "element " + std::to_string(e) + " differs (integer bytes)";
      continue;
    }
    double a = element_as_double(dt, w), b = element_as_double(dt, g);
    if (std::isnan(a) && std::isnan(b)) continue;
    double tol = (dt == TG_DTYPE_FLOAT16 || dt == TG_DTYPE_BFLOAT16) ? 1e-2 : 1e-5;
    if (!(std::fabs(a - b) <= tol * std::max(1.0, std::fabs(a))))
      return "element " + std::to_string(e) + ": cpu plugin " + std::to_string(a) + ", C " +
             std::to_string(b);
  }
  return {};
}

BOOST_AUTO_TEST_CASE(every_kernel_compiled_by_cc_matches_the_cpu_plugin) {
  tgtest::ScratchDir dir;
  tgtest::Device device;
  std::mt19937 rng(1234);
  int ran = 0;
  for (const auto& k : tgtest::render_test_kernels()) {
    BOOST_TEST_CONTEXT("kernel " << k.name) {
      tg::sdk::KernelIR ir = tgtest::parse(k);
      if (tgtest::needs_work_group_memory(k)) { // refused, by design: items run one after another
        BOOST_CHECK_THROW(tg::sdk::render::render(Dialect::c, ir), tg::sdk::PluginError);
        continue;
      }
      auto src = tg::sdk::render::render(Dialect::c, ir);
      auto c_path = dir.path() / (k.name + ".c");
      auto so_path = dir.path() / (k.name + ".so");
      tgtest::write_text(c_path, src.text);
      std::string cmd = "cc -std=c99 -O1 -shared -fPIC -Wall -Wno-unused -Werror -o '" + so_path.string() +
                        "' '" + c_path.string() + "' -lm > '" + dir.path().string() + "/cc.log' 2>&1";
      int rc = std::system(cmd.c_str());
      BOOST_REQUIRE_MESSAGE(rc == 0,
                            "cc failed:\n" + tgtest::read_text(dir.path() / "cc.log") + "\n" + src.text);
      SharedObject so(so_path.string());
      if (so.handle == nullptr) BOOST_FAIL(std::string("dlopen: ") + dlerror());
      auto fn = reinterpret_cast<tg::sdk::render::CKernelFn>(dlsym(so.handle, src.entry.c_str()));
      BOOST_REQUIRE_MESSAGE(fn != nullptr, "no symbol " + src.entry);

      std::vector<std::vector<std::byte>> inputs;
      for (const auto& b : k.buffers) inputs.push_back(tgtest::random_buffer(b.dtype, b.elements, rng));

      // The reference: the CPU plugin.
      auto program = tgtest::Program(device, tgtest::compile(k.ir).binary);
      std::vector<tgtest::Buffer> dev_buffers;
      std::vector<tg_buffer_arg> args;
      for (const auto& in : inputs) {
        dev_buffers.emplace_back(device, std::max<uint64_t>(in.size(), 1));
        if (!in.empty()) dev_buffers.back().upload(in);
        args.push_back({dev_buffers.back().get(), 0});
      }
      program.launch(k.global, k.local, args, k.scalars);

      // The rendered C, one call per work group.
      std::vector<std::vector<std::byte>> mine = inputs;
      std::vector<void*> ptrs;
      for (auto& m : mine) ptrs.push_back(m.data());
      std::vector<uint64_t> slots;
      for (const auto& s : k.scalars) slots.push_back(s.value.u);
      for (uint32_t gz = 0; gz < k.global[2]; ++gz)
        for (uint32_t gy = 0; gy < k.global[1]; ++gy)
          for (uint32_t gx = 0; gx < k.global[0]; ++gx)
            fn(ptrs.data(), slots.data(), int32_t(gx), int32_t(gy), int32_t(gz), int32_t(k.local[0]),
               int32_t(k.local[1]), int32_t(k.local[2]));

      for (size_t b = 0; b < k.buffers.size(); ++b) {
        auto want = dev_buffers[b].download<std::byte>(inputs[b].size());
        std::string diff = compare(k.buffers[b].dtype, want, mine[b]);
        BOOST_CHECK_MESSAGE(diff.empty(), "buffer " + std::to_string(b) + ": " + diff + "\n" + src.text);
      }
      ++ran;
    }
  }
  BOOST_TEST_MESSAGE("C dialect: " << ran << " kernels compiled, run and compared");
  BOOST_TEST(ran > 40);
}

} // namespace
