// The loaded form of an ONNX graph: plain C++ values, no protobuf (the loader is the only file that
// sees ONNX's protobuf classes). Initializers and tensor attributes stay host bytes until a run
// needs them on a device.
#pragma once

#include "kernel/onnx/value.hpp"

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tg::onnx {

// ONNX's TensorProto.DataType numbers <-> tg dtypes. dtype_from_onnx throws OnnxUnsupportedError
// naming `where` for a type tg lacks (STRING, complex) and OnnxError for an unknown number.
DType dtype_from_onnx(int64_t onnx_type, const std::string& where);
std::string onnx_dtype_name(int64_t onnx_type); // "FLOAT", "STRING"; "UNKNOWN(n)" otherwise
int64_t onnx_type_of(DType dtype);

// A tensor's bytes on the host, little-endian, row-major.
struct HostTensor {
  DType dtype = dtypes::float32;
  Dims shape;
  std::vector<std::byte> data;
  int64_t numel() const;
  Tensor to_tensor(const std::string& device) const;
  std::vector<int64_t> as_ints() const;   // any int or bool dtype
  std::vector<double> as_doubles() const; // any dtype
};

struct Graph;

struct Attribute {
  enum class Kind {
    f,
    i,
    s,
    t,
    g,
    floats,
    ints,
    strings,
    tensors,
    graphs,
    sparse,
    type_proto
  } kind = Kind::i;
  double f = 0;
  int64_t i = 0;
  std::string s;
  std::shared_ptr<const HostTensor> t;
  std::shared_ptr<const Graph> g;
  std::vector<double> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<std::shared_ptr<const HostTensor>> tensors;
  std::vector<std::shared_ptr<const Graph>> graphs;
};

struct Node {
  std::string name, op_type, domain;        // domain "" is ai.onnx
  std::vector<std::string> inputs, outputs; // "" is an omitted optional
  std::map<std::string, Attribute> attributes;
  std::string describe() const; // "node 'conv1' (Conv, opset 11)" without the opset
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;
  std::vector<ValueInfo> inputs; // the run's inputs (initializers that are also listed are dropped)
  std::vector<ValueInfo> outputs;
  std::map<std::string, std::shared_ptr<const HostTensor>> initializers;
  std::map<std::string, int64_t> opsets; // domain -> version (the model's, shared by subgraphs)
  std::string source;                    // the model file, for messages
};

} // namespace tg::onnx
