// Step 5: inspecting the compiler. What a schedule's kernels are and why they fused; the stages
// DEBUG=4 prints for a small matmul (schedule item, lowered graph, kernel IR, source); NOOPT=1
// against the default on x * 1 + 0 (the algebra folds in both; only the optimizations differ);
// the optimizations BEAM search chose for a matmul; and where VIZ=1 shows all of it in a browser.
#include "examples/common/args.hpp"
#include "examples/common/claims.hpp"
#include <tinygrad/tinygrad.hpp>

#include <algorithm>
#include <iostream>
#include <sstream>

using tg::Tensor;

namespace {

// What `fn` prints on std::cout (DEBUG output goes there), returned instead of shown.
template <class Fn> std::string captured_output(Fn fn) {
  std::ostringstream text;
  std::streambuf* old = std::cout.rdbuf(text.rdbuf());
  try {
    fn();
  } catch (...) {
    std::cout.rdbuf(old);
    throw;
  }
  std::cout.rdbuf(old);
  return text.str();
}

// `text` with only the first `keep` lines after "--- <plugin> source" (the CPU's LLVM IR is long).
std::string shortened_source(const std::string& text, size_t keep) {
  size_t at = text.find(" source\n");
  if (at == std::string::npos) return text;
  size_t pos = at + 8, lines = 0;
  while (lines < keep && pos < text.size()) {
    pos = text.find('\n', pos);
    if (pos == std::string::npos) return text;
    ++pos, ++lines;
  }
  size_t end = text.find("realize: ", pos); // DEBUG=1's line follows the source
  if (end == std::string::npos) return text;
  size_t dropped = size_t(std::count(text.begin() + long(pos), text.begin() + long(end), '\n'));
  return text.substr(0, pos) + "... (" + std::to_string(dropped) + " more lines)\n" + text.substr(end);
}

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

Tensor matrix(int64_t n, float seed) {
  std::vector<float> v(size_t(n * n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = float((i * 7 + size_t(seed * 13)) % 11) / 11.0f - 0.5f;
  return Tensor::from_vector(v, {n, n}).realize();
}

} // namespace

int main(int argc, char** argv) {
  examples::Args args(argc, argv, {{"beam-n", "1024"}, {"beam", "2"}, {"beam-timeout", "20"}});
  examples::Claims claims;

  examples::section("a schedule's kernels, and why they fused");
  Tensor x = matrix(8, 1);
  Tensor variance = (x - x.mean({1}, true)).square().mean({1});
  auto items = variance.schedule();
  std::cout << "  (x - x.mean(1, keepdim)).square().mean(1) on an (8, 8) x:\n"
            << examples::indent(tg::summarize(items), 4);
  std::cout
      << "  kernel 0 is the first mean: its (8, 1) result is broadcast back over the 8 columns (EXPAND),\n"
         "  and recomputing a reduce for every element it is broadcast to would repeat it 8 times,\n"
         "  so the scheduler stores it. The subtraction, square, sum and the divide of the second mean\n"
         "  read it and fuse into kernel 1: elementwise ops fuse into the reduce they feed, and the\n"
         "  divide after it is not broadcast, so it fuses too.\n";
  claims.equal(items.size(), 2u, "two kernels");
  claims.check(items.size() == 2 && items[0].shape == tg::Dims{8, 1} && items[1].shape == tg::Dims{8},
               "kernel 0 stores the (8, 1) mean, kernel 1 computes the (8,) result");

  examples::section("DEBUG=4: every stage of a 4x4 matmul");
  Tensor a = matrix(4, 2), b = matrix(4, 3);
  std::string stages = captured_output([&] {
    tg::set_debug_level(4);
    a.matmul(b).realize();
    tg::set_debug_level(0);
  });
  std::cout << examples::indent(shortened_source(stages, 12), 4);
  claims.check(contains(stages, "=== schedule item"),
               "DEBUG=4 prints the schedule item (the SINK of a STORE)");
  claims.check(contains(stages, "=== lowered"),
               "... the lowered kernel graph with the optimizations applied");
  claims.check(contains(stages, "opts "), "... (DEBUG=3) the optimization list and the kernel IR");
  claims.check(contains(stages, " source"), "... (DEBUG=3) the source the plugin rendered");
  claims.check(contains(stages, "realize: 1 kernel"), "... (DEBUG=1) the kernel count");

  examples::section("NOOPT=1 against the default on x * 1 + 0");
  Tensor big = matrix(64, 4);
  Tensor expr = big * 1 + 0;
  auto expr_items = expr.schedule();
  tg::set_noopt(true);
  tg::KernelReport plain = tg::inspect_kernel(expr_items.at(0));
  tg::set_noopt(false);
  tg::KernelReport optimized = tg::inspect_kernel(expr_items.at(0));
  std::cout << "  NOOPT=1: " << plain.name << "  " << plain.opts << "\n" << examples::indent(plain.ir, 4);
  std::cout << "  default: " << optimized.name << "  " << optimized.opts << "\n"
            << examples::indent(optimized.ir, 4);
  auto has_float_math = [](const std::string& ir) {
    return contains(ir, "MUL float") || contains(ir, "ADD float");
  };
  claims.check(
      !has_float_math(plain.ir) && !has_float_math(optimized.ir),
      "x * 1 + 0 folds to x in both modes: no float MUL or ADD is left (the algebra is not an optimization)");
  claims.check(plain.applied.empty(), "NOOPT applies no optimization");
  claims.check(!optimized.applied.empty(), "the default applies some", tg::to_string(optimized.applied));
  auto got = expr.to_vector<float>(), want = big.to_vector<float>();
  claims.check(got == want, "and both compute x exactly");

  const int64_t n = args.integer("beam-n");
  const int beam = int(args.integer("beam"));
  examples::section("BEAM=" + std::to_string(beam) + ": the optimizations searched for a " +
                    std::to_string(n) + "x" + std::to_string(n) + " matmul");
  Tensor product = matrix(n, 5).matmul(matrix(n, 6));
  // the product is the last kernel (a CPU first copies a large right operand into panels)
  const auto mm_items = product.schedule();
  const auto& mm = mm_items.back();
  tg::KernelReport heuristic = tg::inspect_kernel(mm);
  auto by_default = product.to_vector<float>();
  tg::set_beam(beam, args.number("beam-timeout")); // what BEAM=2 BEAM_TIMEOUT=s in the environment do
  std::string search = captured_output([&] {
    tg::set_debug_level(2);
    tg::inspect_kernel(mm); // searches (or reads the BEAM cache), prints the result at DEBUG=2
    tg::set_debug_level(0);
  });
  tg::KernelReport searched = tg::inspect_kernel(mm); // now from the kernel cache
  // New input buffers, so this is a new computation (the same one on the same buffers is already
  // realized); it finds BEAM's kernel in the kernel cache by structure.
  Tensor again = matrix(n, 5).matmul(matrix(n, 6));
  std::vector<float> by_beam;
  size_t beam_kernels = 0;
  {
    tg::LaunchCounter counter;
    by_beam = again.to_vector<float>();
    beam_kernels = counter.kernels();
  }
  tg::set_beam(0);
  std::cout << examples::indent(search, 4) << "  heuristic's list: " << tg::to_string(heuristic.applied)
            << "\n  BEAM's list:      " << tg::to_string(searched.applied) << "\n";
  claims.check(contains(search, "beam: "),
               "DEBUG=2 reports the search (or the result cached by an earlier run)");
  claims.equal(beam_kernels, mm_items.size(), "the product was computed again, by BEAM's kernel");
  claims.close(examples::doubles(by_beam), examples::doubles(by_default), 1e-4, 1e-4,
               "BEAM's kernel computes the same product as the heuristic's");

  examples::section("VIZ=1");
  if (tg::viz::Recorder* viz = tg::viz::recorder()) {
    auto trace = viz->snapshot();
    std::cout << "  VIZ is on: " << trace.realizes.size()
              << " realizes recorded; the trace is saved at exit\n";
    claims.check(!trace.realizes.empty(), "the VIZ trace recorded this program's realizes");
  } else {
    std::cout << "  run again as `VIZ=1 VIZ_FILE=/tmp/compiler.json 05_compiler`, then `tg viz "
                 "/tmp/compiler.json`\n"
                 "  to see every realize, kernel and graph rewrite above in the browser\n";
  }
  return claims.finish("05_compiler");
}
