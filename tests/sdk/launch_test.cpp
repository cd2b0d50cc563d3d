// Launch validation in the adaptor: every violation of the program's signature or the device
// limits is INVALID_ARGUMENT naming the argument, and reaches no plugin code; valid launches
// arrive as given. The fake device allows local 8x4x2 (16 threads), global 100x10x10.
#include "fake_plugin.hpp"

using namespace fake;

namespace {

// A program taking buffers (float32, int16) and one int32 scalar, loaded on the fixture's device.
struct LaunchFixture : Fixture {
  LaunchFixture() {
    tg::sdk::KernelBuilder k("sig_kernel");
    k.global(0, TG_DTYPE_FLOAT32);
    k.global(1, TG_DTYPE_INT16);
    k.var(0, TG_DTYPE_INT32);
    auto blob = compile(k.serialize());
    check(api().program_load(device, blob.data(), blob.size(), &program));
    out = alloc(64);
    in = alloc(64);
    buffers = {{{out, 0}, {in, 2}}};
    scalar.dtype = TG_DTYPE_INT32;
    scalar.value.i = -5;
  }
  ~LaunchFixture() {
    api().buffer_free(out);
    api().buffer_free(in);
    api().program_free(program);
  }

  tg_launch_args args() {
    tg_launch_args a{};
    a.struct_size = sizeof(a);
    a.program = program;
    a.global_size[0] = 3, a.global_size[1] = 2, a.global_size[2] = 1;
    a.local_size[0] = 4, a.local_size[1] = 2, a.local_size[2] = 1;
    a.buffers = buffers.data();
    a.buffer_count = 2;
    a.scalars = &scalar;
    a.scalar_count = 1;
    return a;
  }

  // Expects INVALID_ARGUMENT whose message names `what`, and that nothing ran.
  void expect_invalid(const tg_launch_args& a, const std::string& what) {
    int before = world.launches;
    Status s = take(api().launch(&a));
    BOOST_CHECK_EQUAL(s.code, TG_ERROR_INVALID_ARGUMENT);
    BOOST_CHECK_MESSAGE(s.says(what), "expected '" << what << "' in: " << s.message);
    BOOST_CHECK_MESSAGE(s.message.starts_with("fake.launch: "), s.message);
    BOOST_CHECK_EQUAL(world.launches, before);
  }

  tg_program* program = nullptr;
  tg_buffer* out = nullptr;
  tg_buffer* in = nullptr;
  std::array<tg_buffer_arg, 2> buffers{};
  tg_scalar_arg scalar{};
};

} // namespace

BOOST_AUTO_TEST_SUITE(sdk_launch_validation)

BOOST_FIXTURE_TEST_CASE(a_valid_launch_arrives_as_given, LaunchFixture) {
  tg_launch_args a = args();
  check(api().launch(&a));
  BOOST_CHECK_EQUAL(world.launches, 1);
  BOOST_CHECK((world.last_global == std::array<uint32_t, 3>{3, 2, 1}));
  BOOST_CHECK((world.last_local == std::array<uint32_t, 3>{4, 2, 1}));
  BOOST_CHECK((world.last_offsets == std::vector<uint64_t>{0, 2}));
  BOOST_REQUIRE_EQUAL(world.last_scalars.size(), 1u);
  BOOST_CHECK_EQUAL(world.last_scalars[0].value.i, -5);
  BOOST_CHECK(!world.last_timed);
  // The limits themselves are allowed.
  a.local_size[0] = 8, a.local_size[1] = 2, a.local_size[2] = 1;
  a.global_size[0] = 100, a.global_size[1] = 10, a.global_size[2] = 10;
  buffers[0].offset = 64; // the end of the buffer: a view of nothing
  check(api().launch(&a));
  BOOST_CHECK_EQUAL(world.launches, 2);
}

BOOST_FIXTURE_TEST_CASE(signature_violations_name_the_argument, LaunchFixture) {
  tg_launch_args a = args();
  a.buffer_count = 1;
  expect_invalid(a, "buffer_count is 1, the program takes 2 (kernel 'sig_kernel')");
  a = args();
  a.scalar_count = 0;
  expect_invalid(a, "scalar_count is 0, the program takes 1");
  a = args();
  a.buffers = nullptr;
  expect_invalid(a, "args->buffers is NULL");
  a = args();
  a.scalars = nullptr;
  expect_invalid(a, "args->scalars is NULL");
  a = args();
  buffers[1].buffer = nullptr;
  expect_invalid(a, "buffers[1].buffer is NULL");
  buffers[1].buffer = in;
  buffers[0].offset = 65;
  expect_invalid(a, "buffers[0].offset 65 is beyond the buffer's 64 bytes");
  buffers[0].offset = 2;
  expect_invalid(a, "buffers[0].offset 2 is not a multiple of the 4-byte float32 element");
  buffers[0].offset = 0;
  buffers[1].offset = 3;
  expect_invalid(a, "buffers[1].offset 3 is not a multiple of the 2-byte int16 element");
  buffers[1].offset = 2;
  scalar.dtype = TG_DTYPE_INT64;
  expect_invalid(a, "scalars[0].dtype is int64, the program's DEFINE_VAR 0 is int32");
  scalar.dtype = 99;
  expect_invalid(a, "scalars[0].dtype is unknown dtype 99");
  scalar.dtype = TG_DTYPE_INT32;
  check(api().launch(&a));
}

BOOST_FIXTURE_TEST_CASE(buffers_of_another_device_are_refused, LaunchFixture) {
  tg_device* second = nullptr;
  tg_device_open_args open{sizeof(open), 1, 0};
  check(api().device_open(&open, &second));
  tg_buffer_alloc_args alloc_args{sizeof(alloc_args), 64, 0, 0, 0};
  tg_buffer* foreign = nullptr;
  check(api().buffer_alloc(second, &alloc_args, &foreign));
  buffers[1].buffer = foreign;
  expect_invalid(args(), "buffers[1] belongs to another device");
  api().buffer_free(foreign);
  api().device_close(second);
}

// ABI 1.1 launch_batch through the adaptor's default (Device::launch for each): every launch is
// validated before any runs, errors name the launch, empty grids are dropped, totals add up.
BOOST_FIXTURE_TEST_CASE(a_batch_is_validated_whole_then_launched_in_order, LaunchFixture) {
  BOOST_REQUIRE(api().launch_batch != nullptr);
  tg_launch_args good = args(), empty = args(), bad = args();
  empty.global_size[1] = 0;
  bad.scalar_count = 0;
  auto run = [&](std::vector<const tg_launch_args*> list, uint64_t* ns) {
    tg_launch_batch_args b{};
    b.struct_size = sizeof b;
    b.device = device;
    b.launches = list.data();
    b.launch_count = uint32_t(list.size());
    b.elapsed_ns = ns;
    return take(api().launch_batch(&b));
  };
  Status s = run({&good, &good, &bad}, nullptr);
  BOOST_CHECK_EQUAL(s.code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_MESSAGE(s.message.starts_with("fake.launch_batch: launches[2]: scalar_count is 0"), s.message);
  BOOST_CHECK_EQUAL(world.launches, 0);
  BOOST_CHECK(run({&good, &empty, &good}, nullptr).ok());
  BOOST_CHECK_EQUAL(world.launches, 2); // the empty grid never reaches the device
  uint64_t ns = 0;
  BOOST_CHECK(run({&good, &good}, &ns).ok()); // the fake device times each launch as 1234 ns
  BOOST_CHECK_EQUAL(ns, 2468u);
  BOOST_CHECK(world.last_timed);
  tg_launch_args own = good;
  own.elapsed_ns = &ns;
  s = run({&own}, nullptr);
  BOOST_CHECK_MESSAGE(s.says("launches[0]: elapsed_ns must be NULL"), s.message);
  tg_device* second = nullptr;
  tg_device_open_args open{sizeof(open), 1, 0};
  check(api().device_open(&open, &second));
  tg_launch_batch_args other{};
  other.struct_size = sizeof other;
  other.device = second;
  const tg_launch_args* list[] = {&good};
  other.launches = list;
  other.launch_count = 1;
  s = take(api().launch_batch(&other));
  BOOST_CHECK_MESSAGE(s.says("launches[0]: its program belongs to another device"), s.message);
  api().device_close(second);
  BOOST_CHECK_EQUAL(world.launches, 4);
}

BOOST_FIXTURE_TEST_CASE(grid_violations_name_the_axis, LaunchFixture) {
  tg_launch_args a = args();
  a.local_size[1] = 0;
  expect_invalid(a, "local_size[1] is 0, must be 1..4");
  a = args();
  a.local_size[0] = 9;
  expect_invalid(a, "local_size[0] is 9, must be 1..8");
  a = args();
  a.local_size[2] = 3;
  expect_invalid(a, "local_size[2] is 3, must be 1..2");
  a = args();
  a.local_size[0] = 8, a.local_size[1] = 4, a.local_size[2] = 1;
  expect_invalid(a, "local size 8x4x1 has 32 threads, the limit is 16");
  a = args();
  a.global_size[0] = 101;
  expect_invalid(a, "global_size[0] is 101, the limit is 100");
  a = args();
  a.global_size[2] = 11;
  expect_invalid(a, "global_size[2] is 11, the limit is 10");
}

BOOST_FIXTURE_TEST_CASE(an_empty_grid_runs_nothing, LaunchFixture) {
  for (int axis = 0; axis < 3; ++axis) {
    tg_launch_args a = args();
    a.global_size[axis] = 0;
    uint64_t elapsed = 77;
    a.elapsed_ns = &elapsed;
    check(api().launch(&a));
    BOOST_CHECK_EQUAL(elapsed, 0u);
  }
  BOOST_CHECK_EQUAL(world.launches, 0);
  // It is still validated.
  tg_launch_args a = args();
  a.global_size[0] = 0;
  a.buffer_count = 3;
  expect_invalid(a, "buffer_count");
}

BOOST_FIXTURE_TEST_CASE(timing_needs_the_timing_feature, LaunchFixture) {
  tg_launch_args a = args();
  uint64_t elapsed = 0;
  a.elapsed_ns = &elapsed;
  check(api().launch(&a));
  BOOST_CHECK_EQUAL(elapsed, 1234u);
  BOOST_CHECK(world.last_timed);

  // A device without TG_FEATURE_TIMING (its properties are read at open).
  world.timing = false;
  tg_device* untimed = nullptr;
  tg_device_open_args open{sizeof(open), 0, 0};
  check(api().device_open(&open, &untimed));
  tg::sdk::KernelBuilder k("sig_kernel");
  k.global(0, TG_DTYPE_FLOAT32);
  auto blob = compile(k.serialize());
  tg_program* p = nullptr;
  check(api().program_load(untimed, blob.data(), blob.size(), &p));
  tg_buffer_alloc_args alloc_args{sizeof(alloc_args), 16, 0, 0, 0};
  tg_buffer* b = nullptr;
  check(api().buffer_alloc(untimed, &alloc_args, &b));
  tg_buffer_arg arg{b, 0};
  tg_launch_args t{};
  t.struct_size = sizeof(t);
  t.program = p;
  t.global_size[0] = t.global_size[1] = t.global_size[2] = 1;
  t.local_size[0] = t.local_size[1] = t.local_size[2] = 1;
  t.buffers = &arg;
  t.buffer_count = 1;
  t.elapsed_ns = &elapsed;
  int before = world.launches;
  Status s = take(api().launch(&t));
  BOOST_CHECK_EQUAL(s.code, TG_ERROR_UNIMPLEMENTED);
  BOOST_CHECK_MESSAGE(s.says("TG_FEATURE_TIMING"), s.message);
  BOOST_CHECK_EQUAL(world.launches, before);
  t.elapsed_ns = nullptr;
  check(api().launch(&t));
  api().buffer_free(b);
  api().program_free(p);
  api().device_close(untimed);
}

// A DEFINE_GLOBAL that assumes 16-byte alignment (for 128-bit loads): the blob carries it, an
// offset that keeps only the element's alignment is refused naming the argument, and one that
// keeps 16 runs; a claim beyond the device's buffer_alignment (16 on the fake) is refused too.
BOOST_FIXTURE_TEST_CASE(assumed_alignment_is_enforced, LaunchFixture) {
  tg::sdk::KernelBuilder k("aligned_kernel");
  k.global(0, TG_DTYPE_FLOAT32);
  k.global(1, TG_DTYPE_FLOAT32, 16);
  auto blob = compile(k.serialize());
  tg_program* p = nullptr;
  check(api().program_load(device, blob.data(), blob.size(), &p));
  tg_launch_args a = args();
  a.program = p;
  a.scalar_count = 0;
  a.scalars = nullptr;
  buffers = {{{out, 4}, {in, 4}}};
  expect_invalid(a, "buffers[1].offset 4 breaks the 16-byte alignment the program assumes of its buffer 1 "
                    "(kernel 'aligned_kernel'");
  buffers[1].offset = 32;
  int before = world.launches;
  check(api().launch(&a));
  BOOST_CHECK_EQUAL(world.launches, before + 1);
  api().program_free(p);

  tg::sdk::KernelBuilder wide("over_aligned");
  wide.global(0, TG_DTYPE_FLOAT32, 64);
  blob = compile(wide.serialize());
  check(api().program_load(device, blob.data(), blob.size(), &p));
  a.program = p;
  a.buffer_count = 1;
  buffers[0].offset = 0;
  expect_invalid(a, "buffers[0].offset 0 breaks the 64-byte alignment the program assumes of its buffer 0");
  api().program_free(p);
}

// More buffer arguments than the adaptor keeps on the stack (16): they arrive in order, and a bad
// one past the 16th is still named.
BOOST_FIXTURE_TEST_CASE(many_buffer_arguments, LaunchFixture) {
  constexpr uint32_t n = 20;
  world.max_buffer_args = n;
  tg_device* wide = nullptr;
  tg_device_open_args open{sizeof(open), 0, 0};
  check(api().device_open(&open, &wide));
  tg::sdk::KernelBuilder k("wide_kernel");
  for (uint32_t i = 0; i < n; ++i) k.global(i, TG_DTYPE_FLOAT32);
  auto blob = compile(k.serialize());
  tg_program* p = nullptr;
  check(api().program_load(wide, blob.data(), blob.size(), &p));
  tg_buffer_alloc_args alloc_args{sizeof(alloc_args), 128, 0, 0, 0};
  tg_buffer* b = nullptr;
  check(api().buffer_alloc(wide, &alloc_args, &b));
  std::vector<tg_buffer_arg> wide_args;
  std::vector<uint64_t> offsets;
  for (uint32_t i = 0; i < n; ++i) {
    wide_args.push_back({b, 4 * uint64_t(i)});
    offsets.push_back(4 * uint64_t(i));
  }
  tg_launch_args t{};
  t.struct_size = sizeof(t);
  t.program = p;
  t.global_size[0] = t.global_size[1] = t.global_size[2] = 1;
  t.local_size[0] = t.local_size[1] = t.local_size[2] = 1;
  t.buffers = wide_args.data();
  t.buffer_count = n;
  check(api().launch(&t));
  BOOST_CHECK(world.last_offsets == offsets);
  wide_args[18].offset = 3;
  const int before = world.launches;
  Status s = take(api().launch(&t));
  BOOST_CHECK_EQUAL(s.code, TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_MESSAGE(s.says("buffers[18].offset 3 is not a multiple of the 4-byte float32 element"),
                      s.message);
  BOOST_CHECK_EQUAL(world.launches, before);
  api().buffer_free(b);
  api().program_free(p);
  api().device_close(wide);
}

BOOST_FIXTURE_TEST_CASE(null_and_short_launch_args, LaunchFixture) {
  BOOST_CHECK_EQUAL(take(api().launch(nullptr)).code, TG_ERROR_INVALID_ARGUMENT);
  tg_launch_args a = args();
  a.program = nullptr;
  expect_invalid(a, "args->program is NULL");
  a = args();
  a.struct_size = 4;
  expect_invalid(a, "struct_size");
  // A host that predates elapsed_ns: the field is not read (here it holds a bad pointer).
  a = args();
  a.struct_size = offsetof(tg_launch_args, elapsed_ns);
  a.elapsed_ns = reinterpret_cast<uint64_t*>(uintptr_t(8));
  check(api().launch(&a));
  BOOST_CHECK(!world.last_timed);
}

BOOST_AUTO_TEST_SUITE_END()
