#!/usr/bin/env python3
"""tinygrad's beautiful_mnist on tinygrad_cpp: the same model, optimizer and jitted training step as
tinygrad's examples/beautiful_mnist.py, trained on Fashion-MNIST (Debian's dataset-fashion-mnist, via
tinygrad_cpp._core.load_mnist()), with the schedule of `tg train mnist` (tools/tg/cmd_train.cpp):
Adam from lr 1e-3 decayed to 0 on a cosine over the steps, batches of 512 drawn at random, 140 steps
(1.2 epochs), then the accuracy on the 10000 test images.

    PYTHONPATH=build/release/python python3 examples/python/beautiful_mnist.py [--steps 140 --bs 512 --seed 1337]

Where it differs from tinygrad's script, and why:
 - batches are gathered on the host (numpy) and passed into the jitted step: tinygrad draws them
   inside it with Tensor.randint, but a TinyJit replay here runs no host code, so the random counter
   would stay as captured and every replayed step would train on the same batch;
 - the learning rate is an input of the step too (opt.lr_tensor), so the cosine schedule reaches the
   replays (tinygrad's opt.lr is a Tensor that a scheduler assign()s);
 - the step realizes the loss with the update in one schedule: loss.realize(*opt.schedule_step())."""
import argparse
import math
import sys
import time

import numpy as np

from tinygrad_cpp import Tensor, TinyJit, nn, _core
from tinygrad_cpp.nn.state import get_parameters


class Model:
  def __init__(self):
    self.layers = [
      nn.Conv2d(1, 32, 5), Tensor.relu,
      nn.Conv2d(32, 32, 5), Tensor.relu,
      nn.BatchNorm(32), Tensor.max_pool2d,
      nn.Conv2d(32, 64, 3), Tensor.relu,
      nn.Conv2d(64, 64, 3), Tensor.relu,
      nn.BatchNorm(64), Tensor.max_pool2d,
      lambda x: x.flatten(1), nn.Linear(576, 10)]

  def __call__(self, x: Tensor) -> Tensor: return x.sequential(self.layers)


def to_batch(images: np.ndarray, labels: np.ndarray, rows: np.ndarray):
  """Images scaled to [0, 1] as float32 (n, 1, 28, 28) and int32 labels, for the given rows."""
  return Tensor(images[rows].astype(np.float32) * (1 / 255.0)), Tensor(labels[rows].astype(np.int32))


def test_accuracy(model: Model, images: np.ndarray, labels: np.ndarray, chunk: int = 1000) -> float:
  """In eval mode (Tensor.training is False: BatchNorm uses its running statistics)."""
  correct = 0
  for start in range(0, len(images), chunk):
    rows = np.arange(start, min(start + chunk, len(images)))
    x, y = to_batch(images, labels, rows)
    correct += (model(x).argmax(axis=1) == y).sum().item()
  return correct / len(images)


def main(argv=None) -> float:
  ap = argparse.ArgumentParser(description="tinygrad's beautiful_mnist on tinygrad_cpp (Fashion-MNIST)")
  ap.add_argument("--steps", type=int, default=140, help="training steps (140 batches of 512 are 1.2 epochs)")
  ap.add_argument("--bs", type=int, default=512, help="batch size")
  ap.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate (the cosine schedule's start)")
  ap.add_argument("--seed", type=int, default=1337, help="random seed (weights, batches)")
  ap.add_argument("--jit", action=argparse.BooleanOptionalAction, default=True,
                  help="run the training step through TinyJit (default) or eagerly")
  ap.add_argument("--test-images", type=int, default=0, help="evaluate on the first N test images (default: all)")
  ap.add_argument("--data", default=None, help="directory with the IDX files (default: Fashion-MNIST from Debian)")
  ap.add_argument("--min-accuracy", type=float, default=0.0, help="exit 1 when the test accuracy is below this")
  args = ap.parse_args(argv)

  try:
    X_train, Y_train, X_test, Y_test = _core.load_mnist(args.data)
  except ValueError as e:  # DatasetError
    print(f"skipped: Fashion-MNIST is not here ({e}); install dataset-fashion-mnist")
    sys.exit(77)
  # host views of the uint8 data (no copy) for gathering batches
  train_x, train_y, test_x, test_y = X_train.numpy(), Y_train.numpy(), X_test.numpy(), Y_test.numpy()
  if args.test_images > 0: test_x, test_y = test_x[:args.test_images], test_y[:args.test_images]
  print(f"data: {len(train_x)} train, {len(test_x)} test images")
  print(f"batch {args.bs}, Adam lr {args.lr} (cosine to 0), {args.steps} steps, seed {args.seed}, "
        f"{'TinyJit' if args.jit else 'eager'}")

  Tensor.manual_seed(args.seed)
  model = Model()
  opt = nn.optim.Adam(get_parameters(model), lr=args.lr)  # BatchNorm's running statistics are buffers

  @Tensor.train()
  def train_step(x: Tensor, y: Tensor, lr: Tensor) -> Tensor:
    opt.lr_tensor = lr
    opt.zero_grad()
    loss = model(x).sparse_categorical_crossentropy(y)
    loss.backward()
    return loss.realize(*opt.schedule_step())

  step = TinyJit(train_step) if args.jit else train_step
  rng = np.random.default_rng(args.seed)
  t0 = time.perf_counter()
  loss = float("nan")
  for i in range(args.steps):
    lr = args.lr * (1 + math.cos(math.pi * i / args.steps)) / 2  # torch's CosineAnnealingLR, T_max = steps
    x, y = to_batch(train_x, train_y, rng.integers(0, len(train_x), args.bs))
    loss = step(x, y, Tensor(np.array(lr, np.float32))).item()
    if not math.isfinite(loss): sys.exit(f"training diverged: loss {loss} at step {i + 1}")
    if (i + 1) % 10 == 0 or i + 1 == args.steps:
      elapsed = time.perf_counter() - t0
      print(f"step {i + 1:4d}/{args.steps}  loss {loss:.4f}  lr {lr:.2e}  {(i + 1) * args.bs / elapsed:.0f} samples/s",
            flush=True)
  train_s = time.perf_counter() - t0
  if args.steps:
    print(f"trained {args.steps} steps in {train_s:.1f}s ({train_s * 1000 / args.steps:.1f} ms/step)")
  if args.jit and step.captured: print(f"jit: {len(step.jit_cache)} kernels per step")
  t1 = time.perf_counter()
  acc = test_accuracy(model, test_x, test_y)
  print(f"test accuracy: {acc * 100:.2f}% ({time.perf_counter() - t1:.1f}s)")
  if acc < args.min_accuracy:
    print(f"FAIL: test accuracy {acc:.4f} is below --min-accuracy {args.min_accuracy}")
    sys.exit(1)
  return acc


if __name__ == "__main__":
  main()
