// Reads ONNX files into the loaded form (graph.hpp) with ONNX's own protobuf classes. The only
// file that includes them.
#pragma once

#include "kernel/onnx/graph.hpp"

#include <filesystem>
#include <memory>
#include <string_view>

namespace tg::onnx {

// A ModelProto's bytes -> its main graph; external data files are read relative to base_dir and
// must lie inside it. `source` names the model in messages.
std::shared_ptr<const Graph> load_graph(std::string_view bytes, const std::filesystem::path& base_dir,
                                        const std::string& source);

// A TensorProto, SequenceProto or OptionalProto's bytes -> host tensors: a sequence gives one per
// element, a tensor one, an empty optional none (is_none set).
struct HostValue {
  ValueInfo::Kind kind = ValueInfo::Kind::tensor;
  bool is_none = false;
  bool is_sequence = false;
  std::vector<HostTensor> tensors;
};
HostValue load_host_value(std::string_view bytes, ValueInfo::Kind kind, const std::string& source);

} // namespace tg::onnx
