// While a ReleaseAfterLaunch lives on a thread, Tensor::realize_all releases the dead results after
// it has launched its kernels instead of before: Optimizer::step_and_realize's last part, whose
// dead results are the step's graphs (its parameters were just assigned), so the device starts the
// update while the host frees them. Peak memory is unchanged: the part before read them.
#pragma once

namespace tg {

class ReleaseAfterLaunch {
public:
  ReleaseAfterLaunch();
  ~ReleaseAfterLaunch();
  ReleaseAfterLaunch(const ReleaseAfterLaunch&) = delete;
  ReleaseAfterLaunch& operator=(const ReleaseAfterLaunch&) = delete;
  // Whether one lives on this thread.
  static bool active();

private:
  bool outer_;
};

} // namespace tg
