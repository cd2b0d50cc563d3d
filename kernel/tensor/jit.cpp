#include "kernel/tensor/jit.hpp"

#include "kernel/engine/engine.hpp"
#include "kernel/tensor/assign_hook.hpp"
#include "kernel/tensor/autograd.hpp"

#include "kernel/engine/capture.hpp"
#include "kernel/engine/config.hpp"
#include "kernel/engine/interrupt.hpp"
#include "kernel/engine/realize.hpp"
#include "kernel/runtime/devices.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace tg {

namespace {

// The tensors assign()ed while a capture records on this thread, with the storage each held
// before its first assignment (nullptr when that value was not a stored, whole buffer).
struct AssignRecord {
  Tensor tensor;
  std::shared_ptr<DeviceStorage> before;
};
// Records the tensors assign()ed on this thread while it lives (Tensor::assign tells it).
class AssignScope final : public AssignObserver {
public:
  AssignScope() : outer_(set_assign_observer(this)) {}
  ~AssignScope() override { set_assign_observer(outer_); }
  AssignScope(const AssignScope&) = delete;
  AssignScope& operator=(const AssignScope&) = delete;
  void on_assign(const Tensor& t) override;
  std::vector<AssignRecord> records;

private:
  AssignObserver* outer_;
};

// The storage of a tensor that is one whole stored buffer, else nullptr.
std::shared_ptr<DeviceStorage> stored(const Tensor& t) {
  UOpRef buffer = stored_buffer(t.uop());
  if (!buffer || buffer_arg(buffer).size() != t.numel()) return nullptr;
  return std::static_pointer_cast<DeviceStorage>(buffer_arg(buffer).storage());
}

// A tensor over `storage` (a new BUFFER node holding it).
Tensor tensor_on(std::shared_ptr<DeviceStorage> storage, const Dims& shape, DType dtype,
                 const std::string& device) {
  UOpRef buffer = make_buffer(device, dtype, dims_prod(shape));
  buffer_arg(buffer).set_storage(std::move(storage));
  UOpRef view =
      shape.size() == 1 ? buffer : UOp::make(Ops::RESHAPE, dtype, {buffer}, std::vector<int64_t>(shape));
  return Tensor(view, shape, device);
}

// Inputs as the kernels read them: whole, contiguous, stored.
std::vector<Tensor> stored_inputs(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out;
  for (Tensor t : inputs) {
    t.realize();
    if (!stored(t)) {
      t = t.contiguous();
      t.realize();
    }
    out.push_back(t);
  }
  return out;
}

struct InputKind {
  Dims shape;
  DType dtype;
  std::string device;
  size_t same_as; // the first input with the same storage: a capture binds one buffer per storage
  bool operator==(const InputKind&) const = default;
};
std::vector<InputKind> kinds_of(const std::vector<Tensor>& inputs) {
  std::vector<std::shared_ptr<DeviceStorage>> storage;
  for (const auto& t : inputs) storage.push_back(stored(t));
  std::vector<InputKind> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const size_t first = size_t(std::find(storage.begin(), storage.end(), storage[i]) - storage.begin());
    out.push_back({inputs[i].shape(), inputs[i].dtype(), inputs[i].device(), first});
  }
  return out;
}

std::string mb(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MB", double(bytes) / 1e6);
  return buf;
}

void AssignScope::on_assign(const Tensor& t) {
  for (const auto& r : records)
    if (r.tensor.is(t)) return; // the value before the first assignment is what the step reads
  records.push_back({t, stored(t)});
}

} // namespace

// A buffer argument of a replay that changes per call: an input, a state tensor's value before
// the step, or fresh storage for an output or a state tensor's new value.
struct Slot {
  enum Kind { Input, StateBefore, Fresh } kind;
  size_t index;   // input or state index (Input, StateBefore)
  uint64_t bytes; // Fresh: the allocation size
};

struct TinyJit::Captured {
  std::vector<InputKind> kinds;
  std::string host_dependence; // CaptureScope::host_dependence of the recorded call
  std::string device_name;
  std::shared_ptr<Device> device;
  std::shared_ptr<Allocator> allocator;
  std::vector<std::shared_ptr<PreparedKernel>> kernels; // keep the programs loaded
  std::vector<std::shared_ptr<DeviceStorage>> frozen;   // constants the kernels read
  std::vector<std::shared_ptr<DeviceStorage>> groups;   // the planner's allocations
  struct PlannedArg {
    size_t launch, arg, intermediate;
  };
  std::vector<PlannedArg> planned;              // the arguments that take a group's buffer
  std::vector<std::vector<tg_buffer_arg>> args; // per launch
  std::vector<tg_launch_args> launches;
  std::vector<const tg_launch_args*> launch_list;
  std::vector<Slot> slots;
  struct Patch {
    size_t launch, arg, slot;
  };
  std::vector<Patch> patches;
  struct State {
    Tensor tensor;
    size_t before = SIZE_MAX, after = SIZE_MAX; // slots
  };
  std::vector<State> state;
  struct Output {
    size_t slot;
    Dims shape;
    DType dtype;
  };
  std::vector<Output> outputs;
  JitMemory memory;
  std::vector<BufferLifetime> lifetimes;
  MemoryPlan plan;
};

TinyJit::TinyJit(Fn fn) : fn_(std::move(fn)) {
  if (!fn_) throw JitError("TinyJit: no function given");
}
TinyJit::~TinyJit() = default;

size_t TinyJit::kernel_count() const { return captured_ ? captured_->launches.size() : 0; }
bool TinyJit::uses_launch_batch() const {
  return captured_ && captured_->device && captured_->device->has_launch_batch();
}
const JitMemory& TinyJit::memory() const {
  static const JitMemory none;
  return captured_ ? captured_->memory : none;
}
const std::vector<BufferLifetime>& TinyJit::intermediate_lifetimes() const {
  static const std::vector<BufferLifetime> none;
  return captured_ ? captured_->lifetimes : none;
}
const MemoryPlan& TinyJit::memory_plan() const {
  static const MemoryPlan none;
  return captured_ ? captured_->plan : none;
}
const std::string& TinyJit::host_dependence() const {
  static const std::string none;
  return captured_ ? captured_->host_dependence : none;
}
void TinyJit::reset() { captured_.reset(); }

std::vector<Tensor> TinyJit::operator()(const std::vector<Tensor>& inputs) {
  ++calls_;
  if (!config().jit) return fn_(inputs); // JIT=0
  std::vector<Tensor> in = stored_inputs(inputs);
  if (captured_ && captured_->kinds != kinds_of(in)) { // another shape, dtype or device: record again
    if (config().debug >= 1) std::cout << "jit: inputs changed shape, dtype or device: capturing again\n";
    captured_.reset();
    return capture(in);
  }
  if (captured_) {
    InterruptCheck::poll();
    return replay(in);
  }
  if (calls_ == 1) return fn_(in); // warm-up
  return capture(in);
}

std::vector<Tensor> TinyJit::capture(const std::vector<Tensor>& in) {
  auto cap = std::make_unique<Captured>();
  cap->kinds = kinds_of(in);
  std::vector<Tensor> outs;
  std::vector<CapturedLaunch> launches;
  std::vector<AssignRecord> assigned;
  {
    CaptureScope recording;
    AssignScope assigns;
    detail::TransientAutograd transient; // see autograd.hpp
    outs = fn_(in);
    std::vector<Tensor*> targets;
    for (auto& t : outs) targets.push_back(&t);
    for (auto& r : assigns.records) targets.push_back(&r.tensor);
    Tensor::realize_all(targets);
    for (auto& t : outs)
      if (!stored(t)) {
        t = t.contiguous();
        t.realize();
      }
    launches = recording.launches();
    cap->host_dependence = recording.host_dependence();
    assigned = std::move(assigns.records);
  }
  ++captures_;
  if (launches.empty()) throw JitError("TinyJit: the function ran no kernel; there is nothing to capture");
  cap->device_name = launches[0].device;
  for (const auto& l : launches)
    if (l.device != cap->device_name)
      throw JitError("TinyJit: the function ran kernels on " + cap->device_name + " and " + l.device +
                     "; a capture runs on one device");
  OpenDevice dev = open_device(cap->device_name);
  cap->device = dev.device;
  cap->allocator = dev.allocator;

  // Which storage is bound per call (a slot), which the kernels write (intermediates unless bound),
  // and the rest: frozen constants.
  // Buffers are named by their owner (control block): an intermediate freed during the capture
  // may leave its address to a later, different buffer.
  using Id = std::weak_ptr<DeviceStorage>;
  std::map<Id, size_t, std::owner_less<>> slot_of;
  auto add_slot = [&](const Id& s, Slot slot) {
    auto [it, fresh] = slot_of.emplace(s, cap->slots.size());
    if (fresh) cap->slots.push_back(slot);
    return it->second;
  };
  for (size_t i = 0; i < in.size(); ++i) add_slot(stored(in[i]), {Slot::Input, i, 0});
  std::set<Id, std::owner_less<>> written;
  for (const auto& l : launches) written.insert(l.buffers[0].ref);
  for (size_t j = 0; j < assigned.size(); ++j) {
    const Tensor& t = assigned[j].tensor;
    if (!assigned[j].before)
      throw JitError("TinyJit: " + t.str() +
                     " is assigned in the function but was not a stored buffer before "
                     "the captured call (realize it first; the warm-up call usually does)");
    Captured::State st{t};
    st.before = add_slot(assigned[j].before, {Slot::StateBefore, j, 0});
    cap->state.push_back(st);
  }
  auto fresh_slot = [&](const Tensor& t, const std::string& what) {
    auto s = stored(t);
    if (!written.count(s))
      throw JitError("TinyJit: " + what + " " + t.str() +
                     " was not computed by the function's kernels "
                     "(a replay could not produce it)");
    return add_slot(s, {Slot::Fresh, 0, s->buffer().size()});
  };
  for (auto& st : cap->state) st.after = fresh_slot(st.tensor, "assigned tensor");
  for (const auto& t : outs) cap->outputs.push_back({fresh_slot(t, "output"), t.shape(), t.dtype()});

  // Arguments; intermediates get their lifetimes for the planner.
  std::map<Id, size_t, std::owner_less<>> intermediate_of;
  std::set<Id, std::owner_less<>> frozen_seen;
  std::vector<Captured::PlannedArg> planned;
  cap->args.resize(launches.size());
  for (size_t l = 0; l < launches.size(); ++l)
    for (size_t a = 0; a < launches[l].buffers.size(); ++a) {
      const CapturedBuffer& b = launches[l].buffers[a];
      if (auto it = slot_of.find(b.ref); it != slot_of.end()) {
        cap->patches.push_back({l, a, it->second});
        cap->args[l].push_back({nullptr, 0});
      } else if (written.count(b.ref)) {
        auto [it2, fresh] = intermediate_of.emplace(b.ref, cap->lifetimes.size());
        if (fresh) cap->lifetimes.push_back({l, l, b.bytes});
        cap->lifetimes[it2->second].last = l;
        planned.push_back({l, a, it2->second});
        cap->args[l].push_back({nullptr, 0}); // the group's buffer, below
      } else {
        // Read and never written by the step: held by the recording since it was first read.
        if (!b.held) throw JitError("TinyJit: internal error: a constant buffer of the capture was not held");
        if (frozen_seen.insert(b.ref).second) cap->frozen.push_back(b.held);
        cap->args[l].push_back({b.held->buffer().raw(), 0});
      }
    }
  cap->plan = plan_memory(cap->lifetimes);
  cap->planned = std::move(planned); // the groups are allocated by the first replay

  cap->launches.resize(launches.size());
  for (size_t l = 0; l < launches.size(); ++l) {
    tg_launch_args& a = cap->launches[l];
    a.struct_size = sizeof a;
    a.program = launches[l].kernel->program->program.raw();
    for (size_t axis = 0; axis < 3; ++axis) {
      a.global_size[axis] = launches[l].dims.global[axis];
      a.local_size[axis] = launches[l].dims.local[axis];
    }
    a.buffers = cap->args[l].data();
    a.buffer_count = uint32_t(cap->args[l].size());
    cap->launch_list.push_back(&a);
    cap->kernels.push_back(launches[l].kernel);
  }

  JitMemory& m = cap->memory;
  m.intermediate_bytes = cap->plan.unplanned_bytes;
  m.planned_bytes = cap->plan.planned_bytes;
  m.peak_live_bytes = cap->plan.peak_live_bytes;
  m.intermediates = cap->lifetimes.size();
  m.groups = cap->plan.group_bytes.size();
  for (const auto& [s, slot] : slot_of)
    if (auto held = s.lock()) m.bound_bytes += held->buffer().size(); // all alive: inputs, state, results
  for (const auto& s : cap->frozen) m.bound_bytes += s->buffer().size();
  if (config().debug >= 1)
    std::cout << "jit: captured " << launches.size() << " kernels on " << cap->device_name << " ("
              << (cap->device->has_launch_batch() ? "launch_batch" : "one launch per kernel") << "); "
              << m.intermediates << " intermediates " << mb(m.intermediate_bytes) << " -> " << m.groups
              << " shared buffers " << mb(m.planned_bytes) << " (live peak " << mb(m.peak_live_bytes)
              << "); step memory " << mb(m.unplanned_step_bytes()) << " -> " << mb(m.planned_step_bytes())
              << "\n";
  if (config().debug >= 1 && !cap->host_dependence.empty())
    std::cout << "jit: the captured call made " << cap->host_dependence
              << "; replays keep what the host did with it in the captured call\n";
  captured_ = std::move(cap);
  return outs;
}

std::vector<Tensor> TinyJit::replay(const std::vector<Tensor>& in) {
  Captured& cap = *captured_;
  if (cap.groups.empty() && !cap.plan.group_bytes.empty()) {
    // Not at the capture: only once the capturing call's results and graph are gone can its
    // intermediates go back to the allocator's cache, where the groups (each sized like one of
    // them) find their memory instead of adding to the peak.
    engine().realized().release_dead();
    for (uint64_t bytes : cap.plan.group_bytes) cap.groups.push_back(cap.allocator->alloc(bytes));
    for (const auto& p : cap.planned)
      cap.args[p.launch][p.arg].buffer = cap.groups[cap.plan.group_of[p.intermediate]]->buffer().raw();
  }
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::shared_ptr<DeviceStorage>> bound(cap.slots.size());
  for (size_t k = 0; k < cap.slots.size(); ++k) {
    const Slot& slot = cap.slots[k];
    if (slot.kind == Slot::Input) {
      bound[k] = stored(in[slot.index]);
    } else if (slot.kind == Slot::StateBefore) {
      Tensor& t = cap.state[slot.index].tensor;
      if (!stored(t)) t.realize(); // assigned outside the function since the last call
      bound[k] = stored(t);
      if (!bound[k]) throw JitError("TinyJit: state tensor " + t.str() + " is no longer one stored buffer");
    } else {
      bound[k] = cap.allocator->alloc(slot.bytes);
    }
  }
  for (const auto& p : cap.patches) cap.args[p.launch][p.arg].buffer = bound[p.slot]->buffer().raw();
  const bool timing = cap.device->properties().features & TG_FEATURE_TIMING;
  const bool measure = (measure_ || config().debug >= 1) && timing;
  std::optional<uint64_t> elapsed;
  if (config().debug >= 2) { // each kernel on its own, with its line, as eager runs print them
    uint64_t total = 0;
    for (size_t l = 0; l < cap.launch_list.size(); ++l) {
      auto k0 = std::chrono::steady_clock::now();
      auto ns = cap.device->launch_batch(std::span(&cap.launch_list[l], 1), timing);
      double ms =
          ns ? double(*ns) / 1e6
             : std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - k0).count();
      total += uint64_t(ms * 1e6);
      std::cout << kernel_line(cap.device_name, int(l + 1), *cap.kernels[l], cap.args[l].size(), ms,
                               "  (jit)")
                << "\n";
    }
    elapsed = total;
  } else {
    elapsed = cap.device->launch_batch(cap.launch_list, measure);
  }
  last_kernel_ns_ = elapsed.value_or(0);
  last_wall_ns_ = uint64_t(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
  ++replays_;
  if (config().debug >= 2)
    std::printf("jit: replayed %zu kernels in %.3f ms (kernel time %.3f ms)\n", cap.launches.size(),
                double(last_wall_ns_) / 1e6, double(last_kernel_ns_) / 1e6);
  for (auto& st : cap.state) {
    Tensor& t = st.tensor;
    t.assign(tensor_on(bound[st.after], t.shape(), t.dtype(), t.device()));
  }
  std::vector<Tensor> outs;
  for (const auto& o : cap.outputs)
    outs.push_back(tensor_on(bound[o.slot], o.shape, o.dtype, cap.device_name));
  return outs;
}

} // namespace tg
