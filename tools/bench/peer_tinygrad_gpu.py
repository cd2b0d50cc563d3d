#!/usr/bin/env python3
"""The tinygrad peer of `tg bench gpu`: the rows and shapes of peer_torch_gpu.py on tinygrad's CUDA
backend (DEV=CUDA; --device for another). Times are wall medians in ms of one call and
Device.synchronize(). Each row is timed twice: <row>_ms through TinyJit (the captured kernels
replayed: how tinygrad runs a hot op, and how its reference figures are taken) and
<row>_eager_ms as a freshly built expression's realize() (tinygrad's eager path: Python scheduling
costs it about a millisecond per call on the GPU machine, more than most of these kernels take).
f32 matmuls stay f32 (ALLOW_TF32 is 0 unless set). Prints one flat JSON object; each <row>_shape
key says what was measured, so `tg bench gpu` can refuse a ratio for a shape that differs from its own.
Usable on its own: PYTHONPATH=<tinygrad> python3 tools/bench/peer_tinygrad_gpu.py --repeat 10
"""
import argparse
import json
import os
import sys

from peer_timing import median_ms, tinygrad_version

# Row shapes; must match tools/tg/cmd_bench_gpu.cpp (the *_shape keys catch a mismatch).
SIZES = {
    False: {"n": 64 << 20, "mm_f32": 4096, "mm_f16": 8192, "conv_x": (256, 32, 28, 28), "conv_w": (64, 32, 3, 3)},
    True: {"n": 4096, "mm_f32": 64, "mm_f16": 128, "conv_x": (2, 4, 8, 8), "conv_w": (4, 4, 3, 3)},
}


def shape_str(shape):
    return "x".join(str(d) for d in shape)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--device", default="CUDA", help="tinygrad device (CUDA on the GPU machine; CPU for a smoke run)")
    ap.add_argument("--small", action="store_true", help="tiny sizes (a smoke run, not a measurement)")
    args = ap.parse_args()
    os.environ["DEV"] = args.device  # before importing tinygrad: it picks the default device at import

    from tinygrad import Device, Tensor, TinyJit, dtypes
    from tinygrad.helpers import ALLOW_TF32
    tg_version = tinygrad_version()
    dev = Device[Device.DEFAULT]
    out = {"tinygrad_version": tg_version, "device": Device.DEFAULT, "allow_tf32": int(ALLOW_TF32.value)}
    name = getattr(dev, "arch", None)  # e.g. sm_90 on CUDA
    out["device_name"] = str(name) if name else Device.DEFAULT

    def timed(key, shape, op, *inputs, calls=1):
        """op(*inputs) eagerly and through TinyJit; `calls` calls per sample (for ops near the clock's grain)."""
        jitted = TinyJit(lambda *ts: op(*ts).realize())

        def sample(fn):
            def run():
                for _ in range(calls):
                    fn(*inputs)
                    dev.synchronize()
            return median_ms(run, args.repeat) / calls  # its 2 warm-ups are the JIT's run and capture

        out[key + "_eager_ms"] = sample(lambda *ts: op(*ts).realize())
        out[key + "_ms"] = sample(jitted)
        out[key + "_shape"] = shape_str(shape)
        # The JIT replays what it captured: check its answer against the eager one.
        got, want = jitted(*inputs).flatten()[:64].float().tolist(), op(*inputs).flatten()[:64].float().tolist()
        if max(abs(a - b) for a, b in zip(got, want)) > 1e-2 * max(1.0, max(abs(v) for v in want)):
            raise SystemExit(f"{key}: TinyJit gave {got[:4]}..., eager {want[:4]}...")

    z = SIZES[args.small]
    Tensor.manual_seed(0)
    rand = lambda *shape: (Tensor.rand(*shape) * 2 - 1).contiguous().realize()
    n = z["n"]
    x, y, w = rand(n), rand(n), rand(n)
    timed("elementwise", (n,), lambda a, b, c: ((a + b) * c).relu(), x, y, w)
    timed("sum", (n,), lambda a: a.sum(), x)
    del x, y, w
    k = z["mm_f32"]
    timed("matmul_f32", (k, k), lambda a, b: a @ b, rand(k, k), rand(k, k))
    k = z["mm_f16"]
    h, g = (rand(k, k).cast(dtypes.half).contiguous().realize() for _ in range(2))
    timed("matmul_f16", (k, k), lambda a, b: a @ b, h, g)
    del h, g
    timed("conv", z["conv_x"] + z["conv_w"], lambda a, b: a.conv2d(b), rand(*z["conv_x"]), rand(*z["conv_w"]))
    timed("tiny", (16,), lambda a: a + 1, rand(16), calls=100)  # 100 calls per sample, as ours
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
