// Step 4: training. A small CNN learns Fashion-MNIST with Adam for a few epochs; we count the
// kernels of one training step (forward, backward and update are one schedule), optionally
// compare a step's time before and after BEAM search, and save and reload the model with
// identical test accuracy. (MNIST digits are not packaged by Debian; Fashion-MNIST is, as
// dataset-fashion-mnist, in the same IDX format: the program exits 77 "skipped" without it.)
#include "examples/common/args.hpp"
#include "examples/common/claims.hpp"
#include <tinygrad/tinygrad.hpp>

#include <chrono>
#include <filesystem>
#include <numeric>
#include <optional>
#include <random>
#include <unistd.h>

using tg::Tensor;
namespace nn = tg::nn;

namespace {

// Conv 1->16 5x5 stride 2, ReLU, BatchNorm, maxpool, Linear 576->10: small, so that compiling
// its ~50 kernels stays cheap in CI.
struct Net : nn::Module {
  nn::Conv2d conv{1, 16, 5, 2};
  nn::BatchNorm bn{16};
  nn::Linear fc{16 * 6 * 6, 10};
  void members(nn::MemberVisitor& v) override {
    v.module("conv", conv);
    v.module("bn", bn);
    v.module("fc", fc);
  }
  Tensor forward(const Tensor& x) override { return fc(bn(conv(x).relu()).max_pool2d(2).flatten(1)); }
};

// Images as host bytes, so batches are gathered on the host.
struct Images {
  std::vector<std::byte> pixels, labels;
  int64_t count;
};

Images host_images(const Tensor& x, const Tensor& y, int64_t limit) {
  int64_t n = std::min(limit, x.shape()[0]);
  return {x.shrink({{0, n}, {0, 1}, {0, 28}, {0, 28}}).to_bytes(), y.shrink({{0, n}}).to_bytes(), n};
}

// Rows [first, first + n) of `order` as float images in [0, 1] and int32 labels.
std::pair<Tensor, Tensor> batch(const Images& data, const std::vector<int64_t>& order, size_t first,
                                size_t n) {
  std::vector<float> x(n * 784);
  std::vector<int32_t> y(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t row = order[first + i];
    for (size_t p = 0; p < 784; ++p)
      x[i * 784 + p] = float(std::to_integer<uint8_t>(data.pixels[size_t(row) * 784 + p])) / 255.0f;
    y[i] = std::to_integer<int32_t>(data.labels[size_t(row)]);
  }
  return {Tensor::from_vector(x, {int64_t(n), 1, 28, 28}), Tensor::from_vector(y, {int64_t(n)})};
}

// Test predictions in eval mode (BatchNorm's running statistics).
std::vector<int32_t> predict(Net& net, const Images& test) {
  net.eval();
  Tensor::NoGrad no_grad;
  std::vector<int64_t> all(size_t(test.count));
  std::iota(all.begin(), all.end(), 0);
  std::vector<int32_t> out;
  for (size_t first = 0; first < all.size(); first += 500) {
    auto [x, y] = batch(test, all, first, std::min<size_t>(500, all.size() - first));
    auto p = net(x).argmax(1).cast(tg::dtypes::int32).to_vector<int32_t>();
    out.insert(out.end(), p.begin(), p.end());
  }
  net.train();
  return out;
}

double accuracy(const std::vector<int32_t>& predicted, const Images& test) {
  int64_t right = 0;
  for (size_t i = 0; i < predicted.size(); ++i)
    right += predicted[i] == std::to_integer<int32_t>(test.labels[i]);
  return double(right) / double(predicted.size());
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

int main(int argc, char** argv) {
  examples::Args args(argc, argv,
                      {{"train", "10000"},
                       {"test", "2000"},
                       {"epochs", "3"},
                       {"bs", "64"},
                       {"lr", "0.003"},
                       {"min-accuracy", "0.8"},
                       {"beam", "0"},
                       {"beam-timeout", "2"},
                       {"data", ""}});
  examples::Claims claims;
  std::filesystem::path dir =
      args.str("data").empty() ? tg::default_mnist_dir() : std::filesystem::path(args.str("data"));
  auto t_load = std::chrono::steady_clock::now();
  std::optional<tg::MnistData> data;
  try {
    data = tg::load_mnist(dir);
  } catch (const tg::DatasetError& e) {
    std::cout << "skipped: Fashion-MNIST is not here (" << e.what() << "); install dataset-fashion-mnist\n";
    return 77;
  }
  Images train = host_images(data->x_train, data->y_train, args.integer("train"));
  Images test = host_images(data->x_test, data->y_test, args.integer("test"));
  std::cout << "Fashion-MNIST from " << dir << ": training on " << train.count << " images, testing on "
            << test.count << " (loaded in " << ms_since(t_load) / 1000 << " s)\n";

  Tensor::manual_seed(1);
  Net net;
  tg::optim::Adam opt(net.parameters(), args.number("lr"));
  std::vector<Tensor> with_buffers = net.buffers(); // BatchNorm's running statistics update in the step
  auto step_fn = [&](const std::vector<Tensor>& in) {
    opt.zero_grad();
    Tensor loss = nn::sparse_categorical_crossentropy(net(in[0]), in[1]);
    loss.backward();
    std::vector<Tensor> also = with_buffers;
    also.push_back(loss);
    opt.step_and_realize(also);
    return std::vector<Tensor>{loss};
  };

  examples::section("one training step: forward, backward and Adam's update in one schedule");
  std::mt19937 rng(7);
  std::vector<int64_t> order(size_t(train.count));
  std::iota(order.begin(), order.end(), 0);
  const size_t bs = size_t(args.integer("bs"));
  auto [x0, y0] = batch(train, order, 0, bs);
  step_fn({x0, y0}); // compiles the step's kernels
  tg::set_debug_level(1);
  std::cout << "  with DEBUG=1 a step prints:\n";
  size_t step_kernels = 0;
  {
    tg::LaunchCounter counter;
    step_fn({x0, y0});
    step_kernels = counter.kernels();
  }
  tg::set_debug_level(0);
  std::cout << "  LaunchCounter: " << step_kernels << " kernels per step\n";
  claims.check(step_kernels > 10 && step_kernels < 200, "a step is tens of kernels, not one per op",
               std::to_string(step_kernels) + " kernels");
  // The loop below runs the step through TinyJit: call 1 warms up, call 2 records the kernels,
  // later calls replay them without scheduling or lowering anything.
  tg::TinyJit step(step_fn);
  auto jit_step = [&](const Tensor& x, const Tensor& y) { return step({x, y})[0].item<float>(); };

  examples::section("training");
  const int epochs = int(args.integer("epochs"));
  double first_loss = 0, last_loss = 0;
  auto t_train = std::chrono::steady_clock::now();
  int steps = 0;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng);
    double sum = 0;
    int n = 0;
    for (size_t first = 0; first + bs <= order.size(); first += bs) {
      auto [x, y] = batch(train, order, first, bs);
      double loss = jit_step(x, y);
      if (steps++ == 0) first_loss = loss;
      sum += loss, ++n;
    }
    last_loss = sum / n;
    std::cout << "  epoch " << epoch << ": mean loss " << last_loss << ", test accuracy "
              << accuracy(predict(net, test), test) << "\n";
  }
  std::cout << "  " << steps << " steps in " << ms_since(t_train) / 1000 << " s; the JIT replays "
            << step.kernel_count() << " kernels per step\n";
  claims.equal(step.kernel_count(), step_kernels, "the JIT captured the same kernels LaunchCounter counted");
  double acc = accuracy(predict(net, test), test);
  claims.check(last_loss < first_loss, "the loss falls",
               "first step " + std::to_string(first_loss) + ", last epoch " + std::to_string(last_loss));
  claims.check(acc >= args.number("min-accuracy"), "test accuracy is at least " + args.str("min-accuracy"),
               "accuracy " + std::to_string(acc));

  if (int beam = int(args.integer("beam")); beam > 0) {
    examples::section("BEAM=" + std::to_string(beam) +
                      ": each kernel's optimizations searched on the device");
    auto [xb, yb] = batch(train, order, 0, bs);
    auto time_steps = [&] {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 5; ++i) jit_step(xb, yb);
      return ms_since(t0) / 5;
    };
    double before = time_steps();
    tg::set_beam(beam, args.number("beam-timeout"));
    auto t_search = std::chrono::steady_clock::now();
    step.reset();     // capture again with BEAM's kernels
    jit_step(xb, yb); // searches every kernel of the step (cached on disk for the next run)
    double search = ms_since(t_search);
    double after = time_steps();
    tg::set_beam(0);
    std::cout << "  step before BEAM: " << before << " ms; search: " << search / 1000
              << " s; after: " << after << " ms\n";
    claims.check(accuracy(predict(net, test), test) >= args.number("min-accuracy"),
                 "BEAM's kernels train the same model (accuracy still in band)");
  }

  examples::section("save and reload");
  std::vector<int32_t> predicted = predict(net, test); // the weights as saved (BEAM's steps trained on)
  std::filesystem::path file = std::filesystem::temp_directory_path() /
                               ("tg_example_fashion_" + std::to_string(getpid()) + ".safetensors");
  tg::safe_save(file, net.state_dict());
  Tensor::manual_seed(99); // other initial weights, to show the load replaces them
  Net reloaded;
  reloaded.load_state_dict(tg::safe_load(file));
  std::cout << "  saved " << net.state_dict().size() << " tensors (" << std::filesystem::file_size(file)
            << " bytes) to " << file.filename() << " and loaded them into a new Net\n";
  std::filesystem::remove(file);
  std::vector<int32_t> again = predict(reloaded, test);
  claims.check(again == predicted, "the reloaded model predicts exactly the same classes");
  claims.equal(accuracy(again, test), accuracy(predicted, test), "so its test accuracy is identical");
  return claims.finish("04_training");
}
