#pragma once
// The recording hook for graph rewrites (VIZ): graph_rewrite reports each call that changed its
// graph to the sink installed here, with the rules that fired. It lives in the ir ring because
// that is the innermost ring that rewrites; the recorder that implements it lives in runtime.
// With no sink installed a graph_rewrite call pays one relaxed atomic load.
#include <string>
#include <vector>

#include "kernel/ir/uop.hpp"

namespace tg {

// One rule application: `from` became `to` by the rule labelled `rule`.
struct RewriteStep {
  std::string rule;
  UOpRef from, to;
};

class RewriteSink {
public:
  virtual ~RewriteSink() = default;
  // Whether the calling thread is inside a scope the sink records (asked once per call).
  virtual bool wants_rewrites() const = 0;
  virtual void on_graph_rewrite(const UOpRef& before, const UOpRef& after,
                                std::vector<RewriteStep> steps) = 0;
};

// Installs the process's sink (nullptr: none). The sink must outlive every later graph_rewrite.
void set_rewrite_sink(RewriteSink* sink);
// The installed sink, or nullptr.
RewriteSink* rewrite_sink();

} // namespace tg
