// The op table: one function per ONNX op type, each building its outputs from Tensor ops.
// Op files (ops_*.cpp) register their functions through one register_* function each, which
// op_table() calls once; an op reads its inputs and attributes through OpContext.
#pragma once

#include "kernel/onnx/graph.hpp"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tg::onnx {

class OpContext;
using OpFn = std::function<std::vector<Value>(OpContext&)>;

// What an op sees: its node, its inputs (already evaluated), the opset, the device, and a way to
// run a subgraph (If, Loop, Scan) in the scope of the current graph.
class OpContext {
public:
  using RunGraph = std::function<std::vector<Value>(const Graph&, const std::vector<Value>&)>;
  using Lookup = std::function<std::optional<Value>(const std::string&)>;
  // The device copy of a value computed from a host-known input alone, kept for the model's life:
  // (that input's host value, what the computation is, the computed tensor) -> the kept copy.
  using Derive =
      std::function<Tensor(const std::shared_ptr<const HostTensor>&, const std::string&, const Tensor&)>;
  // The device copy of a host value the model holds (an initializer, a Constant's tensor), made
  // once per model.
  using Upload = std::function<Tensor(const std::shared_ptr<const HostTensor>&)>;
  // hosts[i]: input i's values when the host already has them (initializers, Constant outputs)
  OpContext(const Node& node, std::vector<Value> inputs, std::vector<std::shared_ptr<const HostTensor>> hosts,
            int64_t opset, std::string device, RunGraph run_graph, Lookup lookup = {}, Derive derive = {},
            Upload upload = {});

  const Node& node() const { return node_; }
  int64_t opset() const { return opset_; } // the model's version of the node's domain
  const std::string& device() const { return device_; }

  size_t num_inputs() const { return inputs_.size(); }
  bool has(size_t i) const { return i < inputs_.size() && !inputs_[i].is_none(); }
  const Value& value(size_t i) const;   // none when omitted
  const Tensor& tensor(size_t i) const; // throws OnnxError naming the node when missing
  std::optional<Tensor> optional_tensor(size_t i) const;
  // The values of a (small) int or float input on the host. Reads the tensor back: use only for
  // inputs that decide shapes (Reshape's shape, Slice's starts, ...).
  std::vector<int64_t> ints(size_t i) const;
  std::vector<double> doubles(size_t i) const;
  int64_t int_scalar(size_t i) const;
  // Whether input i's values are on the host already (reading them costs no device read).
  bool known(size_t i) const { return i < hosts_.size() && hosts_[i] != nullptr; }
  // fn(input i); where input i is known on the host (an initializer), computed in the first run
  // only and kept (`what` names fn: one kept copy per input and what).
  Tensor derived(size_t i, const std::string& what, const std::function<Tensor(const Tensor&)>& fn) const;
  double double_scalar(size_t i) const;
  // `host` on the device: the model's one copy of it where the runner keeps copies, else a new one
  Tensor uploaded(const std::shared_ptr<const HostTensor>& host) const;
  size_t num_outputs() const { return node_.outputs.size(); }
  bool wants_output(size_t i) const { return i < node_.outputs.size() && !node_.outputs[i].empty(); }

  bool has_attr(const std::string& name) const { return node_.attributes.count(name) != 0; }
  int64_t attr_int(const std::string& name, int64_t fallback) const;
  double attr_float(const std::string& name, double fallback) const;
  std::string attr_string(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& name, std::vector<int64_t> fallback = {}) const;
  std::vector<double> attr_floats(const std::string& name, std::vector<double> fallback = {}) const;
  std::vector<std::string> attr_strings(const std::string& name) const;
  const HostTensor& attr_tensor(const std::string& name) const; // throws when absent
  const Graph& attr_graph(const std::string& name) const;       // throws when absent
  int64_t required_int(const std::string& name) const;

  std::vector<Value> run_graph(const Graph& g, const std::vector<Value>& inputs) const;
  // The value a name has in the current scope so far (Gradient's y); nullopt when none has it yet.
  std::optional<Value> lookup(const std::string& name) const;

  // An OnnxError (or OnnxUnsupportedError) whose message starts with the node, op and opset.
  [[noreturn]] void fail(const std::string& what) const;
  [[noreturn]] void unsupported(const std::string& what) const;

private:
  const Node& node_;
  std::vector<Value> inputs_;
  std::vector<std::shared_ptr<const HostTensor>> hosts_;
  HostTensor host(size_t i) const; // input i on the host: known, or read back
  int64_t opset_;
  std::string device_;
  RunGraph run_graph_;
  Lookup lookup_;
  Derive derive_;
  Upload upload_;
};

// Tensor helpers the op files share.
Tensor host_ints_tensor(const std::vector<int64_t>& values, const std::string& device); // int64 (n)
std::string ints_str(const std::vector<int64_t>& v);                                    // "[1, 2]"
inline bool is_half(DType dt) { return dt == dtypes::float16 || dt == dtypes::bfloat16; }
// (dtype_from_onnx, onnx_dtype_name, onnx_type_of: graph.hpp)

using OpTable = std::map<std::string, OpFn>; // key: op_type for ai.onnx, "domain:op_type" otherwise
const OpTable& op_table();

// One per op file.
void register_elementwise_ops(OpTable& table); // ops_elementwise.cpp: math, compare, logic, cast
void register_reduce_ops(OpTable& table);  // ops_reduce.cpp: Reduce*, ArgMax, softmax family, CumSum, TopK
void register_shape_ops(OpTable& table);   // ops_shape.cpp: Reshape, Slice, Concat, Gather, Scatter, Pad, ...
void register_nn_ops(OpTable& table);      // ops_nn.cpp: Conv, pools, norms, Gemm, MatMul, RNNs, Resize
void register_control_ops(OpTable& table); // ops_control.cpp: Constant, If, Loop, Scan, Sequence*, Optional*
void register_rnn_ops(OpTable& table);     // ops_rnn.cpp: RNN, GRU, LSTM
void register_signal_ops(OpTable& table);  // ops_signal.cpp: DFT, STFT, window functions, MelWeightMatrix
void register_detection_ops(
    OpTable& table); // ops_detection.cpp: NonMaxSuppression, RoiAlign, MaxRoiPool, MaxUnpool
void register_training_ops(
    OpTable& table); // ops_training.cpp: ai.onnx.preview.training (Adam, Adagrad, Momentum)
void register_grid_sample_ops(OpTable& table); // ops_grid_sample.cpp: GridSample
void register_text_ops(OpTable& table);        // ops_text.cpp: TfIdfVectorizer

} // namespace tg::onnx
