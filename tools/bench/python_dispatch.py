"""The Python front end's cost of one small op: (a + b).realize() on 1024 float32, a cached
kernel, two input sets alternating (as `tg bench core`'s dispatch row in C++). Run by
`tg bench python` once per process for tinygrad_cpp (PYTHONPATH at its package) and for
tinygrad; prints one JSON line: {"impl", "version", "dispatch_us"}.

    python3 python_dispatch.py --impl tinygrad_cpp|tinygrad [--repeat N] [--calls N]
"""
import argparse
import json
import statistics
import time


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--impl", choices=["tinygrad_cpp", "tinygrad"], required=True)
  ap.add_argument("--repeat", type=int, default=7)
  ap.add_argument("--calls", type=int, default=1000)
  args = ap.parse_args()
  if args.impl == "tinygrad_cpp":
    import tinygrad_cpp as impl
    from tinygrad_cpp import Tensor
    version = impl.__version__
  else:
    import tinygrad as impl
    from tinygrad import Tensor
    version = getattr(impl, "__version__", None)
    if version is None:
      from importlib.metadata import version as v
      version = v("tinygrad")
  import numpy as np
  rng = np.random.default_rng(8)
  xs = [(Tensor(rng.uniform(-1, 1, 1024).astype(np.float32)).realize(),
         Tensor(rng.uniform(-1, 1, 1024).astype(np.float32)).realize()) for _ in range(2)]
  for k in range(args.calls // 10): (xs[k & 1][0] + xs[k & 1][1]).realize()
  times = []
  for _ in range(args.repeat):
    t0 = time.perf_counter()
    for k in range(args.calls): (xs[k & 1][0] + xs[k & 1][1]).realize()
    times.append((time.perf_counter() - t0) * 1e6 / args.calls)
  check = (xs[0][0] + xs[0][1]).numpy()
  assert np.allclose(check, xs[0][0].numpy() + xs[0][1].numpy()), "wrong sum"
  print(json.dumps({"impl": args.impl, "version": str(version), "dispatch_us": statistics.median(times)}))


if __name__ == "__main__":
  main()
