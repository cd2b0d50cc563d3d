// MultiTensor (kernel/tensor/multi.hpp) on two devices, $TG_MULTI_DEVICES (e.g. CUDA:0,CUDA:1;
// default the CPU plugin's logical devices CPU:0,CPU:1), against the same computation on the
// first one alone and hand-computed values: shard/replicate
// round trips, elementwise ops, reductions, movement, matmul layouts, gradients through the
// collectives, optimizer steps keeping replicated weights identical, and the typed errors.
#include "kernel/runtime/devices.hpp"
#include "kernel/runtime/errors.hpp"
#include "kernel/tensor/multi.hpp"
#include "kernel/tensor/optim.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace tg;

std::vector<std::string> devices_under_test() {
  const char* env = std::getenv("TG_MULTI_DEVICES");
  std::vector<std::string> out;
  std::stringstream in(env && *env ? env : "CPU:0,CPU:1");
  for (std::string name; std::getline(in, name, ',');)
    if (!name.empty()) out.push_back(name);
  return out;
}

const std::vector<std::string> kTwo = devices_under_test();

// Says which devices ran; unavailable ones (no GPU here) skip the suite (exit 77), never pass it.
struct DevicesUnderTest {
  DevicesUnderTest() {
    BOOST_TEST_REQUIRE(kTwo.size() == 2u, "TG_MULTI_DEVICES names two devices");
    std::cout << "devices under test: " << kTwo[0] << "," << kTwo[1] << std::endl;
    try {
      for (const auto& d : kTwo) (void)open_device(d);
    } catch (const DeviceUnavailableError& e) {
      std::cout << "skipped: unavailable: " << e.what() << std::endl;
      std::_Exit(77);
    }
  }
};
BOOST_TEST_GLOBAL_FIXTURE(DevicesUnderTest);

Tensor numbers(Dims shape, float scale = 1, float offset = 0) {
  std::vector<float> v(size_t(dims_prod(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(float(i) * 0.7f + offset) * scale;
  return Tensor::from_vector(v, shape, std::nullopt, kTwo[0]);
}

void check_close(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  BOOST_REQUIRE_EQUAL(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    BOOST_CHECK_MESSAGE(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i])),
                        "element " << i << ": " << got[i] << " vs " << want[i]);
}

void check_close(const MultiTensor& got, const Tensor& want, float tol = 1e-5f) {
  BOOST_CHECK(got.shape() == want.shape());
  check_close(got.to_vector<float>(), want.to_vector<float>(), tol);
}

// Every shard of a replicated tensor holds the same bits.
void check_identical_shards(const MultiTensor& m) {
  BOOST_REQUIRE(m.replicated());
  std::vector<float> first = m.shards()[0].to_vector<float>();
  for (const auto& s : m.shards()) BOOST_CHECK(s.to_vector<float>() == first);
}

} // namespace

BOOST_AUTO_TEST_SUITE(multi)

BOOST_AUTO_TEST_CASE(shard_and_replicate_round_trip) {
  Tensor t = numbers({4, 6});
  for (int64_t axis : {0, 1, -1}) {
    MultiTensor m = t.shard(kTwo, axis);
    BOOST_CHECK(m.shape() == t.shape());
    BOOST_CHECK_EQUAL(*m.axis(), axis < 0 ? 1 : axis);
    BOOST_CHECK_EQUAL(m.shards()[1].device(), kTwo[1]);
    check_close(m, t, 0);
    // each shard holds its part
    std::vector<std::pair<int64_t, int64_t>> second{{0, 4}, {0, 6}};
    second[size_t(*m.axis())] =
        *m.axis() == 0 ? std::pair<int64_t, int64_t>{2, 4} : std::pair<int64_t, int64_t>{3, 6};
    check_close(m.shards()[1].to_vector<float>(), t.shrink(second).to_vector<float>(), 0);
  }
  MultiTensor r = t.to(kTwo);
  BOOST_CHECK(r.replicated());
  check_identical_shards(r);
  check_close(r.to(kTwo[1]).to_vector<float>(), t.to_vector<float>(), 0);
  BOOST_CHECK_EQUAL(t.shard(kTwo, 0).str(),
                    "<MultiTensor (4, 6) float axis 0 on " + t.device() + "," + kTwo[1] + ">");
}

// A constant-only expression has no device in its nodes: realizing it on one device must not
// hand that device's buffer to the same expression on another.
BOOST_AUTO_TEST_CASE(constants_realize_on_each_device) {
  Tensor a = Tensor::full({3}, 2.5, dtypes::float32, kTwo[0]).realize();
  Tensor b = Tensor::full({3}, 2.5, dtypes::float32, kTwo[1]).realize();
  MultiTensor total = all_reduce({a, b}); // copies from each tensor's own buffer
  check_close(total.to_vector<float>(), {5, 5, 5}, 0);
}

// A collective records itself for backward only where a gradient can flow back: a replica of a
// detached value, or one made under NoGrad, is a plain buffer (no gradient node to keep alive).
BOOST_AUTO_TEST_CASE(collectives_record_only_where_gradients_flow) {
  Tensor w = numbers({2, 3}).contiguous().realize();
  w.requires_grad_();
  auto is_plain = [](const MultiTensor& m) {
    for (const auto& s : m.shards())
      if (s.requires_grad() || !s.schedule().empty() || s.uop()->op() == Ops::NOOP) return false;
    return true;
  };
  BOOST_CHECK(is_plain(w.detach().to(kTwo)));
  {
    Tensor::NoGrad no_grad;
    BOOST_CHECK(is_plain(w.to(kTwo)));
  }
  MultiTensor recorded = w.to(kTwo);
  BOOST_CHECK(!is_plain(recorded));
  recorded.sum().backward();
  check_close(w.grad()->to_vector<float>(), std::vector<float>(6, 1.0f), 1e-6f);
}

BOOST_AUTO_TEST_CASE(bad_layouts_give_typed_errors) {
  Tensor t = numbers({3, 4});
  BOOST_CHECK_THROW(t.shard(kTwo, 0), MultiTensorError);               // 3 rows over 2 devices
  BOOST_CHECK_THROW(t.shard({kTwo[0], kTwo[0]}, 1), MultiTensorError); // a device twice
  BOOST_CHECK_THROW(t.shard({}, 1), MultiTensorError);                 // no devices
  BOOST_CHECK_THROW(t.shard(kTwo, 2), MultiTensorError);               // no such axis
  BOOST_CHECK_THROW(t.shard({"NOSUCHDEVICE:0", kTwo[1]}, 1), Error);   // cannot open
  MultiTensor rows = numbers({4, 4}).shard(kTwo, 0), cols = numbers({4, 4}).shard(kTwo, 1);
  BOOST_CHECK_THROW(rows + cols, MultiTensorError); // mismatched axes
  BOOST_CHECK_THROW(rows + numbers({4, 4}).to(std::vector<std::string>{kTwo[1], kTwo[0]}),
                    MultiTensorError);                                             // other devices
  BOOST_CHECK_THROW(rows.reshape({16}), MultiTensorError);                         // merges the shard axis
  BOOST_CHECK_THROW(rows.sum().backward(numbers({4}).to(kTwo)), MultiTensorError); // seed layout
}

BOOST_AUTO_TEST_CASE(elementwise_follows_the_shard_axis) {
  Tensor a = numbers({4, 6}), b = numbers({4, 6}, 2, 1), row = numbers({6}, 3, 2),
         col = numbers({4, 1}, 1, 3);
  MultiTensor sa = a.shard(kTwo, 0), sb = b.shard(kTwo, 0);
  check_close(sa + sb, a + b);
  check_close((sa * sb).relu().exp(), (a * b).relu().exp());
  // replicated operands: broadcast along the shard axis (used as is) or spanning it (sliced)
  check_close(sa - row.to(kTwo), a - row);
  check_close(sa / b.to(kTwo).add(5.0), a / (b + 5.0));
  check_close(a.to(kTwo).maximum(sb), a.maximum(b));
  MultiTensor sc = a.shard(kTwo, 1);
  check_close(sc * col.to(kTwo), a * col);
  BOOST_CHECK_EQUAL(*(sc * col.to(kTwo)).axis(), 1);
  check_close(a.to(kTwo) * b.to(kTwo), a * b);
}

BOOST_AUTO_TEST_CASE(reductions_local_and_across_devices) {
  Tensor a = numbers({4, 6});
  MultiTensor rows = a.shard(kTwo, 0), cols = a.shard(kTwo, 1);
  MultiTensor local = rows.sum({1});
  BOOST_CHECK_EQUAL(*local.axis(), 0);
  check_close(local, a.sum({1}));
  MultiTensor across = rows.sum({0});
  BOOST_CHECK(across.replicated());
  check_identical_shards(across);
  check_close(across, a.sum({0}));
  check_close(cols.sum({1}, true), a.sum({1}, true));
  check_close(rows.max({0}), a.max({0}));
  check_close(cols.max(), a.max());
  check_close(rows.mean(), a.mean());
  check_close(cols.mean({0}), a.mean({0}));
}

BOOST_AUTO_TEST_CASE(movement_keeps_the_shard_axis) {
  Tensor a = numbers({4, 6});
  MultiTensor rows = a.shard(kTwo, 0);
  MultiTensor split = rows.reshape({4, 2, 3});
  BOOST_CHECK_EQUAL(*split.axis(), 0);
  check_close(split, a.reshape({4, 2, 3}));
  MultiTensor moved = split.permute({2, 0, 1});
  BOOST_CHECK_EQUAL(*moved.axis(), 1);
  check_close(moved, a.reshape({4, 2, 3}).permute({2, 0, 1}));
  check_close(rows.transpose(), a.transpose());
  check_close(rows.reshape({1, 4, 6}).expand({3, 4, 6}), a.reshape({1, 4, 6}).expand({3, 4, 6}));
  check_close(a.shard(kTwo, 1).gather(), a);
}

BOOST_AUTO_TEST_CASE(matmul_every_layout) {
  Tensor a = numbers({4, 6}), w = numbers({6, 8}, 0.5f, 1);
  Tensor want = a.matmul(w);
  struct Case {
    std::optional<int64_t> a_axis, w_axis;
    bool replicated_result;
  };
  for (Case c : {Case{0, std::nullopt, false}, Case{1, 0, true}, Case{1, std::nullopt, true},
                 Case{std::nullopt, 0, true}, Case{std::nullopt, 1, false}, Case{0, 1, false},
                 Case{0, 0, false}, Case{1, 1, true}, Case{std::nullopt, std::nullopt, true}}) {
    MultiTensor ma = c.a_axis ? a.shard(kTwo, *c.a_axis) : a.to(kTwo);
    MultiTensor mw = c.w_axis ? w.shard(kTwo, *c.w_axis) : w.to(kTwo);
    MultiTensor got = ma.matmul(mw);
    BOOST_TEST_CONTEXT("a axis " << (c.a_axis ? *c.a_axis : -1) << ", w axis "
                                 << (c.w_axis ? *c.w_axis : -1)) {
      BOOST_CHECK_EQUAL(got.replicated(), c.replicated_result);
      check_close(got, want, 1e-4f);
    }
  }
}

BOOST_AUTO_TEST_CASE(gradients_match_one_device) {
  Tensor x = numbers({4, 6}), w0 = numbers({6, 3}, 0.5f, 1), b0 = numbers({3}, 0.1f, 2);
  // one device
  Tensor w = w0.contiguous().realize(), b = b0.contiguous().realize(), xs = x.contiguous().realize();
  w.requires_grad_();
  b.requires_grad_();
  xs.requires_grad_();
  Tensor loss = ((xs.matmul(w) + b).relu() * xs.sum({1}, true)).max({0}).sum();
  loss.backward();
  // two devices: data sharded along the batch, weights replicated
  MultiTensor mx = x.shard(kTwo, 0), mw = w0.to(kTwo), mb = b0.to(kTwo);
  mx.requires_grad_();
  mw.requires_grad_();
  mb.requires_grad_();
  MultiTensor mloss = ((mx.matmul(mw) + mb).relu() * mx.sum({1}, true)).max({0}).sum();
  check_close(mloss, loss);
  mloss.backward();
  check_close(*mw.grad(), *w.grad(), 1e-4f);
  check_close(*mb.grad(), *b.grad(), 1e-4f);
  check_close(*mx.grad(), *xs.grad(), 1e-4f);
  check_identical_shards(*mw.grad());
  check_close(*mw.grad(), *w.grad(), 1e-4f); // a second call does not sum again
}

BOOST_AUTO_TEST_CASE(gradients_through_shard_copies_and_contraction) {
  // a leaf on one device, sharded along the contracted axis: copies and an all-reduce in backward
  Tensor a = numbers({4, 6}).contiguous().realize(), w = numbers({6, 2}, 0.3f, 1).contiguous().realize();
  a.requires_grad_();
  w.requires_grad_();
  Tensor loss = a.matmul(w).square().sum();
  loss.backward();
  Tensor a2 = numbers({4, 6}).contiguous().realize(), w2 = numbers({6, 2}, 0.3f, 1).contiguous().realize();
  a2.requires_grad_();
  w2.requires_grad_();
  MultiTensor mloss = a2.shard(kTwo, 1).matmul(w2.shard(kTwo, 0)).square().sum();
  mloss.backward();
  check_close(a2.grad()->to_vector<float>(), a.grad()->to_vector<float>(), 1e-4f);
  check_close(w2.grad()->to_vector<float>(), w.grad()->to_vector<float>(), 1e-4f);
  // all-gather's backward: a column-sharded tensor gathered, then reduced with weights
  Tensor c = numbers({2, 4}).contiguous().realize(), weights = numbers({2, 4}, 1, 5);
  c.requires_grad_();
  (c * weights).sum().backward();
  Tensor c2 = numbers({2, 4}).contiguous().realize();
  c2.requires_grad_();
  (c2.shard(kTwo, 1).gather() * weights.to(kTwo)).sum().backward();
  check_close(c2.grad()->to_vector<float>(), c.grad()->to_vector<float>(), 1e-5f);
}

// Data-parallel training of a small MLP: the global batch split over two devices, gradients
// all-reduced, one Adam per device; the same losses and weights as one device.
BOOST_AUTO_TEST_CASE(data_parallel_training_matches_one_device) {
  const int64_t batch = 8, in = 5, hidden = 7, out = 3;
  Tensor w1_0 = numbers({in, hidden}, 0.4f, 1), w2_0 = numbers({hidden, out}, 0.4f, 2);
  std::vector<Tensor> batches_x, batches_y;
  for (int s = 0; s < 3; ++s) {
    batches_x.push_back(numbers({batch, in}, 1, float(s) * 10));
    batches_y.push_back(numbers({batch, out}, 1, float(s) * 10 + 5));
  }
  // one device
  Tensor w1 = w1_0.contiguous().realize(), w2 = w2_0.contiguous().realize();
  w1.requires_grad_();
  w2.requires_grad_();
  optim::Adam opt({w1, w2}, 0.05);
  std::vector<float> losses;
  for (int s = 0; s < 3; ++s) {
    opt.zero_grad();
    Tensor loss = (batches_x[size_t(s)].matmul(w1).relu().matmul(w2) - batches_y[size_t(s)]).square().mean();
    loss.backward();
    opt.step_and_realize({loss});
    losses.push_back(loss.item<float>());
  }
  // two devices
  MultiTensor m1 = w1_0.to(kTwo), m2 = w2_0.to(kTwo);
  m1.requires_grad_();
  m2.requires_grad_();
  std::vector<std::unique_ptr<optim::Adam>> opts;
  for (size_t d = 0; d < kTwo.size(); ++d)
    opts.push_back(std::make_unique<optim::Adam>(std::vector<Tensor>{m1.shards()[d], m2.shards()[d]}, 0.05));
  for (int s = 0; s < 3; ++s) {
    for (auto& o : opts) o->zero_grad();
    MultiTensor x = batches_x[size_t(s)].shard(kTwo, 0), y = batches_y[size_t(s)].shard(kTwo, 0);
    MultiTensor loss = (x.matmul(m1).relu().matmul(m2) - y).square().mean();
    loss.backward();
    sync_grads({m1, m2});
    for (auto& o : opts) o->step();
    BOOST_CHECK_CLOSE(loss.item<float>(), losses[size_t(s)], 1e-3);
  }
  check_identical_shards(m1);
  check_identical_shards(m2);
  check_close(m1.shards()[1].to_vector<float>(), w1.to_vector<float>(), 1e-4f);
  check_close(m2.shards()[0].to_vector<float>(), w2.to_vector<float>(), 1e-4f);
}

BOOST_AUTO_TEST_SUITE_END()
