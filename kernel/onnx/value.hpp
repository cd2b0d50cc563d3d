// The values an ONNX graph passes around, how a graph declares them, and the errors of the
// importer (kernel/onnx/onnx.hpp runs models).
#pragma once

#include "kernel/tensor/tensor.hpp"

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tg::onnx {

// The newest ai.onnx opset this runtime implements (ONNX 1.12).
inline constexpr int64_t kMaxOpset = 17;

// A model that cannot be read or run: the message names the file, node, op and opset involved.
struct OnnxError : Error {
  using Error::Error;
};
// A valid model that uses something this runtime lacks (an op, an opset, a dtype).
struct OnnxUnsupportedError : OnnxError {
  using OnnxError::OnnxError;
};

// An ONNX value: a tensor, a sequence of tensors, or an empty optional.
class Value {
public:
  Value() = default; // the empty optional (also: an omitted optional input)
  Value(Tensor t) : v_(std::move(t)) {}
  static Value sequence(std::vector<Tensor> items) {
    Value v;
    v.v_ = std::move(items);
    return v;
  }
  bool is_none() const { return std::holds_alternative<std::monostate>(v_); }
  bool is_tensor() const { return std::holds_alternative<Tensor>(v_); }
  bool is_sequence() const { return std::holds_alternative<std::vector<Tensor>>(v_); }
  const Tensor& tensor() const;                // throws OnnxError unless a tensor
  const std::vector<Tensor>& sequence() const; // throws OnnxError unless a sequence

private:
  std::variant<std::monostate, Tensor, std::vector<Tensor>> v_;
};

// A graph input or output as the model declares it. A dim is a number, a name (bound at run
// time, the same name to the same size) or unknown (std::monostate).
struct ValueInfo {
  using Dim = std::variant<std::monostate, int64_t, std::string>;
  std::string name;
  enum class Kind { tensor, sequence, optional } kind = Kind::tensor;
  std::optional<DType> dtype;           // unset: not declared, or a dtype tg lacks (string, complex)
  std::string dtype_name;               // ONNX's name of it ("FLOAT", "STRING")
  std::optional<std::vector<Dim>> dims; // unset: rank unknown
};

} // namespace tg::onnx
