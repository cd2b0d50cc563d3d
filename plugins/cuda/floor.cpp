// tg_cuda_floor: the hardware limit for `tg bench gpu`'s tiny op, a peer of that bench. It times the
// raw driver path with nothing of ours in it: one small kernel (out[i] = in[i] + 1 over 16 floats,
// two pointer parameters like our a+1 kernel) through cuLaunchKernel on a non-blocking stream of
// the primary context, then each way of waiting for it. It uses the plugin's own dlopen'ed driver
// table (driver.cpp), so the driver is the one the plugin sees. The kernel is PTX text the driver
// compiles (no NVRTC). Prints one flat JSON line (the peer protocol of tools/tg/bench_util.hpp);
// on failure, the reason on stderr and exit status 1.
//
//   tg_cuda_floor [--index N] [--repeat R]   (us per call: median of R samples of 200 calls)
#include "driver.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tg::cuda {
namespace {

// out[tid.x] = in[tid.x] + 1.0f: what our a+1 kernel does, without its index arithmetic. With a
// fence, thread 0 then stores `seq` into `flag` (mapped host memory) after a barrier and that
// fence: the kernel itself says it is done, with no driver operation after it (membar.sys, and
// membar.gl as the plugin renders it: the host reads results only through later stream work,
// which the driver orders after the kernel anyway).
std::string add1_kernel(const std::string& name, const std::string& fence = "") {
  const bool flag = !fence.empty();
  std::string s = ".visible .entry " + name + "(.param .u64 out, .param .u64 in" +
                  (flag ? ", .param .u64 flag, .param .u32 seq" : "") + R"()
{
  .reg .pred %p<2>;
  .reg .b32 %r<3>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<7>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [in];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
  add.f32 %f2, %f1, 0f3F800000;
  add.s64 %rd5, %rd1, %rd3;
  st.global.f32 [%rd5], %f2;
)";
  if (flag)
    s += R"(  ld.param.u64 %rd6, [flag];
  ld.param.u32 %r2, [seq];
  cvta.to.global.u64 %rd6, %rd6;
  bar.sync 0;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  )" + fence +
         R"(;
  st.volatile.global.u32 [%rd6], %r2;
DONE:
)";
  return s + "  ret;\n}\n";
}

constexpr int kCalls =
    200; // per sample, as `tg bench gpu --tiny-profile`: one call is near the clock's grain

struct Args {
  int index = 0;
  int repeat = 10;
};

int positive(const char* flag, const char* text) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || v < 0 || v > 1000000)
    throw std::runtime_error(std::string(flag) + " is \"" + text + "\", not a count in 0..1000000");
  return int(v);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if ((flag == "--index" || flag == "--repeat") && i + 1 < argc) {
      (flag == "--index" ? a.index : a.repeat) = positive(argv[i], argv[i + 1]);
      ++i;
    } else {
      throw std::runtime_error("unknown argument \"" + flag +
                               "\" (usage: tg_cuda_floor [--index N] [--repeat R])");
    }
  }
  a.repeat = std::max(1, a.repeat);
  return a;
}

// Median us per call of `fn` over `repeat` samples of kCalls calls, after one untimed sample.
double us_per_call(int repeat, const std::function<void()>& fn) {
  std::vector<double> samples;
  for (int s = -1; s < repeat; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) fn();
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    if (s >= 0) samples.push_back(us / kCalls);
  }
  std::nth_element(samples.begin(), samples.begin() + long(samples.size() / 2), samples.end());
  return samples[samples.size() / 2];
}

void run(const Args& args) {
  const Driver& d = driver();
  CUdevice device = 0;
  check(d.cuDeviceGet(&device, args.index), "cuDeviceGet");
  char name[256] = {};
  check(d.cuDeviceGetName(name, sizeof name, device), "cuDeviceGetName");
  CUcontext context = nullptr;
  check(d.cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(d.cuCtxSetCurrent(context), "cuCtxSetCurrent");
  unsigned int default_flags = 0;
  check(d.cuCtxGetFlags(&default_flags), "cuCtxGetFlags");
  CUstream stream = nullptr;
  check(d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  CUevent event = nullptr;
  check(d.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  CUmodule module = nullptr;
  const std::string ptx = ".version 7.0\n.target sm_75\n.address_size 64\n" + add1_kernel("add1") +
                          add1_kernel("add1_flag", "membar.sys") + add1_kernel("add1_flag_gl", "membar.gl");
  check(d.cuModuleLoadData(&module, ptx.c_str()), "cuModuleLoadData(add1 PTX)");
  CUfunction function = nullptr;
  check(d.cuModuleGetFunction(&function, module, "add1"), "cuModuleGetFunction(add1)");
  CUdeviceptr in = 0, out = 0;
  check(d.cuMemAlloc(&in, 64), "cuMemAlloc");
  check(d.cuMemAlloc(&out, 64), "cuMemAlloc");
  std::vector<float> values(16), got(16);
  for (size_t i = 0; i < values.size(); ++i) values[i] = float(i) * 0.5f;
  check(d.cuMemcpyHtoDAsync(in, values.data(), 64, stream), "cuMemcpyHtoDAsync");
  void* params[] = {&out, &in};
  auto launch = [&] {
    check(d.cuLaunchKernel(function, 1, 1, 1, 16, 1, 1, 0, stream, params, nullptr), "cuLaunchKernel");
  };
  auto stream_sync = [&] { check(d.cuStreamSynchronize(stream), "cuStreamSynchronize"); };
  const int r = args.repeat;

  const double launch_only = us_per_call(r, launch);
  stream_sync();
  const double launch_sync = us_per_call(r, [&] {
    launch();
    stream_sync();
  });
  const double launch_event = us_per_call(r, [&] {
    launch();
    check(d.cuEventRecord(event, stream), "cuEventRecord");
    check(d.cuEventSynchronize(event), "cuEventSynchronize");
  });
  const double launch_query = us_per_call(r, [&] {
    launch();
    CUresult q;
    while ((q = d.cuStreamQuery(stream)) == CUDA_ERROR_NOT_READY) {
    }
    check(q, "cuStreamQuery");
  });
  const double sync_idle = us_per_call(r, stream_sync);
  // No driver wait at all: the stream writes a counter into mapped host memory after the kernel
  // and the host spins on that word (what a synchronize could do instead of cuStreamSynchronize).
  void* host_word = nullptr;
  check(d.cuMemHostAlloc(&host_word, 64, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE),
        "cuMemHostAlloc");
  CUdeviceptr device_word = 0;
  check(d.cuMemHostGetDevicePointer(&device_word, host_word, 0), "cuMemHostGetDevicePointer");
  volatile uint32_t* word = static_cast<volatile uint32_t*>(host_word);
  *word = 0;
  uint32_t sequence = 0;
  const double launch_word = us_per_call(r, [&] {
    launch();
    check(d.cuStreamWriteValue32(stream, device_word, ++sequence, 0), "cuStreamWriteValue32");
    while (*word != sequence) {
    }
  });
  stream_sync();
  const double word_idle = us_per_call(r, [&] { // the same wait on an idle stream
    check(d.cuStreamWriteValue32(stream, device_word, ++sequence, 0), "cuStreamWriteValue32");
    while (*word != sequence) {
    }
  });
  // The kernel writes the word itself (add1_flag): no stream operation after it.
  CUfunction flagged = nullptr;
  check(d.cuModuleGetFunction(&flagged, module, "add1_flag"), "cuModuleGetFunction(add1_flag)");
  void* flag_params[] = {&out, &in, &device_word, &sequence};
  auto launch_flagged = [&] {
    ++sequence;
    check(d.cuLaunchKernel(flagged, 1, 1, 1, 16, 1, 1, 0, stream, flag_params, nullptr), "cuLaunchKernel");
  };
  const double launch_flag_only = us_per_call(r, launch_flagged);
  stream_sync();
  const double launch_flag = us_per_call(r, [&] {
    launch_flagged();
    while (*word != sequence) {
    }
  });
  int not_ready = 0;                                    // the flag came before the driver saw the kernel end
  const double launch_flag_query = us_per_call(r, [&] { // and one cuStreamQuery for errors
    launch_flagged();
    while (*word != sequence) {
    }
    const CUresult q = d.cuStreamQuery(stream);
    if (q == CUDA_ERROR_NOT_READY)
      ++not_ready;
    else
      check(q, "cuStreamQuery");
  });
  CUfunction flagged_gl = nullptr;
  check(d.cuModuleGetFunction(&flagged_gl, module, "add1_flag_gl"), "cuModuleGetFunction(add1_flag_gl)");
  const double launch_flag_gl = us_per_call(r, [&] {
    ++sequence;
    check(d.cuLaunchKernel(flagged_gl, 1, 1, 1, 16, 1, 1, 0, stream, flag_params, nullptr), "cuLaunchKernel");
    while (*word != sequence) {
    }
  });
  const double launch_flag_sync = us_per_call(r, [&] { // the flag kernel, waited for as usual
    launch_flagged();
    stream_sync();
  });
  stream_sync();
  check(d.cuMemFreeHost(host_word), "cuMemFreeHost");
  // The arguments as one packed buffer (cuLaunchKernel's `extra`) instead of a pointer per argument.
  struct {
    CUdeviceptr out, in;
  } packed{out, in};
  size_t packed_size = sizeof packed;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &packed_size,
                   CU_LAUNCH_PARAM_END};
  const double launch_extra_sync = us_per_call(r, [&] {
    check(d.cuLaunchKernel(function, 1, 1, 1, 16, 1, 1, 0, stream, nullptr, extra), "cuLaunchKernel(extra)");
    stream_sync();
  });
  // The legacy default stream (stream 0) instead of our non-blocking stream.
  const double null_stream = us_per_call(r, [&] {
    check(d.cuLaunchKernel(function, 1, 1, 1, 16, 1, 1, 0, nullptr, params, nullptr), "cuLaunchKernel");
    check(d.cuStreamSynchronize(nullptr), "cuStreamSynchronize");
  });
  // The context's scheduling flag: how the host thread waits in the synchronize calls above.
  auto with_flags = [&](unsigned int sched) {
    check(d.cuCtxSetFlags((default_flags & ~unsigned(CU_CTX_SCHED_MASK)) | sched), "cuCtxSetFlags");
    const double us = us_per_call(r, [&] {
      launch();
      stream_sync();
    });
    check(d.cuCtxSetFlags(default_flags), "cuCtxSetFlags");
    return us;
  };
  const double sync_spin = with_flags(CU_CTX_SCHED_SPIN);
  const double sync_yield = with_flags(CU_CTX_SCHED_YIELD);
  const double sync_blocking = with_flags(CU_CTX_SCHED_BLOCKING_SYNC);
  const double launch_sync_again = us_per_call(r, [&] { // the default once more: did the host drift?
    launch();
    stream_sync();
  });
  check(d.cuMemcpyDtoHAsync(got.data(), out, 64, stream), "cuMemcpyDtoHAsync");
  stream_sync();
  for (size_t i = 0; i < got.size(); ++i) // the timed kernel did its work
    if (got[i] != values[i] + 1.0f)
      throw std::runtime_error("the add1 kernel wrote " + std::to_string(got[i]) + " at " +
                               std::to_string(i) + ", expected " + std::to_string(values[i] + 1.0f));

  d.cuMemFree(in);
  d.cuMemFree(out);
  d.cuModuleUnload(module);
  d.cuEventDestroy(event);
  d.cuStreamDestroy(stream);
  d.cuDevicePrimaryCtxRelease(device);

  const unsigned int sched = default_flags & unsigned(CU_CTX_SCHED_MASK);
  const char* sched_name = sched == CU_CTX_SCHED_SPIN            ? "spin"
                           : sched == CU_CTX_SCHED_YIELD         ? "yield"
                           : sched == CU_CTX_SCHED_BLOCKING_SYNC ? "blocking_sync"
                                                                 : "auto";
  std::printf(
      "{\"device\": \"%s\", \"driver_version\": %d, \"default_sched\": \"%s\", \"launch_us\": %.3f, "
      "\"launch_sync_us\": %.3f, \"launch_event_sync_us\": %.3f, \"launch_query_spin_us\": %.3f, "
      "\"sync_idle_us\": %.3f, \"launch_sync_sched_spin_us\": %.3f, \"launch_sync_sched_yield_us\": %.3f, "
      "\"launch_sync_sched_blocking_us\": %.3f, \"launch_sync_again_us\": %.3f, "
      "\"launch_host_word_spin_us\": %.3f, "
      "\"host_word_idle_us\": %.3f, \"launch_sync_null_stream_us\": %.3f, \"launch_flag_only_us\": %.3f, "
      "\"launch_kernel_flag_spin_us\": %.3f, \"launch_kernel_flag_query_us\": %.3f, "
      "\"launch_flag_kernel_sync_us\": %.3f, \"launch_extra_sync_us\": %.3f, \"flag_before_driver\": %d, "
      "\"launch_kernel_flag_gl_spin_us\": %.3f}\n",
      name, d.version, sched_name, launch_only, launch_sync, launch_event, launch_query, sync_idle, sync_spin,
      sync_yield, sync_blocking, launch_sync_again, launch_word, word_idle, null_stream, launch_flag_only,
      launch_flag, launch_flag_query, launch_flag_sync, launch_extra_sync, not_ready, launch_flag_gl);
}

} // namespace
} // namespace tg::cuda

int main(int argc, char** argv) {
  try {
    tg::cuda::run(tg::cuda::parse(argc, argv));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tg_cuda_floor: %s\n", e.what());
    return 1;
  }
}
