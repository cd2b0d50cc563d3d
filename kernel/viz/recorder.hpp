#pragma once
// VIZ's recorder: a thread-safe observer of the engine (kernel/engine/observer.hpp) that builds a
// viz::Trace while the program runs. VIZ=1 in the environment attaches it to the default engine
// when libtg loads; the trace is then saved at exit to $VIZ_FILE (default:
// <temp dir>/tg_viz_<pid>.json) for `tg viz FILE`. When VIZ is unset, recorder() is nullptr and
// each notification point of the engine costs one check.
//
// What it hears: Tensor::realize_all (begin_realize: the tensor graph), run_schedule
// (on_schedule, then on_kernel / on_copy per item) and prepare_kernel (begin_lowering and
// end_lowering around lowering, between which graph_rewrite calls are recorded through
// kernel/ir/rewrite_sink.hpp).
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "kernel/engine/observer.hpp"
#include "kernel/ir/rewrite_sink.hpp"
#include "kernel/schedule/schedule.hpp"
#include "kernel/viz/trace.hpp"

namespace tg::viz {

class Recorder final : public EngineObserver, public RewriteSink {
public:
  Recorder();
  ~Recorder() override;

  // A realize of these targets starts; its run_schedule follows on the same thread.
  void begin_realize(const std::vector<UOpRef>& targets) override;
  // run_schedule starts: it belongs to the realize just begun, or opens a realize of its own.
  void on_schedule() override;
  void on_kernel(const ScheduleItem& item, const PreparedKernel& kernel, double ms) override;
  void on_copy(const ScheduleItem& item, double ms) override;
  void begin_lowering() override;
  void end_lowering() override;

  bool wants_rewrites() const override;
  void on_graph_rewrite(const UOpRef& before, const UOpRef& after, std::vector<RewriteStep> steps) override;

  Trace snapshot() const;
  void clear();
  // Writes the trace to $VIZ_FILE or the default path and says where on stderr; later calls (and
  // the one at exit) write nothing new unless more was recorded. Returns the path.
  std::filesystem::path save();

  // Marks the calling thread as lowering one kernel: graph_rewrite calls are recorded for it.
  class KernelScope {
  public:
    explicit KernelScope(Recorder* r);
    ~KernelScope();
    KernelScope(const KernelScope&) = delete;
    KernelScope& operator=(const KernelScope&) = delete;

  private:
    Recorder* r_;
  };

private:
  struct ThreadState {
    std::size_t realize = SIZE_MAX; // index into trace_.realizes
    bool fresh_realize = false;     // begin_realize ran, on_schedule not yet
    bool in_kernel = false;
    bool prepared = false; // a KernelScope closed since the last on_kernel: stages are new
    std::vector<RewriteRecord> pending;
    std::size_t dropped = 0; // changing rewrite calls past the bound
  };
  ThreadState& state();     // mutex_ held
  RealizeRecord& current(); // mutex_ held; opens a realize when the thread has none
  KernelRecord base_record(const ScheduleItem& item, double ms) const;

  mutable std::mutex mutex_;
  Trace trace_;
  std::map<std::thread::id, ThreadState> threads_;
  std::size_t saved_kernels_ = SIZE_MAX; // kernel count at the last save
};

// The default engine's recorder, or nullptr when VIZ is unset and start_recording was not called.
Recorder* recorder();
// Turns recording on: attaches the recorder to the default engine (tests, tools); returns it.
// Idempotent.
Recorder& start_recording();
// VIZ=1 (or any value but 0) in the environment.
bool viz_from_environment();

} // namespace tg::viz
