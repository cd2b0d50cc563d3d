// The C dialect: every corpus kernel is rendered, compiled by the system C compiler into a shared
// object, run group by group through dlopen on random inputs, and compared with the SDK's reference
// interpreter (plain C++ walking the IR, the oracle `tg conform` uses) on the same inputs. The
// interpreter shares no code with the renderer, and no plugin is needed.
#include "render_test_util.hpp"

#include "conform/values.hpp"

#include <tg/sdk/interpreter.hpp>
#include <tg/sdk/plugin.hpp>
#include <tg/sdk/render/render.hpp>

#include <boost/test/unit_test.hpp>

#include <dlfcn.h>

#include <span>

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

BOOST_AUTO_TEST_CASE(every_kernel_compiled_by_cc_matches_the_interpreter) {
  tgtest::ScratchDir dir;
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

      // The reference: the interpreter, on its own copies of the inputs.
      std::vector<std::vector<std::byte>> want = inputs;
      std::vector<std::span<std::byte>> want_spans(want.begin(), want.end());
      tg::sdk::interpret(ir, k.global, k.local, want_spans, k.scalars);

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

      // Ints and bools exact; floats within conform's per-dtype tolerance, NaN/Inf in the same places.
      for (size_t b = 0; b < k.buffers.size(); ++b) {
        std::string diff = tg::conform::compare_values(k.buffers[b].dtype, mine[b], want[b]);
        BOOST_CHECK_MESSAGE(diff.empty(), "buffer " + std::to_string(b) + ": " + diff + "\n" + src.text);
      }
      ++ran;
    }
  }
  BOOST_TEST_MESSAGE("C dialect: " << ran << " kernels compiled, run and compared");
  BOOST_TEST(ran > 40);
}

} // namespace
