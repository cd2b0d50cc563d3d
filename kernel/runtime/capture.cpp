#include "kernel/runtime/capture.hpp"

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

} // namespace tg
