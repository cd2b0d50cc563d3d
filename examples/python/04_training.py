#!/usr/bin/env python3
"""Step 4 in Python: training (examples/04_training, docs/tutorials/04-training.md).
A small CNN learns Fashion-MNIST with Adam; we count the kernels of one training step (forward,
backward and update are one schedule: loss.realize(*opt.schedule_step())), run the loop through
TinyJit, and save and reload the model with identical test predictions. (MNIST digits are not
packaged by Debian; Fashion-MNIST is, as dataset-fashion-mnist: without it this exits 77, skipped.)
The defaults are the CI size (640 images, 2 epochs of 20 steps of 32); the C++ page's full size is
--train 10000 --test 2000 --epochs 3 --bs 64 --min-accuracy 0.8."""
import argparse
import os
import tempfile
import time

import numpy as np

from claims import Claims, debug_output, section
from tinygrad_cpp import Context, KernelCounter, Tensor, TinyJit, nn, _core
from tinygrad_cpp.nn.state import get_parameters, get_state_dict, load_state_dict, safe_load, safe_save


class Net:
  """Conv 1->16 5x5 stride 2, ReLU, BatchNorm, maxpool, Linear 576->10: small, so that compiling its
  ~50 kernels stays cheap."""

  def __init__(self):
    self.conv = nn.Conv2d(1, 16, 5, stride=2)
    self.bn = nn.BatchNorm(16)
    self.fc = nn.Linear(16 * 6 * 6, 10)

  def __call__(self, x: Tensor) -> Tensor:
    return self.fc(self.bn(self.conv(x).relu()).max_pool2d(2).flatten(1))


def batch(images: np.ndarray, labels: np.ndarray, rows) -> tuple:
  """Rows of the uint8 host arrays as float images in [0, 1] and int32 labels."""
  return Tensor(images[rows].astype(np.float32) / 255.0), Tensor(labels[rows].astype(np.int32))


def predict(net: Net, images: np.ndarray) -> np.ndarray:
  """Test predictions in eval mode (BatchNorm's running statistics)."""
  out = []
  for first in range(0, len(images), 500):
    x = Tensor(images[first:first + 500].astype(np.float32) / 255.0)
    out.append(net(x).argmax(1).numpy())
  return np.concatenate(out)


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--train", type=int, default=640)
  ap.add_argument("--test", type=int, default=300)
  ap.add_argument("--epochs", type=int, default=2)
  ap.add_argument("--bs", type=int, default=32)
  ap.add_argument("--lr", type=float, default=0.003)
  ap.add_argument("--min-accuracy", type=float, default=0.6)
  ap.add_argument("--data", default=None, help="directory with the IDX files (default: Fashion-MNIST from Debian)")
  args = ap.parse_args()
  claims = Claims()

  t_load = time.perf_counter()
  try:
    x_train, y_train, x_test, y_test = _core.load_mnist(args.data)
  except ValueError as e:  # tinygrad_cpp's DatasetError
    print(f"skipped: Fashion-MNIST is not here ({e}); install dataset-fashion-mnist")
    raise SystemExit(77)
  # host copies (views of the tensors' memory, no copy) so batches are gathered on the host
  train_x, train_y = x_train.numpy()[:args.train], y_train.numpy()[:args.train]
  test_x, test_y = x_test.numpy()[:args.test], y_test.numpy()[:args.test]
  print(f"Fashion-MNIST: training on {len(train_x)} images, testing on {len(test_x)} "
        f"(loaded in {time.perf_counter() - t_load:.2f} s)")

  Tensor.manual_seed(1)
  net = Net()
  opt = nn.optim.Adam(get_parameters(net), lr=args.lr)  # BatchNorm's running stats are its buffers

  def step_fn(x: Tensor, y: Tensor) -> Tensor:
    with Tensor.train():
      opt.zero_grad()
      loss = net(x).sparse_categorical_crossentropy(y)
      loss.backward()
      loss.realize(*opt.schedule_step())  # forward, backward, Adam and BatchNorm's statistics: one schedule
      return loss

  section("one training step: forward, backward and Adam's update in one schedule")
  rng = np.random.default_rng(7)
  order = np.arange(len(train_x))
  x0, y0 = batch(train_x, train_y, order[:args.bs])
  step_fn(x0, y0)  # compiles the step's kernels
  print("  with Context(DEBUG=1) a step prints:")
  with debug_output(), Context(DEBUG=1), KernelCounter() as counter:
    step_fn(x0, y0)
  print(f"  KernelCounter: {counter.kernel_count} kernels per step")
  claims.check(10 < counter.kernel_count < 200, "a step is tens of kernels, not one per op",
               f"{counter.kernel_count} kernels")
  # The loop runs the step through TinyJit: call 1 warms up, call 2 records the kernels, later calls
  # replay them without scheduling or lowering anything (and without running step_fn's Python).
  step = TinyJit(step_fn)

  section("training")
  first_loss = last_loss = None
  steps, t_train = 0, time.perf_counter()
  for epoch in range(1, args.epochs + 1):
    rng.shuffle(order)
    losses = []
    for first in range(0, len(order) - args.bs + 1, args.bs):
      loss = step(*batch(train_x, train_y, order[first:first + args.bs])).item()
      if first_loss is None: first_loss = loss
      losses.append(loss)
      steps += 1
    last_loss = float(np.mean(losses))
    acc = float((predict(net, test_x) == test_y).mean())
    print(f"  epoch {epoch}: mean loss {last_loss:.4f}, test accuracy {acc:.4f}")
  print(f"  {steps} steps in {time.perf_counter() - t_train:.2f} s; the JIT replays {len(step.jit_cache)} "
        "kernels per step")
  claims.equal(len(step.jit_cache), counter.kernel_count, "the JIT captured the same kernels KernelCounter counted")
  predicted = predict(net, test_x)
  acc = float((predicted == test_y).mean())
  claims.check(last_loss < first_loss, "the loss falls", f"first step {first_loss:.4f}, last epoch {last_loss:.4f}")
  claims.check(acc >= args.min_accuracy, f"test accuracy is at least {args.min_accuracy}", f"accuracy {acc:.4f}")

  section("save and reload")
  fd, path = tempfile.mkstemp(suffix=".safetensors", prefix="tg_example_fashion_")
  os.close(fd)
  try:
    safe_save(get_state_dict(net), path)
    Tensor.manual_seed(99)  # other initial weights, to show the load replaces them
    reloaded = Net()
    load_state_dict(reloaded, safe_load(path))
    print(f"  saved {len(get_state_dict(net))} tensors ({os.path.getsize(path)} bytes) and loaded them into a new Net")
  finally:
    os.remove(path)
  again = predict(reloaded, test_x)
  claims.check(np.array_equal(again, predicted), "the reloaded model predicts exactly the same classes")
  claims.equal(float((again == test_y).mean()), acc, "so its test accuracy is identical")
  claims.finish("04_training")


if __name__ == "__main__":
  main()
