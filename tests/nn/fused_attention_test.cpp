// Attention with the softmax fused into its product (ScheduleOptions::fuse_softmax, FUSE_ATTENTION=1):
// the forward is one kernel that stores no (L, S) matrix, its loop over keys is one online-softmax
// loop (the max, the sum and the product share it; a causal one ends at the query), and its values match a
// naive host loop in double precision: no mask, causal, a bool mask that hides the first keys of some rows
// and every key of one row (zeros, as torch's _safe_softmax), an additive float mask.
#include "nn_util.hpp"

#include "kernel/codegen/lower.hpp"
#include "kernel/schedule/buffer.hpp"
#include "kernel/tensor/attention.hpp"

#include <limits>
#include <optional>
#include <set>

using namespace nt;

namespace fused_attention_test {

struct FuseAttention {
  explicit FuseAttention(bool on) { tg::set_fuse_attention(on); }
  ~FuseAttention() { tg::set_fuse_attention(false); }
};

// out[b, i, :] = softmax_j(q_i . k_j * scale + mask[i][j]) v_j over batch-heads b; a row whose keys
// are all masked (-inf) gives zeros.
std::vector<double> naive(const std::vector<double>& q, const std::vector<double>& k,
                          const std::vector<double>& v, int64_t BH, int64_t T, int64_t E,
                          const std::vector<double>& mask) {
  std::vector<double> out(size_t(BH * T * E), 0.0);
  const double scale = 1.0 / std::sqrt(double(E));
  for (int64_t b = 0; b < BH; ++b)
    for (int64_t i = 0; i < T; ++i) {
      std::vector<double> s(static_cast<size_t>(T));
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < T; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < E; ++e)
          dot += q[size_t((b * T + i) * E + e)] * k[size_t((b * T + j) * E + e)];
        s[size_t(j)] = dot * scale + mask[size_t(i * T + j)];
        m = std::max(m, s[size_t(j)]);
      }
      if (std::isinf(m)) continue;
      double sum = 0;
      for (auto& x : s) sum += (x = std::exp(x - m));
      for (int64_t j = 0; j < T; ++j)
        for (int64_t e = 0; e < E; ++e)
          out[size_t((b * T + i) * E + e)] += s[size_t(j)] / sum * v[size_t((b * T + j) * E + e)];
    }
  return out;
}

struct MaskCase {
  std::string name;
  int64_t T;
  std::vector<double> mask; // (T, T) additive: 0 or -inf, or any float
  bool causal = false, bool_mask = false;
};

} // namespace fused_attention_test

using namespace fused_attention_test;

BOOST_AUTO_TEST_SUITE(fused_attention)

BOOST_AUTO_TEST_CASE(one_online_kernel_matches_naive_loops) {
  constexpr int64_t B = 2, H = 2, E = 32;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<MaskCase> cases;
  cases.push_back({"no mask", 40, std::vector<double>(40 * 40, 0.0)});
  {
    MaskCase c{"causal", 48, std::vector<double>(48 * 48, 0.0), true};
    for (int64_t i = 0; i < 48; ++i)
      for (int64_t j = i + 1; j < 48; ++j) c.mask[size_t(i * 48 + j)] = -inf;
    cases.push_back(c);
  }
  {
    MaskCase c{"bool mask hiding leading keys and a whole row", 33, std::vector<double>(33 * 33, 0.0), false,
               true};
    for (int64_t i = 0; i < 33; ++i)
      for (int64_t j = 0; j < 33; ++j)
        if (i == 5 || j < i % 7) c.mask[size_t(i * 33 + j)] = -inf;
    cases.push_back(c);
  }
  {
    Rng r(9);
    cases.push_back({"float mask", 24, r.vec(24 * 24, -3, 3)});
  }
  FuseAttention fuse(true);
  Rng rng(4);
  for (const MaskCase& c : cases) BOOST_TEST_CONTEXT(c.name) {
      const int64_t T = c.T;
      const auto qh = rng.vec(size_t(B * H * T * E), -2, 2), kh = rng.vec(size_t(B * H * T * E), -2, 2),
                 vh = rng.vec(size_t(B * H * T * E));
      Tensor q = f32(qh, {B, H, T, E}), k = f32(kh, {B, H, T, E}), v = f32(vh, {B, H, T, E});
      tg::AttentionOptions o;
      o.is_causal = c.causal;
      if (c.bool_mask) {
        std::vector<int32_t> keep(c.mask.size());
        for (size_t i = 0; i < keep.size(); ++i) keep[i] = std::isinf(c.mask[i]) ? 0 : 1;
        o.mask = i32(keep, {T, T}).cast(dtypes::bool_).realize();
      } else if (!c.causal && c.name != "no mask") {
        o.mask = f32(c.mask, {T, T}).realize();
      }
      Tensor out = tg::scaled_dot_product_attention(q, k, v, o);
      const std::vector<tg::ScheduleItem> items = out.schedule();
      BOOST_TEST_REQUIRE(items.size() == 1u, "the forward is one kernel, got " << items.size());
      BOOST_TEST(tg::buffer_arg(items[0].buffers[0]).size() == size_t(B * H * T * E)); // the only store
      // one loop over the keys: the max, the sum and the product share it; under the causal mask
      // it ends after the query's own key (its end is not the constant T)
      const tg::LoweredKernel lowered = tg::lower_kernel(items[0], tg::LowerOptions{});
      std::set<const tg::UOp*> key_loops;
      for (const auto& n : tg::toposort(lowered.sink))
        if (n->op() == tg::Ops::RANGE && (!n->src(1)->is_const() || n->src(1)->arg_int() == T))
          key_loops.insert(n.get());
      BOOST_TEST_REQUIRE(key_loops.size() == 1u, "loops over the keys: " << key_loops.size());
      BOOST_TEST((*key_loops.begin())->src(1)->is_const() == !c.causal, "the causal loop is shortened");
      check_close(out, naive(qh, kh, vh, B * H, T, E, c.mask), 1e-4, 1e-5, "against naive loops");
    }
}

// bfloat16 scores with as many keys as features (the products' space is then the scores' space:
// the nested scores must still run their own loops), causal and not: one kernel, values as the
// stored path's within a bfloat16 step.
BOOST_AUTO_TEST_CASE(bfloat16_as_many_keys_as_features) {
  constexpr int64_t T = 32, E = 32;
  Rng rng(8);
  const auto qh = rng.vec(2 * T * E), kh = rng.vec(2 * T * E), vh = rng.vec(2 * T * E);
  for (bool causal : {true, false}) BOOST_TEST_CONTEXT("causal " << causal) {
      auto attend = [&](bool on) {
        FuseAttention fuse(on);
        Tensor q = f32(qh, {1, 2, T, E}).cast(dtypes::bfloat16).realize(),
               k = f32(kh, {1, 2, T, E}).cast(dtypes::bfloat16).realize(),
               v = f32(vh, {1, 2, T, E}).cast(dtypes::bfloat16).realize();
        tg::AttentionOptions o;
        o.is_causal = causal;
        Tensor out = tg::scaled_dot_product_attention(q, k, v, o);
        if (on) BOOST_TEST(out.schedule().size() == 1u, "one kernel");
        return host(out);
      };
      check_close(attend(true), attend(false), 0, 1.6e-2, "fused vs stored");
    }
}

// Without the setting the scores are stored: the check above can fail.
BOOST_AUTO_TEST_CASE(unfused_stores_the_scores) {
  constexpr int64_t T = 24, E = 32;
  Rng rng(5);
  Tensor q = f32(rng.vec(T * E), {1, 1, T, E}), k = f32(rng.vec(T * E), {1, 1, T, E}),
         v = f32(rng.vec(T * E), {1, 1, T, E});
  tg::AttentionOptions o;
  o.is_causal = true;
  Tensor out = tg::scaled_dot_product_attention(q, k, v, o);
  bool scores = false;
  for (const auto& item : out.schedule())
    for (const auto& b : item.buffers) scores |= tg::buffer_arg(b).size() == size_t(T * T);
  BOOST_TEST(scores);
}

// Training reads the weights again in the backward: they stay stored and the gradients are the
// unfused ones, through backward() (the loss realized first) and through gradient() of a
// MultiheadAttention (forward and backward in one schedule, where a backward kernel takes the
// softmax in: its row sum over the weights must not be read inside the loop that computes it).
BOOST_AUTO_TEST_CASE(gradients_unchanged) {
  constexpr int64_t T = 20, E = 32;
  Rng rng(6);
  const auto qh = rng.vec(T * E), kh = rng.vec(T * E), vh = rng.vec(T * E);
  auto grads = [&](bool on) {
    FuseAttention fuse(on);
    Tensor q = f32(qh, {1, 1, T, E}).requires_grad_(), k = f32(kh, {1, 1, T, E}).requires_grad_(),
           v = f32(vh, {1, 1, T, E}).requires_grad_();
    tg::AttentionOptions o;
    o.is_causal = true;
    tg::scaled_dot_product_attention(q, k, v, o).square().sum().backward();
    std::vector<std::vector<double>> g;
    for (Tensor* t : {&q, &k, &v}) g.push_back(host(*t->grad()));
    return g;
  };
  const auto fused = grads(true), plain = grads(false);
  for (size_t i = 0; i < 3; ++i) check_close(fused[i], plain[i], 1e-5, 1e-6, "gradient " + std::to_string(i));
  // cross attention through MultiheadAttention (projections in and out), batch 2, 3 queries, 5 keys
  tg::Tensor::manual_seed(3);
  tg::nn::MultiheadAttention mha(8, 2);
  const auto xq = rng.vec(2 * 3 * 8), xk = rng.vec(2 * 5 * 8), xv = rng.vec(2 * 5 * 8),
             go = rng.vec(2 * 3 * 8);
  auto one_graph = [&](bool on) {
    FuseAttention fuse(on);
    Tensor q = f32(xq, {2, 3, 8}), k = f32(xk, {2, 5, 8}), v = f32(xv, {2, 5, 8});
    std::vector<int32_t> keep(3 * 5, 1);
    keep[1] = keep[7] = keep[13] = 0; // a few keys hidden per query
    Tensor mask = i32(keep, {3, 5}).cast(dtypes::bool_);
    Tensor loss = (mha(q, k, v, mask) * f32(go, {2, 3, 8})).sum();
    std::vector<std::vector<double>> g;
    for (const Tensor& t : loss.gradient({q, k, v, mha.in_proj_weight})) g.push_back(host(t));
    return g;
  };
  const auto fused_one = one_graph(true), plain_one = one_graph(false);
  for (size_t i = 0; i < 4; ++i)
    check_close(fused_one[i], plain_one[i], 1e-5, 1e-6, "gradient() " + std::to_string(i));
}

BOOST_AUTO_TEST_SUITE_END()
