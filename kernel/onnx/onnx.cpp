#include "kernel/onnx/onnx.hpp"

#include "kernel/onnx/loader.hpp"
#include "kernel/onnx/ops.hpp"
#include "kernel/onnx/replay.hpp"
#include "kernel/onnx/runner.hpp"
#include "kernel/runtime/devices.hpp"

#include <fstream>
#include <sstream>

namespace tg::onnx {

namespace {

std::string read_file(const std::filesystem::path& file) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))
    throw OnnxError(file.string() + ": is a directory, not a file");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw OnnxError(file.string() + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string dims_text(const std::vector<ValueInfo::Dim>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    if (auto n = std::get_if<int64_t>(&dims[i]))
      s += std::to_string(*n);
    else if (auto p = std::get_if<std::string>(&dims[i]))
      s += *p;
    else
      s += "?";
  }
  return s + ")";
}

// Checks one tensor against its declaration; binds named dims.
void check_input(const ValueInfo& info, const Tensor& t, std::map<std::string, int64_t>& bound) {
  std::string where = "input '" + info.name + "'";
  if (info.dtype && t.dtype() != *info.dtype)
    throw OnnxError(where + " must be " + info.dtype_name + " (" + info.dtype->name() + "), got " +
                    t.dtype().name());
  if (!info.dtype && !info.dtype_name.empty())
    throw OnnxUnsupportedError(where + " has data type " + info.dtype_name + ", which is not supported");
  if (!info.dims) return;
  const auto& dims = *info.dims;
  if (int64_t(dims.size()) != t.ndim())
    throw OnnxError(where + " must have shape " + dims_text(dims) + ", got " + dims_str(t.shape()));
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t have = t.shape()[i];
    if (auto n = std::get_if<int64_t>(&dims[i]); n && *n != have)
      throw OnnxError(where + " must have shape " + dims_text(dims) + ", got " + dims_str(t.shape()));
    if (auto p = std::get_if<std::string>(&dims[i])) {
      auto [it, fresh] = bound.emplace(*p, have);
      if (!fresh && it->second != have)
        throw OnnxError(where + ": dim '" + *p + "' is " + std::to_string(have) + " here but " +
                        std::to_string(it->second) + " in an earlier input");
    }
  }
}

// run()'s outputs: each must be a tensor.
std::vector<Tensor> tensor_outputs(const Graph& graph, const std::vector<Value>& out) {
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].is_tensor())
      throw OnnxError(graph.source + ": output '" + graph.outputs[i].name +
                      "' is not a tensor: use run_values()");
    tensors.push_back(out[i].tensor());
  }
  return tensors;
}

} // namespace

Model::Model(std::shared_ptr<const Graph> graph, std::string device, bool replay)
    : graph_(std::move(graph)), runner_(std::make_shared<Runner>(graph_, device)),
      device_(std::move(device)) {
  if (!replay) return;
  replays_ = std::make_shared<Replays>(
      [runner = runner_](const std::vector<Tensor>& in) {
        return tensor_outputs(runner->graph(), runner->run(std::vector<Value>(in.begin(), in.end())));
      },
      device_, graph_->source);
}

Model Model::load(const std::filesystem::path& file, ModelOptions options) {
  std::string bytes = read_file(file);
  return from_bytes(bytes, file.parent_path(), std::move(options), file.string());
}

Model Model::from_bytes(std::string_view bytes, const std::filesystem::path& base_dir, ModelOptions options,
                        const std::string& source) {
  std::string device =
      options.device.empty() ? default_device() : parse_device_name(options.device).canonical();
  return Model(load_graph(bytes, base_dir, source.empty() ? std::string("ONNX model") : source), device,
               options.replay);
}

const std::vector<ValueInfo>& Model::inputs() const { return graph_->inputs; }
const std::vector<ValueInfo>& Model::outputs() const { return graph_->outputs; }

int64_t Model::opset(const std::string& domain) const {
  auto it = graph_->opsets.find(domain);
  return it == graph_->opsets.end() ? 0 : it->second;
}

std::vector<Value> Model::ordered_inputs(const std::map<std::string, Value>& inputs) const {
  std::map<std::string, int64_t> bound;
  std::vector<Value> ordered;
  for (const auto& info : graph_->inputs) {
    auto it = inputs.find(info.name);
    if (it == inputs.end()) {
      if (info.kind == ValueInfo::Kind::optional) {
        ordered.emplace_back();
        continue;
      }
      throw OnnxError(graph_->source + ": input '" + info.name + "' is not given");
    }
    const Value& v = it->second;
    if (v.is_tensor())
      check_input(info, v.tensor(), bound);
    else if (v.is_sequence())
      for (const auto& t : v.sequence()) {
        std::map<std::string, int64_t> own; // each element binds its own dims
        ValueInfo elem = info;
        check_input(elem, t, own);
      }
    ordered.push_back(v);
  }
  for (const auto& [name, v] : inputs) {
    bool known = false;
    for (const auto& info : graph_->inputs) known |= info.name == name;
    if (!known) throw OnnxError(graph_->source + ": the model has no input named '" + name + "'");
  }
  return ordered;
}

std::map<std::string, Value> Model::run_values(const std::map<std::string, Value>& inputs) const {
  std::vector<Value> out = runner_->run(ordered_inputs(inputs));
  std::map<std::string, Value> named;
  for (size_t i = 0; i < out.size(); ++i) named[graph_->outputs[i].name] = out[i];
  return named;
}

std::map<std::string, Tensor> Model::run(const std::map<std::string, Tensor>& inputs) const {
  std::vector<Value> ordered = ordered_inputs(std::map<std::string, Value>(inputs.begin(), inputs.end()));
  bool all_tensors = replays_ != nullptr;
  std::vector<Tensor> in;
  for (const auto& v : ordered) {
    all_tensors = all_tensors && v.is_tensor();
    if (v.is_tensor()) in.push_back(v.tensor());
  }
  std::vector<Tensor> results =
      all_tensors ? replays_->run(in) : tensor_outputs(*graph_, runner_->run(ordered));
  std::map<std::string, Tensor> out;
  for (size_t i = 0; i < results.size(); ++i) out.emplace(graph_->outputs[i].name, results[i]);
  return out;
}

int64_t Model::replays() const { return replays_ ? replays_->replays() : 0; }

Value load_value_file(const std::filesystem::path& file, ValueInfo::Kind kind, const std::string& device) {
  HostValue h = load_host_value(read_file(file), kind, file.string());
  if (h.is_none) return Value();
  if (h.is_sequence) {
    std::vector<Tensor> items;
    for (const auto& t : h.tensors) items.push_back(t.to_tensor(device));
    return Value::sequence(std::move(items));
  }
  return Value(h.tensors.at(0).to_tensor(device));
}

std::vector<std::string> supported_ops() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : op_table()) names.push_back(name);
  return names;
}

} // namespace tg::onnx
