#!/usr/bin/env python3
"""Step 5 in Python: inspecting the compiler (examples/05_compiler, docs/tutorials/05-compiler.md).
What Context(DEBUG=...) shows of a realize: why kernels fused (the kernel count of a variance), the
stages DEBUG=4 prints for a small matmul (schedule item, lowered graph, kernel IR, source); NOOPT=1
against the default on x * 1 + 0 (the algebra folds in both; only the optimizations differ, read
from DEBUG=3's "opts" line); and BEAM search reported by DEBUG=2. The C++ program inspects schedule
items with tg::summarize and tg::inspect_kernel, which Python does not bind: here everything is
read from the DEBUG output, captured from the process's stdout."""
import argparse
import os
import re
import sys
import tempfile

import numpy as np

from claims import Claims, _libc, section
from tinygrad_cpp import Context, KernelCounter, Tensor, _core


def captured_output(fn) -> str:
  """What fn prints on the process's stdout (the core's DEBUG output goes there), returned instead of shown."""
  sys.stdout.flush()
  _libc.fflush(None)
  saved = os.dup(1)
  with tempfile.TemporaryFile(mode="w+b") as f:
    os.dup2(f.fileno(), 1)
    try:
      fn()
    finally:
      _libc.fflush(None)
      sys.stdout.flush()
      os.dup2(saved, 1)
      os.close(saved)
    f.seek(0)
    return f.read().decode(errors="replace")


def shortened(text: str, keep: int) -> str:
  """text with only the first `keep` lines of each long block (the CPU's LLVM source is long)."""
  out, run = [], 0
  for line in text.splitlines():
    run = run + 1 if not re.match(r"^(===|---|\*\*\*|opts|kernel|realize)", line) else 0
    if run < keep: out.append(line)
    elif run == keep: out.append("    ...")
  return "\n".join("    " + line for line in out)


def matrix(n: int, seed: float) -> Tensor:
  i = np.arange(n * n)
  return Tensor((((i * 7 + int(seed * 13)) % 11) / 11.0 - 0.5).astype(np.float32).reshape(n, n)).realize()


def kernel_ir(debug3: str) -> str:
  """The kernel IR DEBUG=3 prints: from "kernel NAME" to the source."""
  m = re.search(r"^kernel .*?(?=^--- )", debug3, re.S | re.M)
  return m.group(0) if m else ""


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--beam-n", type=int, default=32, help="matmul size for the BEAM search (the C++ page: 1024)")
  ap.add_argument("--beam", type=int, default=2)
  ap.add_argument("--beam-timeout", type=float, default=1.0)
  args = ap.parse_args()
  claims = Claims()

  section("a schedule's kernels, and why they fused")
  x = matrix(8, 1)
  variance = (x - x.mean(1, keepdim=True)).square().mean(1)
  text = captured_output(lambda: _realize_counted(variance, 2))
  print("  (x - x.mean(1, keepdim=True)).square().mean(1) on an (8, 8) x, with DEBUG=2:\n" + shortened(text, 4))
  print("  kernel 1 is the first mean: its (8, 1) result is broadcast back over the 8 columns, and\n"
        "  recomputing a reduce for every element it is broadcast to would repeat it 8 times, so the\n"
        "  scheduler stores it. The subtraction, square, sum and the divide of the second mean read it\n"
        "  and fuse into kernel 2.")
  claims.equal(len(re.findall(r"^\*\*\* ", text, re.M)), 2, "two kernels")
  xv = x.numpy().astype(np.float64)
  claims.close(variance.numpy(), ((xv - xv.mean(1, keepdims=True)) ** 2).mean(1), 1e-5, 1e-6, "the values are numpy's")

  section("DEBUG=4: every stage of a 4x4 matmul")
  a, b = matrix(4, 2), matrix(4, 3)
  stages = captured_output(lambda: _realize_counted(a @ b, 4))
  print(shortened(stages, 12))
  claims.check("=== schedule item" in stages, "DEBUG=4 prints the schedule item (the SINK of a STORE)")
  claims.check("=== lowered" in stages, "... the lowered kernel graph with the optimizations applied")
  claims.check("opts " in stages, "... (DEBUG=3) the optimization list and the kernel IR")
  claims.check(" source" in stages, "... (DEBUG=3) the source the plugin rendered")
  claims.check("realize: 1 kernel" in stages, "... (DEBUG=1) the kernel count")

  section("NOOPT=1 against the default on x * 1 + 0")
  big = matrix(64, 4)
  with Context(NOOPT=1):
    plain_text = captured_output(lambda: _realize_counted(big * 1 + 0, 3))
  big2 = matrix(64, 4)  # new buffers: a new computation
  opt_text = captured_output(lambda: _realize_counted(big2 * 1 + 0, 3))
  plain_opts = re.search(r"^opts (\[.*?\])", plain_text, re.M)
  default_opts = re.search(r"^opts (\[.*?\])", opt_text, re.M)
  plain_ir, default_ir = kernel_ir(plain_text), kernel_ir(opt_text)
  print(f"  NOOPT=1: opts {plain_opts.group(1) if plain_opts else '?'}\n" + "\n".join("    " + l for l in plain_ir.splitlines()))
  print(f"  default: opts {default_opts.group(1) if default_opts else '?'}\n" + "\n".join("    " + l for l in default_ir.splitlines()))
  float_math = lambda ir: "MUL float" in ir or "ADD float" in ir
  claims.check(plain_ir and default_ir and not float_math(plain_ir) and not float_math(default_ir),
               "x * 1 + 0 folds to x in both modes: no float MUL or ADD is left (the algebra is not an optimization)")
  claims.check(plain_opts is not None and plain_opts.group(1) == "[]", "NOOPT applies no optimization")
  claims.check(default_opts is not None and default_opts.group(1) != "[]", "the default applies some",
               default_opts.group(1) if default_opts else "")
  claims.check(np.array_equal((big * 1 + 0).numpy(), big.numpy()), "and both compute x exactly")

  n = args.beam_n
  section(f"BEAM={args.beam}: the optimizations searched for a {n}x{n} matmul")
  by_default = (matrix(n, 5) @ matrix(n, 6)).numpy()
  _core.settings.set_beam(args.beam, args.beam_timeout)  # what BEAM=2 BEAM_TIMEOUT=1 in the environment do
  product = matrix(n, 5) @ matrix(n, 6)  # new input buffers: a new computation
  try:
    search = captured_output(lambda: _realize_counted(product, 2))
  finally:
    _core.settings.set_beam(0)
  by_beam = product.numpy()
  print(shortened(search, 8))
  claims.check("beam: " in search, "DEBUG=2 reports the search (or the result cached by an earlier run)")
  claims.close(by_beam, by_default, 1e-4, 1e-4, "BEAM's kernel computes the same product as the heuristic's")

  section("VIZ=1")
  print("  run again as `VIZ=1 VIZ_FILE=/tmp/compiler.json python3 05_compiler.py`, then `tg viz /tmp/compiler.json`\n"
        "  to see every realize, kernel and graph rewrite above in the browser")
  claims.finish("05_compiler")


def _realize_counted(t: Tensor, debug: int):
  with Context(DEBUG=debug), KernelCounter():
    t.realize()


if __name__ == "__main__":
  main()
