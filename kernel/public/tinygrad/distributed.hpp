// Ranks in several processes, public header: tg::distributed::init, ProcessGroup, data-parallel
// helpers (link tinygrad_cpp::distributed, libtg_distributed.so).
#pragma once

#include "kernel/distributed/data_parallel.hpp"
#include "kernel/distributed/process_group.hpp"
#include "kernel/distributed/world.hpp"
