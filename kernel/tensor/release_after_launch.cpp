#include "kernel/tensor/release_after_launch.hpp"

namespace tg {

namespace {
thread_local bool releasing_after_launch = false; // per thread, like Tensor::NoGrad
} // namespace

ReleaseAfterLaunch::ReleaseAfterLaunch() : outer_(releasing_after_launch) { releasing_after_launch = true; }
ReleaseAfterLaunch::~ReleaseAfterLaunch() { releasing_after_launch = outer_; }
bool ReleaseAfterLaunch::active() { return releasing_after_launch; }

} // namespace tg
