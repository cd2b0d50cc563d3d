#pragma once
// PatternMatcher: rewrite rules as data (a pattern and a function), tried in order; rules are
// indexed by the root op so a node only meets rules that can match it. graph_rewrite applies a
// matcher over a whole graph until nothing changes.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kernel/ir/upat.hpp"

namespace tg {

// Returns the replacement, or nullptr when the rule does not apply after all.
using RewriteFn = std::function<UOpRef(const Captures&)>;

struct Rule {
  Rule(UPat p, RewriteFn f, std::string l = {})
      : pattern(std::move(p)), fn(std::move(f)), label(std::move(l)) {}
  UPat pattern;
  RewriteFn fn;
  std::string label; // for diagnostics, optional
};

class PatternMatcher {
public:
  PatternMatcher() = default;
  PatternMatcher(std::vector<Rule> rules); // NOLINT: a rule list is a matcher
  // The first rule (in order) that matches u and whose function returns a node other than u;
  // `matched`, when given, receives that rule (for VIZ's record of which rule fired).
  UOpRef rewrite(const UOpRef& u, void* ctx = nullptr, const Rule** matched = nullptr) const;
  // Rules of this matcher first, then other's.
  PatternMatcher operator+(const PatternMatcher& other) const;
  std::size_t size() const { return rules_.size(); }

private:
  void index();
  std::vector<Rule> rules_;
  std::vector<std::vector<std::uint32_t>> by_op_; // op -> rule indices, in rule order
};

enum class RewriteOrder : std::uint8_t {
  BottomUp, // sources first, then the node; a rewritten node is rewritten again (default)
  TopDown,  // the node first (to a fixed point), then its sources
};

// Rewrites the graph under root to a fixed point of pm. Throws RewriteLoopError when a node is
// reached again through its own rewrites (a -> b -> a), or after max_steps rewrites.
UOpRef graph_rewrite(const UOpRef& root, const PatternMatcher& pm, void* ctx = nullptr,
                     RewriteOrder order = RewriteOrder::BottomUp, std::size_t max_steps = 10'000'000);

} // namespace tg
