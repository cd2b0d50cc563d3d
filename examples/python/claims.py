"""What every Python example does with what it teaches (examples/common/claims.hpp in Python): states
a claim, checks it, prints "ok" or "FAIL" with the values, and at the end exits 1 if any failed."""
import contextlib
import ctypes
import sys

import numpy as np

# The core prints DEBUG output through C's stdout, which has its own buffer: line-buffer Python's and
# flush C's after each DEBUG block (debug_output), so the two come out in order when piped too.
sys.stdout.reconfigure(line_buffering=True)
_libc = ctypes.CDLL(None)


@contextlib.contextmanager
def debug_output():
  sys.stdout.flush()
  try:
    yield
  finally:
    _libc.fflush(None)


class Claims:
  def __init__(self):
    self.failed = []

  def check(self, ok, what: str, detail: str = "") -> bool:
    ok = bool(ok)
    print(("  ok   " if ok else "  FAIL ") + what + (f"  [{detail}]" if detail else ""))
    if not ok: self.failed.append(what)
    return ok

  def equal(self, got, want, what: str) -> bool:
    return self.check(got == want, what, f"got {got}, want {want}")

  def close(self, got, want, rtol: float, atol: float, what: str) -> bool:
    """|got - want| <= atol + rtol * |want| for every element (NaN fails)."""
    got, want = np.asarray(got, np.float64).ravel(), np.asarray(want, np.float64).ravel()
    if got.shape != want.shape: return self.check(False, what, f"sizes {got.size} vs {want.size}")
    err = np.abs(got - want)
    at = int(np.nanargmax(np.where(np.isnan(err), np.inf, err))) if err.size else 0
    ok = bool(np.all(err <= atol + rtol * np.abs(want)))
    detail = f"max error {err[at]:.3g} at {at} ({got[at]:.6g} vs {want[at]:.6g})" if err.size else "empty"
    return self.check(ok, what, detail)

  def finish(self, program: str):
    """Exits: 0 when every claim held, else 1."""
    if not self.failed:
      print(f"{program}: every claim held")
      sys.exit(0)
    print(f"{program}: {len(self.failed)} claim(s) failed:")
    for f in self.failed: print("  " + f)
    sys.exit(1)


def section(title: str):
  print(f"\n== {title}")
