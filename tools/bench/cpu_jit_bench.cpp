// CPU plugin benchmarks: JIT compile / load time of the vector-add kernel and elementwise-add
// bandwidth (16M floats) next to a plain C++ loop measured in the same run.
//
//   bench_cpu_jit [benchmark flags] [path/to/libtg_device_cpu.so]
// The plugin path comes from the first non-flag argument, else $TG_CPU_PLUGIN, else
// <dir of this executable>/../lib/tinygrad.cpp/plugins/libtg_device_cpu.so.
#include <tg/abi.h>
#include <tg/sdk/kernel_ir.hpp>

#include <benchmark/benchmark.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const tg_plugin_api* g_api = nullptr;
tg_device* g_device = nullptr;
std::vector<std::byte> g_ir;   // vector add
std::vector<std::byte> g_blob; // compiled once

constexpr uint32_t kLocal = 256;
constexpr size_t kElements = size_t(16) << 20;

void check(tg_error* e, const char* what) {
  if (e == nullptr) return;
  std::string msg = std::string(what) + ": " + g_api->error_message(e);
  g_api->error_destroy(e);
  throw std::runtime_error(msg);
}

std::string default_plugin_path() {
  if (const char* env = std::getenv("TG_CPU_PLUGIN")) return env;
  std::vector<char> buf(4096);
  ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  std::string exe = n > 0 ? std::string(buf.data(), size_t(n)) : std::string(".");
  return exe.substr(0, exe.rfind('/')) + "/../lib/tinygrad.cpp/plugins/libtg_device_cpu.so";
}

std::vector<std::byte> vector_add_ir() {
  using Ref = tg::sdk::KernelBuilder::Ref;
  tg::sdk::KernelBuilder k("vector_add");
  Ref a = k.global(0, TG_DTYPE_FLOAT32), b = k.global(1, TG_DTYPE_FLOAT32), c = k.global(2, TG_DTYPE_FLOAT32);
  Ref n = k.var(0, TG_DTYPE_INT32);
  Ref i = k.add(k.mul(k.group_id(0), k.i32(int32_t(kLocal))), k.local_id(0));
  Ref in_bounds = k.if_(k.cmplt(i, n));
  k.store(k.index(c, i), k.add(k.load(k.index(a, i)), k.load(k.index(b, i))));
  k.end_if(in_bounds);
  return k.serialize();
}

std::vector<std::byte> compile_ir() {
  tg_compile_args args{sizeof(args), g_ir.data(), g_ir.size(), nullptr, 0, 2};
  tg_compile_result* result = nullptr;
  check(g_api->compile(&args, &result), "compile");
  tg_compile_output out{};
  out.struct_size = sizeof(out);
  check(g_api->compile_result_get(result, &out), "compile_result_get");
  if (g_blob.empty()) std::printf("%s\n", out.log);
  const auto* p = static_cast<const std::byte*>(out.binary);
  std::vector<std::byte> blob(p, p + out.binary_size);
  g_api->compile_result_destroy(result);
  return blob;
}

tg_program* load(const std::vector<std::byte>& blob) {
  tg_program* program = nullptr;
  check(g_api->program_load(g_device, blob.data(), blob.size(), &program), "program_load");
  return program;
}

void BM_Compile(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(compile_ir());
}

void BM_Load(benchmark::State& state) {
  for (auto _ : state) g_api->program_free(load(g_blob));
}

void BM_CompileLoad(benchmark::State& state) {
  for (auto _ : state) g_api->program_free(load(compile_ir()));
}

struct Buffers {
  tg_buffer* buf[3] = {nullptr, nullptr, nullptr};
  Buffers() {
    for (auto*& b : buf) {
      tg_buffer_alloc_args args{sizeof(args), kElements * sizeof(float), 0, 0, 0};
      check(g_api->buffer_alloc(g_device, &args, &b), "buffer_alloc");
    }
    std::vector<float> host(kElements, 1.5f);
    for (auto* b : buf)
      check(g_api->buffer_copy_from_host(b, 0, host.data(), host.size() * sizeof(float)), "upload");
  }
  ~Buffers() {
    for (auto* b : buf) g_api->buffer_free(b);
  }
};

void BM_AddPlugin(benchmark::State& state) {
  Buffers bufs;
  tg_program* program = load(g_blob);
  tg_buffer_arg args[3] = {{bufs.buf[0], 0}, {bufs.buf[1], 0}, {bufs.buf[2], 0}};
  tg_scalar_arg n{};
  n.dtype = TG_DTYPE_INT32;
  n.value.i = int64_t(kElements);
  tg_launch_args launch{};
  launch.struct_size = sizeof(launch);
  launch.program = program;
  launch.global_size[0] = uint32_t(kElements / kLocal);
  launch.global_size[1] = launch.global_size[2] = 1;
  launch.local_size[0] = kLocal;
  launch.local_size[1] = launch.local_size[2] = 1;
  launch.buffers = args;
  launch.buffer_count = 3;
  launch.scalars = &n;
  launch.scalar_count = 1;
  for (auto _ : state) check(g_api->launch(&launch), "launch");
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(3 * kElements * sizeof(float)));
  g_api->program_free(program);
}

void BM_AddLoop(benchmark::State& state) { // the peer: a plain single-threaded C++ loop
  std::vector<float> a(kElements, 1.5f), b(kElements, 2.5f), c(kElements, 0.0f);
  for (auto _ : state) {
    const float* pa = a.data();
    const float* pb = b.data();
    float* pc = c.data();
    for (size_t i = 0; i < kElements; ++i) pc[i] = pa[i] + pb[i];
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(3 * kElements * sizeof(float)));
}

} // namespace

BENCHMARK(BM_Compile)->Unit(benchmark::kMillisecond)->Repetitions(20)->ReportAggregatesOnly(true);
BENCHMARK(BM_Load)->Unit(benchmark::kMillisecond)->Repetitions(20)->ReportAggregatesOnly(true);
BENCHMARK(BM_CompileLoad)->Unit(benchmark::kMillisecond)->Repetitions(20)->ReportAggregatesOnly(true);
BENCHMARK(BM_AddPlugin)
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true)
    ->UseRealTime();
BENCHMARK(BM_AddLoop)
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true)
    ->UseRealTime();

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::string path = argc > 1 ? argv[1] : default_plugin_path();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::fprintf(stderr, "cannot load %s: %s\n", path.c_str(), dlerror());
    return 1;
  }
  auto query = reinterpret_cast<tg_plugin_query_fn>(dlsym(handle, TG_PLUGIN_QUERY_SYMBOL));
  tg_host_info host{sizeof(host), TG_ABI_VERSION_MAJOR, TG_ABI_VERSION_MINOR, "bench_cpu_jit"};
  g_api = query ? query(&host) : nullptr;
  if (g_api == nullptr) {
    std::fprintf(stderr, "%s is not a usable plugin\n", path.c_str());
    return 1;
  }
  try {
    tg_device_open_args open{sizeof(open), 0, 0};
    check(g_api->device_open(&open, &g_device), "device_open");
    g_ir = vector_add_ir();
    g_blob = compile_ir();
    std::printf("plugin: %s\n", path.c_str());
    benchmark::RunSpecifiedBenchmarks();
    g_api->device_close(g_device);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  benchmark::Shutdown();
  return 0;
}
