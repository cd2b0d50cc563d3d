// Devices swapped while the program runs: the default device set from code, a plugin loaded from a
// path (a copy of the CPU plugin under another name, "cpu2"), the same graph on both plugins,
// tensors moved between them, and the library closed only once its last tensor is gone.
#include "kernel/runtime/devices.hpp"
#include "kernel/runtime/plugin_lifetime.hpp"
#include "kernel/runtime/plugin_registry.hpp"
#include "kernel/tensor/tensor.hpp"

#include <boost/test/unit_test.hpp>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <dlfcn.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace tg;

namespace {

// A scratch directory holding copies of the CPU plugin named libtg_device_<name>.so.
struct PluginCopies {
  fs::path dir = fs::temp_directory_path() / ("tg_swap_test_" + std::to_string(::getpid()));
  PluginCopies() { fs::create_directories(dir); }
  ~PluginCopies() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  fs::path copy(const std::string& name, const std::string& subdir = "") const {
    fs::create_directories(dir / subdir);
    fs::path to = dir / subdir / ("libtg_device_" + name + ".so");
    fs::copy_file(TG_CPU_PLUGIN_PATH, to, fs::copy_options::overwrite_existing);
    return to;
  }
};

// Whether the dynamic loader still has `path` mapped (RTLD_NOLOAD never loads it).
bool is_loaded(const fs::path& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  ::dlclose(handle); // NOLOAD took a reference too
  return true;
}

// The graph computed on both devices: elementwise, a broadcast and a reduce.
Tensor graph(const Tensor& x, const Tensor& w) { return ((x * w + 1.5) * x).sum({1}) + x.max({1}); }

void check_equal(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    BOOST_TEST(std::fabs(got[i] - want[i]) <= 1e-5f * (1 + std::fabs(want[i])), what << "[" << i << "]");
}

} // namespace

BOOST_AUTO_TEST_CASE(default_device_comes_from_tg_device_and_can_be_set_from_code) {
  ::unsetenv("TG_DEVICE");
  BOOST_TEST(default_device() == "CPU");
  ::setenv("TG_DEVICE", "cpu", 1);
  BOOST_TEST(default_device() == "CPU");
  set_default_device("cpu");
  BOOST_TEST(default_device() == "CPU");
  BOOST_CHECK_THROW(set_default_device("nosuchdevice"), UnknownPluginError);
  BOOST_TEST(default_device() == "CPU"); // a failed set changes nothing
  BOOST_CHECK_THROW(set_default_device("CPU:x"), Error);
  set_default_device(""); // back to $TG_DEVICE
  ::unsetenv("TG_DEVICE");
  BOOST_TEST(default_device() == "CPU");
}

BOOST_AUTO_TEST_CASE(a_plugin_loaded_at_run_time_computes_like_the_other_and_unloads_after_its_tensors) {
  PluginCopies copies;
  fs::path path = copies.copy("cpu2");
  BOOST_TEST(!is_loaded(path));
  BOOST_TEST(load_plugin(path) == "cpu2");
  BOOST_TEST(is_loaded(path));

  // A second plugin of that name is refused, naming both files.
  fs::path other = copies.copy("cpu2", "other");
  try {
    load_plugin(other);
    BOOST_FAIL("a second plugin named cpu2 must be refused");
  } catch (const PluginNameClashError& e) {
    std::string msg = e.what();
    BOOST_TEST(msg.find(path.string()) != std::string::npos, msg);
    BOOST_TEST(msg.find(other.string()) != std::string::npos, msg);
  }

  {
    Tensor x = Tensor::rand({37, 19}, dtypes::float32, "CPU");
    Tensor w = Tensor::rand({19}, dtypes::float32, "CPU");
    std::vector<float> on_cpu = graph(x, w).to_vector<float>();

    Tensor x2 = x.to("CPU2"), w2 = w.to("CPU2");
    BOOST_TEST(x2.device() == "CPU2");
    Tensor y2 = graph(x2, w2);
    check_equal(y2.to_vector<float>(), on_cpu, "on CPU2");
    // Back and forth: CPU2 -> CPU -> CPU2, computing on each side.
    Tensor back = (y2.to("CPU") * 2).to("CPU2") - y2;
    check_equal(back.to("CPU").to_vector<float>(), on_cpu, "CPU2 -> CPU -> CPU2");

    // The default device set from code: tensors created without a device go there.
    set_default_device("cpu2");
    Tensor ones = Tensor::ones({5});
    BOOST_TEST(ones.device() == "CPU2");
    BOOST_TEST(ones.sum().item<float>() == 5.0f);
    set_default_device("");

    y2.realize();
    BOOST_TEST(unload_plugin("CPU2"));
    BOOST_TEST(!unload_plugin("cpu2")); // already gone
    // New work on the unloaded plugin's devices fails; what exists keeps working and keeps it loaded.
    BOOST_CHECK_THROW(Tensor::from_vector(std::vector<float>{1, 2}, {2}, {}, "CPU2"), UnknownPluginError);
    BOOST_TEST(is_loaded(path));
    check_equal(y2.to_vector<float>(), on_cpu, "CPU2 after unload");
  } // the last tensors on CPU2 die here
  // Intermediates a realize stored for expressions that died are dropped when the next realize
  // starts (docs/architecture.md, "Who keeps a stored result"): realize anything.
  BOOST_TEST(Tensor::ones({4}, dtypes::float32, "CPU").sum().item<float>() == 4.0f);
  BOOST_TEST(!is_loaded(path), path << " is still loaded after its last tensor died");

  // The name is free again: the same file loads once more and computes.
  BOOST_TEST(load_plugin(path) == "cpu2");
  {
    Tensor t = Tensor::full({3}, 2.0, dtypes::float32, "CPU2");
    BOOST_TEST((t * t).sum().item<float>() == 12.0f);
  }
  BOOST_TEST(unload_plugin("cpu2"));
  BOOST_TEST(!is_loaded(path));
}

// Run by the out-of-tree example's test (tests/install/custom_backend.cmake) with TG_SWAP_PLUGIN
// set to another plugin's file (the SDK example `my`): the same graph on the CPU plugin and on
// that plugin, compared, then tensors moved back and forth. Skipped when TG_SWAP_PLUGIN is unset.
struct SwapPluginGiven {
  const char* variable = "TG_SWAP_PLUGIN"; // a member: GCC 12 -O3 warns about copying an empty functor
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    boost::test_tools::assertion_result ok(std::getenv(variable) != nullptr);
    if (!ok) ok.message() << "skipped: TG_SWAP_PLUGIN (a plugin file to load) is not set";
    return ok;
  }
};

BOOST_AUTO_TEST_CASE(the_given_plugin_computes_like_cpu_and_tensors_move_both_ways,
                     *boost::unit_test::precondition(SwapPluginGiven{})) {
  const fs::path path = std::getenv("TG_SWAP_PLUGIN");
  std::string name = load_plugin(path);
  std::string dev;
  for (char c : name) dev += char(std::toupper(static_cast<unsigned char>(c)));
  BOOST_TEST_MESSAGE("loaded " << path << " as " << dev);
  {
    Tensor x = Tensor::rand({37, 19}, dtypes::float32, "CPU");
    Tensor w = Tensor::rand({19}, dtypes::float32, "CPU");
    std::vector<float> on_cpu = graph(x, w).to_vector<float>();
    // The same graph built on the other device from the same values (moved there).
    Tensor y = graph(x.to(dev), w.to(dev));
    BOOST_TEST(y.device() == dev);
    check_equal(y.to_vector<float>(), on_cpu, "on " + dev);
    // Back and forth: dev -> CPU -> dev, computing on each side.
    Tensor back = (y.to("CPU") * 2).to(dev) - y;
    check_equal(back.to("CPU").to_vector<float>(), on_cpu, dev + " -> CPU -> " + dev);
    // A matmul made on the device itself (its own random numbers) agrees with the CPU's.
    Tensor a = Tensor::rand({16, 24}, dtypes::float32, dev), b = Tensor::rand({24, 8}, dtypes::float32, dev);
    check_equal(a.matmul(b).to_vector<float>(), a.to("CPU").matmul(b.to("CPU")).to_vector<float>(), "matmul");
  }
  BOOST_TEST(unload_plugin(name));
}
