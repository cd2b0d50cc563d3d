// The AMD plugin's HIP runtime path against a recording stub of libamdhip64.so (stub_hip.cpp,
// TG_AMD_HIP_LIBRARY): device discovery and properties (gcnArchName -> the target), buffers
// through the caching allocator, out of memory, program loading, and launches whose kernarg bytes
// are checked at the offsets llvm-readelf-14 reads from the code object's metadata note (an
// independent reader of the note the plugin parses itself). Kernels do not run: the stub records.
// The matrix units each processor's device declares (TG_STUB_HIP_ARCH picks the processor), and a
// kernel with MMA loaded and launched.
#include "amd/mma_kernel.hpp"
#include "code_object.hpp"
#include "plugin_fixture.hpp"

#include <tg/sdk/blob.hpp>
#include <tg/sdk/kernel_ir.hpp>
#include <tg/sdk/matrix_unit.hpp>
#include <tg/sdk/plugin.hpp>

#include <boost/test/unit_test.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

namespace {

using namespace tgtest;
using tg::sdk::KernelBuilder;
using Ref = KernelBuilder::Ref;

// The stub's control functions, from the library the plugin loaded (same path, same instance).
struct Stub {
  void* handle = dlopen(TG_STUB_HIP, RTLD_NOW | RTLD_LOCAL);
  template <class F> F fn(const char* name) {
    BOOST_REQUIRE_MESSAGE(handle != nullptr, "cannot load the stub " TG_STUB_HIP);
    auto f = reinterpret_cast<F>(dlsym(handle, name));
    BOOST_REQUIRE_MESSAGE(f != nullptr, name);
    return f;
  }
  size_t launch_count() { return fn<size_t (*)()>("stub_hip_launch_count")(); }
  struct Launch {
    std::string kernel;
    std::array<unsigned, 6> dims;
    std::vector<unsigned char> kernargs;
  };
  Launch launch(size_t i) {
    Launch l;
    const unsigned char* args = nullptr;
    size_t size = 0;
    l.kernel = fn<const char* (*)(size_t, unsigned*, const unsigned char**, size_t*)>("stub_hip_launch")(
        i, l.dims.data(), &args, &size);
    l.kernargs.assign(args, args + size);
    return l;
  }
  std::vector<unsigned char> last_image() {
    const size_t n = fn<size_t (*)()>("stub_hip_image_count")();
    BOOST_REQUIRE(n > 0);
    size_t size = 0;
    const unsigned char* p = fn<const unsigned char* (*)(size_t, size_t*)>("stub_hip_image")(n - 1, &size);
    return {p, p + size};
  }
  void set_memory_limit(uint64_t bytes) { fn<void (*)(uint64_t)>("stub_hip_set_memory_limit")(bytes); }
  std::string calls() { return fn<const char* (*)()>("stub_hip_calls")(); }
  void clear_calls() { fn<void (*)()>("stub_hip_clear_calls")(); }
};

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  BOOST_REQUIRE_MESSAGE(p != nullptr, "cannot run " + cmd);
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  BOOST_REQUIRE_MESSAGE(pclose(p) == 0, cmd + " failed:\n" + out);
  return out;
}

// The kernarg offsets and sizes of the explicit arguments, in order, as llvm-readelf-14 prints
// the metadata note (YAML: each `.args` entry has `.offset:`, `.size:`, `.value_kind:`).
struct NoteArg {
  uint64_t offset, size;
  std::string kind;
};
std::vector<NoteArg> readelf_args(const std::vector<std::byte>& code, const std::string& tools = "14") {
  const auto file =
      std::filesystem::temp_directory_path() / ("tg_amd_runtime_" + std::to_string(getpid()) + ".hsaco");
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(code.data()), std::streamsize(code.size()));
  const std::string notes = run("llvm-readelf-" + tools + " --notes '" + file.string() + "' 2>&1");
  std::filesystem::remove(file);
  std::vector<NoteArg> args;
  const size_t begin = notes.find(".args:");
  BOOST_REQUIRE(begin != std::string::npos);
  const std::string list =
      notes.substr(begin, notes.find("\n    .", begin) - begin); // to the next kernel key
  // Each argument is a YAML list item "- .key: value ..." up to the next "- .".
  static const std::regex offset(R"(\.offset:\s+(\d+))"), size(R"(\.size:\s+(\d+))"),
      kind(R"(\.value_kind:\s+(\w+))");
  for (size_t at = list.find("- ."); at != std::string::npos;) {
    const size_t next = list.find("- .", at + 3);
    const std::string entry = list.substr(at, next == std::string::npos ? std::string::npos : next - at);
    std::smatch o, s, k;
    BOOST_REQUIRE_MESSAGE(std::regex_search(entry, o, offset) && std::regex_search(entry, s, size) &&
                              std::regex_search(entry, k, kind),
                          "an argument without offset, size or kind: " + entry);
    args.push_back({std::stoull(o[1]), std::stoull(s[1]), k[1]});
    at = next;
  }
  return args;
}

// out[i] = a[i] * s + float(k) for i < n: two buffers, three scalars of three dtypes.
KernelBuilder scale_kernel() {
  KernelBuilder b("scale_add");
  Ref out = b.global(0, TG_DTYPE_FLOAT32), a = b.global(1, TG_DTYPE_FLOAT32);
  Ref n = b.var(0, TG_DTYPE_INT32), s = b.var(1, TG_DTYPE_FLOAT32), k = b.var(2, TG_DTYPE_INT64);
  Ref i = b.add(b.mul(b.group_id(0), b.i32(64)), b.local_id(0));
  Ref in = b.if_(b.cmplt(i, n));
  Ref v = b.add(b.mul(b.load(b.index(a, i)), s), b.cast(k, TG_DTYPE_FLOAT32));
  b.store(b.index(out, i), v);
  b.end_if(in);
  return b;
}

tg_scalar_arg scalar_i64(int64_t v) {
  tg_scalar_arg s{};
  s.dtype = TG_DTYPE_INT64;
  s.value.i = v;
  return s;
}

uint64_t read_u64(const std::vector<unsigned char>& bytes, uint64_t at) {
  BOOST_REQUIRE_LE(at + 8, bytes.size());
  uint64_t v = 0;
  std::memcpy(&v, bytes.data() + at, 8);
  return v;
}

std::map<std::string, std::string> attributes(const Device& d) {
  std::map<std::string, std::string> out;
  int32_t n = 0;
  check(api().device_attribute_count(d.get(), &n));
  for (int32_t i = 0; i < n; ++i) {
    const char *key = nullptr, *value = nullptr;
    check(api().device_attribute(d.get(), i, &key, &value));
    out[key] = value;
  }
  return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(devices_and_properties_come_from_hip) {
  int32_t count = 0;
  check(api().device_count(&count), "device_count");
  BOOST_TEST(count == 2);
  Device device(1);
  const tg_device_properties p = device.properties();
  BOOST_TEST(std::string(p.name) == "Stub AMD GPU 1");
  BOOST_TEST(std::string(p.vendor) == "AMD");
  BOOST_TEST(std::string(p.arch) == "gfx90a", "the processor of gcnArchName, without its features");
  BOOST_TEST(p.memory_bytes == uint64_t(64) << 30);
  BOOST_TEST(p.local_memory_bytes == 65536u);
  BOOST_TEST(p.max_local_threads == 1024u);
  BOOST_TEST(p.max_local_size[2] == 512u);
  BOOST_TEST(p.max_global_size[1] == 65535u);
  BOOST_TEST(p.compute_units == 104u);
  BOOST_TEST(p.subgroup_size == 64u);
  BOOST_TEST((p.features & TG_FEATURE_TIMING) != 0);
  BOOST_TEST(attributes(device)["amd.gcn_arch_name"] == "gfx90a:sramecc+:xnack-");
}

BOOST_AUTO_TEST_CASE(buffers_copy_and_are_cached) {
  Stub stub;
  Device device;
  std::vector<float> data(1000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = float(i) * 0.5f;
  {
    Buffer a(device, data);
    BOOST_TEST(a.download<float>(1000) == data, boost::test_tools::per_element());
    Buffer b(device, 4000);
    check(api().buffer_copy(b.get(), 0, a.get(), 0, 4000), "buffer_copy");
    BOOST_TEST(b.download<float>(10, 40) == std::vector<float>(data.begin() + 10, data.begin() + 20),
               boost::test_tools::per_element());
    // Overlapping ranges of one buffer copy as if through a temporary.
    check(api().buffer_copy(a.get(), 4, a.get(), 0, 400), "buffer_copy(overlapping)");
    std::vector<float> want(data.begin(), data.begin() + 101);
    want.insert(want.begin(), data[0]);
    want.resize(101);
    BOOST_TEST(a.download<float>(101) == want, boost::test_tools::per_element());
  }
  stub.clear_calls();
  Buffer again(device, 4000); // the size freed above: from the cache, no hipMalloc
  BOOST_TEST(stub.calls().find("hipMalloc") == std::string::npos, stub.calls());
}

BOOST_AUTO_TEST_CASE(out_of_memory_is_resource_exhausted) {
  Stub stub;
  Device device;
  stub.set_memory_limit(1 << 20);
  tg_buffer* buffer = nullptr;
  tg_buffer_alloc_args args{sizeof(args), 8 << 20, 0, 0, 0};
  Status s = take(api().buffer_alloc(device.get(), &args, &buffer));
  stub.set_memory_limit(UINT64_MAX);
  BOOST_TEST(s.code == TG_ERROR_RESOURCE_EXHAUSTED, s.message);
  BOOST_TEST(s.message.find("hipMalloc") != std::string::npos, s.message);
}

BOOST_AUTO_TEST_CASE(launches_pack_kernargs_as_the_metadata_declares) {
  Stub stub;
  Device device;
  KernelBuilder kernel = scale_kernel();
  const Compiled compiled = compile(kernel.serialize());
  const std::vector<std::byte> code = tg::sdk::open_blob(compiled.binary, "amd", "gfx90a").payload;
  Program program(device, compiled.binary);
  const std::vector<unsigned char> image = stub.last_image();
  BOOST_TEST(image.size() == code.size());
  BOOST_TEST(std::memcmp(image.data(), code.data(), code.size()) == 0,
             "HIP was given the code object itself");

  std::vector<float> a(256), out(256, 0.f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(i) + 0.25f;
  Buffer a_buf(device, a), out_buf(device, out);
  const std::vector<tg_scalar_arg> scalars = {scalar_i32(200), scalar_f32(-1.5f), scalar_i64(-7)};
  const size_t before = stub.launch_count();
  uint64_t elapsed = 0;
  Status s = program.try_launch({4, 1, 1}, {64, 1, 1}, {out_buf.arg(32), a_buf.arg(8)}, scalars, &elapsed);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.message);
  BOOST_TEST(elapsed == 250000u, "the stub's 0.25 ms between the timing events");
  BOOST_REQUIRE_EQUAL(stub.launch_count(), before + 1);

  const Stub::Launch l = stub.launch(before);
  BOOST_TEST(l.kernel == "scale_add");
  BOOST_TEST((l.dims == std::array<unsigned, 6>{4, 1, 1, 64, 1, 1}));
  const std::vector<NoteArg> note = readelf_args(code);
  BOOST_REQUIRE_GE(note.size(), 5u);
  // Buffers: device addresses (the stub's memory is host memory) of the start plus the offset.
  BOOST_TEST(note[0].kind == "global_buffer");
  BOOST_TEST(note[1].kind == "global_buffer");
  const auto* out_ptr = reinterpret_cast<const float*>(read_u64(l.kernargs, note[0].offset));
  const auto* a_ptr = reinterpret_cast<const float*>(read_u64(l.kernargs, note[1].offset));
  BOOST_TEST(a_ptr[0] == a[2], "a's argument points at element 2 (offset 8 bytes)");
  BOOST_TEST(a_ptr[10] == a[12]);
  BOOST_TEST(reinterpret_cast<uintptr_t>(out_ptr) % 256 == 32u, "out's start plus 32 bytes");
  // Scalars: the 64 bits of tg_scalar_arg::value, each at its own offset.
  for (size_t i = 0; i < scalars.size(); ++i) {
    BOOST_TEST_CONTEXT("scalar " << i) {
      BOOST_TEST(note[2 + i].kind == "by_value");
      BOOST_TEST(note[2 + i].size == 8u);
      BOOST_TEST(read_u64(l.kernargs, note[2 + i].offset) == scalars[i].value.u);
    }
  }
}

BOOST_AUTO_TEST_CASE(launch_batch_queues_every_launch_in_order) {
  Stub stub;
  Device device;
  KernelBuilder kernel = scale_kernel();
  Program program(device, compile(kernel.serialize()).binary);
  Buffer a(device, 1024), out(device, 1024);
  std::vector<tg_buffer_arg> buffers = {out.arg(), a.arg()};
  std::vector<std::vector<tg_scalar_arg>> scalars;
  std::vector<tg_launch_args> launches(3);
  for (uint32_t i = 0; i < 3; ++i)
    scalars.push_back({scalar_i32(int32_t(i)), scalar_f32(1.f), scalar_i64(i)});
  std::vector<const tg_launch_args*> pointers;
  for (uint32_t i = 0; i < 3; ++i) {
    tg_launch_args& l = launches[i];
    l.struct_size = sizeof l;
    l.program = program.get();
    for (int k = 0; k < 3; ++k) l.global_size[k] = k == 0 ? i + 1 : 1, l.local_size[k] = k == 0 ? 64 : 1;
    l.buffers = buffers.data();
    l.buffer_count = 2;
    l.scalars = scalars[i].data();
    l.scalar_count = 3;
    pointers.push_back(&l);
  }
  const size_t before = stub.launch_count();
  uint64_t elapsed = 0;
  tg_launch_batch_args batch{sizeof(batch), device.get(), pointers.data(), 3, 0, &elapsed};
  BOOST_REQUIRE(api().launch_batch != nullptr);
  check(api().launch_batch(&batch), "launch_batch");
  BOOST_REQUIRE_EQUAL(stub.launch_count(), before + 3);
  for (uint32_t i = 0; i < 3; ++i) BOOST_TEST(stub.launch(before + i).dims[0] == i + 1, "launch " << i);
  BOOST_TEST(elapsed == 250000u, "one pair of timing events around the batch");
}

// The plugin's own reader of the metadata note (code_object.cpp, compiled into this test) agrees
// with llvm-readelf on every argument, for code object v4 (LLVM 14) and v5 (llc-19).
BOOST_AUTO_TEST_CASE(metadata_reader_agrees_with_llvm_readelf) {
  std::vector<std::pair<const char*, const char*>> targets = {{"gfx90a", "14"}};
#if TG_TEST_AMD_LLVM19
  targets.push_back({"gfx942", "19"});
  targets.push_back({"gfx1100", "19"});
#endif
  KernelBuilder kernel = scale_kernel();
  const std::vector<std::byte> ir = kernel.serialize();
  for (const auto& [gfx, tools] : targets) {
    BOOST_TEST_CONTEXT(gfx) {
      Compiled c;
      Status s = try_compile(ir, &c, 0, 2, gfx);
      BOOST_REQUIRE_MESSAGE(s.ok(), s.message);
      const std::vector<std::byte> code = tg::sdk::open_blob(c.binary, "amd", gfx).payload;
      const tg::amd::KernelLayout layout = tg::amd::read_kernel_layout(code, kernel.ir().name);
      const std::vector<NoteArg> note = readelf_args(code, tools);
      BOOST_REQUIRE_EQUAL(layout.args.size(), note.size());
      for (size_t i = 0; i < note.size(); ++i) {
        BOOST_TEST(layout.args[i].offset == note[i].offset, "argument " << i);
        BOOST_TEST(layout.args[i].size == note[i].size, "argument " << i);
        BOOST_TEST(layout.args[i].value_kind == note[i].kind, "argument " << i);
      }
      BOOST_TEST(layout.kernarg_segment_size >= note.back().offset + note.back().size);
      BOOST_TEST(layout.max_flat_workgroup_size == 1024u, "LLVM's default for kernels");
      BOOST_CHECK_THROW(tg::amd::read_kernel_layout(code, "no_such_kernel"), tg::sdk::PluginError);
      BOOST_CHECK_THROW(tg::amd::read_kernel_layout(std::span(code).first(100), kernel.ir().name),
                        tg::sdk::PluginError);
    }
  }
}

namespace {

// Sets TG_STUB_HIP_ARCH (the stub's gcnArchName) for one scope.
struct StubArch {
  explicit StubArch(const char* arch) { setenv("TG_STUB_HIP_ARCH", arch, 1); }
  ~StubArch() { unsetenv("TG_STUB_HIP_ARCH"); }
  StubArch(const StubArch&) = delete;
  StubArch& operator=(const StubArch&) = delete;
};

std::vector<tg_matrix_unit> device_units(const Device& device) {
  BOOST_REQUIRE(api().device_matrix_unit_count != nullptr && api().device_matrix_unit != nullptr);
  int32_t count = -1;
  check(api().device_matrix_unit_count(device.get(), &count), "device_matrix_unit_count");
  std::vector<tg_matrix_unit> units(size_t(std::max(count, 0)));
  for (int32_t i = 0; i < count; ++i) {
    units[size_t(i)].struct_size = sizeof(tg_matrix_unit);
    check(api().device_matrix_unit(device.get(), i, &units[size_t(i)]), "device_matrix_unit");
  }
  tg_matrix_unit beyond{};
  beyond.struct_size = sizeof beyond;
  const Status s = take(api().device_matrix_unit(device.get(), count, &beyond));
  BOOST_TEST(s.code == TG_ERROR_NOT_FOUND, s.message);
  return units;
}

// Element `e` of work item `t` of operand `op`, as AMD's Matrix Instruction Calculator states it
// ("Register to matrix element mapping", element e = 16-bit half e % 2 of GPR e / 2 for A and B,
// GPR e for C): {row, col} with A (i, k), B (k, j), C (i, j).
tg::sdk::MatrixElement calculator_element(bool wmma, tg::sdk::MatrixOperand op, uint32_t t, uint32_t e) {
  const int lane16 = int(t % 16), e_ = int(e);
  if (!wmma) { // MFMA 16x16x16, 16-bit inputs, CDNA2 and CDNA3
    const int k = 4 * int(t / 16) + e_;
    if (op == tg::sdk::MatrixOperand::a) return {lane16, k};
    if (op == tg::sdk::MatrixOperand::b) return {k, lane16};
    return {4 * int(t / 16) + e_, lane16};
  }
  // WMMA 16x16x16, RDNA3 wave32: A and B in both half-waves
  if (op == tg::sdk::MatrixOperand::a) return {lane16, e_};
  if (op == tg::sdk::MatrixOperand::b) return {e_, lane16};
  return {2 * e_ + int(t / 16), lane16};
}

} // namespace

// Each processor's device lists its units through the plugin table: well formed
// (matrix_unit_error), the shape, dtypes and wave the tests expect, and every element of every
// operand where AMD's calculator puts it. Processors without units list none.
BOOST_AUTO_TEST_CASE(devices_declare_their_matrix_units) {
  const std::vector<amdtest::ExpectedUnit> expected = amdtest::expected_units();
  for (const char* arch : {"gfx90a:sramecc+:xnack-", "gfx942:sramecc+:xnack-", "gfx1100", "gfx1030"}) {
    BOOST_TEST_CONTEXT(arch) {
      StubArch stub_arch(arch);
      Device device;
      const std::string gfx = device.properties().arch;
      const std::vector<tg_matrix_unit> units = device_units(device);
      std::vector<amdtest::ExpectedUnit> want;
      for (const amdtest::ExpectedUnit& u : expected)
        if (gfx == u.gfx) want.push_back(u);
      BOOST_REQUIRE_EQUAL(units.size(), want.size());
      if (!want.empty())
        BOOST_TEST(device.properties().subgroup_size == 1u << want[0].item_bits,
                   "the unit's wave is the device's");
      for (size_t i = 0; i < units.size(); ++i) {
        const tg_matrix_unit& u = units[i];
        const amdtest::ExpectedUnit& w = want[i];
        BOOST_TEST_CONTEXT(w.name) {
          BOOST_TEST(tg::sdk::matrix_unit_error(u) == "");
          BOOST_TEST(tg::sdk::matrix_unit_name(u) == w.name);
          BOOST_TEST(u.struct_size == sizeof(tg_matrix_unit));
          BOOST_TEST((u.m == 16 && u.n == 16 && u.k == 16));
          BOOST_TEST(u.item_bits == w.item_bits);
          BOOST_TEST((u.a_dtype == w.input && u.b_dtype == w.input && u.c_dtype == TG_DTYPE_FLOAT32));
          BOOST_TEST(u.operand_source == uint32_t(TG_MATRIX_SOURCE_REGISTERS));
          BOOST_TEST(tg::sdk::matrix_lanes(u.a) == w.ab_lanes);
          BOOST_TEST(tg::sdk::matrix_lanes(u.b) == w.ab_lanes);
          BOOST_TEST(tg::sdk::matrix_lanes(u.c) == w.c_lanes);
          const bool wmma = std::string(w.name).find("wmma") != std::string::npos;
          for (auto op : {tg::sdk::MatrixOperand::a, tg::sdk::MatrixOperand::b, tg::sdk::MatrixOperand::c})
            for (uint32_t t = 0; t < tg::sdk::matrix_items(u); ++t)
              for (uint32_t e = 0; e < tg::sdk::matrix_lanes(tg::sdk::matrix_layout(u, op)); ++e)
                BOOST_TEST_CONTEXT(tg::sdk::operand_name(op) << " item " << t << " element " << e) {
                  const tg::sdk::MatrixElement got =
                      tg::sdk::matrix_element(tg::sdk::matrix_layout(u, op), t, e);
                  const tg::sdk::MatrixElement at = calculator_element(wmma, op, t, e);
                  BOOST_TEST((got == at), "(" << got.row << ", " << got.col << ") != (" << at.row << ", "
                                              << at.col << ")");
                }
        }
      }
    }
  }
}

// A kernel with MMA compiles for the device's processor, loads and launches one wave per unit, on
// each processor with units. The stub runs no GPU code: what is checked is the path up to HIP (code
// object, launch dimensions, the kernarg layout), not D.
BOOST_AUTO_TEST_CASE(mma_kernels_load_and_launch) {
  Stub stub;
  int launched = 0;
  for (const amdtest::ExpectedUnit& u : amdtest::expected_units()) {
#if !TG_TEST_AMD_LLVM19
    if (std::string(u.tools) == "19") continue;
#endif
    BOOST_TEST_CONTEXT(u.name << " on " << u.gfx) {
      StubArch stub_arch(u.gfx);
      Device device;
      BOOST_REQUIRE(std::string(device.properties().arch) == u.gfx);
      tg::sdk::KernelBuilder kernel = amdtest::mma_kernel("mma_launch", u);
      Compiled compiled;
      const Status built = try_compile(kernel.serialize(), &compiled, 0, 2, u.gfx);
      BOOST_REQUIRE_MESSAGE(built.ok(), built.message);
      Program program(device, compiled.binary);
      const size_t items = size_t(1) << u.item_bits, in_bytes = items * u.ab_lanes * 2;
      Buffer d(device, items * u.c_lanes * 4), a(device, in_bytes), b(device, in_bytes),
          c(device, items * u.c_lanes * 4);
      const size_t before = stub.launch_count();
      Status s = program.try_launch({1, 1, 1}, {uint32_t(items), 1, 1}, {d.arg(), a.arg(), b.arg(), c.arg()});
      BOOST_REQUIRE_MESSAGE(s.ok(), s.message);
      BOOST_REQUIRE_EQUAL(stub.launch_count(), before + 1);
      const Stub::Launch l = stub.launch(before);
      BOOST_TEST(l.kernel == "mma_launch");
      BOOST_TEST((l.dims == std::array<unsigned, 6>{1, 1, 1, unsigned(items), 1, 1}));
      const std::vector<NoteArg> note =
          readelf_args(tg::sdk::open_blob(compiled.binary, "amd", u.gfx).payload, u.tools);
      BOOST_REQUIRE_GE(note.size(), 4u);
      for (size_t i = 0; i < 4; ++i) BOOST_TEST(note[i].kind == "global_buffer", "argument " << i);
      ++launched;
    }
  }
  BOOST_TEST(launched >= 2);
}
