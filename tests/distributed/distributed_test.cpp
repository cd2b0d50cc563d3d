// Collectives across processes, run as `mpirun -np 2 distributed_test` (each rank runs every case;
// the values depend on the rank, so each rank checks the combination of both against
// hand-computed results): the World under MPI, the runtime's Communicator over the CPU plugin's
// MPI entries for every dtype (half and bfloat16 by their bit patterns, integer wrap, NaN in max),
// in place and at offsets; ProcessGroup on tensors; and the data-parallel helpers against a
// single-process reference (the gradient of the whole batch, which every rank can compute).
#include "kernel/distributed/data_parallel.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/runtime/errors.hpp"
#include "kernel/tensor/nn.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace {

using namespace tg;
using namespace tg::dtypes;
namespace dist = tg::distributed;

constexpr int kRanks = 2;

const dist::World& world() {
  const dist::World& w = dist::init();
  BOOST_TEST_REQUIRE(w.size == kRanks, "run under mpirun -np " << kRanks << " (size " << w.size << ")");
  return w;
}

std::shared_ptr<Device> cpu() { return open_device("CPU").device; }

// One communicator for the whole run, as a program would keep one.
Communicator& comm() {
  static Communicator c = [] {
    const dist::World& w = world();
    std::array<std::byte, TG_COMM_ID_BYTES> id{};
    if (w.rank == 0) id = Communicator::unique_id(*cpu());
    dist::broadcast_bytes(id);
    return Communicator(cpu(), w.rank, w.size, id, std::chrono::seconds(60));
  }();
  return c;
}

template <class T> Buffer upload(const std::vector<T>& values, uint64_t extra_bytes = 0) {
  Buffer b = cpu()->alloc(values.size() * sizeof(T) + extra_bytes);
  std::vector<std::byte> bytes(b.size());
  std::memcpy(bytes.data(), values.data(), values.size() * sizeof(T));
  b.copy_from_host(bytes);
  return b;
}

template <class T> std::vector<T> download(const Buffer& b, size_t count, uint64_t offset = 0) {
  std::vector<T> out(count);
  b.copy_to_host({reinterpret_cast<std::byte*>(out.data()), count * sizeof(T)}, offset);
  return out;
}

// Rank r holds (i + 1) * (r + 1): the sum over both ranks is 3 (i + 1), the max 2 (i + 1).
template <class T> void check_integer_all_reduce(DType dt) {
  const int r = world().rank;
  std::vector<T> mine, sum, max;
  for (int i = 0; i < 5; ++i) {
    mine.push_back(T((i + 1) * (r + 1)));
    sum.push_back(T(3 * (i + 1)));
    max.push_back(T(2 * (i + 1)));
  }
  Buffer a = upload(mine), b = upload(mine);
  comm().all_reduce({&a, 0}, {&a, 0}, dt, mine.size(), CollectiveReduce::sum); // in place
  comm().all_reduce({&b, 0}, {&b, 0}, dt, mine.size(), CollectiveReduce::max);
  BOOST_TEST(download<T>(a, 5) == sum, boost::test_tools::per_element());
  BOOST_TEST(download<T>(b, 5) == max, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(world_under_mpi) {
  const dist::World& w = world();
  BOOST_TEST(w.launcher == "mpi");
  BOOST_TEST((w.rank == 0 || w.rank == 1));
  BOOST_TEST(w.local_size == kRanks); // one host
  BOOST_TEST(w.local_rank == w.rank);
  BOOST_TEST(&dist::init() == &w); // once per process
  dist::barrier();
}

BOOST_AUTO_TEST_CASE(bytes_broadcast_from_either_rank) {
  const int r = world().rank;
  std::vector<std::byte> bytes(300, std::byte(r == 1 ? 7 : 0));
  dist::broadcast_bytes(bytes, 1);
  BOOST_TEST((bytes == std::vector<std::byte>(300, std::byte(7))));
  BOOST_CHECK_THROW(dist::broadcast_bytes(bytes, 2), dist::DistributedError);
}

BOOST_AUTO_TEST_CASE(all_reduce_every_integer_dtype) {
  check_integer_all_reduce<int8_t>(int8);
  check_integer_all_reduce<uint8_t>(uint8);
  check_integer_all_reduce<int16_t>(int16);
  check_integer_all_reduce<uint16_t>(uint16);
  check_integer_all_reduce<int32_t>(int32);
  check_integer_all_reduce<uint32_t>(uint32);
  check_integer_all_reduce<int64_t>(int64);
  check_integer_all_reduce<uint64_t>(uint64);
}

BOOST_AUTO_TEST_CASE(integer_sums_wrap_and_max_is_signed) {
  const int r = world().rank;
  Buffer a = upload(std::vector<int8_t>{100, -100}),
         b = upload(std::vector<int8_t>{int8_t(r == 0 ? -5 : -7)});
  comm().all_reduce({&a, 0}, {&a, 0}, int8, 2, CollectiveReduce::sum);
  comm().all_reduce({&b, 0}, {&b, 0}, int8, 1, CollectiveReduce::max);
  BOOST_TEST(download<int8_t>(a, 2) == (std::vector<int8_t>{-56, 56}), boost::test_tools::per_element());
  BOOST_TEST(download<int8_t>(b, 1)[0] == -5);
}

BOOST_AUTO_TEST_CASE(bool_reductions_are_or) {
  const int r = world().rank;
  std::vector<uint8_t> mine = r == 0 ? std::vector<uint8_t>{1, 0, 0, 1} : std::vector<uint8_t>{0, 0, 1, 1};
  Buffer a = upload(mine), b = upload(mine);
  comm().all_reduce({&a, 0}, {&a, 0}, bool_, 4, CollectiveReduce::sum);
  comm().all_reduce({&b, 0}, {&b, 0}, bool_, 4, CollectiveReduce::max);
  const std::vector<uint8_t> either{1, 0, 1, 1};
  BOOST_TEST(download<uint8_t>(a, 4) == either, boost::test_tools::per_element());
  BOOST_TEST(download<uint8_t>(b, 4) == either, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(float_all_reduce_keeps_nan_in_max) {
  const int r = world().rank;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> mine =
      r == 0 ? std::vector<float>{1.5f, nan, -2.0f} : std::vector<float>{2.25f, 1.0f, -3.0f};
  Buffer a = upload(mine), b = upload(mine);
  comm().all_reduce({&a, 0}, {&a, 0}, float32, 3, CollectiveReduce::sum);
  comm().all_reduce({&b, 0}, {&b, 0}, float32, 3, CollectiveReduce::max);
  std::vector<float> s = download<float>(a, 3), m = download<float>(b, 3);
  BOOST_TEST(s[0] == 3.75f);
  BOOST_TEST(std::isnan(s[1]));
  BOOST_TEST(s[2] == -5.0f);
  BOOST_TEST(m[0] == 2.25f);
  BOOST_TEST(std::isnan(m[1]));
  BOOST_TEST(m[2] == -2.0f);
  std::vector<double> d = {double(r) + 0.5};
  Buffer c = upload(d);
  comm().all_reduce({&c, 0}, {&c, 0}, float64, 1, CollectiveReduce::sum);
  BOOST_TEST(download<double>(c, 1)[0] == 2.0);
}

BOOST_AUTO_TEST_CASE(half_and_bfloat16_by_bit_pattern) {
  const int r = world().rank;
  // float16: 1.0 = 0x3C00, 2.0 = 0x4000, 3.0 = 0x4200; bfloat16: 1.0 = 0x3F80, 2.0 = 0x4000, 3.0 = 0x4040
  Buffer h = upload(std::vector<uint16_t>{uint16_t(r == 0 ? 0x3C00 : 0x4000)});
  Buffer hm = upload(std::vector<uint16_t>{uint16_t(r == 0 ? 0x3C00 : 0x4000)});
  Buffer bf = upload(std::vector<uint16_t>{uint16_t(r == 0 ? 0x3F80 : 0x4000)});
  comm().all_reduce({&h, 0}, {&h, 0}, float16, 1, CollectiveReduce::sum);
  comm().all_reduce({&hm, 0}, {&hm, 0}, float16, 1, CollectiveReduce::max);
  comm().all_reduce({&bf, 0}, {&bf, 0}, bfloat16, 1, CollectiveReduce::sum);
  BOOST_TEST(download<uint16_t>(h, 1)[0] == 0x4200);
  BOOST_TEST(download<uint16_t>(hm, 1)[0] == 0x4000);
  BOOST_TEST(download<uint16_t>(bf, 1)[0] == 0x4040);
}

BOOST_AUTO_TEST_CASE(out_of_place_at_offsets) {
  const int r = world().rank;
  // input at byte 8 of its buffer, output at byte 4 of another
  Buffer in = upload(std::vector<int32_t>{-1, -1, 10 * (r + 1), 20 * (r + 1)});
  Buffer out = upload(std::vector<int32_t>{7, 0, 0, 7});
  comm().all_reduce({&in, 8}, {&out, 4}, int32, 2, CollectiveReduce::sum);
  BOOST_TEST(download<int32_t>(out, 4) == (std::vector<int32_t>{7, 30, 60, 7}),
             boost::test_tools::per_element());
  BOOST_TEST(download<int32_t>(in, 4)[2] == 10 * (r + 1)); // the input is left as it was
}

BOOST_AUTO_TEST_CASE(all_gather_in_rank_order) {
  const int r = world().rank;
  Buffer in = upload(std::vector<int32_t>{10 * r, 10 * r + 1, 10 * r + 2});
  Buffer out = cpu()->alloc(6 * sizeof(int32_t));
  comm().all_gather({&in, 0}, {&out, 0}, int32, 3);
  const std::vector<int32_t> all{0, 1, 2, 10, 11, 12};
  BOOST_TEST(download<int32_t>(out, 6) == all, boost::test_tools::per_element());
  // in place: the input already is the rank's part of the output
  std::vector<int32_t> mine(6, -1);
  for (int i = 0; i < 3; ++i) mine[size_t(3 * r + i)] = 10 * r + i;
  Buffer both = upload(mine);
  comm().all_gather({&both, uint64_t(12 * r)}, {&both, 0}, int32, 3);
  BOOST_TEST(download<int32_t>(both, 6) == all, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(broadcast_from_rank_one) {
  const int r = world().rank;
  Buffer in = upload(std::vector<float>{float(r), float(r) + 0.5f});
  Buffer out = upload(std::vector<float>{-1, -1});
  comm().broadcast({&in, 0}, {&out, 0}, 1, float32, 2);
  BOOST_TEST(download<float>(out, 2) == (std::vector<float>{1.0f, 1.5f}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(bad_calls_fail_on_the_calling_rank_before_any_message) {
  Buffer small = cpu()->alloc(8);
  Buffer other = cpu()->alloc(64);
  // an output that cannot hold size * count elements, a root outside the ranks
  BOOST_CHECK_THROW(comm().all_gather({&other, 0}, {&small, 0}, int32, 2), InvalidArgumentError);
  BOOST_CHECK_THROW(comm().broadcast({&other, 0}, {&other, 0}, 2, int32, 1), InvalidArgumentError);
  BOOST_CHECK_THROW(comm().all_reduce({&other, 60}, {&other, 60}, int32, 2, CollectiveReduce::sum),
                    InvalidArgumentError);
  // nothing was sent: the ranks are still in step
  Buffer x = upload(std::vector<int32_t>{1});
  comm().all_reduce({&x, 0}, {&x, 0}, int32, 1, CollectiveReduce::sum);
  BOOST_TEST(download<int32_t>(x, 1)[0] == 2);
}

BOOST_AUTO_TEST_CASE(process_group_on_tensors) {
  const int r = world().rank;
  dist::ProcessGroup group("CPU");
  BOOST_TEST(group.rank() == r);
  BOOST_TEST(group.size() == kRanks);
  // a transposed (strided) view is made contiguous first
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}) * float(r + 1);
  Tensor sum = group.all_reduce(x.transpose(0, 1));
  BOOST_TEST(sum.shape() == (Dims{3, 2}));
  BOOST_TEST(sum.to_vector<float>() == (std::vector<float>{3, 12, 6, 15, 9, 18}),
             boost::test_tools::per_element());
  Tensor gathered = group.all_gather(Tensor::from_vector<int32_t>({r}, {}));
  BOOST_TEST(gathered.to_vector<int32_t>() == (std::vector<int32_t>{0, 1}), boost::test_tools::per_element());
  Tensor rows = group.all_gather(Tensor::from_vector<float>({float(r), float(r)}, {1, 2}));
  BOOST_TEST(rows.shape() == (Dims{2, 2}));
  Tensor from_one = group.broadcast(Tensor::from_vector<float>({float(r) * 10}, {1}), 1);
  BOOST_TEST(from_one.item<float>() == 10.0f);
  BOOST_TEST(group.all_reduce(Tensor::zeros({0, 3})).shape() == (Dims{0, 3})); // empty: no call
  BOOST_CHECK_THROW(group.all_reduce(Tensor::ones({2}, float32, "CPU:1")), dist::DistributedError);
}

// A plugin without communicators (OpenCL, PoCL here): every rank fails at once, rank 0 with the
// plugin's reason and the others told that rank 0 made no id, instead of waiting for the timeout.
BOOST_AUTO_TEST_CASE(a_plugin_without_communicators_fails_on_every_rank) {
  const int r = world().rank;
  BOOST_CHECK_EXCEPTION(
      dist::ProcessGroup("OPENCL"), dist::DistributedError, [&](const dist::DistributedError& e) {
        const std::string m = e.what();
        return m.find("cannot join a process group on OPENCL") != std::string::npos &&
               m.find(r == 0 ? "comm_unique_id" : "rank 0 could not make the communicator's id") !=
                   std::string::npos;
      });
  dist::barrier(); // still in step
}

// A two-layer net; rank r trains on rows [4r, 4r + 4) of an 8-row batch, each loss scaled by
// its share (1/2). The summed gradients must equal the whole batch's gradient, computed here
// on each rank alone.
BOOST_AUTO_TEST_CASE(summed_gradients_equal_the_whole_batch_gradient) {
  const int r = world().rank;
  dist::ProcessGroup group("CPU");
  Tensor::manual_seed(42);
  nn::Linear l1(3, 4), l2(4, 2);
  std::vector<Tensor> params{l1.weight, *l1.bias, l2.weight, *l2.bias};
  std::vector<float> xs, ys;
  for (int i = 0; i < 8 * 3; ++i) xs.push_back(std::sin(float(i)));
  for (int i = 0; i < 8 * 2; ++i) ys.push_back(std::cos(float(i)));
  Tensor x = Tensor::from_vector(xs, {8, 3}), y = Tensor::from_vector(ys, {8, 2});
  auto loss_of = [&](const Tensor& xb, const Tensor& yb) { return (l2(l1(xb).relu()) - yb).square().mean(); };

  loss_of(x, y).backward(); // the reference: the whole batch on one process
  std::vector<std::vector<float>> whole;
  for (auto& p : params) {
    whole.push_back(p.grad()->to_vector<float>());
    p.zero_grad();
  }
  Tensor part =
      (loss_of(x.shrink({{4 * r, 4 * r + 4}, {0, 3}}), y.shrink({{4 * r, 4 * r + 4}, {0, 2}})) * 0.5);
  part.backward();
  dist::all_reduce_gradients(params, group, 64); // small buckets: several all-reduces
  for (size_t i = 0; i < params.size(); ++i) {
    std::vector<float> got = params[i].grad()->to_vector<float>();
    BOOST_TEST_REQUIRE(got.size() == whole[i].size());
    for (size_t k = 0; k < got.size(); ++k)
      BOOST_TEST(got[k] == whole[i][k], boost::test_tools::tolerance(1e-5f));
  }
  // a gradient present on one rank only is named, on both ranks
  for (auto& p : params) p.zero_grad();
  if (r == 1) params[0].set_grad(Tensor::ones(params[0].shape()));
  BOOST_CHECK_EXCEPTION(dist::all_reduce_gradients(params, group), dist::DistributedError,
                        [](const dist::DistributedError& e) {
                          return std::string(e.what()).find("parameter #0") != std::string::npos &&
                                 std::string(e.what()).find("1 of 2 ranks") != std::string::npos;
                        });
}

BOOST_AUTO_TEST_CASE(replicas_start_from_rank_zero_and_differences_are_caught) {
  const int r = world().rank;
  dist::ProcessGroup group("CPU");
  std::vector<Tensor> params{Tensor::full({3}, float(r + 1)).contiguous(),
                             Tensor::full({2, 2}, 5.0f).contiguous()};
  for (auto& p : params) p.realize();
  dist::broadcast_parameters(params, group);
  BOOST_TEST(params[0].to_vector<float>() == (std::vector<float>{1, 1, 1}), boost::test_tools::per_element());
  dist::check_replicas(params, group, "after the broadcast"); // passes: identical
  if (r == 1) params[1].assign(params[1] + 1e-6f).realize();
  BOOST_CHECK_EXCEPTION(dist::check_replicas(params, group, "after step 3"), dist::DistributedError,
                        [](const dist::DistributedError& e) {
                          const std::string m = e.what();
                          return m.find("after step 3") != std::string::npos &&
                                 m.find("parameter #1") != std::string::npos &&
                                 m.find("rank 1") != std::string::npos;
                        });
}

} // namespace
