#include "kernel/ir/rewrite.hpp"

#include "kernel/ir/rewrite_sink.hpp"

#include <unordered_map>
#include <unordered_set>

namespace tg {
namespace {

std::string short_render(const UOpRef& u) {
  std::string s = u->render();
  if (s.size() > 160) s = s.substr(0, 157) + "...";
  return std::string(op_name(u->op())) + " " + s;
}

} // namespace

PatternMatcher::PatternMatcher(std::vector<Rule> rules) : rules_(std::move(rules)) { index(); }

void PatternMatcher::index() {
  by_op_.assign(kOpCount, {});
  for (std::uint32_t r = 0; r < rules_.size(); ++r)
    for (std::size_t o = 0; o < kOpCount; ++o)
      if (rules_[r].pattern.matches_any_op() || rules_[r].pattern.ops().test(o)) by_op_[o].push_back(r);
}

PatternMatcher PatternMatcher::operator+(const PatternMatcher& other) const {
  std::vector<Rule> all = rules_;
  all.insert(all.end(), other.rules_.begin(), other.rules_.end());
  return PatternMatcher(std::move(all));
}

UOpRef PatternMatcher::rewrite(const UOpRef& u, void* ctx, const Rule** matched) const {
  if (by_op_.empty()) return nullptr;
  Captures caps;
  caps.ctx = ctx;
  UOpRef result;
  for (std::uint32_t r : by_op_[static_cast<std::size_t>(u->op())]) {
    const Rule& rule = rules_[r];
    // Each way the pattern matches gets a chance; the first non-trivial result wins.
    rule.pattern.match(u, caps, [&] {
      UOpRef out = rule.fn(caps);
      if (!out || out.get() == u.get()) return false;
      result = std::move(out);
      return true;
    });
    if (result) {
      if (matched) *matched = &rule;
      return result;
    }
    caps.truncate(0);
  }
  return nullptr;
}

UOpRef graph_rewrite(const UOpRef& root, const PatternMatcher& pm, void* ctx, RewriteOrder order,
                     std::size_t max_steps) {
  struct Frame {
    UOpRef n;     // the node whose result we are computing
    int stage;    // 0: visit, 1: sources done, 2: link n to new_n's result
    UOpRef new_n; // n after top-down rewriting / with new sources
  };
  // Keyed by raw pointer; the stored key holder keeps the address from being reused.
  std::unordered_map<const UOp*, std::pair<UOpRef, UOpRef>> replace;
  std::unordered_set<const UOp*> open; // visited, result pending: the current path of the walk
  std::size_t steps = 0;
  RewriteSink* sink = rewrite_sink(); // VIZ: record this call's rule applications
  if (sink && !sink->wants_rewrites()) sink = nullptr;
  std::vector<RewriteStep> record;
  auto apply = [&](const UOpRef& n) {
    const Rule* rule = nullptr;
    UOpRef next = pm.rewrite(n, ctx, sink ? &rule : nullptr);
    if (next && sink) record.push_back({rule->label.empty() ? "(unnamed rule)" : rule->label, n, next});
    return next;
  };
  auto count_step = [&](const UOpRef& from, const UOpRef& to) {
    if (++steps > max_steps)
      throw RewriteLoopError("graph_rewrite: no fixed point after " + std::to_string(max_steps) +
                             " rewrites; last: " + short_render(from) + " -> " + short_render(to));
  };
  auto fixed_point = [&](UOpRef n) {
    std::unordered_set<const UOp*> seen{n.get()};
    std::vector<UOpRef> keep{n};
    while (UOpRef next = apply(n)) {
      count_step(n, next);
      if (!seen.insert(next.get()).second)
        throw RewriteLoopError("graph_rewrite: rewrite loop: " + short_render(n) + " rewrote back to " +
                               short_render(next));
      keep.push_back(next);
      n = std::move(next);
    }
    return n;
  };

  std::vector<Frame> stack{{root, 0, root}};
  while (!stack.empty()) {
    Frame f = std::move(stack.back());
    stack.pop_back();
    if (replace.count(f.n.get())) continue;
    if (f.stage == 0) {
      if (!open.insert(f.n.get()).second)
        throw RewriteLoopError("graph_rewrite: rewrite loop: " + short_render(f.n) +
                               " is reached again through its own rewrite");
      UOpRef new_n = order == RewriteOrder::TopDown ? fixed_point(f.new_n) : f.new_n;
      const auto& src = new_n->src();
      stack.push_back({f.n, 1, new_n});
      for (auto it = src.rbegin(); it != src.rend(); ++it) stack.push_back({*it, 0, *it});
    } else if (f.stage == 1) {
      std::vector<UOpRef> new_src;
      new_src.reserve(f.new_n->src().size());
      bool changed = false;
      for (const auto& s : f.new_n->src()) {
        const UOpRef& r = replace.at(s.get()).second;
        changed |= r.get() != s.get();
        new_src.push_back(r);
      }
      UOpRef next;
      if (!changed) {
        if (order == RewriteOrder::BottomUp) next = apply(f.new_n);
        if (!next) {
          open.erase(f.n.get());
          replace.emplace(f.n.get(), std::make_pair(f.n, f.new_n));
          continue;
        }
        count_step(f.new_n, next);
      } else {
        next = UOp::make(f.new_n->op(), f.new_n->dtype(), std::move(new_src), f.new_n->arg());
      }
      if (open.count(next.get()))
        throw RewriteLoopError("graph_rewrite: rewrite loop: " + short_render(f.new_n) + " rewrote back to " +
                               short_render(next));
      stack.push_back({f.n, 2, next});
      stack.push_back({next, 0, next});
    } else {
      open.erase(f.n.get());
      UOpRef result = replace.at(f.new_n.get()).second;
      replace.emplace(f.n.get(), std::make_pair(f.n, std::move(result)));
    }
  }
  UOpRef result = replace.at(root.get()).second;
  if (sink && result != root) sink->on_graph_rewrite(root, result, std::move(record));
  return result;
}

} // namespace tg
