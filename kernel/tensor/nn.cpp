// tg::nn: module walking (names, state dicts, train mode), layers and losses, all from Tensor ops.
#include "kernel/tensor/nn.hpp"

#include "kernel/tensor/attention.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <set>

namespace tg::nn {

namespace {

// Walks a module tree, handing each tensor its dotted name.
class Walker : public MemberVisitor {
public:
  std::function<void(const std::string&, Tensor&, bool /*is_parameter*/)> tensor;
  std::function<void(Module&)> module_entered;

  void walk(Module& root) {
    if (module_entered) module_entered(root);
    root.members(*this);
  }

protected:
  void on_parameter(const std::string& name, Tensor& t) override {
    if (tensor) tensor(prefix_ + name, t, true);
  }
  void on_buffer(const std::string& name, Tensor& t) override {
    if (tensor) tensor(prefix_ + name, t, false);
  }
  void on_module(const std::string& name, Module& m) override {
    std::string saved = prefix_;
    prefix_ += name + ".";
    if (module_entered) module_entered(m);
    m.members(*this);
    prefix_ = saved;
  }

private:
  std::string prefix_;
};

// Every named tensor (parameters and buffers), in order, without deduplication.
std::vector<std::pair<std::string, Tensor>> named_tensors(Module& m, bool parameters, bool buffers) {
  std::vector<std::pair<std::string, Tensor>> out;
  Walker w;
  w.tensor = [&](const std::string& name, Tensor& t, bool is_param) {
    if (is_param ? parameters : buffers) out.emplace_back(name, t);
  };
  w.walk(m);
  return out;
}

std::vector<std::pair<std::string, Tensor>> dedup(std::vector<std::pair<std::string, Tensor>> v) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (auto& [name, t] : v) {
    bool seen = std::any_of(out.begin(), out.end(), [&](const auto& e) { return e.second.is(t); });
    if (!seen) out.emplace_back(std::move(name), std::move(t));
  }
  return out;
}

std::string describe(const Tensor& t) { return dims_str(t.shape()) + " " + t.dtype().name(); }

Dims without_axis(const Dims& d, size_t axis) {
  Dims out = d;
  out.erase(out.begin() + int64_t(axis));
  return out;
}

void check_smoothing(double ls, const char* fn) {
  if (!(ls >= 0 && ls <= 1))
    throw TensorError(std::string(fn) + ": label_smoothing must be in [0, 1], got " + std::to_string(ls));
}

Tensor as_float_like(const Tensor& t, const Tensor& like) {
  return t.dtype().is_float() ? t : t.cast(like.dtype());
}

} // namespace

// ---- Module ----

Tensor Module::forward(const Tensor&) {
  throw Error("this module does not take a single input (forward(x) is not defined for it)");
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() {
  return dedup(named_tensors(*this, true, false));
}

std::vector<Tensor> Module::parameters() {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_parameters()) out.push_back(t);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers() {
  return dedup(named_tensors(*this, false, true));
}

std::vector<Tensor> Module::buffers() {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_buffers()) out.push_back(t);
  return out;
}

std::map<std::string, Tensor> Module::state_dict() {
  std::map<std::string, Tensor> out;
  for (auto& [name, t] : named_tensors(*this, true, true)) out.emplace(name, t);
  return out;
}

void Module::load_state_dict(const std::map<std::string, Tensor>& state, bool strict) {
  auto own = named_tensors(*this, true, true);
  std::set<std::string> own_names;
  std::vector<std::string> missing, unexpected, mis_shaped, mis_typed;
  std::vector<std::pair<Tensor, Tensor>> updates; // (target, value)
  for (auto& [name, t] : own) {
    own_names.insert(name);
    auto it = state.find(name);
    if (it == state.end()) {
      missing.push_back(name + " " + describe(t));
      continue;
    }
    const Tensor& v = it->second;
    if (v.shape() != t.shape()) {
      mis_shaped.push_back(name + ": expected " + dims_str(t.shape()) + ", got " + dims_str(v.shape()));
      continue;
    }
    if (v.dtype() != t.dtype()) {
      mis_typed.push_back(name + ": expected " + t.dtype().name() + ", got " + v.dtype().name());
      continue;
    }
    updates.emplace_back(t, v);
  }
  for (const auto& [name, v] : state)
    if (!own_names.count(name)) unexpected.push_back(name + " " + describe(v));
  std::string msg;
  auto list = [&](const char* what, const std::vector<std::string>& items) {
    if (items.empty()) return;
    msg += msg.empty() ? "load_state_dict: " : "; ";
    msg += what;
    for (size_t i = 0; i < items.size(); ++i) msg += (i ? ", " : " ") + items[i];
  };
  if (strict) {
    list("missing keys:", missing);
    list("unexpected keys:", unexpected);
  }
  list("shape mismatch:", mis_shaped);
  list("dtype mismatch:", mis_typed);
  if (!msg.empty()) throw StateDictError(msg);
  std::vector<Tensor> targets;
  for (auto& [t, v] : updates) {
    if (v.is(t)) continue;
    Tensor target = t;
    target.assign(v.to(t.device()).contiguous());
    targets.push_back(target);
  }
  std::vector<Tensor*> ptrs;
  for (auto& t : targets) ptrs.push_back(&t);
  Tensor::realize_all(ptrs);
}

Module& Module::train(bool mode) {
  Walker w;
  w.module_entered = [mode](Module& m) { m.training_ = mode; };
  w.walk(*this);
  return *this;
}

void Module::zero_grad() {
  for (auto& t : parameters()) t.zero_grad();
}

Tensor Sequential::forward(const Tensor& x) {
  Tensor out = x;
  for (auto& layer : layers) out = layer->forward(out);
  return out;
}

// ---- init ----

Tensor kaiming_uniform(const Dims& shape, double a, DType dtype, const std::string& device) {
  if (shape.empty()) throw TensorError("kaiming_uniform needs a shape of at least 1 dim");
  int64_t fan_in = dims_prod(Dims(shape.begin() + 1, shape.end()));
  if (fan_in <= 0) throw TensorError("kaiming_uniform: fan_in of shape " + dims_str(shape) + " is 0");
  double bound = std::sqrt(3.0) * std::sqrt(2.0 / (1.0 + a * a)) / std::sqrt(double(fan_in));
  Tensor t = Tensor::uniform(shape, -bound, bound, dtype, device);
  return t.realize();
}

Tensor glorot_uniform(const Dims& shape, DType dtype, const std::string& device) {
  if (shape.empty()) throw TensorError("glorot_uniform needs a shape of at least 1 dim");
  int64_t fans = shape[0] + dims_prod(Dims(shape.begin() + 1, shape.end()));
  if (fans <= 0) throw TensorError("glorot_uniform: shape " + dims_str(shape) + " has no fan");
  double bound = std::sqrt(6.0 / double(fans));
  Tensor t = Tensor::uniform(shape, -bound, bound, dtype, device);
  return t.realize();
}

namespace {
Tensor trainable(Tensor t) {
  t.realize();
  t.requires_grad_();
  return t;
}
void require_positive(int64_t v, const char* what, const char* layer) {
  if (v <= 0)
    throw TensorError(std::string(layer) + ": " + what + " must be positive, got " + std::to_string(v));
}
} // namespace

// ---- layers ----

Linear::Linear(int64_t in_features, int64_t out_features, bool has_bias)
    : weight((require_positive(in_features, "in_features", "Linear"),
              require_positive(out_features, "out_features", "Linear"),
              trainable(kaiming_uniform({out_features, in_features}, std::sqrt(5.0))))) {
  double bound = 1.0 / std::sqrt(double(in_features));
  if (has_bias) bias = trainable(Tensor::uniform({out_features}, -bound, bound));
}

Tensor Linear::forward(const Tensor& x) {
  int64_t in = weight.shape()[1];
  if (x.ndim() < 1 || x.shape().back() != in)
    throw TensorError("Linear: input " + dims_str(x.shape()) + " does not end in in_features " +
                      std::to_string(in));
  return x.linear(weight, bias);
}

namespace {
Tensor conv_weight(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t groups) {
  require_positive(in_channels, "in_channels", "Conv2d");
  require_positive(out_channels, "out_channels", "Conv2d");
  require_positive(kernel_size, "kernel_size", "Conv2d");
  require_positive(groups, "groups", "Conv2d");
  if (in_channels % groups || out_channels % groups)
    throw TensorError("Conv2d: in_channels " + std::to_string(in_channels) + " and out_channels " +
                      std::to_string(out_channels) + " must be divisible by groups " +
                      std::to_string(groups));
  return trainable(
      kaiming_uniform({out_channels, in_channels / groups, kernel_size, kernel_size}, std::sqrt(5.0)));
}
} // namespace

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride_,
               int64_t padding_, int64_t dilation_, int64_t groups_, bool has_bias)
    : weight(conv_weight(in_channels, out_channels, kernel_size, groups_)), stride(stride_),
      padding(padding_), dilation(dilation_), groups(groups_) {
  double bound = 1.0 / std::sqrt(double(in_channels / groups * kernel_size * kernel_size));
  if (has_bias) bias = trainable(Tensor::uniform({out_channels}, -bound, bound));
}

Tensor Conv2d::forward(const Tensor& x) { return x.conv2d(weight, bias, stride, padding, dilation, groups); }

BatchNorm::BatchNorm(int64_t features, double eps_, bool affine, bool track_running_stats, double momentum_)
    : num_features(features), eps(eps_), momentum(momentum_) {
  require_positive(features, "num_features", "BatchNorm");
  if (affine) {
    weight = trainable(Tensor::ones({features}));
    bias = trainable(Tensor::zeros({features}));
  }
  if (track_running_stats) {
    running_mean = Tensor::zeros({features}).contiguous().realize();
    running_var = Tensor::ones({features}).contiguous().realize();
    num_batches_tracked = Tensor::zeros({1}, dtypes::int64).contiguous().realize();
  }
}

Tensor BatchNorm::forward(const Tensor& x) {
  if (x.ndim() < 2 || x.shape()[1] != num_features)
    throw TensorError("BatchNorm: input " + dims_str(x.shape()) + " needs (N, " +
                      std::to_string(num_features) + ", ...)");
  Dims bshape(size_t(x.ndim()), 1);
  bshape[1] = num_features;
  Axes reduce_axes;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (d != 1) reduce_axes.push_back(d);
  std::optional<Tensor> mean, var;
  if (training() || !running_mean) {
    int64_t n = x.numel() / num_features;
    if (n <= 1 && training())
      throw TensorError("BatchNorm: training needs more than 1 value per channel, input " +
                        dims_str(x.shape()));
    Tensor xf = x.dtype().is_float() ? x : x.cast(dtypes::default_float);
    mean = xf.mean(reduce_axes);
    Tensor centered = xf - mean->detach().reshape(bshape); // d(var)/d(mean) is 0
    var = (centered * centered).mean(reduce_axes);
    if (training() && running_mean) {
      std::vector<Tensor*> stats = {&*running_mean, &*running_var, &*num_batches_tracked};
      Tensor::realize_all(stats); // an update still pending from the last step: keep graphs short
      double unbias = double(n) / double(n - 1);
      running_mean->assign(*running_mean * (1 - momentum) + mean->detach() * momentum);
      running_var->assign(*running_var * (1 - momentum) + var->detach() * (momentum * unbias));
      num_batches_tracked->assign(*num_batches_tracked + 1);
    }
  } else {
    mean = *running_mean;
    var = *running_var;
  }
  // x * scale + shift with per-channel scale = weight / sqrt(var + eps) and shift = bias -
  // mean * scale (as PyTorch's CPU kernel computes it): the backward pass then reduces the batch
  // twice, for d(scale) = sum(g * x) and d(shift) = sum(g), and the rest (weight, bias, mean and
  // variance gradients) is per-channel arithmetic. (x - mean) * weight * rsqrt + bias reduced four
  // times (g and g * x each in two forms); beautiful_mnist's step ran two big reduces per layer more.
  Tensor scale = (*var + eps).rsqrt();
  if (weight) scale = scale * *weight;
  Tensor shift = -*mean * scale;
  if (bias) shift = shift + *bias;
  return x * scale.reshape(bshape) + shift.reshape(bshape);
}

LayerNorm::LayerNorm(Dims shape, double eps_, bool elementwise_affine)
    : normalized_shape(std::move(shape)), eps(eps_) {
  if (normalized_shape.empty()) throw TensorError("LayerNorm needs a normalized shape of at least 1 dim");
  for (auto d : normalized_shape) require_positive(d, "normalized_shape entries", "LayerNorm");
  if (elementwise_affine) {
    weight = trainable(Tensor::ones(normalized_shape));
    bias = trainable(Tensor::zeros(normalized_shape));
  }
}

Tensor LayerNorm::forward(const Tensor& x) {
  int64_t k = int64_t(normalized_shape.size());
  if (x.ndim() < k || Dims(x.shape().end() - k, x.shape().end()) != normalized_shape)
    throw TensorError("LayerNorm: input " + dims_str(x.shape()) + " does not end in normalized shape " +
                      dims_str(normalized_shape));
  Axes axes;
  for (int64_t i = 0; i < k; ++i) axes.push_back(-1 - i);
  Tensor centered = x - x.mean(axes, true);
  Tensor out = centered * ((centered * centered).mean(axes, true) + eps).rsqrt();
  if (weight) out = out * *weight;
  if (bias) out = out + *bias;
  return out;
}

RMSNorm::RMSNorm(int64_t dim, double eps_)
    : eps(eps_), weight((require_positive(dim, "dim", "RMSNorm"), trainable(Tensor::ones({dim})))) {}

Tensor RMSNorm::forward(const Tensor& x) {
  int64_t dim = weight.shape()[0];
  if (x.ndim() < 1 || x.shape().back() != dim)
    throw TensorError("RMSNorm: input " + dims_str(x.shape()) + " does not end in dim " +
                      std::to_string(dim));
  return x * ((x * x).mean({-1}, true) + eps).rsqrt() * weight;
}

Embedding::Embedding(int64_t vocab, int64_t embed)
    : vocab_size(vocab), embed_size(embed), weight((require_positive(vocab, "vocab_size", "Embedding"),
                                                    require_positive(embed, "embed_size", "Embedding"),
                                                    trainable(glorot_uniform({vocab, embed})))) {}

Tensor Embedding::forward(const Tensor& idx) {
  if (idx.dtype().is_float() || idx.dtype().is_bool())
    throw TensorError("Embedding: indices must be integers, got " + idx.dtype().name() + " " +
                      dims_str(idx.shape()));
  Tensor classes = Tensor::arange(0, double(vocab_size), 1, idx.dtype(), idx.device());
  Tensor onehot = idx.unsqueeze(-1).eq(classes).cast(weight.dtype()); // (..., vocab)
  return onehot.matmul(weight);
}

Dropout::Dropout(double p_) : p(p_) {
  if (!(p >= 0 && p <= 1)) throw TensorError("Dropout: p must be in [0, 1], got " + std::to_string(p));
}

Tensor Dropout::forward(const Tensor& x) {
  if (!training() || p == 0) return x;
  if (p == 1) return x * 0;
  Tensor r = Tensor::rand(x.shape(), dtypes::float32, x.device());
  // the mask is its own kernel (as tinygrad's .contiguous()): the random bits are not recomputed
  // inside consumers such as the matmul of a following Linear
  Tensor keep = r.ge(r.const_like(p)).contiguous();
  return keep.where(x, x.zeros_like()) * (1.0 / (1.0 - p));
}

Tensor gelu(const Tensor& x, const std::string& approximate) {
  if (approximate == "tanh") return x.gelu();
  if (approximate != "none")
    throw TensorError("gelu: approximate must be \"none\" or \"tanh\", got \"" + approximate + "\"");
  return 0.5 * x * (1.0 + (x * (1 / std::numbers::sqrt2)).erf());
}

GELU::GELU(std::string approximate_) : approximate(std::move(approximate_)) {
  if (approximate != "none" && approximate != "tanh")
    throw TensorError("GELU: approximate must be \"none\" or \"tanh\", got \"" + approximate + "\"");
}

Tensor GELU::forward(const Tensor& x) { return gelu(x, approximate); }

namespace {
int64_t checked_embed_dim(int64_t embed_dim, int64_t num_heads) {
  require_positive(embed_dim, "embed_dim", "MultiheadAttention");
  require_positive(num_heads, "num_heads", "MultiheadAttention");
  if (embed_dim % num_heads)
    throw TensorError("MultiheadAttention: embed_dim " + std::to_string(embed_dim) +
                      " must be divisible by num_heads " + std::to_string(num_heads));
  return embed_dim;
}
} // namespace

MultiheadAttention::MultiheadAttention(int64_t embed_dim_, int64_t num_heads_, double dropout_, bool bias)
    : embed_dim(checked_embed_dim(embed_dim_, num_heads_)), num_heads(num_heads_), dropout(dropout_),
      in_proj_weight(trainable(glorot_uniform({3 * embed_dim_, embed_dim_}))),
      out_proj(embed_dim_, embed_dim_, bias) {
  if (!(dropout >= 0 && dropout <= 1))
    throw TensorError("MultiheadAttention: dropout must be in [0, 1], got " + std::to_string(dropout));
  if (bias) {
    in_proj_bias = trainable(Tensor::zeros({3 * embed_dim}));
    out_proj.bias = trainable(Tensor::zeros({embed_dim}));
  }
}

Tensor MultiheadAttention::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                   const std::optional<Tensor>& attn_mask, bool is_causal,
                                   const std::optional<Tensor>& key_padding_mask) {
  const int64_t E = embed_dim, H = num_heads, D = E / H;
  auto is_nse = [&](const Tensor& t) { return t.ndim() == 3 && t.shape()[2] == E; };
  if (!is_nse(query) || !is_nse(key) || !is_nse(value) || key.shape()[0] != query.shape()[0] ||
      value.shape()[0] != query.shape()[0] || value.shape()[1] != key.shape()[1])
    throw TensorError("MultiheadAttention: query " + dims_str(query.shape()) + ", key " +
                      dims_str(key.shape()) + ", value " + dims_str(value.shape()) + " must be (N, L, " +
                      std::to_string(E) + "), (N, S, " + std::to_string(E) + "), (N, S, " +
                      std::to_string(E) + ") (batch first)");
  const int64_t N = query.shape()[0], L = query.shape()[1], S = key.shape()[1];
  // rows [part * E, (part + 1) * E) of the packed projection: query 0, key 1, value 2
  auto project = [&](const Tensor& x, int64_t part) {
    std::optional<Tensor> b;
    if (in_proj_bias) b = in_proj_bias->shrink({{part * E, (part + 1) * E}});
    return x.linear(in_proj_weight.shrink({{part * E, (part + 1) * E}, {0, E}}), b);
  };
  std::optional<Tensor> q, k, v;
  if (query.is(key) && key.is(value)) { // self-attention: one matmul with the packed weight
    Tensor qkv = query.linear(in_proj_weight, in_proj_bias);
    auto part = [&](int64_t i) { return qkv.shrink({{0, N}, {0, L}, {i * E, (i + 1) * E}}); };
    q = part(0);
    k = part(1);
    v = part(2);
  } else {
    q = project(query, 0);
    k = project(key, 1);
    v = project(value, 2);
  }
  auto heads = [&](const Tensor& t, int64_t len) { return t.reshape({N, len, H, D}).permute({0, 2, 1, 3}); };
  AttentionOptions options;
  options.dropout_p = training() ? dropout : 0;
  // torch's module takes masks with bool true = NOT attended; scaled_dot_product_attention's bool
  // true = attended. Float masks are added to the scores either way.
  auto sdpa_form = [](const Tensor& m) { return m.dtype().is_bool() ? m.logical_not() : m; };
  std::vector<Tensor> masks;
  if (attn_mask) {
    Tensor m = *attn_mask;
    if (m.shape() == Dims{N * H, L, S})
      m = m.reshape({N, H, L, S});
    else if (m.shape() != Dims{L, S})
      throw TensorError("MultiheadAttention: attn_mask " + dims_str(m.shape()) + " must be (L, S) " +
                        dims_str({L, S}) + " or (N * num_heads, L, S) " + dims_str({N * H, L, S}));
    masks.push_back(sdpa_form(m));
  }
  if (key_padding_mask) {
    const Tensor& m = *key_padding_mask;
    if (m.shape() != Dims{N, S})
      throw TensorError("MultiheadAttention: key_padding_mask " + dims_str(m.shape()) + " must be (N, S) " +
                        dims_str({N, S}));
    masks.push_back(sdpa_form(m).reshape({N, 1, 1, S}));
  }
  // scaled_dot_product_attention takes is_causal or a mask: with a mask the causal part joins it
  if (is_causal && !masks.empty())
    masks.push_back(Tensor::ones({L, S}, dtypes::bool_, query.device()).tril(0));
  else
    options.is_causal = is_causal;
  if (!masks.empty()) {
    const bool all_bool =
        std::all_of(masks.begin(), masks.end(), [](const Tensor& m) { return m.dtype().is_bool(); });
    auto additive = [&](const Tensor& m) { // a bool mask among float ones: attended + 0, masked + -inf
      return all_bool || !m.dtype().is_bool()
                 ? m
                 : m.where(m.const_like(0.0, query.dtype()), m.const_like(-INFINITY, query.dtype()));
    };
    Tensor combined = additive(masks[0]);
    for (size_t i = 1; i < masks.size(); ++i)
      combined = all_bool ? combined.logical_and(masks[i]) : combined + additive(masks[i]);
    options.mask = combined;
  }
  Tensor out = scaled_dot_product_attention(heads(*q, L), heads(*k, S), heads(*v, S), options);
  return out_proj.forward(out.permute({0, 2, 1, 3}).reshape({N, L, E}));
}

Tensor clip_grad_norm(const std::vector<Tensor>& params, double max_norm) {
  if (!(max_norm >= 0))
    throw TensorError("clip_grad_norm: max_norm must be >= 0, got " + std::to_string(max_norm));
  std::vector<std::pair<Tensor, Tensor>> with_grad; // (parameter, gradient)
  for (const auto& p : params)
    if (auto g = p.grad()) with_grad.emplace_back(p, *g);
  if (with_grad.empty()) return Tensor::scalar(0);
  const std::string& device = with_grad[0].second.device();
  std::optional<Tensor> total;
  for (const auto& [p, g] : with_grad) {
    Tensor wide = g.dtype().itemsize() < 4 ? g.cast(dtypes::float32) : g; // half squares overflow
    Tensor sq = wide.square().sum();
    if (sq.device() != device) sq = sq.to(device);
    total = total ? *total + sq : sq;
  }
  Tensor norm = total->sqrt();
  Tensor coef = (max_norm / (norm + 1e-6)).minimum(norm.const_like(1));
  for (auto& [p, g] : with_grad) {
    Tensor c = coef.device() == g.device() ? coef : coef.to(g.device());
    p.set_grad(g * c.cast(g.dtype()));
  }
  return norm;
}

// ---- losses ----

Tensor sparse_categorical_crossentropy(const Tensor& logits, const Tensor& labels, int64_t ignore_index,
                                       double label_smoothing) {
  check_smoothing(label_smoothing, "sparse_categorical_crossentropy");
  if (logits.ndim() < 1 || labels.shape() != without_axis(logits.shape(), size_t(logits.ndim() - 1)))
    throw TensorError(
        "sparse_categorical_crossentropy: logits " + dims_str(logits.shape()) + " need labels of shape " +
        (logits.ndim() < 1 ? std::string("(...)")
                           : dims_str(without_axis(logits.shape(), size_t(logits.ndim() - 1)))) +
        ", got " + dims_str(labels.shape()));
  if (labels.dtype().is_float() || labels.dtype().is_bool())
    throw TensorError("sparse_categorical_crossentropy: labels must be integer class indices, got " +
                      labels.dtype().name());
  int64_t classes = logits.shape().back();
  Tensor logp = logits.log_softmax(-1);
  Tensor ids = Tensor::arange(0, double(classes), 1, labels.dtype(), labels.device());
  // Selected with where, not multiplied by 0/1 masks: an unselected -inf log-probability (or an
  // ignored row's) times 0 would be NaN.
  Tensor onehot = labels.unsqueeze(-1).eq(ids);
  Tensor per = onehot.where(logp, logp.const_like(0)).sum({-1});
  if (label_smoothing != 0) per = per * (1 - label_smoothing) + logp.mean({-1}) * label_smoothing;
  Tensor keep = labels.ne(labels.const_like(double(ignore_index)));
  return -(keep.where(per, per.const_like(0)).sum() / keep.cast(logp.dtype()).sum());
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, double label_smoothing) {
  check_smoothing(label_smoothing, "cross_entropy");
  if (logits.ndim() < 1)
    throw TensorError("cross_entropy: logits must have a class dim, got " + dims_str(logits.shape()));
  int64_t ax = logits.ndim() == 1 ? 0 : 1, classes = logits.shape()[size_t(ax)];
  Tensor logp = logits.log_softmax(ax);
  std::optional<Tensor> y;
  if (!target.dtype().is_float()) {
    Dims want = without_axis(logits.shape(), size_t(ax));
    if (target.shape() != want || target.dtype().is_bool())
      throw TensorError("cross_entropy: logits " + dims_str(logits.shape()) +
                        " need integer class indices of shape " + dims_str(want) +
                        " or probabilities of the logits' shape, got " + target.dtype().name() + " " +
                        dims_str(target.shape()));
    Dims cshape(size_t(logits.ndim()), 1);
    cshape[size_t(ax)] = classes;
    Tensor ids = Tensor::arange(0, double(classes), 1, target.dtype(), target.device()).reshape(cshape);
    y = target.unsqueeze(ax).eq(ids).cast(logp.dtype());
  } else {
    if (target.shape() != logits.shape())
      throw TensorError("cross_entropy: probability target " + dims_str(target.shape()) +
                        " differs from logits " + dims_str(logits.shape()));
    y = target;
  }
  if (label_smoothing != 0) y = *y * (1 - label_smoothing) + label_smoothing / double(classes);
  return -(logp * *y).sum({ax}).mean();
}

Tensor binary_crossentropy(const Tensor& probs, const Tensor& targets) {
  if (probs.shape() != targets.shape())
    throw TensorError("binary_crossentropy: probs " + dims_str(probs.shape()) + " and targets " +
                      dims_str(targets.shape()) + " differ in shape");
  Tensor p = probs.dtype().is_float() ? probs : probs.cast(dtypes::default_float);
  Tensor y = as_float_like(targets, p);
  Tensor log_p = p.log(), log_q = (1.0 - p).log();
  log_p = log_p.maximum(log_p.const_like(-100));
  log_q = log_q.maximum(log_q.const_like(-100));
  return -(y * log_p + (1.0 - y) * log_q).mean();
}

Tensor binary_crossentropy_with_logits(const Tensor& logits, const Tensor& targets) {
  if (logits.shape() != targets.shape())
    throw TensorError("binary_crossentropy_with_logits: logits " + dims_str(logits.shape()) +
                      " and targets " + dims_str(targets.shape()) + " differ in shape");
  Tensor x = logits.dtype().is_float() ? logits : logits.cast(dtypes::default_float);
  Tensor y = as_float_like(targets, x);
  return (x.maximum(x.const_like(0)) - x * y + ((-x.abs()).exp() + 1.0).log()).mean();
}

Tensor mse(const Tensor& pred, const Tensor& target) {
  if (pred.shape() != target.shape())
    throw TensorError("mse: pred " + dims_str(pred.shape()) + " and target " + dims_str(target.shape()) +
                      " differ in shape");
  Tensor d = pred - target;
  return (d * d).mean();
}

} // namespace tg::nn
