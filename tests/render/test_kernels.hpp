// The kernels every renderer test renders: the stored golden corpus (tests/data/corpus, from the
// core's codegen plus hand-built ones) and a few KernelBuilder programs for what the corpus does
// not reach (vector accumulators, bitcasts, wrapping integer edges, IF, every scalar dtype).
#pragma once

#include "conform/corpus.hpp"

#include <tg/sdk/kernel_ir.hpp>

#include <vector>

namespace tgtest {

std::vector<tg::conform::CorpusKernel> render_test_kernels();

inline bool needs_work_group_memory(const tg::conform::CorpusKernel& k) {
  return (k.features & (TG_FEATURE_LOCAL_MEMORY | TG_FEATURE_BARRIER)) != 0;
}

} // namespace tgtest
