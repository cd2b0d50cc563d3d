// Tensor: a lazy n-d array. Every operation builds a UOp graph (interned, so the same expression
// is the same node); nothing runs until realize() or a read. Names and semantics follow tinygrad:
// numpy broadcasting, tinygrad's dtype promotion, reductions over axis lists with keepdim.
#pragma once

#include "kernel/ir/uop.hpp"
#include "kernel/schedule/schedule.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tg {

// Bad shapes, axes or arguments given to a tensor operation; the message names the values.
struct TensorError : Error {
  using Error::Error;
};

using Axes = std::vector<int64_t>;

// One dimension of a slice: [start, stop) with step (negative steps walk backwards). Ranges clamp
// to the dim, as in numpy; at(i) is one integer index (negative counts from the end), which must
// be in range: slice() throws TensorError otherwise.
struct Slice {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
  bool index = false; // made by at(): checked, not clamped
  static Slice all() { return {}; }
  static Slice at(int64_t i) {
    bool to_end = i == -1 || i == std::numeric_limits<int64_t>::max(); // i + 1 would be 0 or overflow
    return {i, to_end ? std::nullopt : std::optional<int64_t>(i + 1), 1, true};
  }
};

class Tensor;
class MultiTensor; // several devices: kernel/tensor/multi.hpp

// Per-dim begin/end amounts (padding, cropping), one pair per dim they apply to.
using Pads = std::vector<std::pair<int64_t, int64_t>>;

// How pad() fills: a constant, the mirror image without the edge (numpy "reflect"), the edge
// value repeated ("edge", torch "replicate"), or the other side of the dim ("wrap", "circular").
enum class PadMode { constant, reflect, edge, wrap };

// An n-d convolution over the last len(kernel) dims of (N, C, d1, ..., dn). Empty vectors mean
// 1 (stride, dilation) or 0 (padding); one entry each per spatial dim otherwise.
struct ConvOptions {
  Dims stride, dilation;
  Pads padding;
  int64_t groups = 1;
};

// A transposed convolution (the gradient of conv with respect to its input); output_padding adds
// to the end of each spatial dim, as in torch and ONNX.
struct ConvTransposeOptions {
  Dims stride, dilation, output_padding;
  Pads padding;
  int64_t groups = 1;
};

// n-d pooling over the last len(kernel) dims. stride defaults to the kernel, dilation to 1,
// padding to 0; ceil_mode keeps a last window that starts inside the (left-padded) input.
struct PoolOptions {
  Dims kernel, stride, dilation;
  Pads padding;
  bool ceil_mode = false;
};

// What scatter does where an index meets an element: replace it, or combine with what is there.
enum class ScatterReduce { none, add, mul, max, min };

// What a Tensor handle points to; copies of a Tensor share it (like torch tensors), operations
// make new ones.
struct TensorState {
  UOpRef uop; // swapped for its realized view on first use after realize (see Tensor::uop())
  // The expression `uop` had before that swap, while any graph still holds it: graphs built
  // earlier contain it, so autograd treats it as this tensor too.
  std::weak_ptr<const UOp> lazy;
  Dims shape;
  std::string device;
  bool requires_grad = false;
  std::shared_ptr<Tensor> grad;
  // The expression of the last copy keep_copy made of this value while it was stored: kept alive
  // here so that the realized-value cache keeps the copy's stored result, and the same copy asked
  // again (same key, same value) is this expression, not a new graph. Dropped when the value
  // changes (assign).
  UOpRef layout_copy;
  std::string layout_key;
  Dims layout_shape;
};

class Tensor {
public:
  // ---- creation ----
  Tensor(UOpRef uop, Dims shape, std::string device);
  template <class Elem>
  static Tensor from_vector(std::span<const Elem> data, Dims shape, std::optional<DType> dtype = {},
                            const std::string& device = "");
  template <class Elem>
  static Tensor from_vector(const std::vector<Elem>& data, Dims shape, std::optional<DType> dtype = {},
                            const std::string& device = "") {
    if constexpr (std::is_same_v<Elem, bool>) { // vector<bool> is packed: no span over it
      std::unique_ptr<bool[]> plain(new bool[data.size()]);
      std::copy(data.begin(), data.end(), plain.get());
      return from_vector(std::span<const bool>(plain.get(), data.size()), std::move(shape), dtype, device);
    } else {
      return from_vector(std::span<const Elem>(data), std::move(shape), dtype, device);
    }
  }
  // A tensor from raw little-endian bytes of `dtype` (size must match the shape; a scalar bool, int
  // or float dtype).
  static Tensor from_bytes(std::span<const std::byte> bytes, Dims shape, DType dtype,
                           const std::string& device = "");
  static Tensor scalar(double value, DType dtype = dtypes::float32, const std::string& device = "");
  static Tensor full(Dims shape, double value, DType dtype = dtypes::float32, const std::string& device = "");
  static Tensor zeros(Dims shape, DType dtype = dtypes::float32, const std::string& device = "");
  static Tensor ones(Dims shape, DType dtype = dtypes::float32, const std::string& device = "");
  static Tensor arange(double start, double stop, double step = 1, std::optional<DType> dtype = {},
                       const std::string& device = "");
  static Tensor arange(int64_t stop) { return arange(0, double(stop)); }
  static Tensor linspace(double start, double stop, int64_t steps, DType dtype = dtypes::float32,
                         const std::string& device = "");
  static Tensor eye(int64_t n, std::optional<int64_t> m = {}, DType dtype = dtypes::float32,
                    const std::string& device = "");
  Tensor full_like(double value) const { return full(shape(), value, dtype(), device()); }
  Tensor zeros_like() const { return full_like(0); }
  Tensor ones_like() const { return full_like(1); }
  // Random numbers from a counter-based generator (threefry 2x32) computed on the device, so the
  // same seed gives the same numbers on every device. Each call draws a new counter range.
  static void manual_seed(uint64_t seed);
  static Tensor rand(Dims shape, DType dtype = dtypes::float32, const std::string& device = "");
  static Tensor randn(Dims shape, DType dtype = dtypes::float32, const std::string& device = "");
  static Tensor uniform(Dims shape, double low = 0, double high = 1, DType dtype = dtypes::float32,
                        const std::string& device = "");
  static Tensor randint(Dims shape, int64_t low, int64_t high, DType dtype = dtypes::int32,
                        const std::string& device = "");
  Tensor rand_like() const { return rand(shape(), dtype(), device()); }

  // ---- properties ----
  const Dims& shape() const { return s_->shape; }
  int64_t ndim() const { return int64_t(s_->shape.size()); }
  int64_t numel() const { return dims_prod(s_->shape); }
  DType dtype() const { return s_->uop->dtype(); }
  const std::string& device() const { return s_->device; }
  const UOpRef& uop() const; // the realized view once computed, else the lazy graph
  std::string str() const;   // "<Tensor (2, 3) float CPU>"

  // ---- realization and reading ----
  Tensor& realize();
  static void realize_all(std::vector<Tensor*> tensors);
  std::vector<ScheduleItem> schedule() const; // what realize() would run, without running it
  template <class Elem> std::vector<Elem> to_vector() const;
  template <class Elem> Elem item() const;
  std::vector<std::byte> to_bytes() const; // contiguous, little-endian
  Tensor to(const std::string& device) const;
  // Several devices (kernel/tensor/multi.hpp): split evenly along `axis`, or a copy on each.
  MultiTensor shard(const std::vector<std::string>& devices, int64_t axis) const;
  MultiTensor to(const std::vector<std::string>& devices) const;
  Tensor contiguous() const;
  // The same values, stored with the axes in `order` (outermost first) and seen in this shape:
  // contiguous along the last axis of `order`. A tensor whose value is stored keeps its latest
  // such copy, so while the value is unchanged the same layout is copied once (conv2d's weights in
  // a model that runs again); the copy's memory stays held until the value changes (assign).
  // With `split`, the axes are first split into that shape (a reshape), and the result has it.
  Tensor layout(const Axes& order, const Dims& split = {}) const;
  // A stored (contiguous) copy of this tensor's stored value that `make` builds, kept under `key`
  // as layout() keeps its copy: while the value is unchanged, asking for the same key again returns
  // the kept expression (whose stored result the realized-value cache holds) without calling
  // `make`, so a model that runs again rebuilds none of its weights' rearrangements. Over a value
  // that is not stored, `make()` each time.
  Tensor keep_copy(const std::string& key, const std::function<Tensor()>& make) const;
  Tensor detach() const;
  Tensor cast(DType dtype) const;    // throws TensorError for void, vector or pointer dtypes
  Tensor bitcast(DType dtype) const; // same item size only; same dtype checks as cast

  // ---- elementwise ----
  Tensor operator-() const { return neg(); }
  Tensor neg() const;
  Tensor abs() const;
  Tensor exp() const;
  Tensor exp2() const;
  Tensor log() const;
  Tensor log2() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor reciprocal() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tan() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor relu() const;
  Tensor leaky_relu(double slope = 0.01) const;
  Tensor gelu() const;
  Tensor silu() const;
  Tensor softplus(double beta = 1) const;
  Tensor square() const;
  Tensor sign() const;
  Tensor trunc() const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(double exponent) const;
  Tensor maximum(const Tensor& other) const;
  Tensor minimum(const Tensor& other) const;
  Tensor clip(double low, double high) const;
  Tensor where(const Tensor& if_true, const Tensor& if_false) const; // *this is the condition
  Tensor where(double if_true, double if_false) const;
  Tensor lt(const Tensor& o) const;
  Tensor gt(const Tensor& o) const { return o.lt(*this); }
  Tensor le(const Tensor& o) const { return gt(o).logical_not(); }
  Tensor ge(const Tensor& o) const { return lt(o).logical_not(); }
  Tensor eq(const Tensor& o) const;
  Tensor ne(const Tensor& o) const;
  Tensor logical_not() const;
  Tensor logical_and(const Tensor& o) const;
  Tensor logical_or(const Tensor& o) const;
  Tensor bitwise_xor(const Tensor& o) const;
  Tensor lshift(int64_t bits) const;
  Tensor rshift(int64_t bits) const;
  Tensor idiv(const Tensor& o) const; // integer division truncating toward zero
  Tensor mod(const Tensor& o) const;  // integer remainder, sign of the dividend
  Tensor add(const Tensor& o) const;
  Tensor sub(const Tensor& o) const;
  Tensor mul(const Tensor& o) const;
  Tensor div(const Tensor& o) const; // true division: integers divide as floats

  // ---- more elementwise math (kernel/tensor/math.cpp), composed from the primitives ----
  Tensor erf() const;   // |error| < 2e-7 (a rational approximation)
  Tensor round() const; // to the nearest integer, halves to even (numpy, ONNX)
  Tensor isnan() const; // bool
  Tensor isinf(bool positive = true, bool negative = true) const; // bool
  Tensor asin() const;
  Tensor acos() const;
  Tensor atan() const;
  Tensor sinh() const;
  Tensor cosh() const;
  Tensor asinh() const;
  Tensor acosh() const;
  Tensor atanh() const;
  Tensor elu(double alpha = 1) const;
  Tensor selu() const;
  Tensor celu(double alpha = 1) const;
  Tensor hardsigmoid(double alpha = 1.0 / 6, double beta = 0.5) const; // clip(alpha * x + beta, 0, 1)
  Tensor hardswish() const;
  Tensor mish() const;
  Tensor softsign() const;
  Tensor bitwise_and(const Tensor& o) const; // ints and bools
  Tensor bitwise_or(const Tensor& o) const;
  Tensor bitwise_not() const;
  Tensor logical_xor(const Tensor& o) const;

  // ---- reductions ----
  Tensor sum(Axes axes = {}, bool keepdim = false) const;
  Tensor prod(Axes axes = {}, bool keepdim = false) const;
  Tensor max(Axes axes = {}, bool keepdim = false) const;
  Tensor min(Axes axes = {}, bool keepdim = false) const;
  Tensor mean(Axes axes = {}, bool keepdim = false) const;
  Tensor var(Axes axes = {}, bool keepdim = false, double correction = 1) const;
  Tensor std(Axes axes = {}, bool keepdim = false, double correction = 1) const;
  Tensor argmax(std::optional<int64_t> axis = {}, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> axis = {}, bool keepdim = false) const;
  Tensor softmax(int64_t axis = -1) const;
  Tensor log_softmax(int64_t axis = -1) const;
  Tensor logsumexp(int64_t axis = -1, bool keepdim = false) const;
  Tensor cumsum(int64_t axis = 0) const;

  // ---- movement (zero-copy) ----
  Tensor reshape(Dims shape) const; // one entry may be -1
  Tensor permute(Axes order) const;
  Tensor expand(Dims shape) const; // -1 keeps a dim
  Tensor pad(std::vector<std::pair<int64_t, int64_t>> padding, double value = 0) const;
  Tensor shrink(std::vector<std::pair<int64_t, int64_t>> ranges) const;
  Tensor flip(Axes axes) const;
  Tensor transpose(int64_t a = 1, int64_t b = 0) const;
  Tensor T() const { return transpose(1, 0); }
  Tensor squeeze(std::optional<int64_t> axis = {}) const;
  Tensor unsqueeze(int64_t axis) const;
  Tensor flatten(int64_t start = 0, int64_t end = -1) const;
  Tensor slice(std::vector<Slice> slices) const;
  // Entry i along dim 0 (negative counts from the end); throws TensorError when out of range.
  Tensor operator[](int64_t i) const;
  static Tensor cat(const std::vector<Tensor>& tensors, int64_t axis = 0);
  static Tensor stack(const std::vector<Tensor>& tensors, int64_t axis = 0);
  Tensor repeat(Dims repeats) const;
  // out[..i..] = x[..index[..i..]..] along `axis` (tinygrad's one-hot compare, so it also runs
  // where memory cannot be indexed). An index outside [0, n) of that axis, negative ones included
  // (no wrap-around), selects nothing: its output is 0 and no gradient flows from it. Indices are
  // not checked: that would read the index tensor back from the device on every call.
  Tensor gather(int64_t axis, const Tensor& index) const;

  // ---- composites (built only from the primitives above) ----
  Tensor matmul(const Tensor& other) const;
  Tensor dot(const Tensor& other) const { return matmul(other); }
  Tensor linear(const Tensor& weight, const std::optional<Tensor>& bias = {}) const; // x @ weight.T + bias
  Tensor conv2d(const Tensor& weight, const std::optional<Tensor>& bias = {}, int64_t stride = 1,
                int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1) const;
  Tensor max_pool2d(int64_t kernel = 2, std::optional<int64_t> stride = {}, int64_t padding = 0,
                    int64_t dilation = 1) const;
  Tensor avg_pool2d(int64_t kernel = 2, std::optional<int64_t> stride = {}, int64_t padding = 0) const;

  // ---- n-d convolution and pooling (kernel/tensor/conv.cpp) ----
  // input (N, C, d1..dn), weight (Cout, C/groups, k1..kn), bias (Cout)
  Tensor conv(const Tensor& weight, const std::optional<Tensor>& bias, const ConvOptions& options) const;
  // input (N, C, d1..dn), weight (C, Cout/groups, k1..kn), bias (Cout)
  Tensor conv_transpose(const Tensor& weight, const std::optional<Tensor>& bias,
                        const ConvTransposeOptions& options) const;
  Tensor max_pool(const PoolOptions& options) const; // padding counts as -inf
  // count_include_pad: divide by the whole window (padding as zeros), else by its real elements
  Tensor avg_pool(const PoolOptions& options, bool count_include_pad = false) const;
  Tensor lp_pool(double p, const PoolOptions& options) const; // (sum |x|^p)^(1/p) over each window
  // Local response normalization across channels (dim 1): x / (k + alpha/size * sum x^2)^beta.
  Tensor lrn(int64_t size, double alpha = 1e-4, double beta = 0.75, double k = 1) const;
  // Normalizes over `axes` to mean 0, variance 1 (biased), eps inside the square root.
  Tensor layernorm(Axes axes = {-1}, double eps = 1e-5) const;

  // ---- indexing, sorting, scattering (kernel/tensor/indexing.cpp; resampling in conv.cpp) ----
  // pad with a mode; negative amounts crop (ONNX Pad). constant mode fills `value`.
  Tensor pad(const Pads& padding, PadMode mode, double value = 0) const;
  // out = copy of *this with out[..index[i]..] = src[i] along `axis` (index and src same shape);
  // where indices repeat, `reduce` combines them (none: one of them wins).
  Tensor scatter_elements(int64_t axis, const Tensor& index, const Tensor& src,
                          ScatterReduce reduce = ScatterReduce::none) const;
  // indices (..., k): each row picks x[i1..ik] (a slice of the remaining dims); batch_dims leading
  // dims are shared by x and indices. Negative indices count from the end.
  Tensor gather_nd(const Tensor& indices, int64_t batch_dims = 0) const;
  // the inverse: out = copy with out[indices[...]] = updates[...], combined by `reduce`
  Tensor scatter_nd(const Tensor& indices, const Tensor& updates,
                    ScatterReduce reduce = ScatterReduce::none) const;
  // (values, int64 indices) of the k largest (or smallest) along axis, sorted; ties keep the lower index
  std::pair<Tensor, Tensor> topk(int64_t k, int64_t axis = -1, bool largest = true) const;
  // (values, int64 indices) sorted along axis; stable
  std::pair<Tensor, Tensor> sort(int64_t axis = -1, bool descending = false) const;
  // int64 (ndim, count) coordinates of the non-zero elements, in row-major order. The count
  // depends on the values: this reads them back to the host (it realizes the tensor).
  Tensor nonzero() const;
  Tensor tril(int64_t diagonal = 0) const; // zero above the diagonal (of the last two dims)
  Tensor triu(int64_t diagonal = 0) const;
  Tensor one_hot(int64_t num_classes) const; // int indices -> (..., num_classes) int64 0/1
  // out along `axis` = sum over t of weight[o, t] * x[index[o, t]]: resampling with taps
  // (linear/cubic interpolation, nearest), index (out, taps) int, weight (out, taps) float
  Tensor resample(int64_t axis, const Tensor& index, const Tensor& weight) const;
  // torch.nn.functional.interpolate over the dims after (N, C): "nearest", "linear" or "cubic"
  Tensor interpolate(Dims size, const std::string& mode = "nearest", bool align_corners = false) const;
  // numpy/torch einsum: "ij,jk->ik"; "..." broadcasts; without "->" the output is the sorted
  // letters that appear once
  static Tensor einsum(const std::string& formula, const std::vector<Tensor>& operands);
  // torch.nn.functional.grid_sample over (N, C, H, W) with grid (N, Ho, Wo, 2) of (x, y) in
  // [-1, 1]: mode "bilinear", "nearest" or "bicubic"; padding_mode "zeros", "border" or "reflection"
  Tensor grid_sample(const Tensor& grid, const std::string& mode = "bilinear",
                     const std::string& padding_mode = "zeros", bool align_corners = false) const;

  // ---- internals shared by the op files ----
  Tensor with(UOpRef uop, Dims shape) const { return Tensor(std::move(uop), std::move(shape), device()); }
  Tensor const_like(double value, std::optional<DType> dtype = {}) const;
  int64_t axis(int64_t a, int64_t ndim_for_negative = -1) const; // resolves negative axes, checks range
  Axes axes_or_all(const Axes& axes) const;
  // Whether dt can be a tensor's dtype: a scalar bool, int or float (not void, a vector or a
  // pointer, which exist only in kernel IR). check_element_dtype throws TensorError naming `what`
  // unless it can.
  static bool is_element_dtype(DType dt) { return !dt.is_void() && dt.count == 1 && !dt.ptr; }
  static void check_element_dtype(std::string_view what, DType dt);
  Tensor reduce(Ops op, const Axes& axes, bool keepdim) const;
  std::optional<Tensor> merge_into_inner_reduce(Ops op, const Axes& axes, const Dims& final_shape) const;
  std::optional<Tensor> split_multi_axis_reduce(Ops op, const Axes& axes, const Dims& final_shape) const;
  std::optional<Tensor> split_column_sums(Ops op, const Axes& axes, const Dims& final_shape) const;
  Tensor pool(const Dims& kernel, const Dims& stride, const Dims& dilation) const;

  // ---- autograd (kernel/tensor/autograd.cpp) ----
  // Marks this tensor as a leaf whose gradient backward() computes. Returns *this.
  Tensor& requires_grad_(bool enable = true);
  bool requires_grad() const;
  // Gradient accumulated by backward(), if any.
  std::optional<Tensor> grad() const;
  void set_grad(std::optional<Tensor> grad);
  void zero_grad() { set_grad(std::nullopt); }
  // Reading any tensor first (item(), to_vector(), realize()), this one or an intermediate, does
  // not change what gradient() and backward() compute; they then read the stored forward values.
  // d(this)/d(t) for each target; `this` must be a scalar unless `seed` (same shape) is given.
  std::vector<Tensor> gradient(const std::vector<Tensor>& targets, std::optional<Tensor> seed = {}) const;
  // Accumulates d(this)/d(leaf) into the grad of every requires_grad tensor this depends on.
  void backward(std::optional<Tensor> seed = {}) const;
  // Replaces this tensor's value with `value` (same shape); every copy of this tensor sees it.
  Tensor& assign(const Tensor& value);
  // While one exists on this thread, gradient()/backward() refuse to run (optimizer updates and
  // evaluation build graphs that must not be differentiated).
  struct NoGrad {
    NoGrad();
    ~NoGrad();
    NoGrad(const NoGrad&) = delete;
    NoGrad& operator=(const NoGrad&) = delete;
  };
  // A custom gradient: returns a tensor equal to `value` whose backward pass, instead of
  // differentiating value's graph, calls `vjp(g)` for (input, gradient) pairs. Used where the
  // generic rules would be wasteful (conv2d's input gradient is a transposed convolution).
  // The gradients' expressions hold `vjp`: a requires_grad tensor it captures would hold itself
  // through its own gradient and never die. Capture t.with(t.uop(), t.shape()) instead (the same
  // node in a tensor of its own), as conv2d does.
  // A non-empty `kind` says that vjp builds its gradients only from g and from nodes of value's
  // graph, and that any two custom gradients of that kind on graphs of equal structure build
  // graphs of equal structure: backward() may then rebuild an earlier step's gradient graph
  // over the new nodes instead of calling vjp (kernel/tensor/gradient_cache.hpp). The kind must
  // name every parameter vjp reads that the graph does not show. Empty: vjp runs every time.
  using VjpFn = std::function<std::vector<std::pair<Tensor, Tensor>>(const Tensor& g)>;
  static Tensor with_custom_gradient(const Tensor& value, VjpFn vjp, std::string kind = {});
  // A handle on an existing tensor state (used by the autograd registry).
  explicit Tensor(std::shared_ptr<TensorState> state) : s_(std::move(state)) {}
  // True when both handles are the same tensor (copies share one state, like torch tensors).
  bool is(const Tensor& other) const { return s_ == other.s_; }

private:
  std::shared_ptr<TensorState> s_;
};

// Binary operators with numpy broadcasting.
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);

// A plain number is a weak scalar (tinygrad's rule): it takes the tensor's dtype unless its kind
// is higher, so int_tensor * 2 stays int and int_tensor * 2.5 is float.
Tensor weak_scalar(const Tensor& like, double value, WeakScalar kind);
template <class T>
concept Scalarlike = std::is_arithmetic_v<T>;
template <Scalarlike T> WeakScalar weak_kind() {
  if constexpr (std::is_same_v<T, bool>)
    return WeakScalar::Bool;
  else if constexpr (std::is_integral_v<T>)
    return WeakScalar::Int;
  else
    return WeakScalar::Float;
}
template <Scalarlike T> Tensor scalar_for(const Tensor& like, T v) {
  return weak_scalar(like, double(v), weak_kind<T>());
}
template <Scalarlike T> Tensor operator+(const Tensor& a, T b) { return a + scalar_for(a, b); }
template <Scalarlike T> Tensor operator-(const Tensor& a, T b) { return a - scalar_for(a, b); }
template <Scalarlike T> Tensor operator*(const Tensor& a, T b) { return a * scalar_for(a, b); }
template <Scalarlike T> Tensor operator/(const Tensor& a, T b) { return a / scalar_for(a, b); }
template <Scalarlike T> Tensor operator+(T a, const Tensor& b) { return scalar_for(b, a) + b; }
template <Scalarlike T> Tensor operator-(T a, const Tensor& b) { return scalar_for(b, a) - b; }
template <Scalarlike T> Tensor operator*(T a, const Tensor& b) { return scalar_for(b, a) * b; }
template <Scalarlike T> Tensor operator/(T a, const Tensor& b) { return scalar_for(b, a) / b; }

// Broadcasts two tensors to one shape and one dtype (tinygrad's promotion); throws TensorError.
std::pair<Tensor, Tensor> broadcast_pair(const Tensor& a, const Tensor& b);
Dims broadcast_shape(const Dims& a, const Dims& b);

} // namespace tg
