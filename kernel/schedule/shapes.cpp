#include "kernel/schedule/shapes.hpp"

#include "kernel/schedule/buffer.hpp"

#include <algorithm>
#include <sstream>

namespace tg {

std::string dims_str(const Dims& d) {
  std::ostringstream os;
  os << '(';
  for (size_t i = 0; i < d.size(); ++i) os << (i ? ", " : "") << d[i];
  if (d.size() == 1) os << ',';
  os << ')';
  return os.str();
}

int64_t dims_prod(const Dims& d) {
  if (std::find(d.begin(), d.end(), 0) != d.end()) return 0; // empty, however large the rest
  int64_t p = 1;
  for (auto x : d)
    if (__builtin_mul_overflow(p, x, &p))
      throw ShapeError("shape " + dims_str(d) + " has more elements than int64 can count (2^63 - 1)");
  return p;
}

std::vector<std::pair<int64_t, int64_t>> MovementArg::pairs(const UOpRef& u) {
  const auto* flat = u->arg_if<std::vector<int64_t>>();
  if (!flat || flat->size() % 2)
    throw ShapeError(std::string(op_name(u->op())) + ": malformed pair argument");
  std::vector<std::pair<int64_t, int64_t>> out;
  for (size_t i = 0; i < flat->size(); i += 2) out.emplace_back((*flat)[i], (*flat)[i + 1]);
  return out;
}

Dims infer_shape(const UOpRef& u, const std::vector<const Dims*>& src) {
  auto vec_arg = [&]() -> const std::vector<int64_t>& {
    const auto* v = u->arg_if<std::vector<int64_t>>();
    if (!v) throw ShapeError(std::string(op_name(u->op())) + ": missing argument");
    return *v;
  };
  switch (u->op()) {
  case Ops::BUFFER:
    return {buffer_arg(u).size()};
  case Ops::RANGE:
    return {u->src(1)->arg_int()}; // iota
  case Ops::CONST:
  case Ops::DEFINE_VAR:
    return {};
  case Ops::RESHAPE:
  case Ops::EXPAND:
    return vec_arg();
  case Ops::PERMUTE: {
    Dims out;
    for (auto axis : vec_arg()) out.push_back(src.at(0)->at(size_t(axis)));
    return out;
  }
  case Ops::PAD: {
    Dims out = *src.at(0);
    auto pairs = MovementArg::pairs(u);
    for (size_t d = 0; d < out.size(); ++d) out[d] += pairs.at(d).first + pairs.at(d).second;
    return out;
  }
  case Ops::SHRINK: {
    Dims out;
    for (auto [b, e] : MovementArg::pairs(u)) out.push_back(e - b);
    return out;
  }
  case Ops::REDUCE_AXIS: {
    Dims out = *src.at(0);
    for (auto axis : u->arg_if<ReduceArg>()->axes) out.at(size_t(axis)) = 1;
    return out;
  }
  case Ops::WHERE:
    return *src.at(1);
  default:
    if (src.empty()) return {};
    return *src.at(0); // elementwise, CAST, FLIP, CONTIGUOUS, COPY, ...
  }
}

const Dims& ShapeMap::operator()(const UOpRef& root) {
  if (auto it = memo_.find(root.get()); it != memo_.end()) return it->second;
  // Iterative post-order so deep graphs do not exhaust the stack.
  std::vector<std::pair<const UOpRef*, size_t>> stack{{&root, 0}};
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    const auto& srcs = (*node)->src();
    if (next < srcs.size()) {
      const UOpRef& s = srcs[next++];
      if (!memo_.count(s.get())) stack.emplace_back(&s, 0);
      continue;
    }
    std::vector<const Dims*> src_shapes;
    for (const auto& s : srcs) src_shapes.push_back(&memo_.at(s.get()));
    memo_.emplace((*node).get(), infer_shape(*node, src_shapes));
    stack.pop_back();
  }
  return memo_.at(root.get());
}

} // namespace tg
