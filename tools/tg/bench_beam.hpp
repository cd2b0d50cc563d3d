// `tg bench ops --beam N` (bench_beam.cpp): BEAM against the heuristic and the BLAS / oneDNN peers.
#pragma once

#include <optional>
#include <string>

namespace tg::cli {

struct BeamBenchOptions {
  int width = 2;
  int repeat = 10;
  std::string device;                      // canonical name
  std::optional<double> timeout_s;         // BEAM_TIMEOUT for the search (default: the environment's)
  std::string python = "/usr/bin/python3"; // runs tools/bench/peer_numpy.py and peer_torch.py
  int peer_runs = 3;                       // fresh processes per peer
  bool no_peer = false;
  std::optional<std::string> json_path; // also write the results there
};

int bench_beam(const BeamBenchOptions& options);

} // namespace tg::cli
