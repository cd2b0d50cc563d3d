#include "kernel/engine/capture.hpp"

namespace tg {

namespace {
thread_local CaptureScope* recording = nullptr; // per thread, like Tensor::NoGrad
} // namespace

CaptureScope::CaptureScope() {
  if (recording)
    throw Error("CaptureScope: a capture is already recording on this thread (JITs do not nest)");
  recording = this;
}

CaptureScope::~CaptureScope() { recording = nullptr; }

CaptureScope* CaptureScope::active() { return recording; }

void CaptureScope::record(std::shared_ptr<PreparedKernel> kernel,
                          std::span<const std::shared_ptr<DeviceStorage>> buffers, const LaunchDims& dims,
                          std::string device) {
  CapturedLaunch launch{std::move(kernel), {}, dims, std::move(device)};
  for (size_t i = 0; i < buffers.size(); ++i) {
    const auto& s = buffers[i];
    CapturedBuffer b{s, nullptr, s->buffer().size()};
    if (i > 0 && !written_.count(b.ref)) b.held = s; // read, never written here: the replay reads it
    launch.buffers.push_back(std::move(b));
  }
  written_.insert(launch.buffers[0].ref);
  launches_.push_back(std::move(launch));
}

void CaptureScope::note_host_dependence(std::string what) {
  if (host_dependence_.empty()) host_dependence_ = std::move(what);
}

} // namespace tg
