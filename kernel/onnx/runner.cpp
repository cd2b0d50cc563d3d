#include "kernel/onnx/runner.hpp"

#include "kernel/onnx/ops.hpp"

#include <cmath>
#include <set>
#include <unordered_map>

namespace tg::onnx {

namespace {

// Ops whose outputs are a function of their inputs' values (and attributes) alone: with every
// input known on the host (a Shape's output, a Constant, an initializer), small outputs are
// folded to host values, so the shape arithmetic a PyTorch export emits before a Reshape or a
// Slice (Shape -> Gather -> Add -> Div -> Mul) needs no kernel and no read back per run.
const std::set<std::string>& foldable_ops() {
  static const std::set<std::string> ops{
      "Abs",      "Add",   "And",     "Cast",      "Ceil",      "Concat",     "ConstantOfShape",
      "Div",      "Equal", "Expand",  "Flatten",   "Floor",     "Gather",     "Greater",
      "Identity", "Less",  "Max",     "Min",       "Mod",       "Mul",        "Neg",
      "Not",      "Or",    "Range",   "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSum",
      "Reshape",  "Slice", "Squeeze", "Sub",       "Tile",      "Transpose",  "Unsqueeze",
      "Where"};
  return ops;
}
constexpr int64_t kMaxFolded = 4096; // elements: larger values stay on the device

void append_value(std::string& key, const HostTensor& h) {
  key += h.dtype.name() + dims_str(h.shape);
  key.append(reinterpret_cast<const char*>(h.data.data()), h.data.size());
}

// The fold key of a node (its address: attributes and opset are fixed) and its known inputs, or
// empty when it does not fold.
std::string fold_key(const Node& node, const std::vector<Value>& in,
                     const std::vector<std::shared_ptr<const HostTensor>>& hosts) {
  if (!node.domain.empty()) return {};
  std::string key(reinterpret_cast<const char*>(&node), sizeof(&node));
  if (node.op_type == "Shape" || node.op_type == "Size") {
    if (in.empty() || !in[0].is_tensor()) return {};
    return key + dims_str(in[0].tensor().shape());
  }
  if (!foldable_ops().count(node.op_type)) return {};
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].is_none()) {
      key += "|none";
      continue;
    }
    if (!hosts[i] || hosts[i]->numel() > kMaxFolded) return {};
    key += "|";
    append_value(key, *hosts[i]);
  }
  return key;
}

} // namespace

std::shared_ptr<const HostTensor> Runner::folded(const std::string& key, const Tensor& computed) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = folds_.find(key); it != folds_.end()) return it->second;
  }
  auto h = std::make_shared<HostTensor>();
  h->dtype = computed.dtype();
  h->shape = computed.shape();
  h->data = computed.to_bytes();
  std::lock_guard lock(mutex_);
  return folds_.emplace(key, std::move(h)).first->second;
}

// The values a graph has computed so far; lookups fall through to the enclosing graph's scope.
struct Runner::Scope {
  const Graph* graph = nullptr;
  const Scope* parent = nullptr;
  std::unordered_map<std::string, Value> values;
  std::unordered_map<std::string, std::shared_ptr<const HostTensor>> hosts; // values the host holds

  const Scope* owner_of(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent)
      if (s->values.count(name) || s->graph->initializers.count(name)) return s;
    return nullptr;
  }
};

namespace {

// A one-element input whose value the host holds (a Constant's, an initializer's, a folded
// node's) as a constant of its shape and dtype: the kernels that read it fold the value (Clip's
// bounds, LayerNorm's epsilon and exponent 2) instead of loading it from a buffer of its own.
// Integers only while a double holds them exactly.
Value scalar_constant(const Value& v, const HostTensor& h) {
  if (!v.is_tensor() || h.numel() != 1 || h.data.size() != size_t(h.dtype.itemsize())) return v;
  const Tensor& t = v.tensor();
  if (t.numel() != 1 || t.dtype() != h.dtype) return v;
  const double x = h.as_doubles()[0];
  if (!h.dtype.is_float() && !(std::abs(x) <= 9007199254740992.0)) return v; // 2^53
  return Value(t.const_like(x));
}

} // namespace

Runner::Runner(std::shared_ptr<const Graph> graph, std::string device)
    : graph_(std::move(graph)), device_(std::move(device)) {}

Tensor Runner::uploaded(const std::shared_ptr<const HostTensor>& host) {
  std::lock_guard lock(mutex_);
  auto it = uploads_.find(host.get());
  if (it != uploads_.end()) return it->second;
  Tensor t = host->to_tensor(device_);
  uploads_.emplace(host.get(), t);
  return t;
}

std::vector<Value> Runner::run(const std::vector<Value>& inputs) {
  return run_graph(*graph_, inputs, nullptr);
}

std::vector<Value> Runner::run_graph(const Graph& g, const std::vector<Value>& inputs, const Scope* outer) {
  Scope scope;
  scope.graph = &g;
  scope.parent = outer;
  if (inputs.size() > g.inputs.size())
    throw OnnxError(g.source + ": graph '" + g.name + "' takes " + std::to_string(g.inputs.size()) +
                    " inputs, got " + std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) scope.values[g.inputs[i].name] = inputs[i];

  auto lookup = [&](const std::string& name,
                    const Node& node) -> std::pair<Value, std::shared_ptr<const HostTensor>> {
    const Scope* s = scope.owner_of(name);
    if (!s)
      throw OnnxError(g.source + ": " + node.describe() + " reads '" + name +
                      "', which no input, initializer or earlier node provides");
    if (auto it = s->values.find(name); it != s->values.end()) {
      auto h = s->hosts.find(name);
      return {it->second, h == s->hosts.end() ? nullptr : h->second};
    }
    const auto& host = s->graph->initializers.at(name);
    return {Value(uploaded(host)), host};
  };

  const OpTable& table = op_table();
  for (const Node& node : g.nodes) {
    auto opset_it = g.opsets.find(node.domain);
    int64_t opset = opset_it == g.opsets.end() ? 0 : opset_it->second;
    std::string key = node.domain.empty() ? node.op_type : node.domain + ":" + node.op_type;
    auto op = table.find(key);
    if (op == table.end())
      throw OnnxUnsupportedError(g.source + ": " + node.describe() + " at opset " + std::to_string(opset) +
                                 ": the op " + key + " is not supported");
    std::vector<Value> in;
    std::vector<std::shared_ptr<const HostTensor>> hosts;
    for (const auto& name : node.inputs) {
      if (name.empty()) {
        in.emplace_back();
        hosts.emplace_back();
        continue;
      }
      auto [v, h] = lookup(name, node);
      in.push_back(h ? scalar_constant(v, *h) : std::move(v));
      hosts.push_back(std::move(h));
    }
    const std::string fold = fold_key(node, in, hosts);
    OpContext ctx(
        node, std::move(in), std::move(hosts), opset, device_,
        [this, &scope](const Graph& sub, const std::vector<Value>& sub_inputs) {
          return run_graph(sub, sub_inputs, &scope);
        },
        [this, &scope](const std::string& name) -> std::optional<Value> { // Gradient's y
          const Scope* s = scope.owner_of(name);
          if (!s) return std::nullopt;
          if (auto it = s->values.find(name); it != s->values.end()) return it->second;
          return Value(uploaded(s->graph->initializers.at(name)));
        },
        [this](const std::shared_ptr<const HostTensor>& host, const std::string& what,
               const Tensor& computed) {
          const HostTensor* at = host.get();
          std::string name = "derived ";
          name.append(reinterpret_cast<const char*>(&at), sizeof at);
          return uploaded(folded(name + what, computed));
        },
        [this](const std::shared_ptr<const HostTensor>& host) { return uploaded(host); });
    std::vector<Value> out;
    try {
      out = op->second(ctx);
    } catch (const OnnxError&) {
      throw;
    } catch (const Error& e) { // TensorError, device errors: say which node
      throw OnnxError(g.source + ": " + node.describe() + " at opset " + std::to_string(opset) + ": " +
                      e.what());
    }
    if (out.size() > node.outputs.size())
      out.resize(node.outputs.size()); // ops may compute optional outputs nobody named
    for (size_t i = 0; i < out.size(); ++i)
      if (!node.outputs[i].empty()) scope.values[node.outputs[i]] = std::move(out[i]);
    for (size_t i = out.size(); i < node.outputs.size(); ++i)
      if (!node.outputs[i].empty())
        throw OnnxError(g.source + ": " + node.describe() + ": output " + std::to_string(i) + " ('" +
                        node.outputs[i] + "') is not produced");
    // Constant's value stays known on the host, so shape inputs read from it need no device read
    if (node.op_type == "Constant" && node.domain.empty() && node.attributes.count("value") &&
        node.attributes.at("value").t)
      scope.hosts[node.outputs[0]] = node.attributes.at("value").t;
    if (!fold.empty())
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        const std::string& name = node.outputs[i];
        auto v = scope.values.find(name);
        if (name.empty() || v == scope.values.end() || !v->second.is_tensor() ||
            v->second.tensor().numel() > kMaxFolded)
          continue;
        auto h = folded(fold + "#" + std::to_string(i), v->second.tensor());
        scope.hosts[name] = h;
        v->second = Value(uploaded(h));
      }
  }
  std::vector<Value> outputs;
  for (const auto& o : g.outputs) {
    const Scope* s = scope.owner_of(o.name);
    if (!s) throw OnnxError(g.source + ": graph output '" + o.name + "' is never produced");
    if (auto it = s->values.find(o.name); it != s->values.end())
      outputs.push_back(it->second);
    else
      outputs.emplace_back(uploaded(s->graph->initializers.at(o.name)));
  }
  return outputs;
}

} // namespace tg::onnx
