// Evaluates a loaded graph node by node, in the order the file gives (ONNX requires it to be
// topological), building lazy Tensors. Subgraphs (If, Loop, Scan) run in a scope that sees the
// enclosing graphs' values.
#pragma once

#include "kernel/onnx/graph.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tg::onnx {

class Runner {
public:
  Runner(std::shared_ptr<const Graph> graph, std::string device);
  const Graph& graph() const { return *graph_; }
  const std::string& device() const { return device_; }
  // inputs in the order of graph().inputs; returns the outputs in the order of graph().outputs
  std::vector<Value> run(const std::vector<Value>& inputs);

private:
  struct Scope;
  std::vector<Value> run_graph(const Graph& g, const std::vector<Value>& inputs, const Scope* outer);
  Tensor uploaded(const std::shared_ptr<const HostTensor>& host); // initializers: copied once per model
  // The host value `key` names (a folded node's output: the node and its inputs' values or, for
  // Shape and Size, shapes; or a value derived from an initializer): read back from `computed`
  // the first time, then kept for the model's life.
  std::shared_ptr<const HostTensor> folded(const std::string& key, const Tensor& computed);

  std::shared_ptr<const Graph> graph_;
  std::string device_;
  std::mutex mutex_;
  std::map<const HostTensor*, Tensor> uploads_;
  std::map<std::string, std::shared_ptr<const HostTensor>> folds_;
};

} // namespace tg::onnx
