// ONNX's recurrent layers (RNN, GRU, LSTM), unrolled over the (static) sequence length: the input
// projections of all time steps are one matmul, each step adds its recurrent matmul and gates.
// sequence_lens masks steps past a batch entry's length (its state stays, its Y rows are 0), so
// the reverse direction of a shorter sequence starts at that sequence's last element.
#include "kernel/onnx/ops.hpp"

#include <algorithm>
#include <cctype>
#include <functional>

namespace tg::onnx {
namespace {

enum class RnnKind { rnn, gru, lstm };

using Activation = std::function<Tensor(const Tensor&)>;

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// ONNX's activation names with their alpha/beta (taken in order from activation_alpha/beta by the
// functions that use them; defaults as in onnxruntime).
std::vector<Activation> parse_activations(const OpContext& ctx, const std::vector<std::string>& names) {
  std::vector<double> alphas = ctx.attr_floats("activation_alpha"),
                      betas = ctx.attr_floats("activation_beta");
  size_t ai = 0, bi = 0;
  auto next_alpha = [&](double fallback) { return ai < alphas.size() ? alphas[ai++] : fallback; };
  auto next_beta = [&](double fallback) { return bi < betas.size() ? betas[bi++] : fallback; };
  std::vector<Activation> out;
  for (const std::string& raw : names) {
    std::string name = lower(raw);
    if (name == "tanh") {
      out.push_back([](const Tensor& x) { return x.tanh(); });
    } else if (name == "sigmoid") {
      out.push_back([](const Tensor& x) { return x.sigmoid(); });
    } else if (name == "relu") {
      out.push_back([](const Tensor& x) { return x.relu(); });
    } else if (name == "softsign") {
      out.push_back([](const Tensor& x) { return x / (x.abs() + 1.0); });
    } else if (name == "softplus") {
      out.push_back([](const Tensor& x) { return (x.exp() + 1.0).log(); });
    } else if (name == "affine") {
      double a = next_alpha(1), b = next_beta(0);
      out.push_back([a, b](const Tensor& x) { return x * a + b; });
    } else if (name == "leakyrelu") {
      double a = next_alpha(0.01);
      out.push_back([a](const Tensor& x) { return x.leaky_relu(a); });
    } else if (name == "thresholdedrelu") {
      double a = next_alpha(1);
      out.push_back([a](const Tensor& x) {
        return x.gt(Tensor::scalar(a, x.dtype(), x.device())).where(x, x.zeros_like());
      });
    } else if (name == "scaledtanh") {
      double a = next_alpha(1), b = next_beta(1);
      out.push_back([a, b](const Tensor& x) { return (x * b).tanh() * a; });
    } else if (name == "hardsigmoid") {
      double a = next_alpha(0.2), b = next_beta(0.5);
      out.push_back([a, b](const Tensor& x) { return (x * a + b).clip(0, 1); });
    } else if (name == "elu") {
      double a = next_alpha(1);
      out.push_back([a](const Tensor& x) { return x.gt(x.zeros_like()).where(x, (x.exp() - 1.0) * a); });
    } else {
      ctx.unsupported("activation '" + raw + "'");
    }
  }
  return out;
}

// Gate k of n along the last dim of a (batch, n*hidden) tensor.
Tensor gate(const Tensor& t, int64_t k, int64_t hidden) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int64_t d = 0; d + 1 < t.ndim(); ++d) ranges.push_back({0, t.shape()[size_t(d)]});
  ranges.push_back({k * hidden, (k + 1) * hidden});
  return t.shrink(ranges);
}

std::vector<Value> run_rnn(OpContext& ctx, RnnKind kind) {
  const int64_t num_gates = kind == RnnKind::rnn ? 1 : kind == RnnKind::gru ? 3 : 4;
  const int64_t acts_per_dir = kind == RnnKind::rnn ? 1 : kind == RnnKind::gru ? 2 : 3;
  const int64_t layout = ctx.attr_int("layout", 0);
  const std::string direction = ctx.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    ctx.fail("direction must be forward, reverse or bidirectional, got '" + direction + "'");
  const int64_t num_dirs = direction == "bidirectional" ? 2 : 1;

  Tensor X = ctx.tensor(0), W = ctx.tensor(1), R = ctx.tensor(2);
  if (X.ndim() != 3 || W.ndim() != 3 || R.ndim() != 3) ctx.fail("X, W and R must have rank 3");
  if (layout == 1) X = X.permute({1, 0, 2}); // (seq, batch, input)
  const int64_t seq = X.shape()[0], batch = X.shape()[1], input = X.shape()[2];
  const int64_t hidden = ctx.has_attr("hidden_size") ? ctx.attr_int("hidden_size", 0) : R.shape()[2];
  if (W.shape() != Dims{num_dirs, num_gates * hidden, input})
    ctx.fail("W has shape " + dims_str(W.shape()) + ", expected " +
             dims_str({num_dirs, num_gates * hidden, input}));
  if (R.shape() != Dims{num_dirs, num_gates * hidden, hidden})
    ctx.fail("R has shape " + dims_str(R.shape()) + ", expected " +
             dims_str({num_dirs, num_gates * hidden, hidden}));
  const DType dt = X.dtype();

  std::optional<Tensor> B = ctx.optional_tensor(3);
  if (B && B->shape() != Dims{num_dirs, 2 * num_gates * hidden})
    ctx.fail("B has shape " + dims_str(B->shape()) + ", expected " +
             dims_str({num_dirs, 2 * num_gates * hidden}));
  std::optional<Tensor> seq_lens = ctx.optional_tensor(4);
  if (seq_lens) seq_lens = seq_lens->cast(dtypes::int64).reshape({batch, 1});
  auto initial = [&](size_t i, const char* name) -> std::optional<Tensor> {
    std::optional<Tensor> t = ctx.optional_tensor(i);
    if (!t) return t;
    if (layout == 1) t = t->permute({1, 0, 2});
    if (t->shape() != Dims{num_dirs, batch, hidden})
      ctx.fail(std::string(name) + " has shape " + dims_str(t->shape()) +
               " (as num_directions, batch, hidden)");
    return t;
  };
  std::optional<Tensor> init_h = initial(5, "initial_h");
  std::optional<Tensor> init_c, P;
  if (kind == RnnKind::lstm) {
    init_c = initial(6, "initial_c");
    P = ctx.optional_tensor(7);
    if (P && P->shape() != Dims{num_dirs, 3 * hidden})
      ctx.fail("P has shape " + dims_str(P->shape()) + ", expected " + dims_str({num_dirs, 3 * hidden}));
  }

  std::vector<std::string> act_names = ctx.attr_strings("activations");
  if (act_names.empty()) {
    for (int64_t d = 0; d < num_dirs; ++d) {
      if (kind == RnnKind::rnn)
        act_names.push_back("Tanh");
      else if (kind == RnnKind::gru)
        act_names.insert(act_names.end(), {"Sigmoid", "Tanh"});
      else
        act_names.insert(act_names.end(), {"Sigmoid", "Tanh", "Tanh"});
    }
  } else if (int64_t(act_names.size()) == acts_per_dir && num_dirs == 2) {
    std::vector<std::string> twice = act_names;
    act_names.insert(act_names.end(), twice.begin(), twice.end());
  }
  if (int64_t(act_names.size()) != acts_per_dir * num_dirs)
    ctx.fail("activations has " + std::to_string(act_names.size()) + " entries, expected " +
             std::to_string(acts_per_dir * num_dirs));
  std::vector<Activation> acts = parse_activations(ctx, act_names);

  std::optional<double> clip;
  if (ctx.has_attr("clip")) clip = ctx.attr_float("clip", 0);
  auto clipped = [&](const Tensor& x) { return clip ? x.clip(-*clip, *clip) : x; };
  const bool linear_before_reset = kind == RnnKind::gru && ctx.attr_int("linear_before_reset", 0) != 0;
  const bool input_forget = kind == RnnKind::lstm && ctx.attr_int("input_forget", 0) != 0;

  std::vector<Tensor> Ys, Yhs, Ycs;
  for (int64_t d = 0; d < num_dirs; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const Activation* f = &acts[size_t(d * acts_per_dir)];
    Tensor Wd = W[d], Rd = R[d];
    Tensor Wb = Tensor::zeros({num_gates * hidden}, dt, X.device()), Rb = Wb;
    if (B) {
      Tensor Bd = (*B)[d];
      Wb = Bd.shrink({{0, num_gates * hidden}});
      Rb = Bd.shrink({{num_gates * hidden, 2 * num_gates * hidden}});
    }
    // Input projections of every step at once: (seq, batch, gates*hidden). The recurrent bias joins
    // them except for GRU's hidden gate, where it sits inside the reset product.
    Tensor XW = X.matmul(Wd.T()) + Wb;
    Tensor RT = Rd.T(); // (hidden, gates*hidden)
    if (kind != RnnKind::gru)
      XW = XW + Rb;
    else
      XW = XW + Tensor::cat({gate(Rb, 0, hidden), gate(Rb, 1, hidden), gate(Rb, 2, hidden).zeros_like()}, 0);

    Tensor H = init_h ? (*init_h)[d] : Tensor::zeros({batch, hidden}, dt, X.device());
    Tensor C = init_c ? (*init_c)[d] : Tensor::zeros({batch, hidden}, dt, X.device());
    std::optional<Tensor> Pi, Po, Pf;
    if (P) {
      Tensor Pd = (*P)[d];
      Pi = gate(Pd, 0, hidden), Po = gate(Pd, 1, hidden), Pf = gate(Pd, 2, hidden);
    }
    std::vector<Tensor> Yd(size_t(seq), Tensor::zeros({batch, hidden}, dt, X.device()));
    for (int64_t s = 0; s < seq; ++s) {
      const int64_t t = reverse ? seq - 1 - s : s;
      Tensor xw = XW[t]; // (batch, gates*hidden)
      Tensor Hn = H, Cn = C;
      if (kind == RnnKind::rnn) {
        Hn = f[0](clipped(xw + H.matmul(RT)));
      } else if (kind == RnnKind::gru) {
        Tensor Rz = gate(RT, 0, hidden), Rr = gate(RT, 1, hidden), Rh = gate(RT, 2, hidden);
        Tensor z = f[0](clipped(gate(xw, 0, hidden) + H.matmul(Rz)));
        Tensor r = f[0](clipped(gate(xw, 1, hidden) + H.matmul(Rr)));
        Tensor Rbh = gate(Rb, 2, hidden);
        Tensor hh = linear_before_reset ? f[1](clipped(gate(xw, 2, hidden) + r * (H.matmul(Rh) + Rbh)))
                                        : f[1](clipped(gate(xw, 2, hidden) + (r * H).matmul(Rh) + Rbh));
        Hn = (1.0 - z) * hh + z * H;
      } else {
        Tensor g = xw + H.matmul(RT); // gates i, o, f, c
        Tensor gi = gate(g, 0, hidden), go = gate(g, 1, hidden), gf = gate(g, 2, hidden),
               gc = gate(g, 3, hidden);
        if (Pi) gi = gi + *Pi * C;
        if (Pf) gf = gf + *Pf * C;
        Tensor i = f[0](clipped(gi));
        Tensor fg = input_forget ? 1.0 - i : f[0](clipped(gf));
        Cn = fg * C + i * f[1](clipped(gc));
        if (Po) go = go + *Po * Cn;
        Tensor o = f[0](clipped(go));
        Hn = o * f[2](Cn);
      }
      if (seq_lens) {
        Tensor live = seq_lens->gt(Tensor::scalar(double(t), dtypes::int64, X.device())); // (batch, 1)
        H = live.where(Hn, H);
        C = live.where(Cn, C);
        Yd[size_t(t)] = live.where(Hn, Hn.zeros_like());
      } else {
        H = Hn, C = Cn;
        Yd[size_t(t)] = Hn;
      }
    }
    Ys.push_back(Tensor::stack(Yd, 0)); // (seq, batch, hidden)
    Yhs.push_back(H);
    Ycs.push_back(C);
  }
  Tensor Y = Tensor::stack(Ys, 1), Yh = Tensor::stack(Yhs, 0), Yc = Tensor::stack(Ycs, 0);
  if (layout == 1) {
    Y = Y.permute({2, 0, 1, 3});
    Yh = Yh.permute({1, 0, 2});
    Yc = Yc.permute({1, 0, 2});
  }
  std::vector<Value> out{Y, Yh};
  if (kind == RnnKind::lstm) out.push_back(Yc);
  out.resize(std::min(out.size(), std::max<size_t>(ctx.num_outputs(), 1)));
  return out;
}

} // namespace

void register_rnn_ops(OpTable& table) {
  table["RNN"] = [](OpContext& ctx) { return run_rnn(ctx, RnnKind::rnn); };
  table["GRU"] = [](OpContext& ctx) { return run_rnn(ctx, RnnKind::gru); };
  table["LSTM"] = [](OpContext& ctx) { return run_rnn(ctx, RnnKind::lstm); };
}

} // namespace tg::onnx
