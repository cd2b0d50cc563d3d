// The CUDA plugin's synchronize (plugins/cuda/stream_wait.cpp): TG_CUDA_SYNC's parsing runs
// everywhere; the waits need a GPU (ctest cuda_stream_wait_gpu_test and
// cuda_stream_wait_fault_test, label gpu, exit 77 = skipped where the driver or GPU is missing):
// a wait returns only once a 2 ms kernel has finished, in both modes, and a kernel that faults
// raises from the word wait instead of leaving it spinning on a word that never comes.
#include <boost/test/unit_test.hpp>

#include "plugins/cuda/stream_wait.hpp"

#include <tg/sdk/plugin.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tg::cuda {
namespace {

bool refused(const char* value) {
  try {
    parse_sync_mode(value);
  } catch (const sdk::PluginError& e) {
    const std::string what = e.what();
    BOOST_TEST(e.code() == TG_ERROR_INVALID_ARGUMENT);
    BOOST_TEST(what.find("TG_CUDA_SYNC") != std::string::npos);
    BOOST_TEST(what.find(std::string("\"") + value + "\"") != std::string::npos, what);
    return true;
  }
  return false;
}

BOOST_AUTO_TEST_SUITE(parse)

BOOST_AUTO_TEST_CASE(names_and_default) {
  BOOST_TEST((parse_sync_mode(nullptr) == SyncMode::Stream));
  BOOST_TEST((parse_sync_mode("") == SyncMode::Stream));
  BOOST_TEST((parse_sync_mode("stream") == SyncMode::Stream));
  BOOST_TEST((parse_sync_mode("word") == SyncMode::Word));
}

BOOST_AUTO_TEST_CASE(anything_else_is_refused_with_the_value) {
  for (const char* bad : {"Word", "spin", "1", "word "}) BOOST_TEST(refused(bad), bad);
}

BOOST_AUTO_TEST_SUITE_END()

// Spins `ns` nanoseconds of the GPU's global timer, then writes 1 to out[0]; with `fault` set it
// stores to address 8 instead (an illegal address: the context is lost).
constexpr const char* kPtx = R"(.version 7.0
.target sm_75
.address_size 64
.visible .entry spin(.param .u64 out, .param .u64 ns, .param .u32 fault)
{
  .reg .pred %p<3>;
  .reg .b32 %r<3>;
  .reg .b64 %rd<7>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [ns];
  ld.param.u32 %r1, [fault];
  mov.u64 %rd3, %globaltimer;
LOOP:
  mov.u64 %rd4, %globaltimer;
  sub.u64 %rd5, %rd4, %rd3;
  setp.lt.u64 %p1, %rd5, %rd2;
  @%p1 bra LOOP;
  mov.u32 %r2, 1;
  setp.ne.u32 %p2, %r1, 0;
  @%p2 mov.u64 %rd1, 8;
  st.u32 [%rd1], %r2;
  ret;
}
)";

// A context, a stream and the spin kernel; the process exits 77 (ctest: skipped) without a GPU.
struct Gpu {
  const Driver* d = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  CUmodule module = nullptr;
  CUfunction spin = nullptr;
  CUdeviceptr out = 0;

  Gpu() {
    try {
      d = &driver();
    } catch (const sdk::PluginError& e) {
      std::printf("skipped: %s\n", e.what());
      std::exit(77);
    }
    int count = 0;
    if (d->cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
      std::printf("skipped: no GPU\n");
      std::exit(77);
    }
    check(d->cuDeviceGet(&device, 0), "cuDeviceGet");
    check(d->cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
    check(d->cuCtxSetCurrent(context), "cuCtxSetCurrent");
    check(d->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    check(d->cuModuleLoadData(&module, kPtx), "cuModuleLoadData");
    check(d->cuModuleGetFunction(&spin, module, "spin"), "cuModuleGetFunction");
    check(d->cuMemAlloc(&out, 4), "cuMemAlloc");
  }
  // No cleanup: a faulted context refuses it, and the process ends with the test.

  void launch(uint64_t ns, uint32_t fault) {
    uint32_t zero = 0;
    check(d->cuMemcpyHtoDAsync(out, &zero, 4, stream), "cuMemcpyHtoDAsync");
    void* params[] = {&out, &ns, &fault};
    check(d->cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, stream, params, nullptr), "cuLaunchKernel");
  }
  uint32_t read_out() {
    uint32_t v = 7;
    check(d->cuMemcpyDtoHAsync(&v, out, 4, stream), "cuMemcpyDtoHAsync");
    check(d->cuStreamSynchronize(stream), "cuStreamSynchronize");
    return v;
  }
};

void waits_for_the_kernel(SyncMode mode) {
  Gpu gpu;
  StreamWaiter waiter(gpu.stream, mode);
  BOOST_TEST((waiter.mode() == mode));
  for (int round = 0; round < 3; ++round) { // the word's sequence number moves on each time
    const auto t0 = std::chrono::steady_clock::now();
    gpu.launch(2'000'000, 0); // 2 ms
    waiter.wait("test wait");
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    BOOST_TEST(gpu.d->cuStreamQuery(gpu.stream) == CUDA_SUCCESS); // nothing left on the stream
    BOOST_TEST(ms >= 1.9, "waited " << ms << " ms for a 2 ms kernel");
    BOOST_TEST(gpu.read_out() == 1u);
  }
  waiter.wait("test wait"); // an idle stream
}

BOOST_AUTO_TEST_SUITE(gpu)

BOOST_AUTO_TEST_CASE(stream_mode_waits_for_the_kernel) { waits_for_the_kernel(SyncMode::Stream); }
BOOST_AUTO_TEST_CASE(word_mode_waits_for_the_kernel) { waits_for_the_kernel(SyncMode::Word); }

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(gpu_fault) // its own process: the fault loses the context

BOOST_AUTO_TEST_CASE(a_faulting_kernel_raises_from_the_word_wait) {
  Gpu gpu;
  StreamWaiter waiter(gpu.stream, SyncMode::Word);
  gpu.launch(1'000'000, 1);
  std::string what;
  try {
    waiter.wait("cuStreamSynchronize");
  } catch (const sdk::PluginError& e) {
    what = e.what();
  }
  BOOST_TEST(what.find("cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos, what);
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace
} // namespace tg::cuda
