#include "kernel/viz/trace.hpp"

#include <unordered_map>
#include <unordered_set>

namespace tg::viz {

Graph graph_of(const UOpRef& root, const UOpRef& before) {
  std::vector<UOpRef> order = toposort(root);
  // Interned nodes: a node of `after` that is also in `before` is the same object.
  std::unordered_set<const UOp*> old;
  if (before)
    for (const auto& u : toposort(before)) old.insert(u.get());
  const std::size_t first = order.size() > kMaxGraphNodes ? order.size() - kMaxGraphNodes : 0;
  std::unordered_map<const UOp*, std::uint32_t> index;
  Graph g;
  g.reserve(order.size() - first);
  for (std::size_t i = first; i < order.size(); ++i) {
    const UOp& u = *order[i];
    GraphNode n{
        std::string(op_name(u.op())), u.dtype().name(), arg_str(u.arg()), {}, before && !old.count(&u)};
    if (std::holds_alternative<std::monostate>(u.arg())) n.arg.clear();
    for (const auto& s : u.src())
      if (auto it = index.find(s.get()); it != index.end()) n.src.push_back(it->second); // cut ones drop
    index[&u] = static_cast<std::uint32_t>(g.size());
    g.push_back(std::move(n));
  }
  return g;
}

} // namespace tg::viz
