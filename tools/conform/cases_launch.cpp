// launch/*: arguments that violate the program or the device limits are refused before anything
// runs; an empty grid runs nothing; a newer host's launch struct; synchronize; timing; launch_batch.
#include "tools/conform/cases.hpp"

#include <cstring>

namespace tg::conform {
namespace {

// The scale kernel on 8 elements, ready to launch.
struct ScaleSetup {
  Device device;
  Program program;
  Buffer a, out;
  explicit ScaleSetup(const Context& ctx)
      : device(ctx.device_index), program(device, compile_or_fail(scale_kernel_ir(), target_of(ctx))),
        a(device, 32), out(device, 32) {
    std::vector<float> ones(8, 1.0f), zeros(8, 0.0f);
    a.upload(std::as_bytes(std::span(ones)));
    out.upload(std::as_bytes(std::span(zeros)));
  }
  std::vector<float> result() const {
    auto bytes = out.download(32);
    std::vector<float> v(8);
    std::memcpy(v.data(), bytes.data(), 32);
    return v;
  }
  std::vector<tg_buffer_arg> args() const { return {{a.get(), 0}, {out.get(), 0}}; }
};

void need_launch() {
  if (!TG_CONFORM_HAS(compile) || !TG_CONFORM_HAS(program_load) || !TG_CONFORM_HAS(launch) ||
      !TG_CONFORM_HAS(buffer_alloc))
    throw CaseSkipped("the plugin lacks compile, program_load, launch or buffer_alloc");
}

void expect_all(const std::vector<float>& v, float want, const std::string& what) {
  for (size_t i = 0; i < v.size(); ++i)
    expect(v[i] == want, what + ": element " + std::to_string(i) + " is " + std::to_string(v[i]) + ", want " +
                             std::to_string(want));
}

void bad_arguments(const Context& ctx) {
  need_launch();
  ScaleSetup s(ctx);
  const tg_device_properties& p = s.device.properties();
  const auto bufs = s.args();
  const std::vector<tg_scalar_arg> scalars = {scalar_f32(2.0f)};
  tg_scalar_arg wrong_dtype{};
  wrong_dtype.dtype = TG_DTYPE_INT32;
  wrong_dtype.value.i = 2;
  auto invalid = [&](std::array<uint32_t, 3> global, std::array<uint32_t, 3> local,
                     const std::vector<tg_buffer_arg>& b, const std::vector<tg_scalar_arg>& sc,
                     const std::string& what) {
    Status st = s.program.try_launch(global, local, b, sc);
    expect(st.code == TG_ERROR_INVALID_ARGUMENT, "launch with " + what + ": expected INVALID_ARGUMENT, got " +
                                                     (st.ok() ? "success" : st.describe()));
  };
  invalid({8, 1, 1}, {1, 1, 1}, {bufs[0]}, scalars, "one buffer of two");
  invalid({8, 1, 1}, {1, 1, 1}, {bufs[0], bufs[1], bufs[1]}, scalars, "three buffers of two");
  invalid({8, 1, 1}, {1, 1, 1}, bufs, {}, "no scalar of one");
  invalid({8, 1, 1}, {1, 1, 1}, bufs, {scalars[0], scalars[0]}, "two scalars of one");
  invalid({8, 1, 1}, {1, 1, 1}, bufs, {wrong_dtype}, "an int32 scalar for a float32 DEFINE_VAR");
  invalid({8, 1, 1}, {1, 1, 1}, {bufs[0], {nullptr, 0}}, scalars, "a NULL buffer");
  invalid({8, 1, 1}, {1, 1, 1}, {{s.a.get(), 2}, bufs[1]}, scalars, "a float32 buffer at byte offset 2");
  invalid({8, 1, 1}, {1, 1, 1}, {bufs[0], {s.out.get(), 36}}, scalars, "an offset past the buffer's end");
  invalid({8, 1, 1}, {0, 1, 1}, bufs, scalars, "local_size[0] = 0");
  invalid({8, 1, 1}, {1, 1, 0}, bufs, scalars, "local_size[2] = 0");
  if (p.max_local_size[0] < UINT32_MAX)
    invalid({8, 1, 1}, {p.max_local_size[0] + 1, 1, 1}, bufs, scalars,
            "local_size[0] above max_local_size[0]");
  // A group within every per-axis limit whose thread count exceeds max_local_threads.
  std::array<uint32_t, 3> big = {1, 1, 1};
  uint64_t threads = 1;
  for (size_t a = 0; a < 3 && threads <= p.max_local_threads; ++a) {
    big[a] = p.max_local_size[a];
    threads *= big[a];
  }
  if (threads > p.max_local_threads)
    invalid({8, 1, 1}, big, bufs, scalars, "more threads than max_local_threads");
  if (p.max_global_size[1] < UINT32_MAX)
    invalid({8, p.max_global_size[1] + 1, 1}, {1, 1, 1}, bufs, scalars,
            "global_size[1] above max_global_size[1]");
  expect_code(api().launch(nullptr), TG_ERROR_INVALID_ARGUMENT, "launch(NULL)");
  tg_launch_args no_program{};
  no_program.struct_size = sizeof(no_program);
  expect_code(api().launch(&no_program), TG_ERROR_INVALID_ARGUMENT, "launch of a NULL program");
  synchronize(s.device);
  expect_all(s.result(), 0.0f, "after refused launches nothing may have run");
  // The program still works afterwards.
  Status ok = s.program.try_launch({8, 1, 1}, {1, 1, 1}, bufs, scalars);
  expect(ok.ok(), "a valid launch after refused ones failed: " + ok.describe());
  synchronize(s.device);
  expect_all(s.result(), 2.0f, "the valid launch");
}

void empty_grid(const Context& ctx) {
  need_launch();
  ScaleSetup s(ctx);
  for (size_t axis = 0; axis < 3; ++axis) {
    std::array<uint32_t, 3> global = {8, 1, 1};
    global[axis] = 0;
    Status st = s.program.try_launch(global, {1, 1, 1}, s.args(), {scalar_f32(3.0f)});
    expect(st.ok(), "a launch with global_size[" + std::to_string(axis) + "] = 0 failed: " + st.describe());
  }
  synchronize(s.device);
  expect_all(s.result(), 0.0f, "an empty grid must run nothing");
}

void newer_host_launch_struct(const Context& ctx) {
  need_launch();
  ScaleSetup s(ctx);
  Status st = s.program.try_launch({8, 1, 1}, {1, 1, 1}, s.args(), {scalar_f32(4.0f)}, nullptr,
                                   sizeof(tg_launch_args) + 32);
  expect(st.ok(), "a launch with a larger struct_size (a newer host) failed: " + st.describe());
  synchronize(s.device);
  expect_all(s.result(), 4.0f, "the launch with a larger struct_size");
}

void synchronize_case(const Context& ctx) {
  need_launch();
  if (!TG_CONFORM_HAS(synchronize)) {
    if (ctx.properties.features & TG_FEATURE_ASYNC)
      throw CaseFailed("the device declares TG_FEATURE_ASYNC but the plugin has no synchronize");
    throw CaseSkipped("the plugin has no synchronize (launches are synchronous)");
  }
  ScaleSetup s(ctx);
  check(api().synchronize(s.device.get()), "synchronize with nothing queued");
  for (int round = 1; round <= 5; ++round) {
    Status st = s.program.try_launch({8, 1, 1}, {1, 1, 1}, s.args(), {scalar_f32(float(round))});
    expect(st.ok(), "launch failed: " + st.describe());
  }
  check(api().synchronize(s.device.get()), "synchronize after 5 launches");
  expect_all(s.result(), 5.0f, "after synchronize the last launch's result");
}

void timing(const Context& ctx) {
  need_launch();
  ScaleSetup s(ctx);
  uint64_t ns = 0;
  Status st = s.program.try_launch({8, 1, 1}, {1, 1, 1}, s.args(), {scalar_f32(6.0f)}, &ns);
  if (!(ctx.properties.features & TG_FEATURE_TIMING)) {
    expect(st.code == TG_ERROR_UNIMPLEMENTED,
           "a timed launch without TG_FEATURE_TIMING: expected UNIMPLEMENTED, got " +
               (st.ok() ? std::string("success") : st.describe()));
    synchronize(s.device);
    expect_all(s.result(), 0.0f, "a refused timed launch must run nothing");
    return;
  }
  expect(st.ok(), "a timed launch failed: " + st.describe());
  expect(ns > 0, "a timed launch reported 0 ns");
  expect_all(s.result(), 6.0f, "a timed launch completes before it returns");
}

// ABI 1.1 launch_batch: launches run in order (the second reads what the first wrote), a bad
// launch anywhere in the list runs nothing, and a timed batch reports its total.
void batch(const Context& ctx) {
  need_launch();
  if (!TG_CONFORM_HAS(launch_batch)) throw CaseSkipped("the plugin has no launch_batch (ABI 1.1, optional)");
  ScaleSetup s(ctx);
  const std::vector<tg_scalar_arg> two = {scalar_f32(2.0f)}, three = {scalar_f32(3.0f)};
  const std::vector<tg_buffer_arg> forward = s.args();                        // out = a * 2
  const std::vector<tg_buffer_arg> back = {{s.out.get(), 0}, {s.a.get(), 0}}; // a = out * 3
  const std::vector<tg_buffer_arg> one = {{s.a.get(), 0}};                    // one buffer of two
  auto launch_of = [&](const std::vector<tg_buffer_arg>& b, const std::vector<tg_scalar_arg>& sc) {
    tg_launch_args a{};
    a.struct_size = sizeof a;
    a.program = s.program.get();
    a.global_size[0] = 8;
    a.global_size[1] = a.global_size[2] = 1;
    a.local_size[0] = a.local_size[1] = a.local_size[2] = 1;
    a.buffers = b.data();
    a.buffer_count = uint32_t(b.size());
    a.scalars = sc.data();
    a.scalar_count = uint32_t(sc.size());
    return a;
  };
  tg_launch_args first = launch_of(forward, two), second = launch_of(back, three), bad = launch_of(one, two);
  auto run = [&](std::vector<const tg_launch_args*> list, uint64_t* ns) {
    tg_launch_batch_args b{};
    b.struct_size = sizeof b;
    b.device = s.device.get();
    b.launches = list.data();
    b.launch_count = uint32_t(list.size());
    b.elapsed_ns = ns;
    Status st = take(api().launch_batch(&b));
    synchronize(s.device);
    return st;
  };
  Status st = run({&first, &bad}, nullptr);
  expect(st.code == TG_ERROR_INVALID_ARGUMENT,
         "a batch with a bad second launch: expected INVALID_ARGUMENT, got " +
             (st.ok() ? "success" : st.describe()));
  expect_all(s.result(), 0.0f, "a refused batch must run nothing");
  const bool timed = (ctx.properties.features & TG_FEATURE_TIMING) != 0;
  uint64_t ns = 0;
  st = run({&first, &second}, timed ? &ns : nullptr);
  expect(st.ok(), "launch_batch failed: " + st.describe());
  expect_all(s.result(), 2.0f, "the first launch's result");
  auto bytes = s.a.download(32);
  std::vector<float> a(8);
  std::memcpy(a.data(), bytes.data(), 32);
  expect_all(a, 6.0f, "the second launch reads what the first wrote (in order)");
  if (timed) expect(ns > 0, "a timed batch reported 0 ns");
}

} // namespace

void add_launch_cases(std::vector<Case>& cases) {
  cases.push_back({"launch/bad_arguments_are_invalid_and_run_nothing", true, bad_arguments});
  cases.push_back({"launch/empty_grid_runs_nothing", true, empty_grid});
  cases.push_back({"launch/newer_host_launch_struct", true, newer_host_launch_struct});
  cases.push_back({"launch/synchronize", true, synchronize_case});
  cases.push_back({"launch/timing", true, timing});
  cases.push_back({"launch/batch_runs_in_order", true, batch});
}

} // namespace tg::conform
