// The realized-value cache: what each computed node became (a view of its BUFFER), keyed by the
// lazy node and held weakly, so an entry dies with the last reference to the expression. Who owns
// the stored result depends on who asked for it: an intermediate (a node the schedule chose to
// store, which graphs of later realizes or gradients may read) is owned by the cache, so it lives
// as long as its expression; a target is owned by the tensors that realized it (they hold its
// view) and the cache only refers to it, so it is freed with them even while something else keeps
// its expression: the kernel cache's structure keys, autograd's record of a read value (which
// holds the expression while the view lives), or the view itself when the target was already a
// view (it contains its own key).
//
// It is also where realization meets autograd, through one narrow interface: a listener told
// "this expression is now read through this realized view" (read) and "dead results are about to
// be released" (release_dead). Thread-safe.
#pragma once

#include "kernel/ir/uop.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tg {

// Autograd's side of realization (autograd.cpp implements it): it keeps what it needs to
// differentiate through a realized view.
class RealizationListener {
public:
  virtual ~RealizationListener() = default;
  // A tensor's expression `expr` is replaced by its realized `view`.
  virtual void on_read(const UOpRef& expr, const UOpRef& view) = 0;
  // Dead results are about to return to the allocator: drop what keeps dead expressions alive.
  virtual void before_release() = 0;
};

class RealizedCache {
public:
  // The stored result of `lazy` on `device`. A constant-only expression has no device in its
  // nodes, so the same node may be realized on several devices: only a result there counts.
  std::optional<UOpRef> find(const UOpRef& lazy, const std::string& device);
  // find, for a tensor about to read its value through the result: tells the listener.
  std::optional<UOpRef> read(const UOpRef& lazy, const std::string& device);
  // The indices of `nodes` that have a stored result on `device` (one lock for all).
  std::vector<int32_t> stored_among(const std::vector<UOpRef>& nodes, const std::string& device);
  // `owned`: the cache keeps the result alive (an intermediate); else only the tensors do.
  void insert(const UOpRef& lazy, const UOpRef& realized, bool owned);
  // Whether the cache owns a stored intermediate (an expression about to be realized may then
  // contain it). Read without the lock: a stale answer only skips or adds one substitute walk.
  bool holds_intermediates() const { return owned_.load(std::memory_order_relaxed) > 0; }
  // root with every cached node replaced by its realized view on `device` (one lock for the
  // whole walk). The walk does not descend below a node it replaces (what the stored value was
  // computed from is read only where another path reaches it), nor below a node that an earlier
  // walk returned while nothing was stored since (a gradient substituted by Tensor::gradient and
  // then realized). A walk of the whole graph would cover the forward pass below the stored loss,
  // and the gradients twice.
  UOpRef substitute(const UOpRef& root, const std::string& device);
  // Returns the buffers of intermediates whose expressions died to the allocator: the listener
  // first (it may release expressions the cache is keyed on), then the cache's own entries. Every
  // realize does this before it runs, so the last step's intermediates are reused by this one
  // instead of doubling peak memory.
  void release_dead();
  // Drops every entry (Engine::clear).
  void clear();

  // The listener (autograd), set once; null until then.
  void set_listener(RealizationListener* listener) { listener_.store(listener, std::memory_order_release); }

private:
  void purge();
  // Whether the BUFFER under a realized view (movement ops over one BUFFER) is on `device`; a
  // view without one (a constant) is on every device.
  static bool on_device(const UOpRef& view, const std::string& device);
  struct Entry {
    std::weak_ptr<const UOp> lazy;
    std::weak_ptr<const UOp> view;
    UOpRef owned; // the view, when the cache owns it

    // The view, while both the expression and the view live.
    UOpRef get() const { return lazy.expired() ? nullptr : view.lock(); }
  };
  std::mutex mutex_;
  std::unordered_map<const UOp*, Entry> map_;
  std::atomic<int64_t> owned_{0}; // entries that own their result (intermediates)
  // What substitute returned (the root, a SINK's sources) while no entry was inserted since
  // (generation_ counts the inserts): nothing below them is stored yet. Held weakly.
  uint64_t generation_ = 0, settled_generation_ = ~uint64_t(0);
  std::string settled_device_;
  std::unordered_map<const UOp*, std::weak_ptr<const UOp>> settled_;
  std::atomic<RealizationListener*> listener_{nullptr};
};

// The whole, contiguous BUFFER behind a view, or nullptr if the view is anything else.
UOpRef stored_buffer(const UOpRef& view);

} // namespace tg
