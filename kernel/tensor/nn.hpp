// tg::nn: modules (named parameters and buffers, state dicts, train/eval), the common layers with
// tinygrad's initialization, and the usual losses. Everything is built from Tensor ops, so layers
// differentiate through autograd and fuse like any other graph.
//
// A module lists its members in `members(MemberVisitor&)`; named_parameters(), state_dict(),
// load_state_dict() and train() all walk that list, so a user module only writes
//   void members(MemberVisitor& v) override { v.module("l1", l1); v.module("l2", l2); }
// Members are visited from the live object, so modules may be copied and moved freely. Tensors
// have reference semantics: a copied module shares its parameters with the original (like a
// Python reference); load_state_dict and optimizers update parameters in place with assign().
#pragma once

#include "kernel/tensor/tensor.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tg::nn {

// load_state_dict found missing, unexpected, mis-shaped or mis-typed entries; the message lists
// every offending name with its shapes/dtypes.
struct StateDictError : Error {
  using Error::Error;
};

class Module;

// Receives a module's members with their names (see Module::members).
class MemberVisitor {
public:
  virtual ~MemberVisitor() = default;
  // A trainable tensor (requires_grad).
  void parameter(const std::string& name, Tensor& t) { on_parameter(name, t); }
  // An absent optional member (a layer built without bias) is skipped.
  void parameter(const std::string& name, std::optional<Tensor>& t) {
    if (t) on_parameter(name, *t);
  }
  // State that is saved but not trained (BatchNorm running statistics).
  void buffer(const std::string& name, Tensor& t) { on_buffer(name, t); }
  void buffer(const std::string& name, std::optional<Tensor>& t) {
    if (t) on_buffer(name, *t);
  }
  // A child module; its members get the prefix "name.".
  void module(const std::string& name, Module& m) { on_module(name, m); }
  // A list of children: "name.0", "name.1", ... ("0", "1", ... for an empty name); modules or
  // shared_ptrs to modules.
  template <class M> void modules(const std::string& name, std::vector<M>& ms) {
    for (size_t i = 0; i < ms.size(); ++i) {
      std::string n = name.empty() ? std::to_string(i) : name + "." + std::to_string(i);
      if constexpr (requires { *ms[i]; })
        on_module(n, *ms[i]);
      else
        on_module(n, ms[i]);
    }
  }

protected:
  virtual void on_parameter(const std::string& name, Tensor& t) = 0;
  virtual void on_buffer(const std::string& name, Tensor& t) = 0;
  virtual void on_module(const std::string& name, Module& m) = 0;
};

class Module {
public:
  Module() = default;
  Module(const Module&) = default;
  Module(Module&&) = default;
  Module& operator=(const Module&) = default;
  Module& operator=(Module&&) = default;
  virtual ~Module() = default;

  // Lists this module's parameters, buffers and children, in order. The default has none.
  virtual void members(MemberVisitor&) {}
  // The module applied to one input; modules with another signature define their own call and
  // leave this throwing.
  virtual Tensor forward(const Tensor& x);
  Tensor operator()(const Tensor& x) { return forward(x); }

  // Trainable tensors with dotted names ("layers.0.weight"), in declaration order; a tensor
  // reachable under two names is listed once (first name).
  virtual std::vector<std::pair<std::string, Tensor>> named_parameters();
  std::vector<Tensor> parameters();
  std::vector<std::pair<std::string, Tensor>> named_buffers();
  std::vector<Tensor> buffers();
  // Parameters and buffers by name.
  std::map<std::string, Tensor> state_dict();
  // Copies each value into the tensor of that name (same shape and dtype; other devices are
  // copied over) and realizes them all in one schedule. strict: a missing or unexpected key is an
  // error; shape and dtype mismatches always are. Nothing is changed when it throws.
  void load_state_dict(const std::map<std::string, Tensor>& state, bool strict = true);

  // Training mode (the default, as in torch) for this module and all its children: BatchNorm
  // uses batch statistics and updates its running ones, Dropout drops.
  Module& train(bool mode = true);
  Module& eval() { return train(false); }
  bool training() const { return training_; }
  // Clears the gradient of every parameter.
  void zero_grad();

private:
  bool training_ = true;
};

// A module made from a function (an activation in a Sequential); no parameters.
class Function : public Module {
public:
  explicit Function(std::function<Tensor(const Tensor&)> fn) : fn_(std::move(fn)) {}
  Tensor forward(const Tensor& x) override { return fn_(x); }

private:
  std::function<Tensor(const Tensor&)> fn_;
};

// Children applied in order; named "0", "1", ... Copies share the child modules.
class Sequential : public Module {
public:
  Sequential() = default;
  template <class M>
  requires std::is_base_of_v<Module, std::decay_t<M>> Sequential& add(M&& m) {
    layers.push_back(std::make_shared<std::decay_t<M>>(std::forward<M>(m)));
    return *this;
  }
  Sequential& add(std::function<Tensor(const Tensor&)> fn) { return add(Function(std::move(fn))); }
  Tensor forward(const Tensor& x) override;
  void members(MemberVisitor& v) override { v.modules("", layers); }
  std::vector<std::shared_ptr<Module>> layers;
};

// ---- initialization (tinygrad's), realized ----
// uniform(-b, b) with b = sqrt(3) * sqrt(2 / (1 + a^2)) / sqrt(prod(shape[1:])).
Tensor kaiming_uniform(const Dims& shape, double a = 0.01, DType dtype = dtypes::float32,
                       const std::string& device = "");
// uniform(-1, 1) * sqrt(6 / (shape[0] + prod(shape[1:]))).
Tensor glorot_uniform(const Dims& shape, DType dtype = dtypes::float32, const std::string& device = "");

// ---- layers ----

// y = x @ weight.T + bias; weight (out, in), bias (out). Both uniform(-1/sqrt(in), 1/sqrt(in))
// (kaiming_uniform with a = sqrt(5)).
class Linear : public Module {
public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& x) override;
  void members(MemberVisitor& v) override {
    v.parameter("weight", weight);
    v.parameter("bias", bias);
  }
  Tensor weight;
  std::optional<Tensor> bias;
};

// Input (N, Cin, H, W), weight (Cout, Cin/groups, k, k): kaiming_uniform(a = sqrt(5)); bias
// uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = Cin/groups * k * k.
class Conv2d : public Module {
public:
  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, int64_t stride = 1,
         int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1, bool bias = true);
  Tensor forward(const Tensor& x) override;
  void members(MemberVisitor& v) override {
    v.parameter("weight", weight);
    v.parameter("bias", bias);
  }
  Tensor weight;
  std::optional<Tensor> bias;
  int64_t stride, padding, dilation, groups;
};

// Batch normalization over dim 1 of (N, C) or (N, C, ...) input. Training (or no running
// stats): normalizes with the batch mean and biased variance, and (when tracking) updates
// running_mean/var with momentum, the variance unbiased (n / (n - 1)), as torch does; eval: the
// running statistics. weight = 1, bias = 0 (affine); running_mean = 0, running_var = 1,
// num_batches_tracked = 0 (int64, shape (1,) as tinygrad). The running statistics are updated
// lazily with assign(): pass buffers() to the optimizer (or realize them) to compute them in the
// training step's schedule; a forward pass realizes any update still pending from the last one.
class BatchNorm : public Module {
public:
  explicit BatchNorm(int64_t num_features, double eps = 1e-5, bool affine = true,
                     bool track_running_stats = true, double momentum = 0.1);
  Tensor forward(const Tensor& x) override;
  void members(MemberVisitor& v) override {
    v.parameter("weight", weight);
    v.parameter("bias", bias);
    v.buffer("running_mean", running_mean);
    v.buffer("running_var", running_var);
    v.buffer("num_batches_tracked", num_batches_tracked);
  }
  int64_t num_features;
  double eps, momentum;
  std::optional<Tensor> weight, bias;
  std::optional<Tensor> running_mean, running_var, num_batches_tracked;
};
using BatchNorm2d = BatchNorm;

// Normalizes over the trailing dims `normalized_shape` (biased variance), then * weight + bias.
class LayerNorm : public Module {
public:
  explicit LayerNorm(Dims normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  explicit LayerNorm(int64_t dim, double epsilon = 1e-5, bool elementwise_affine = true)
      : LayerNorm(Dims{dim}, epsilon, elementwise_affine) {}
  Tensor forward(const Tensor& x) override;
  void members(MemberVisitor& v) override {
    v.parameter("weight", weight);
    v.parameter("bias", bias);
  }
  Dims normalized_shape;
  double eps;
  std::optional<Tensor> weight, bias;
};

// x * rsqrt(mean(x^2 over the last dim) + eps) * weight; weight = 1.
class RMSNorm : public Module {
public:
  explicit RMSNorm(int64_t dim, double eps = 1e-6);
  Tensor forward(const Tensor& x) override;
  void members(MemberVisitor& v) override { v.parameter("weight", weight); }
  double eps;
  Tensor weight;
};

// Rows of weight (vocab, dim) picked by an integer index tensor: (...) -> (..., dim), as a
// one-hot matmul (differentiable in weight). weight = glorot_uniform. Indices outside
// [0, vocab) give zero rows.
class Embedding : public Module {
public:
  Embedding(int64_t vocab_size, int64_t embed_size);
  Tensor forward(const Tensor& idx) override;
  void members(MemberVisitor& v) override { v.parameter("weight", weight); }
  int64_t vocab_size, embed_size;
  Tensor weight;
};

// In training: zeroes each element with probability p (Tensor::rand) and scales the rest by
// 1 / (1 - p); identity in eval or when p == 0.
class Dropout : public Module {
public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor& x) override;
  double p;
};

// torch.nn.GELU / functional.gelu: approximate "none" is exact, x / 2 * (1 + erf(x / sqrt(2)))
// (Tensor::erf, |error| < 2e-7); "tanh" is Tensor::gelu(), the tanh approximation. Another string
// throws TensorError.
Tensor gelu(const Tensor& x, const std::string& approximate = "none");

class GELU : public Module {
public:
  explicit GELU(std::string approximate = "none"); // checked here, not on the first forward
  Tensor forward(const Tensor& x) override;
  std::string approximate;
};

// torch.nn.MultiheadAttention(embed_dim, num_heads, dropout, bias, batch_first=True): query
// (N, L, E), key and value (N, S, E) -> (N, L, E) (the attention weights are not returned).
// The parameters have torch's state-dict names, so torch's weights load with load_state_dict:
// in_proj_weight (3E, E) stacks the query, key and value projections, in_proj_bias (3E), and
// out_proj (a Linear E -> E). Init as torch: in_proj_weight glorot (xavier) uniform, both biases
// 0, out_proj.weight as Linear's. attn_mask as torch's module takes it: (L, S) or
// (N * num_heads, L, S), bool true = NOT attended (the opposite of scaled_dot_product_attention's
// mask), float added to the scores. key_padding_mask (N, S): bool true = that key is padding (not
// attended), float added to every query's score of that key. is_causal masks the keys after each
// query (also combined with the masks). Dropout on the attention weights in training mode only.
class MultiheadAttention : public Module {
public:
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, double dropout = 0, bool bias = true);
  Tensor forward(const Tensor& query, const Tensor& key, const Tensor& value,
                 const std::optional<Tensor>& attn_mask = {}, bool is_causal = false,
                 const std::optional<Tensor>& key_padding_mask = {});
  Tensor forward(const Tensor& x) override { return forward(x, x, x); } // self-attention
  using Module::operator();
  Tensor operator()(const Tensor& query, const Tensor& key, const Tensor& value,
                    const std::optional<Tensor>& attn_mask = {}, bool is_causal = false,
                    const std::optional<Tensor>& key_padding_mask = {}) {
    return forward(query, key, value, attn_mask, is_causal, key_padding_mask);
  }
  void members(MemberVisitor& v) override {
    v.parameter("in_proj_weight", in_proj_weight);
    v.parameter("in_proj_bias", in_proj_bias);
    v.module("out_proj", out_proj);
  }
  int64_t embed_dim, num_heads;
  double dropout;
  Tensor in_proj_weight;
  std::optional<Tensor> in_proj_bias;
  Linear out_proj;
};

// ---- gradient utilities ----

// torch.nn.utils.clip_grad_norm_ (L2): returns the norm of all the gradients together as a lazy
// 0-d tensor and scales every gradient by min(1, max_norm / (norm + 1e-6)) with set_grad, lazily:
// nothing is read on the host, so the scaling fuses into the optimizer's schedule and replays
// under TinyJit. Parameters without a gradient are skipped; with none at all the norm is 0.
// Squares are summed in float32 at least, on the first gradient's device.
Tensor clip_grad_norm(const std::vector<Tensor>& params, double max_norm);

// ---- losses (mean over the examples) ----

// logits (..., C), labels (...) integer class indices. Entries equal to ignore_index are left
// out of the loss and of the count it is averaged over. With label smoothing e the per-example
// loss is (1 - e) * -log p[label] + e * mean_c(-log p[c]) (torch's definition).
Tensor sparse_categorical_crossentropy(const Tensor& logits, const Tensor& labels, int64_t ignore_index = -1,
                                       double label_smoothing = 0);
// logits (N, C, ...) with classes on dim 1 (or (C)); target either integer indices (N, ...) or
// probabilities of the logits' shape. Smoothing mixes the target with the uniform 1/C.
Tensor cross_entropy(const Tensor& logits, const Tensor& target, double label_smoothing = 0);
// probs and targets of one shape; each log is clamped at -100 as torch does.
Tensor binary_crossentropy(const Tensor& probs, const Tensor& targets);
// max(x, 0) - x * y + log(1 + exp(-|x|)): no overflow for large |x|.
Tensor binary_crossentropy_with_logits(const Tensor& logits, const Tensor& targets);
// mean((pred - target)^2); shapes must match.
Tensor mse(const Tensor& pred, const Tensor& target);

} // namespace tg::nn
