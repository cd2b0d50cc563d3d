// Transformer building blocks against PyTorch: scaled_dot_product_attention (causal, bool and
// float masks, a custom scale, batch and head dims), GELU, MultiheadAttention with torch's weights,
// clip_grad_norm, Adam/AdamW parameter groups and gradient accumulation. The reference values are
// computed at test time by tests/nn/torch_reference.py (ctest's fixture nn_torch_reference; the
// file's path arrives in TG_TORCH_REFERENCE). WarmupCosineLR is checked against hand-computed
// values, dropout by its statistics.
#include "nn_util.hpp"

#include "kernel/tensor/attention.hpp"
#include "kernel/tensor/jit.hpp"
#include "kernel/tensor/state.hpp"

#include <cstdlib>
#include <map>
#include <memory>
#include <optional>

using namespace nt;
namespace nn = tg::nn;
namespace optim = tg::optim;

namespace {

// float32 on both sides, summed in different orders. The largest differences seen are 1.5e-6
// (Adam's parameters after 3 steps) and 9e-7 (exact GELU's gradient, through Tensor::erf's
// approximation): atol 1e-5 leaves a margin, and a wrong formula is off by far more.
constexpr double kRtol = 1e-4, kAtol = 1e-5;

// The reference file, loaded afresh by each test case (tensors that outlive a case would outlive
// the runtime at exit).
class Reference {
public:
  Reference() {
    const char* path = std::getenv("TG_TORCH_REFERENCE");
    BOOST_REQUIRE_MESSAGE(
        path && *path,
        "TG_TORCH_REFERENCE is not set: ctest sets it to the file its fixture "
        "nn_torch_reference writes; by hand: /usr/bin/python3 tests/nn/torch_reference.py FILE "
        "and TG_TORCH_REFERENCE=FILE");
    tensors_ = tg::safe_load(path);
  }
  Tensor operator[](const std::string& name) const {
    auto it = tensors_.find(name);
    BOOST_REQUIRE_MESSAGE(it != tensors_.end(), "the reference file has no tensor " << name);
    return it->second;
  }
  // The tensor as a leaf of the graph (its stored value, requires_grad).
  Tensor leaf(const std::string& name) const {
    Tensor t = (*this)[name];
    t.requires_grad_();
    return t;
  }
  // A copy in storage of its own, for tensors that an optimizer assigns to.
  Tensor copy(const std::string& name) const {
    Tensor t = (*this)[name];
    return Tensor::from_vector(t.to_vector<float>(), t.shape());
  }
  void expect(const Tensor& got, const std::string& name, double rtol = kRtol, double atol = kAtol) const {
    Tensor want = (*this)[name];
    BOOST_REQUIRE_MESSAGE(got.shape() == want.shape(), name << ": shape " << tg::dims_str(got.shape())
                                                            << ", torch's " << tg::dims_str(want.shape()));
    check_close(got, host(want), rtol, atol, name);
  }

private:
  std::map<std::string, Tensor> tensors_;
};

bool all_finite(const Tensor& t) {
  for (double x : host(t))
    if (!std::isfinite(x)) return false;
  return true;
}

} // namespace

BOOST_AUTO_TEST_SUITE(attention)

BOOST_AUTO_TEST_CASE(sdpa_matches_torch_forward_and_gradients) {
  Reference ref;
  struct Case {
    std::string name;
    bool mask, is_causal;
    std::optional<double> scale;
  };
  const std::vector<Case> cases = {
      {"causal", false, true, {}},
      {"causal_wide", false, true, {}},
      {"causal_tall", false, true, {}},
      {"bool_mask", true, false, {}},
      {"bool_mask_batched", true, false, {}},
      {"float_mask", true, false, {}},
      {"scale", false, false, 0.3},
      {"broadcast", false, false, {}}, // batch dims (2, 3), (1, 3), (1, 1)
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT("sdpa " << c.name) {
      const std::string p = "sdpa." + c.name + ".";
      Tensor q = ref.leaf(p + "q"), k = ref.leaf(p + "k"), v = ref.leaf(p + "v");
      tg::AttentionOptions options;
      if (c.mask) options.mask = ref[p + "mask"];
      options.is_causal = c.is_causal;
      options.scale = c.scale;
      Tensor out = tg::scaled_dot_product_attention(q, k, v, options);
      ref.expect(out, p + "out");
      std::vector<Tensor> g = (out * ref[p + "go"]).sum().gradient({q, k, v});
      ref.expect(g[0], p + "dq");
      ref.expect(g[1], p + "dk");
      ref.expect(g[2], p + "dv");
    }
  }
}

BOOST_AUTO_TEST_CASE(causal_is_a_lower_triangular_bool_mask) {
  Rng r(11);
  Tensor q = f32(r.vec(2 * 3 * 4), {2, 3, 4}), k = f32(r.vec(2 * 5 * 4), {2, 5, 4}),
         v = f32(r.vec(2 * 5 * 3), {2, 5, 3});
  tg::AttentionOptions causal, masked;
  causal.is_causal = true;
  masked.mask = Tensor::ones({3, 5}, dtypes::bool_).tril();
  check_close(tg::scaled_dot_product_attention(q, k, v, causal),
              host(tg::scaled_dot_product_attention(q, k, v, masked)), 0, 0, "is_causal vs tril mask");
}

// torch >= 2.5 (_safe_softmax) gives zeros for a query whose keys are all masked; the installed
// torch 1.13 gave NaN, so this has no torch reference. The other rows must not change.
BOOST_AUTO_TEST_CASE(a_fully_masked_row_gives_zeros_and_finite_gradients) {
  Rng r(12);
  Tensor q = f32(r.vec(2 * 3 * 4), {2, 3, 4}).requires_grad_(),
         k = f32(r.vec(2 * 5 * 4), {2, 5, 4}).requires_grad_();
  Tensor v = f32(r.vec(2 * 5 * 3), {2, 5, 3}).requires_grad_();
  std::vector<bool> keep = {true,  false, true,  true,  false, //
                            false, false, false, false, false, // row 1: nothing to attend
                            false, true,  true,  false, true};
  tg::AttentionOptions options, all_kept;
  options.mask = Tensor::from_vector(keep, {3, 5});
  std::vector<bool> other = keep;
  for (int j = 5; j < 10; ++j) other[size_t(j)] = true;
  all_kept.mask = Tensor::from_vector(other, {3, 5});
  Tensor out = tg::scaled_dot_product_attention(q, k, v, options);
  std::vector<double> got = host(out), want = host(tg::scaled_dot_product_attention(q, k, v, all_kept));
  for (size_t b = 0; b < 2; ++b)
    for (size_t i = 0; i < 3; ++i)
      for (size_t e = 0; e < 3; ++e) {
        size_t at = (b * 3 + i) * 3 + e;
        BOOST_TEST(got[at] == (i == 1 ? 0.0 : want[at]), "out[" << b << ", " << i << ", " << e << "]");
      }
  Tensor go = f32(r.vec(2 * 3 * 3), {2, 3, 3});
  std::vector<Tensor> g = (out * go).sum().gradient({q, k, v});
  for (const auto& t : g) BOOST_TEST(all_finite(t), "gradient " << t.str() << " is finite");
  std::vector<double> dq = host(g[0]);
  for (size_t b = 0; b < 2; ++b)
    for (size_t e = 0; e < 4; ++e) BOOST_TEST(dq[(b * 3 + 1) * 4 + e] == 0.0);
}

// q = 0 makes every weight 1/S and v = I shows the weights themselves: each output element is
// either dropped (0) or kept and scaled to (1/S) / (1 - p).
BOOST_AUTO_TEST_CASE(dropout_zeroes_a_fraction_p_and_scales_the_rest) {
  const int64_t B = 8, S = 64;
  const double p = 0.25;
  Tensor q = Tensor::zeros({B, S, 4}), k = Tensor::rand({B, S, 4}), v = Tensor::eye(S);
  tg::AttentionOptions options;
  options.dropout_p = p;
  std::vector<double> w = host(tg::scaled_dot_product_attention(q, k, v, options));
  const double kept = 1.0 / double(S) / (1 - p);
  size_t zeros = 0, bad = 0;
  for (double x : w) {
    if (x == 0)
      ++zeros;
    else if (std::fabs(x - kept) > 1e-6 * kept)
      ++bad;
  }
  const double frac = double(zeros) / double(w.size()); // 32768 draws: sd 0.0024
  BOOST_TEST(std::fabs(frac - p) < 0.02, "fraction dropped " << frac << ", p " << p);
  BOOST_TEST(bad == 0u, bad << " kept weights differ from (1/S) / (1 - p) = " << kept);
  BOOST_TEST(host(tg::scaled_dot_product_attention(q, k, v, options)) != w, "each call draws new bits");

  Rng r(13);
  Tensor qr = f32(r.vec(size_t(B * S * 4)), {B, S, 4});
  tg::AttentionOptions none;
  none.dropout_p = 0;
  std::vector<double> a = host(tg::scaled_dot_product_attention(qr, k, v, none));
  BOOST_TEST(host(tg::scaled_dot_product_attention(qr, k, v, none)) == a, "dropout_p = 0 is deterministic");
  BOOST_TEST(host(tg::scaled_dot_product_attention(qr, k, v)) == a);
}

BOOST_AUTO_TEST_CASE(bad_arguments_are_named) {
  using tg::TensorError;
  auto sdpa = [](Dims qs, Dims ks, Dims vs, tg::AttentionOptions o = {}, tg::DType dt = dtypes::float32) {
    return [=] {
      tg::scaled_dot_product_attention(Tensor::ones(qs, dt), Tensor::ones(ks, dt), Tensor::ones(vs, dt), o);
    };
  };
  check_throws<TensorError>(sdpa({2, 3, 4}, {2, 5, 6}, {2, 5, 6}), {"(2, 3, 4)", "(2, 5, 6)", "E (4 vs 6)"},
                            "E differs");
  check_throws<TensorError>(sdpa({2, 3, 4}, {2, 5, 4}, {2, 6, 4}), {"(2, 5, 4)", "(2, 6, 4)", "S (5 vs 6)"},
                            "S differs");
  check_throws<TensorError>(sdpa({2, 3, 4}, {3, 5, 4}, {3, 5, 4}), {"(2, 3, 4)", "(3, 5, 4)", "broadcast"},
                            "batch dims");
  check_throws<TensorError>(sdpa({4}, {5, 4}, {5, 4}), {"(4,)", "at least 2 dims"}, "1-d query");
  check_throws<TensorError>(sdpa({3, 4}, {5, 4}, {5, 4}, {}, dtypes::int32), {"float", "int"}, "int inputs");
  tg::AttentionOptions both;
  both.mask = Tensor::ones({3, 5}, dtypes::bool_);
  both.is_causal = true;
  check_throws<TensorError>(sdpa({3, 4}, {5, 4}, {5, 4}, both), {"is_causal", "(3, 5)"},
                            "mask and is_causal");
  tg::AttentionOptions wide;
  wide.mask = Tensor::ones({4, 5}, dtypes::bool_);
  check_throws<TensorError>(sdpa({2, 3, 4}, {2, 5, 4}, {2, 5, 4}, wide), {"mask (4, 5)", "(2, 3, 5)"},
                            "mask of another shape");
  tg::AttentionOptions int_mask;
  int_mask.mask = Tensor::ones({3, 5}, dtypes::int32);
  check_throws<TensorError>(sdpa({3, 4}, {5, 4}, {5, 4}, int_mask), {"mask must be bool", "int"}, "int mask");
  tg::AttentionOptions p;
  p.dropout_p = 1.5;
  check_throws<TensorError>(sdpa({3, 4}, {5, 4}, {5, 4}, p), {"dropout_p", "1.5"}, "dropout_p > 1");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(gelu_and_multihead_attention)

BOOST_AUTO_TEST_CASE(gelu_matches_torch) {
  Reference ref;
  for (std::string approximate : {"none", "tanh"}) {
    BOOST_TEST_CONTEXT("gelu " << approximate) {
      Tensor x = ref.leaf("gelu.x");
      Tensor y = nn::gelu(x, approximate);
      ref.expect(y, "gelu." + approximate + ".out");
      ref.expect(nn::GELU(approximate)(x), "gelu." + approximate + ".out");
      ref.expect((y * ref["gelu.go"]).sum().gradient({x})[0], "gelu." + approximate + ".dx");
    }
  }
  check_throws<tg::TensorError>([] { nn::gelu(Tensor::ones({2}), "erf"); },
                                {"\"none\" or \"tanh\"", "\"erf\""}, "gelu");
  check_throws<tg::TensorError>([] { nn::GELU("fast"); }, {"GELU", "\"fast\""}, "GELU");
}

BOOST_AUTO_TEST_CASE(multihead_attention_matches_torch) {
  Reference ref;
  nn::MultiheadAttention mha(8, 2);
  const std::vector<std::string> names = {"in_proj_weight", "in_proj_bias", "out_proj.weight",
                                          "out_proj.bias"};
  std::map<std::string, Tensor> state;
  for (const auto& n : names) state.emplace(n, ref["mha.param." + n]);
  mha.load_state_dict(state); // strict: torch's names are the module's
  std::vector<Tensor> params;
  for (const auto& n : names) params.push_back(mha.state_dict().at(n));

  struct Case {
    std::string name;
    bool self, is_causal, padding;
  };
  for (const Case& c : std::vector<Case>{{"cross", false, false, false},
                                         {"self_bool3d", true, false, false},
                                         {"self_causal", true, true, false},
                                         {"cross_padding", false, false, true},
                                         {"self_causal_padding", true, true, true}}) {
    BOOST_TEST_CONTEXT("MultiheadAttention " << c.name) {
      const std::string p = "mha." + c.name + ".";
      Tensor query = ref.leaf(p + "query");
      Tensor key = c.self ? query : ref.leaf(p + "key"), value = c.self ? query : ref.leaf(p + "value");
      std::optional<Tensor> mask, padding;
      if (!c.is_causal) mask = ref[p + "mask"]; // torch's causal case is this mask: check both
      if (c.padding) padding = ref[p + "kpm"];
      Tensor out = mha(query, key, value, mask, c.is_causal, padding);
      ref.expect(out, p + "out");
      if (c.is_causal) ref.expect(mha(query, key, value, ref[p + "mask"], false, padding), p + "out");
      std::vector<Tensor> inputs = {query};
      std::vector<std::string> input_names = {"query"};
      if (!c.self) {
        inputs.insert(inputs.end(), {key, value});
        input_names.insert(input_names.end(), {"key", "value"});
      }
      std::vector<Tensor> targets = inputs;
      targets.insert(targets.end(), params.begin(), params.end());
      std::vector<Tensor> g = (out * ref[p + "go"]).sum().gradient(targets);
      for (size_t i = 0; i < inputs.size(); ++i) ref.expect(g[i], p + "d." + input_names[i]);
      for (size_t i = 0; i < names.size(); ++i) ref.expect(g[inputs.size() + i], p + "d." + names[i]);
    }
  }
}

BOOST_AUTO_TEST_CASE(multihead_attention_init_and_errors) {
  nn::MultiheadAttention mha(12, 3);
  auto named = mha.named_parameters();
  BOOST_REQUIRE_EQUAL(named.size(), 4u);
  BOOST_TEST(named[0].first == "in_proj_weight");
  BOOST_TEST(named[1].first == "in_proj_bias");
  BOOST_TEST(named[2].first == "out_proj.weight");
  BOOST_TEST(named[3].first == "out_proj.bias");
  BOOST_TEST(mha.in_proj_weight.shape() == Dims({36, 12}));
  const double bound = std::sqrt(6.0 / (36 + 12)); // xavier_uniform
  for (double w : host(mha.in_proj_weight)) BOOST_TEST(std::fabs(w) <= bound);
  for (double b : host(*mha.in_proj_bias)) BOOST_TEST(b == 0.0);
  for (double b : host(*mha.out_proj.bias)) BOOST_TEST(b == 0.0);
  BOOST_TEST(nn::MultiheadAttention(12, 3, 0, false).named_parameters().size() == 2u);
  // forward(x) is self-attention
  Tensor x = Tensor::rand({2, 4, 12});
  check_close(mha(x), host(mha(x, x, x)), 0, 0, "forward(x)");

  check_throws<tg::TensorError>([] { nn::MultiheadAttention(10, 3); }, {"10", "divisible", "3"}, "heads");
  check_throws<tg::TensorError>(
      [&] {
        mha(Tensor::rand({2, 4, 8}));
      },
      {"(2, 4, 8)", "(N, L, 12)"}, "embed dim");
  check_throws<tg::TensorError>(
      [&] {
        mha(x, x, x, Tensor::ones({4, 5}, dtypes::bool_));
      },
      {"attn_mask (4, 5)", "(4, 4)", "(6, 4, 4)"}, "mask shape");
  check_throws<tg::TensorError>(
      [&] {
        mha(x, x, x, std::nullopt, false, Tensor::ones({4, 2}, dtypes::bool_));
      },
      {"key_padding_mask (4, 2)", "(N, S) (2, 4)"}, "key_padding_mask shape");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(training_utilities)

BOOST_AUTO_TEST_CASE(clip_grad_norm_matches_torch) {
  Reference ref;
  for (auto [name, max_norm] :
       std::vector<std::pair<std::string, double>>{{"clip", 1.0}, {"noclip", 100.0}}) {
    BOOST_TEST_CONTEXT("clip_grad_norm " << name) {
      Tensor p1 = Tensor::zeros({4, 3}).contiguous().realize().requires_grad_();
      Tensor p2 = Tensor::zeros({5}).contiguous().realize().requires_grad_();
      Tensor p3 = Tensor::zeros({2}).contiguous().realize().requires_grad_(); // no gradient: skipped
      p1.set_grad(ref["clip.g1"]);
      p2.set_grad(ref["clip.g2"]);
      Tensor norm = nn::clip_grad_norm({p1, p2, p3}, max_norm);
      BOOST_TEST(norm.ndim() == 0);
      BOOST_TEST(!realized(norm), "the norm is lazy: nothing read on the host");
      BOOST_TEST(!realized(*p1.grad()), "the scaled gradient is lazy");
      BOOST_TEST(!p3.grad().has_value());
      ref.expect(norm, "clip." + name + ".norm");
      ref.expect(*p1.grad(), "clip." + name + ".g1");
      ref.expect(*p2.grad(), "clip." + name + ".g2");
    }
  }
  BOOST_TEST(nn::clip_grad_norm({Tensor::zeros({2})}, 1.0).item<float>() == 0.0f);
  check_throws<tg::TensorError>([] { nn::clip_grad_norm({}, -1); }, {"max_norm", "-1"}, "negative max_norm");
}

// A step function with clipping replayed by TinyJit: the replays (no host code) clip as the eager
// steps do, because the clipping is part of the step's graph.
BOOST_AUTO_TEST_CASE(clip_grad_norm_replays_under_tiny_jit) {
  auto run = [](bool jit) {
    Tensor w = Tensor::from_vector(std::vector<float>{0.5f, -1.0f, 2.0f, 0.25f, 1.5f, -0.75f}, {3, 2});
    w.requires_grad_();
    optim::SGD opt({w}, 0.1);
    std::vector<double> norms;
    auto step = [&](const std::vector<Tensor>& in) {
      opt.zero_grad();
      Tensor loss = (in[0].matmul(w) - in[1]).square().sum();
      loss.backward();
      Tensor norm = nn::clip_grad_norm({w}, 0.5);
      opt.step_and_realize({loss, norm});
      return std::vector<Tensor>{loss, norm};
    };
    tg::TinyJit jitted(step);
    Rng r(21);
    for (int i = 0; i < 5; ++i) {
      std::vector<Tensor> in = {f32(r.vec(12), {4, 3}), f32(r.vec(8), {4, 2})};
      norms.push_back((jit ? jitted(in) : step(in))[1].item<float>());
    }
    std::vector<double> out = host(w);
    out.insert(out.end(), norms.begin(), norms.end());
    return out;
  };
  std::vector<double> eager = run(false), jit = run(true);
  for (size_t i = 6; i < eager.size(); ++i) BOOST_TEST(eager[i] > 0.5, "the steps clip: norm " << eager[i]);
  check_close(jit, eager, 1e-6, 1e-7, "TinyJit replays vs eager steps (weights, then norms)");
}

BOOST_AUTO_TEST_CASE(adam_and_adamw_parameter_groups_match_torch) {
  Reference ref;
  for (std::string name : {"adamw", "adam"}) {
    BOOST_TEST_CONTEXT(name) {
      Tensor w = ref.copy("groups.w").requires_grad_(), b = ref.copy("groups.b").requires_grad_();
      Tensor c = ref.copy("groups.c").requires_grad_();
      Tensor x = ref["groups.x"], y = ref["groups.y"];
      // decay 0.1, 0.0, and the optimizer's (AdamW 0.01, Adam 0.02)
      std::vector<optim::ParamGroup> groups = {{{w}, 0.1}, {{b}, 0.0}, {{c}, std::nullopt}};
      std::unique_ptr<optim::Optimizer> opt;
      if (name == "adamw")
        opt = std::make_unique<optim::AdamW>(groups, 0.05, 0.9, 0.999, 1e-8, 0.01);
      else
        opt = std::make_unique<optim::Adam>(groups, 0.05, 0.9, 0.999, 1e-8, 0.02);
      for (int step = 1; step <= 3; ++step) {
        opt->zero_grad();
        ((x.matmul(w) + b - y).square().mean() + (c * c).sum() * 0.5).backward();
        opt->step();
        const std::string s = "." + std::to_string(step);
        ref.expect(w, "groups." + name + ".w" + s);
        ref.expect(b, "groups." + name + ".b" + s);
        ref.expect(c, "groups." + name + ".c" + s);
      }
    }
  }
  Tensor t = Tensor::zeros({2}).contiguous().realize().requires_grad_();
  check_throws<tg::TensorError>(
      [&] {
        optim::AdamW({{{t}, 0.1}, {{t}, 0.0}});
      },
      {"groups 0 and 1"}, "a parameter in two groups");
  check_throws<tg::TensorError>(
      [&] {
        optim::Adam({{{t}, -0.1}});
      },
      {"group 0", "weight_decay"}, "negative group decay");
}

BOOST_AUTO_TEST_CASE(warmup_cosine_lr_follows_nanogpt) {
  Tensor p = Tensor::zeros({1}).contiguous().realize().requires_grad_();
  optim::SGD opt({p}, 1.0);
  optim::WarmupCosineLR sched(opt, 2, 6, 0.1); // warmup 2, cosine to epoch 6, then 0.1
  // epochs 0..8: (t + 1) / 3; 0.1 + 0.45 * (1 + cos(pi * (t - 2) / 4)); 0.1
  const std::vector<double> want = {1.0 / 3, 2.0 / 3, 1.0, 0.86819805153394640, 0.55, 0.23180194846605356,
                                    0.1,     0.1,     0.1};
  BOOST_TEST(opt.lr == want[0], "construction is epoch 0: lr " << opt.lr);
  for (size_t t = 1; t < want.size(); ++t) {
    sched.step();
    BOOST_TEST(std::fabs(opt.lr - want[t]) < 1e-12,
               "epoch " << t << ": lr " << opt.lr << ", want " << want[t]);
    BOOST_TEST(sched.get_last_lr() == opt.lr);
  }
  optim::SGD opt2({p}, 0.5);
  optim::WarmupCosineLR no_warmup(opt2, 0, 4);
  BOOST_TEST(opt2.lr == 0.5, "no warmup: epoch 0 is the base lr");
  check_throws<tg::TensorError>([&] { optim::WarmupCosineLR(opt2, 5, 5); },
                                {"warmup_steps 5", "total_steps 5"}, "total == warmup");
  check_throws<tg::TensorError>([&] { optim::WarmupCosineLR(opt2, -1, 5); }, {"warmup_steps -1"}, "negative");
  check_throws<tg::TensorError>([&] { optim::WarmupCosineLR(opt2, 1, 5, -0.5); }, {"min_lr", "-0.5"},
                                "min_lr");
}

// Two backward() calls on half batches with loss / 2 accumulate the full batch's mean-loss
// gradients (torch's gradient accumulation), through Linear, GELU and Linear with torch's weights.
BOOST_AUTO_TEST_CASE(gradient_accumulation_matches_torch) {
  Reference ref;
  nn::Sequential model;
  model.add(nn::Linear(6, 5)).add(nn::GELU()).add(nn::Linear(5, 3));
  const std::vector<std::string> names = {"0.weight", "0.bias", "2.weight", "2.bias"};
  std::map<std::string, Tensor> state;
  for (const auto& n : names) state.emplace(n, ref["accum.param." + n]);
  model.load_state_dict(state);
  Tensor x = ref["accum.x"], y = ref["accum.y"];
  auto params = model.state_dict();

  model.zero_grad();
  for (int64_t h : {0, 4}) {
    Tensor xh = x.shrink({{h, h + 4}, {0, 6}}), yh = y.shrink({{h, h + 4}, {0, 3}});
    (nn::mse(model(xh), yh) / 2).backward();
  }
  for (const auto& n : names) {
    BOOST_REQUIRE(params.at(n).grad());
    ref.expect(*params.at(n).grad(), "accum.accumulated." + n);
    ref.expect(*params.at(n).grad(), "accum.full." + n);
  }
  model.zero_grad();
  nn::mse(model(x), y).backward();
  for (const auto& n : names) ref.expect(*params.at(n).grad(), "accum.full." + n);
}

BOOST_AUTO_TEST_SUITE_END()
