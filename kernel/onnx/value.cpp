#include "kernel/onnx/value.hpp"

namespace tg::onnx {

const Tensor& Value::tensor() const {
  if (auto t = std::get_if<Tensor>(&v_)) return *t;
  throw OnnxError(is_none() ? "expected a tensor, got an empty optional"
                            : "expected a tensor, got a sequence");
}

const std::vector<Tensor>& Value::sequence() const {
  if (auto s = std::get_if<std::vector<Tensor>>(&v_)) return *s;
  throw OnnxError(is_none() ? "expected a sequence, got an empty optional"
                            : "expected a sequence, got a tensor");
}

} // namespace tg::onnx
