// multi/*: the ABI 1.2 entries between devices of the plugin. peer_copy both ways at offsets;
// each collective (all-reduce sum and max, all-gather, broadcast) in every dtype the devices
// compute with, over groups of 2 and 3 devices, in place and out of place, against a reference
// computed here in double (small integers, exact in every dtype); a collective ordered after
// launches; bad arguments -> INVALID_ARGUMENT with nothing changed. Skipped (never passed) where
// the plugin lacks the entry or has fewer devices than the group. multi/comm_one_rank: the 1.6
// communicators across processes, in the one form a single process can check (one rank: every
// collective copies its input), and their bad arguments.
#include "tools/conform/cases.hpp"

#include <tg/sdk/interpreter.hpp>
#include <tg/sdk/kernel_ir.hpp>

#include <algorithm>
#include <cstring>
#include <memory>

namespace tg::conform {
namespace {

// The device under test first, then the plugin's other devices in index order.
std::vector<std::unique_ptr<Device>> open_group(const Context& ctx, int32_t n) {
  if (ctx.device_count < n)
    throw CaseSkipped("needs " + std::to_string(n) + " devices, the plugin has " +
                      std::to_string(ctx.device_count));
  std::vector<std::unique_ptr<Device>> group;
  group.push_back(std::make_unique<Device>(ctx.device_index));
  for (int32_t i = 0; int32_t(group.size()) < n; ++i)
    if (i != ctx.device_index) group.push_back(std::make_unique<Device>(i));
  return group;
}

void need_peer_copy() {
  if (!TG_CONFORM_HAS(peer_copy)) throw CaseSkipped("the plugin has no peer_copy (ABI 1.2, optional)");
}
void need_comm() {
  if (!TG_CONFORM_HAS(comm_init)) throw CaseSkipped("the plugin has no communicators (ABI 1.6, optional)");
}
void need_collective() {
  if (!TG_CONFORM_HAS(collective)) throw CaseSkipped("the plugin has no collective (ABI 1.2, optional)");
}

// One element of `dtype` holding the small integer v (bool: v != 0).
void encode(tg_dtype dtype, double v, std::byte* out) {
  auto put = [&](auto x) { std::memcpy(out, &x, sizeof x); };
  switch (dtype) {
  case TG_DTYPE_BOOL:
    return put(uint8_t(v != 0));
  case TG_DTYPE_INT8:
    return put(int8_t(v));
  case TG_DTYPE_UINT8:
    return put(uint8_t(v));
  case TG_DTYPE_INT16:
    return put(int16_t(v));
  case TG_DTYPE_UINT16:
    return put(uint16_t(v));
  case TG_DTYPE_INT32:
    return put(int32_t(v));
  case TG_DTYPE_UINT32:
    return put(uint32_t(v));
  case TG_DTYPE_INT64:
    return put(int64_t(v));
  case TG_DTYPE_UINT64:
    return put(uint64_t(v));
  case TG_DTYPE_FLOAT16:
    return put(sdk::float_to_half_bits(v));
  case TG_DTYPE_BFLOAT16:
    return put(sdk::float_to_bfloat16_bits(float(v)));
  case TG_DTYPE_FLOAT32:
    return put(float(v));
  case TG_DTYPE_FLOAT64:
    return put(v);
  default:
    throw CaseFailed("no encoding for dtype " + std::to_string(dtype));
  }
}

// Rank r's element k: 0..7 (bool: 0 or 1), so three ranks sum to at most 21 in any dtype.
double value(tg_dtype dtype, int r, uint64_t k) {
  return dtype == TG_DTYPE_BOOL ? double((uint64_t(r) + k) % 2) : double((uint64_t(r) * 3 + k) % 8);
}

std::vector<std::byte> encoded(tg_dtype dtype, const std::vector<double>& values) {
  size_t e = sdk::dtype_size(dtype);
  std::vector<std::byte> out(values.size() * e);
  for (size_t i = 0; i < values.size(); ++i) encode(dtype, values[i], out.data() + i * e);
  return out;
}

std::vector<tg_dtype> group_dtypes(const std::vector<std::unique_ptr<Device>>& group) {
  std::vector<tg_dtype> out;
  for (tg_dtype d = TG_DTYPE_BOOL; d < TG_DTYPE_COUNT; ++d)
    if (std::all_of(group.begin(), group.end(),
                    [&](const auto& dev) { return (dev->properties().dtype_mask & TG_DTYPE_BIT(d)) != 0; }))
      out.push_back(d);
  return out;
}

Status run(const std::vector<std::unique_ptr<Device>>& group, int32_t op, int32_t reduce, tg_dtype dtype,
           uint64_t count, const std::vector<tg_buffer_arg>& in, const std::vector<tg_buffer_arg>& out,
           int32_t root = 0) {
  std::vector<tg_device*> devices;
  for (const auto& d : group) devices.push_back(d->get());
  tg_collective_args a{};
  a.struct_size = sizeof a;
  a.op = op;
  a.reduce = reduce;
  a.dtype = dtype;
  a.root = root;
  a.count = count;
  a.device_count = uint32_t(devices.size());
  a.devices = devices.data();
  a.inputs = in.data();
  a.outputs = out.data();
  Status s = take(api().collective(&a));
  for (const auto& d : group) synchronize(*d);
  return s;
}

const char* op_name(int32_t op, int32_t reduce) {
  if (op == TG_COLLECTIVE_ALL_REDUCE) return reduce == TG_REDUCE_SUM ? "all_reduce(sum)" : "all_reduce(max)";
  return op == TG_COLLECTIVE_ALL_GATHER ? "all_gather" : "broadcast";
}

// One collective over n devices in every dtype, in place and into separate outputs (an odd count
// at an element offset, so sizes and offsets are not all round).
void collective_case(const Context& ctx, int32_t n, int32_t op, int32_t reduce) {
  need_collective();
  auto group = open_group(ctx, n);
  constexpr uint64_t count = 1001, skip = 3; // elements; `skip` before each range
  const int32_t root = n - 1;
  const uint64_t out_count = op == TG_COLLECTIVE_ALL_GATHER ? count * uint64_t(n) : count;
  for (tg_dtype dtype : group_dtypes(group)) {
    const size_t e = sdk::dtype_size(dtype);
    // The reference: what every rank's output holds.
    std::vector<double> want(out_count);
    for (uint64_t k = 0; k < out_count; ++k) {
      if (op == TG_COLLECTIVE_ALL_GATHER) {
        want[k] = value(dtype, int(k / count), k % count);
      } else if (op == TG_COLLECTIVE_BROADCAST) {
        want[k] = value(dtype, root, k);
      } else {
        double acc = value(dtype, 0, k);
        for (int r = 1; r < n; ++r)
          acc = reduce == TG_REDUCE_MAX || dtype == TG_DTYPE_BOOL ? std::max(acc, value(dtype, r, k))
                                                                  : acc + value(dtype, r, k);
        want[k] = acc;
      }
    }
    const std::vector<std::byte> want_bytes = encoded(dtype, want);
    for (bool in_place : {true, false}) {
      std::vector<Buffer> ins, outs;
      std::vector<tg_buffer_arg> in_args, out_args;
      ins.reserve(size_t(n));
      outs.reserve(size_t(n));
      for (int r = 0; r < n; ++r) {
        std::vector<double> mine(count);
        for (uint64_t k = 0; k < count; ++k) mine[k] = value(dtype, r, k);
        const uint64_t out_bytes = (out_count + skip) * e;
        outs.emplace_back(*group[size_t(r)], out_bytes);
        outs.back().upload(std::vector<std::byte>(out_bytes, std::byte{0}));
        // In place: the input is the output's own range (all-gather: its rank's part).
        uint64_t in_offset = skip * e + (op == TG_COLLECTIVE_ALL_GATHER ? uint64_t(r) * count * e : 0);
        if (in_place) {
          outs.back().upload(encoded(dtype, mine), in_offset);
          in_args.push_back({outs.back().get(), in_offset});
        } else {
          ins.emplace_back(*group[size_t(r)], (count + skip) * e);
          ins.back().upload(encoded(dtype, mine), skip * e);
          in_args.push_back({ins.back().get(), skip * e});
        }
        out_args.push_back({outs.back().get(), skip * e});
      }
      std::string what = std::string(op_name(op, reduce)) + " of " + std::to_string(count) + " " +
                         sdk::dtype_name(dtype) + " over " + std::to_string(n) + " devices" +
                         (in_place ? " in place" : "");
      Status s = run(group, op, reduce, dtype, count, in_args, out_args, root);
      if (s.code == TG_ERROR_UNIMPLEMENTED) continue; // the plugin declines this dtype: the host falls back
      expect(s.ok(), what + " failed: " + s.describe());
      for (int r = 0; r < n; ++r) {
        auto got = outs[size_t(r)].download(out_count * e, skip * e);
        expect(got == want_bytes,
               what + ": rank " + std::to_string(r) + "'s output differs from the reference");
        auto head = outs[size_t(r)].download(skip * e);
        expect(std::all_of(head.begin(), head.end(), [](std::byte b) { return b == std::byte{0}; }),
               what + ": rank " + std::to_string(r) + " wrote before its offset");
      }
    }
  }
}

// Both ways between two devices at offsets, then out-of-range and NULL arguments.
void peer_copy_case(const Context& ctx) {
  need_peer_copy();
  auto group = open_group(ctx, 2);
  std::vector<std::byte> data(4099);
  for (size_t i = 0; i < data.size(); ++i) data[i] = std::byte(i * 7 + 1);
  Buffer a(*group[0], 5000), b(*group[1], 5000);
  a.upload(data, 10);
  b.upload(std::vector<std::byte>(5000, std::byte{0}));
  tg_peer_copy_args args{sizeof(tg_peer_copy_args), b.get(), 100, a.get(), 10, data.size()};
  check(api().peer_copy(&args),
        "peer_copy(4099 bytes, device " + std::to_string(ctx.device_index) + " -> other)");
  synchronize(*group[1]);
  expect(b.download(data.size(), 100) == data, "peer_copy: the destination differs from the source");
  Buffer c(*group[0], 4099);
  tg_peer_copy_args back{sizeof(tg_peer_copy_args), c.get(), 0, b.get(), 100, data.size()};
  check(api().peer_copy(&back), "peer_copy back");
  synchronize(*group[0]);
  expect(c.download(data.size()) == data, "peer_copy back: the destination differs from the source");
  // A newer host's args (larger struct_size, zero tail) are accepted.
  std::vector<std::byte> raw(sizeof(tg_peer_copy_args) + 24, std::byte{0});
  tg_peer_copy_args small{raw.size(), c.get(), 0, b.get(), 100, 16};
  std::memcpy(raw.data(), &small, sizeof small);
  check(api().peer_copy(reinterpret_cast<const tg_peer_copy_args*>(raw.data())),
        "peer_copy with a larger struct_size");
  tg_peer_copy_args zero{sizeof(tg_peer_copy_args), c.get(), 4099, b.get(), 5000, 0};
  check(api().peer_copy(&zero), "peer_copy of 0 bytes at the buffers' ends");
  tg_peer_copy_args past{sizeof(tg_peer_copy_args), c.get(), 1, b.get(), 0, 4099};
  expect_code(api().peer_copy(&past), TG_ERROR_INVALID_ARGUMENT, "peer_copy past the destination's end");
  tg_peer_copy_args null_dst{sizeof(tg_peer_copy_args), nullptr, 0, b.get(), 0, 1};
  expect_code(api().peer_copy(&null_dst), TG_ERROR_INVALID_ARGUMENT, "peer_copy to a NULL buffer");
  expect_code(api().peer_copy(nullptr), TG_ERROR_INVALID_ARGUMENT, "peer_copy(NULL)");
  expect(c.download(data.size()) == data, "a rejected peer_copy changed the destination");
}

// Launches on each device, then an all-reduce of what they wrote, with no synchronize between:
// the collective must see the launches' results (the ordering rule).
void ordered_after_launches(const Context& ctx) {
  need_collective();
  if (!TG_CONFORM_HAS(compile) || !TG_CONFORM_HAS(program_load) || !TG_CONFORM_HAS(launch))
    throw CaseSkipped("the plugin cannot launch");
  auto group = open_group(ctx, 2);
  constexpr uint32_t n = 4096;
  auto binary = compile_or_fail(scale_kernel_ir(), target_of(ctx));
  std::vector<Buffer> a, out;
  std::vector<std::unique_ptr<Program>> programs;
  for (int r = 0; r < 2; ++r) {
    const Device& d = *group[size_t(r)];
    a.emplace_back(d, n * 4);
    out.emplace_back(d, n * 4);
    std::vector<float> values(n, float(r + 1));
    a.back().upload(std::as_bytes(std::span(values)));
    programs.push_back(std::make_unique<Program>(d, binary));
  }
  for (int r = 0; r < 2; ++r) {
    Status s = programs[size_t(r)]->try_launch(
        {n, 1, 1}, {1, 1, 1}, {{a[size_t(r)].get(), 0}, {out[size_t(r)].get(), 0}}, {scalar_f32(2.0f)});
    expect(s.ok(), "launch: " + s.describe());
  }
  std::vector<tg_buffer_arg> args{{out[0].get(), 0}, {out[1].get(), 0}};
  Status s = run(group, TG_COLLECTIVE_ALL_REDUCE, TG_REDUCE_SUM, TG_DTYPE_FLOAT32, n, args, args);
  expect(s.ok(), "all_reduce after launches: " + s.describe());
  for (int r = 0; r < 2; ++r) {
    auto bytes = out[size_t(r)].download(n * 4);
    std::vector<float> got(n);
    std::memcpy(got.data(), bytes.data(), bytes.size());
    expect(std::all_of(got.begin(), got.end(), [](float v) { return v == 6.0f; }),
           "the all-reduce did not see the launches' results on rank " + std::to_string(r) +
               " (want 2*1 + 2*2 = 6)");
  }
}

// Every malformed group or argument is INVALID_ARGUMENT and changes nothing.
void bad_collectives(const Context& ctx) {
  need_collective();
  auto group = open_group(ctx, 2);
  std::vector<float> ones(8, 1.0f);
  Buffer a(*group[0], 32), b(*group[1], 32), a2(*group[0], 32);
  for (Buffer* x : {&a, &b, &a2}) x->upload(std::as_bytes(std::span(ones)));
  const std::vector<tg_buffer_arg> good{{a.get(), 0}, {b.get(), 0}};
  auto bad = [&](const std::string& what, auto&& edit) {
    std::vector<tg_device*> devices{group[0]->get(), group[1]->get()};
    std::vector<tg_buffer_arg> in = good, out = good;
    tg_collective_args c{sizeof(tg_collective_args),
                         TG_COLLECTIVE_ALL_REDUCE,
                         TG_REDUCE_SUM,
                         TG_DTYPE_FLOAT32,
                         0,
                         8,
                         2,
                         0,
                         devices.data(),
                         nullptr,
                         nullptr,
                         nullptr};
    edit(c, devices, in, out);
    if (c.inputs == nullptr && c.outputs == nullptr) {
      c.inputs = in.data();
      c.outputs = out.data();
    }
    expect_code(api().collective(&c), TG_ERROR_INVALID_ARGUMENT, "collective with " + what);
  };
  using D = std::vector<tg_device*>;
  using A = std::vector<tg_buffer_arg>;
  bad("device_count 0", [](tg_collective_args& c, D&, A&, A&) { c.device_count = 0; });
  bad("a repeated device", [](tg_collective_args&, D& d, A& in, A& out) {
    d[1] = d[0];
    (void)in;
    (void)out;
  });
  bad("an input on another device", [&](tg_collective_args&, D&, A& in, A&) { in[1] = {a2.get(), 0}; });
  bad("a count past the buffers' end", [](tg_collective_args& c, D&, A&, A&) { c.count = 9; });
  bad("an unaligned offset", [](tg_collective_args& c, D&, A& in, A& out) {
    c.count = 4;
    in[0].offset = out[0].offset = 2;
  });
  bad("op 7", [](tg_collective_args& c, D&, A&, A&) { c.op = 7; });
  bad("reduce 5", [](tg_collective_args& c, D&, A&, A&) { c.reduce = 5; });
  bad("dtype VOID", [](tg_collective_args& c, D&, A&, A&) { c.dtype = TG_DTYPE_VOID; });
  bad("a broadcast root outside the group", [](tg_collective_args& c, D&, A&, A&) {
    c.op = TG_COLLECTIVE_BROADCAST;
    c.root = 2;
  });
  bad("NULL devices", [](tg_collective_args& c, D&, A&, A&) { c.devices = nullptr; });
  bad("a NULL buffer", [](tg_collective_args&, D&, A& in, A&) { in[0].buffer = nullptr; });
  bad("all_gather outputs too small",
      [](tg_collective_args& c, D&, A&, A&) { c.op = TG_COLLECTIVE_ALL_GATHER; });
  expect_code(api().collective(nullptr), TG_ERROR_INVALID_ARGUMENT, "collective(NULL)");
  for (Buffer* x : {&a, &b, &a2}) {
    auto bytes = x->download(32);
    expect(std::memcmp(bytes.data(), ones.data(), 32) == 0, "a rejected collective changed a buffer");
  }
}

// A communicator of one rank (comm_unique_id, comm_init, comm_destroy): each collective copies
// its input into its output in every dtype; bad ranks, sizes and groups are INVALID_ARGUMENT.
void comm_one_rank(const Context& ctx) {
  need_comm();
  need_collective();
  Device dev(ctx.device_index);
  tg_comm_init_args init{};
  init.struct_size = sizeof init;
  init.device = dev.get();
  init.rank = 0;
  init.size = 1;
  init.timeout_ms = 60000;
  expect(take(api().comm_unique_id(init.id, TG_COMM_ID_BYTES)).ok(), "comm_unique_id failed");
  expect_code(api().comm_unique_id(init.id, 7), TG_ERROR_INVALID_ARGUMENT, "comm_unique_id with id_size 7");
  for (auto [rank, size] : {std::pair{1, 1}, std::pair{-1, 2}, std::pair{0, 0}}) {
    tg_comm_init_args bad = init;
    bad.rank = rank;
    bad.size = size;
    tg_comm* none = nullptr;
    expect_code(api().comm_init(&bad, &none), TG_ERROR_INVALID_ARGUMENT,
                "comm_init of rank " + std::to_string(rank) + " of " + std::to_string(size));
  }
  tg_comm* comm = nullptr;
  Status s = take(api().comm_init(&init, &comm));
  expect(s.ok() && comm != nullptr, "comm_init of rank 0 of 1 failed: " + s.describe());
  std::unique_ptr<tg_comm, void (*)(tg_comm*)> owned(comm, api().comm_destroy);
  constexpr uint64_t count = 1001;
  tg_device* device = dev.get();
  for (tg_dtype dtype = TG_DTYPE_BOOL; dtype < TG_DTYPE_COUNT; ++dtype) {
    if ((dev.properties().dtype_mask & TG_DTYPE_BIT(dtype)) == 0) continue;
    const size_t e = sdk::dtype_size(dtype);
    std::vector<double> mine(count);
    for (uint64_t k = 0; k < count; ++k) mine[k] = value(dtype, 0, k);
    const std::vector<std::byte> want = encoded(dtype, mine);
    for (int32_t op : {TG_COLLECTIVE_ALL_REDUCE, TG_COLLECTIVE_ALL_GATHER, TG_COLLECTIVE_BROADCAST}) {
      Buffer in(dev, count * e), out(dev, count * e);
      in.upload(want);
      out.upload(std::vector<std::byte>(count * e, std::byte{0}));
      tg_buffer_arg in_arg{in.get(), 0}, out_arg{out.get(), 0};
      tg_collective_args a{};
      a.struct_size = sizeof a;
      a.op = op;
      a.dtype = dtype;
      a.count = count;
      a.device_count = 1;
      a.devices = &device;
      a.inputs = &in_arg;
      a.outputs = &out_arg;
      a.comm = comm;
      const std::string what = std::string(op_name(op, TG_REDUCE_SUM)) + " of " + sdk::dtype_name(dtype) +
                               " on a communicator of one rank";
      Status r = take(api().collective(&a));
      synchronize(dev);
      if (r.code == TG_ERROR_UNIMPLEMENTED) continue; // a dtype the plugin's library lacks
      expect(r.ok(), what + " failed: " + r.describe());
      expect(out.download(count * e) == want, what + ": the output is not the input");
      if (op != TG_COLLECTIVE_BROADCAST) continue;
      a.root = 1;
      expect_code(api().collective(&a), TG_ERROR_INVALID_ARGUMENT, "a broadcast from root 1 of 1 rank");
      a.root = 0;
      a.device_count = 2;
      expect_code(api().collective(&a), TG_ERROR_INVALID_ARGUMENT, "a collective on a comm naming 2 devices");
    }
  }
}

} // namespace

void add_multi_device_cases(std::vector<Case>& cases) {
  cases.push_back({"multi/peer_copy", true, peer_copy_case});
  for (int32_t n : {2, 3}) {
    std::string g = "_" + std::to_string(n) + "_devices";
    cases.push_back({"multi/all_reduce_sum" + g, true, [n](const Context& c) {
                       collective_case(c, n, TG_COLLECTIVE_ALL_REDUCE, TG_REDUCE_SUM);
                     }});
    cases.push_back({"multi/all_reduce_max" + g, true, [n](const Context& c) {
                       collective_case(c, n, TG_COLLECTIVE_ALL_REDUCE, TG_REDUCE_MAX);
                     }});
    cases.push_back({"multi/all_gather" + g, true,
                     [n](const Context& c) { collective_case(c, n, TG_COLLECTIVE_ALL_GATHER, 0); }});
    cases.push_back({"multi/broadcast" + g, true,
                     [n](const Context& c) { collective_case(c, n, TG_COLLECTIVE_BROADCAST, 0); }});
  }
  cases.push_back({"multi/collective_ordered_after_launches", true, ordered_after_launches});
  cases.push_back({"multi/bad_collectives_are_invalid_arguments", true, bad_collectives});
  cases.push_back({"multi/comm_one_rank", true, comm_one_rank});
}

} // namespace tg::conform
