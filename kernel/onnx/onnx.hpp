// tg::onnx: runs ONNX models on any device. A Model is loaded once (ONNX's own protobuf classes
// read the file; initializers stay on the host until a run needs them on a device) and run()
// builds the whole graph as lazy Tensors, so the scheduler fuses it into a few kernels like any
// other tensor program.
//
//   auto model = tg::onnx::Model::load("resnet18.onnx");
//   auto out = model.run({{"input", tg::Tensor::randn({1, 3, 224, 224})}});
//   out.at("output").realize();
//
// Ops whose output shape depends on values (NonZero, a Reshape whose shape is computed, Loop's
// trip count) read those values back to the host at run time; docs/onnx.md lists them.
#pragma once

#include "kernel/onnx/value.hpp"

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tg::onnx {

struct Graph; // the loaded graph (kernel/onnx/graph.hpp)

struct ModelOptions {
  std::string device; // where run() puts initializers and constants; empty: the default device
  // run() replays the kernels of an earlier run with inputs of the same shapes and dtypes (from
  // the third such run on) instead of building the graph again; kernel/onnx/replay.hpp says when
  // it does not. false: every run builds the graph (as JIT=0 does for all models).
  bool replay = true;
};

class Model {
public:
  // Throws OnnxError for a file that is not a valid model, OnnxUnsupportedError for an opset
  // newer than the newest supported (kMaxOpset), external data outside the model's folder.
  static Model load(const std::filesystem::path& file, ModelOptions options = {});
  // base_dir: where external data files are; source: the name messages use
  static Model from_bytes(std::string_view bytes, const std::filesystem::path& base_dir = {},
                          ModelOptions options = {}, const std::string& source = {});

  const std::vector<ValueInfo>& inputs() const; // without the initializers
  const std::vector<ValueInfo>& outputs() const;
  int64_t opset(const std::string& domain = "") const; // the model's opset import; 0 if absent
  const std::string& device() const { return device_; }

  // Runs the graph on the given inputs (by name). Checks each input against the declaration
  // (dtype exactly, rank, fixed dims, named dims consistently) and throws OnnxError naming the
  // input otherwise. The outputs are lazy (realize or read them), or realized already where the
  // run replays an earlier one's kernels (ModelOptions::replay).
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs) const;
  // How many run() calls so far replayed captured kernels.
  int64_t replays() const;
  // The same for graphs with sequence or optional inputs and outputs.
  std::map<std::string, Value> run_values(const std::map<std::string, Value>& inputs) const;

private:
  Model(std::shared_ptr<const Graph> graph, std::string device, bool replay);
  std::vector<Value> ordered_inputs(const std::map<std::string, Value>& inputs) const; // checked
  std::shared_ptr<const Graph> graph_;
  std::shared_ptr<class Runner> runner_;   // holds the initializers uploaded to the device
  std::shared_ptr<class Replays> replays_; // null when ModelOptions::replay is off
  std::string device_;
};

// Reads a serialized TensorProto, SequenceProto or OptionalProto (`kind` says which; ONNX's test
// data files input_0.pb, output_0.pb) onto `device`. Throws OnnxError for a bad file,
// OnnxUnsupportedError for a dtype tg lacks.
Value load_value_file(const std::filesystem::path& file, ValueInfo::Kind kind = ValueInfo::Kind::tensor,
                      const std::string& device = "");

// Every op run() supports, "Conv" for ai.onnx and "domain:Op" for others, sorted; docs/onnx.md's
// table is generated from this (tg onnx-ops).
std::vector<std::string> supported_ops();

} // namespace tg::onnx
