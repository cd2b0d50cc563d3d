#!/usr/bin/env python3
"""The tinygrad peer of `tg bench train`: the beautiful_mnist model of peer_torch_train.py (and of
tools/tg/mnist_model.hpp) in tinygrad, Adam 1e-3 over all its parameters, random data of the same
batch size, the whole step (forward, loss, backward, Adam) under TinyJit as tinygrad's own MNIST
example runs it. The first two steps (run, capture) are untimed; then the median wall time of
`step().item()` over --steps replays. Prints one JSON line with the step time, the batch size it
ran (`tg bench train` checks it) and the peak RSS.
Usable on its own: PYTHONPATH=<tinygrad> python3 tools/bench/peer_tinygrad_train.py --device CUDA
"""
import argparse
import json
import os
import resource
import statistics
import sys
import time

from peer_timing import tinygrad_version


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bs", type=int, default=512)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--device", default="CUDA", help="tinygrad device (CUDA, or CPU)")
    args = ap.parse_args()
    os.environ["DEV"] = args.device  # before importing tinygrad: it picks the default device at import

    from tinygrad import Context, Device, Tensor, TinyJit, nn
    tg_version = tinygrad_version()

    Tensor.manual_seed(0)
    # conv 5x5 32, conv 5x5 32, BatchNorm, maxpool 2; conv 3x3 64, conv 3x3 64, BatchNorm, maxpool 2;
    # flatten, linear 576 -> 10 (ReLU after each conv).
    layers = [nn.Conv2d(1, 32, 5), Tensor.relu, nn.Conv2d(32, 32, 5), Tensor.relu, nn.BatchNorm(32),
              Tensor.max_pool2d, nn.Conv2d(32, 64, 3), Tensor.relu, nn.Conv2d(64, 64, 3), Tensor.relu,
              nn.BatchNorm(64), Tensor.max_pool2d, lambda t: t.flatten(1), nn.Linear(576, 10)]

    def model(t):
        for layer in layers:
            t = layer(t)
        return t

    opt = nn.optim.Adam(nn.state.get_parameters(layers), lr=1e-3)
    x = Tensor.rand(args.bs, 1, 28, 28).realize()
    y = Tensor.randint(args.bs, high=10).realize()

    @TinyJit
    def step():
        with Context(TRAINING=1):  # BatchNorm uses the batch's statistics and updates its running ones
            opt.zero_grad()
            loss = model(x).sparse_categorical_crossentropy(y).backward()
            opt.step()
        return loss

    times = []
    for i in range(args.steps + 2):  # run, capture, then replays
        t0 = time.perf_counter()
        loss = step().item()  # waits for the device too
        if i >= 2:
            times.append((time.perf_counter() - t0) * 1000)
    if loss != loss:
        print(f"the loss is NaN after {args.steps + 2} steps", file=sys.stderr)
        return 1
    print(json.dumps({"step_ms": statistics.median(times), "bs": args.bs, "loss": loss,
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "tinygrad_version": tg_version, "device": Device.DEFAULT, "jit": True}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
