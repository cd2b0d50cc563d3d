#include "kernel/onnx/ops.hpp"

#include <mutex>

namespace tg::onnx {

OpContext::OpContext(const Node& node, std::vector<Value> inputs,
                     std::vector<std::shared_ptr<const HostTensor>> hosts, int64_t opset, std::string device,
                     RunGraph run_graph, Lookup lookup, Derive derive, Upload upload)
    : node_(node), inputs_(std::move(inputs)), hosts_(std::move(hosts)), opset_(opset),
      device_(std::move(device)), run_graph_(std::move(run_graph)), lookup_(std::move(lookup)),
      derive_(std::move(derive)), upload_(std::move(upload)) {
  hosts_.resize(inputs_.size());
}

Tensor OpContext::uploaded(const std::shared_ptr<const HostTensor>& host) const {
  return upload_ ? upload_(host) : host->to_tensor(device_);
}

Tensor OpContext::derived(size_t i, const std::string& what,
                          const std::function<Tensor(const Tensor&)>& fn) const {
  Tensor t = fn(tensor(i));
  if (!known(i) || !derive_) return t;
  return derive_(hosts_[i], what, t);
}

void OpContext::fail(const std::string& what) const {
  throw OnnxError(node_.describe() + " at opset " + std::to_string(opset_) + ": " + what);
}

void OpContext::unsupported(const std::string& what) const {
  throw OnnxUnsupportedError(node_.describe() + " at opset " + std::to_string(opset_) + ": " + what);
}

const Value& OpContext::value(size_t i) const {
  static const Value none;
  return i < inputs_.size() ? inputs_[i] : none;
}

const Tensor& OpContext::tensor(size_t i) const {
  if (!has(i)) fail("input " + std::to_string(i) + " is required");
  if (!inputs_[i].is_tensor()) fail("input " + std::to_string(i) + " must be a tensor, got a sequence");
  return inputs_[i].tensor();
}

std::optional<Tensor> OpContext::optional_tensor(size_t i) const {
  if (!has(i)) return std::nullopt;
  return tensor(i);
}

HostTensor OpContext::host(size_t i) const {
  if (i < hosts_.size() && hosts_[i]) return *hosts_[i];
  const Tensor& t = tensor(i);
  HostTensor h;
  h.dtype = t.dtype();
  h.shape = t.shape();
  h.data = t.to_bytes();
  return h;
}

std::vector<int64_t> OpContext::ints(size_t i) const {
  HostTensor h = host(i);
  if (!h.dtype.is_int() && h.dtype != dtypes::bool_)
    fail("input " + std::to_string(i) + " must hold integers, got " + h.dtype.name());
  return h.as_ints();
}

std::vector<double> OpContext::doubles(size_t i) const { return host(i).as_doubles(); }

int64_t OpContext::int_scalar(size_t i) const {
  auto v = ints(i);
  if (v.size() != 1)
    fail("input " + std::to_string(i) + " must hold one value, got " + std::to_string(v.size()));
  return v[0];
}

double OpContext::double_scalar(size_t i) const {
  auto v = doubles(i);
  if (v.size() != 1)
    fail("input " + std::to_string(i) + " must hold one value, got " + std::to_string(v.size()));
  return v[0];
}

namespace {
const Attribute* find_attr(const Node& n, const std::string& name) {
  auto it = n.attributes.find(name);
  return it == n.attributes.end() ? nullptr : &it->second;
}
} // namespace

int64_t OpContext::attr_int(const std::string& name, int64_t fallback) const {
  const Attribute* a = find_attr(node_, name);
  if (!a) return fallback;
  if (a->kind != Attribute::Kind::i) fail("attribute '" + name + "' must be an int");
  return a->i;
}

int64_t OpContext::required_int(const std::string& name) const {
  if (!has_attr(name)) fail("attribute '" + name + "' is required");
  return attr_int(name, 0);
}

double OpContext::attr_float(const std::string& name, double fallback) const {
  const Attribute* a = find_attr(node_, name);
  if (!a) return fallback;
  if (a->kind == Attribute::Kind::i) return double(a->i);
  if (a->kind != Attribute::Kind::f) fail("attribute '" + name + "' must be a float");
  return a->f;
}

std::string OpContext::attr_string(const std::string& name, const std::string& fallback) const {
  const Attribute* a = find_attr(node_, name);
  if (!a) return fallback;
  if (a->kind != Attribute::Kind::s) fail("attribute '" + name + "' must be a string");
  return a->s;
}

std::vector<int64_t> OpContext::attr_ints(const std::string& name, std::vector<int64_t> fallback) const {
  const Attribute* a = find_attr(node_, name);
  if (!a) return fallback;
  if (a->kind == Attribute::Kind::i) return {a->i};
  if (a->kind != Attribute::Kind::ints) fail("attribute '" + name + "' must be a list of ints");
  return a->ints;
}

std::vector<double> OpContext::attr_floats(const std::string& name, std::vector<double> fallback) const {
  const Attribute* a = find_attr(node_, name);
  if (!a) return fallback;
  if (a->kind == Attribute::Kind::f) return {a->f};
  if (a->kind != Attribute::Kind::floats) fail("attribute '" + name + "' must be a list of floats");
  return a->floats;
}

std::vector<std::string> OpContext::attr_strings(const std::string& name) const {
  const Attribute* a = find_attr(node_, name);
  if (!a) return {};
  if (a->kind != Attribute::Kind::strings) fail("attribute '" + name + "' must be a list of strings");
  return a->strings;
}

const HostTensor& OpContext::attr_tensor(const std::string& name) const {
  const Attribute* a = find_attr(node_, name);
  if (!a) fail("attribute '" + name + "' is required");
  if (a->kind != Attribute::Kind::t) fail("attribute '" + name + "' must be a tensor");
  return *a->t;
}

const Graph& OpContext::attr_graph(const std::string& name) const {
  const Attribute* a = find_attr(node_, name);
  if (!a) fail("attribute '" + name + "' is required");
  if (a->kind != Attribute::Kind::g) fail("attribute '" + name + "' must be a graph");
  return *a->g;
}

std::vector<Value> OpContext::run_graph(const Graph& g, const std::vector<Value>& inputs) const {
  return run_graph_(g, inputs);
}

std::optional<Value> OpContext::lookup(const std::string& name) const {
  if (!lookup_) return std::nullopt;
  return lookup_(name);
}

Tensor host_ints_tensor(const std::vector<int64_t>& values, const std::string& device) {
  return Tensor::from_vector(values, {int64_t(values.size())}, dtypes::int64, device);
}

std::string ints_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

const OpTable& op_table() {
  static const OpTable table = [] {
    OpTable t;
    register_elementwise_ops(t);
    register_reduce_ops(t);
    register_shape_ops(t);
    register_nn_ops(t);
    register_control_ops(t);
    register_rnn_ops(t);
    register_signal_ops(t);
    register_detection_ops(t);
    register_training_ops(t);
    register_grid_sample_ops(t);
    register_text_ops(t);
    return t;
  }();
  return table;
}

} // namespace tg::onnx
