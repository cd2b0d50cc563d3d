// A schedule for people: one line per kernel saying what it computes and from what, e.g.
//   kernel 0: (4,) float on CPU, reads 2 buffers; elementwise ADD MAX; reduce SUM over axes (1)
// (Tensor::schedule() gives the items; ScheduleItem::str() prints a whole graph instead).
#pragma once

#include "kernel/schedule/schedule.hpp"

#include <span>
#include <string>

namespace tg {

// One line, without a trailing newline. A copy between devices says "copy (n,) A -> B".
std::string summarize(const ScheduleItem& item);
// "no kernels\n", or "N kernel(s):\n" then "  kernel i: ..." lines.
std::string summarize(std::span<const ScheduleItem> items);

} // namespace tg
