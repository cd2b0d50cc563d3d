#!/usr/bin/env python3
"""Step 7 in Python, the capstone: a custom backend (examples/07_custom_backend, docs/tutorials/07-custom-backend.md).
A device is a plugin, libtg_device_<name>.so, that the core loads at run time through the C ABI
(docs/abi.md); sdk/examples/custom_backend is a complete one, `MY`: it renders each kernel to C,
compiles it with the system's C compiler and runs work groups one at a time. This program loads MY
with tinygrad_cpp.load_plugin(path) (the path from argv[1] or $TG_MY_PLUGIN; the build puts it at
build/<preset>/example_plugins/libtg_device_my.so) and runs the same matmul on MY, CPU and, where
present, CUDA, each checked against numpy's in float64. Without the plugin it exits 77 (skipped); a
device that is not present is reported as skipped, never as passed."""
import argparse
import os
import time

import numpy as np

import tinygrad_cpp
from claims import Claims, section
from tinygrad_cpp import Device, KernelCounter, Tensor


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("plugin", nargs="?", default=os.environ.get("TG_MY_PLUGIN", ""),
                  help="path of libtg_device_my.so (default: $TG_MY_PLUGIN)")
  ap.add_argument("--n", type=int, default=256)
  ap.add_argument("--devices", default="MY,CPU,CUDA")
  args = ap.parse_args()
  claims = Claims()
  if not args.plugin or not os.path.isfile(args.plugin):
    print(f"skipped: unavailable (no MY plugin: pass its path or set TG_MY_PLUGIN; got {args.plugin!r})")
    raise SystemExit(77)
  name = tinygrad_cpp.load_plugin(args.plugin)  # the run-time way; TG_PLUGIN_PATH works too
  print(f"loaded plugin '{name}' from {args.plugin}")
  claims.check("MY" in tinygrad_cpp.devices(), "its device MY is listed by tinygrad_cpp.devices()")

  n = args.n
  i = np.arange(n * n)
  a = ((i * 7 % 13 - 6) / 8).astype(np.float32).reshape(n, n)
  b = ((i * 5 % 11 - 5) / 8).astype(np.float32).reshape(n, n)
  want = a.astype(np.float64) @ b.astype(np.float64)

  section(f"{n}x{n} matmul on each device")
  ran = 0
  for device in args.devices.split(","):
    try:
      what = Device[device]["name"]
    except tinygrad_cpp.Error as e:
      print(f"  {device}: skipped: unavailable ({e})")
      if device in ("MY", "CPU"): claims.check(False, f"{device} is required")
      continue
    t0 = time.perf_counter()
    (Tensor(a, device=device) @ Tensor(b, device=device)).realize()  # the first run compiles the kernel
    first_ms = (time.perf_counter() - t0) * 1000
    x, y = Tensor(a, device=device).realize(), Tensor(b, device=device).realize()
    with KernelCounter() as counter:
      t0 = time.perf_counter()
      c = (x @ y).realize()
      ms = (time.perf_counter() - t0) * 1000
    print(f"  {device} ({what}): first run {first_ms:.1f} ms (compiles), then {ms:.2f} ms, "
          f"{counter.kernel_count} kernel(s)")  # a large right operand is first copied into panels
    claims.check(c.device.startswith(device), f"{device}: the result lives on {device}", c.device)
    claims.close(c.numpy(), want, 1e-5, 1e-4, f"{device}: equals numpy's float64 matmul")
    ran += 1
  small = (Tensor([1, 2, 3], device="MY") + Tensor([4, 5, 6], device="MY")).numpy()
  claims.check(small.tolist() == [5, 7, 9], "Tensor([1,2,3], device='MY') + Tensor([4,5,6], device='MY') = [5, 7, 9]")
  moved = Tensor(a[:2, :3]).to("MY").relu().to("CPU").numpy()
  claims.check(np.array_equal(moved, np.maximum(a[:2, :3], 0)), "tensors move CPU -> MY -> CPU with .to()")
  claims.check(ran >= 2, "ran on at least two devices", str(ran))
  claims.finish("07_custom_backend")


if __name__ == "__main__":
  main()
