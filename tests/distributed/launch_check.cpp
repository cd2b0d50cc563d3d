// Status lines go to stderr, which collects every rank's under both launchers.
// What the launch tests (launch_checks.cmake) run under mpirun or torchrun's convention: each mode
// plays one situation, and the script checks the exit status, the time and the text.
//   die        rank 1 exits abruptly after a first all-reduce; rank 0 waits in the second
//   skip       rank 1 never joins an all-reduce (sleeps); rank 0 hits TG_DISTRIBUTED_TIMEOUT
//   tcp        RANK/WORLD_SIZE without MPI: barrier, a broadcast from rank 1, and the clear error
//              a CPU process group gives there (CPU devices meet through MPI)
//   tcp-alone  rank 0 of 2 whose partner never comes: init() times out
#include "kernel/distributed/process_group.hpp"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

namespace dist = tg::distributed;

namespace {

// One write per line, so the ranks' lines do not interleave.
void say(const std::string& line) { std::cerr << line + "\n" << std::flush; }

float sum_over_ranks(const dist::ProcessGroup& group, float value) {
  return group.all_reduce(tg::Tensor::from_vector<float>({value}, {1})).item<float>();
}

int run(const std::string& mode) {
  const dist::World& w = dist::init();
  const std::string me = "rank " + std::to_string(w.rank);
  say(me + " of " + std::to_string(w.size) + " (" + w.launcher + ")");
  if (mode == "die" || mode == "skip") {
    dist::ProcessGroup group("CPU");
    say(me + " step 1: " + std::to_string(sum_over_ranks(group, 1.0f)));
    if (w.rank == 1) {
      if (mode == "die") std::_Exit(3); // no goodbye: as a crash or a kill would leave
      std::this_thread::sleep_for(std::chrono::seconds(60));
      return 0;
    }
    say(me + " step 2: " + std::to_string(sum_over_ranks(group, 1.0f)));
    return 0;
  }
  if (mode == "tcp") {
    dist::barrier();
    std::vector<std::byte> bytes(5, std::byte(w.rank == 1 ? 9 : 0));
    dist::broadcast_bytes(bytes, 1);
    if (bytes != std::vector<std::byte>(5, std::byte(9)))
      throw std::runtime_error("broadcast from rank 1 lost bytes");
    try {
      dist::ProcessGroup group("CPU");
      throw std::runtime_error("a CPU process group without MPI did not fail");
    } catch (const dist::DistributedError& e) {
      say(me + " CPU group: " + e.what());
    }
    dist::barrier();
    say(me + " tcp ok");
    return 0;
  }
  std::cerr << "unknown mode " << mode << "\n";
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    return run(mode == "tcp-alone" ? "tcp" : mode);
  } catch (const std::exception& e) {
    if (const dist::World* w = dist::world(); w && w->size > 1 && w->launcher == "mpi")
      dist::abort(e.what(), 1);
    std::cerr << "error: " << e.what() << std::endl;
    return 1;
  }
}
