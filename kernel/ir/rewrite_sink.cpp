#include "kernel/ir/rewrite_sink.hpp"

#include <atomic>

namespace tg {
namespace {
// The one registry of this file: set once when VIZ starts recording.
std::atomic<RewriteSink*> g_sink{nullptr};
} // namespace

void set_rewrite_sink(RewriteSink* sink) { g_sink.store(sink, std::memory_order_release); }
RewriteSink* rewrite_sink() { return g_sink.load(std::memory_order_relaxed); }

} // namespace tg
