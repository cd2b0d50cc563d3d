// `tg bench attention`: scaled_dot_product_attention's forward (with the scores stored, and fused
// into one online-softmax kernel: FUSE_ATTENTION) and forward + backward, against PyTorch's
// F.scaled_dot_product_attention (tools/bench/peer_attention.py, in --peer-runs fresh processes).
// A benchmark, not a test.
#include "kernel/engine/config.hpp"
#include "kernel/runtime/devices.hpp"
#include "kernel/tensor/attention.hpp"
#include "tools/tg/bench_util.hpp"
#include "tools/tg/commands.hpp"

#include <boost/program_options.hpp>

#include <iostream>
#include <sstream>
#include <thread>

namespace po = boost::program_options;

namespace tg::cli {

int bench_attention(const std::vector<std::string>& args) {
  po::options_description opts("Options");
  opts.add_options()("help,h", "show this help")("device", po::value<std::string>()->default_value(""),
                                                 "device (default: $TG_DEVICE or CPU)")(
      "seq", po::value<std::string>()->default_value("1024"),
      "sequence lengths, comma-separated")("batch", po::value<int>()->default_value(8), "batch")(
      "heads", po::value<int>()->default_value(12), "heads")("dim", po::value<int>()->default_value(64),
                                                             "features per head")(
      "dtype", po::value<std::string>()->default_value("bfloat16"), "bfloat16 or float32 (TF32 off)")(
      "no-causal", "no mask (default: causal)")("runs", po::value<int>()->default_value(10), "timed runs")(
      "peer-runs", po::value<int>()->default_value(3), "PyTorch processes per row (min / median / max)")(
      "python", po::value<std::string>()->default_value("/usr/bin/python3"),
      "interpreter that imports torch (by default /usr/bin/python3, or python3 on $PATH where only that "
      "imports torch)");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout
        << "usage: tg bench attention [options]\n\n"
           "scaled_dot_product_attention on random (batch, heads, seq, dim) tensors: the forward with the\n"
           "scores stored (the default schedule) and fused (FUSE_ATTENTION: one online-softmax kernel), and\n"
           "forward + backward, in ms and TFLOPS (4 * b * h * s^2 * d forward, half of it when causal; 3.5x\n"
           "that for forward + backward), against PyTorch's F.scaled_dot_product_attention.\n\n"
        << opts;
    return 0;
  }
  const int batch = vm["batch"].as<int>(), heads = vm["heads"].as<int>(), dim = vm["dim"].as<int>();
  const int runs = vm["runs"].as<int>(), peer_runs = vm["peer-runs"].as<int>();
  if (batch <= 0 || heads <= 0 || dim <= 0 || runs <= 0)
    throw po::error("--batch, --heads, --dim, --runs must be > 0");
  if (!peer_runs_ok("tg bench attention", peer_runs)) return 2;
  const std::string dtype_name = vm["dtype"].as<std::string>();
  if (dtype_name != "float32" && dtype_name != "bfloat16")
    throw po::error("--dtype must be float32 or bfloat16");
  const DType dtype = dtype_name == "bfloat16" ? dtypes::bfloat16 : dtypes::float32;
  std::vector<int64_t> seqs;
  {
    std::stringstream ss(vm["seq"].as<std::string>());
    for (std::string s; std::getline(ss, s, ',');) {
      try {
        seqs.push_back(std::stoll(s));
      } catch (const std::exception&) {
        throw po::error("--seq: '" + s + "' is not a number");
      }
      if (seqs.back() <= 0) throw po::error("--seq: lengths must be > 0");
    }
  }
  const bool causal = !vm.count("no-causal");
  const std::string python = torch_python(vm, "python");
  if (const std::string& asked = vm["device"].as<std::string>(); !asked.empty()) set_default_device(asked);
  const std::string device = default_device();
  const std::shared_ptr<Device> dev = open_device(device).device;
  PeerScript script = find_peer_script("peer_attention.py");
  const bool peer_ok = script.error.empty() && command_exists(python);
  std::cout << "attention " << batch << " x " << heads << " heads x " << dim << ", " << dtype_name
            << (causal ? ", causal" : ", no mask") << ", " << device << "; ours: median of " << runs
            << " (realize + synchronize); PyTorch: F.scaled_dot_product_attention (the explicit softmax "
               "where torch lacks it), min / median / max over "
            << peer_runs << " processes\n";
  std::vector<std::vector<std::string>> rows;
  for (int64_t T : seqs) {
    const Dims shape{batch, heads, T, dim};
    Tensor q = random_tensor(shape, 1, device).cast(dtype).realize();
    Tensor k = random_tensor(shape, 2, device).cast(dtype).realize();
    Tensor v = random_tensor(shape, 3, device).cast(dtype).realize();
    Tensor g = random_tensor(shape, 4, device).cast(dtype).realize();
    AttentionOptions o;
    o.is_causal = causal;
    const double fwd_flops = 4.0 * batch * heads * double(T) * double(T) * dim * (causal ? 0.5 : 1.0);
    auto tflops = [](double flops, double ms) {
      const double t = flops / ms / 1e9;
      return t < 1 ? fixed(t, 3) : fixed(t, 1);
    };
    auto forward = [&](bool fuse) {
      set_fuse_attention(fuse);
      std::optional<Tensor> out;
      const double ms = median_ms(2, runs, [&] {
        out = scaled_dot_product_attention(q, k, v, o).realize();
        dev->synchronize();
      });
      set_fuse_attention(false);
      return std::pair{ms, *out};
    };
    auto [stored_ms, stored] = forward(false);
    auto [fused_ms, fused] = forward(true);
    const double diff =
        (fused.cast(dtypes::float32) - stored.cast(dtypes::float32)).abs().max().item<float>();
    Tensor qg = q.detach().requires_grad_(), kg = k.detach().requires_grad_(),
           vg = v.detach().requires_grad_();
    const double fb_ms = median_ms(2, runs, [&] {
      (scaled_dot_product_attention(qg, kg, vg, o) * g).sum().backward();
      Tensor dq = *qg.grad(), dk = *kg.grad(), dv = *vg.grad();
      Tensor::realize_all({&dq, &dk, &dv});
      dev->synchronize();
      qg.set_grad(std::nullopt), kg.set_grad(std::nullopt), vg.set_grad(std::nullopt);
    });
    std::optional<Spread> pf, pfb;
    std::string peer_path;
    std::string peer_error = peer_ok ? "" : (script.error.empty() ? python + " not found" : script.error);
    if (peer_ok) {
      const std::string cmd =
          shell_quote(python) + " " + shell_quote(script.path) + " --seq " + std::to_string(T) + " --batch " +
          std::to_string(batch) + " --heads " + std::to_string(heads) + " --dim " + std::to_string(dim) +
          " --runs " + std::to_string(runs) + " --device " + (device.rfind("CUDA", 0) == 0 ? "cuda" : "cpu") +
          " --threads " + std::to_string(std::thread::hardware_concurrency()) +
          (dtype == dtypes::bfloat16 ? " --bf16" : "") + (causal ? " --causal" : "");
      PeerRuns peer = run_peer_runs(cmd, peer_runs);
      peer_error = peer.info.error;
      if (peer_error.empty()) {
        pf = peer.spread("forward_ms"), pfb = peer.spread("forward_backward_ms");
        peer_path = peer.info.str("path") + ", torch " + peer.info.str("torch");
      }
    }
    auto ms = [](double x) { return fixed(x, 3); };
    auto peer_cell = [&](const std::optional<Spread>& s, double flops) {
      return s ? spread_str(*s, ms) + " ms (" + tflops(flops, s->min) + ")" : "unavailable: " + peer_error;
    };
    auto ratio = [](const std::optional<Spread>& s, double ours) {
      return s ? fixed(s->min / ours, 2) + "x" : std::string("-");
    };
    if (!peer_path.empty()) std::cout << "seq " << T << ": PyTorch ran " << peer_path << "\n";
    rows.push_back({std::to_string(T) + " forward, scores stored",
                    ms(stored_ms) + " (" + tflops(fwd_flops, stored_ms) + ")", peer_cell(pf, fwd_flops),
                    ratio(pf, stored_ms)});
    rows.push_back({std::to_string(T) + " forward, fused (max diff " + general(diff) + ")",
                    ms(fused_ms) + " (" + tflops(fwd_flops, fused_ms) + ")", peer_cell(pf, fwd_flops),
                    ratio(pf, fused_ms)});
    rows.push_back({std::to_string(T) + " forward + backward, scores stored",
                    ms(fb_ms) + " (" + tflops(3.5 * fwd_flops, fb_ms) + ")", peer_cell(pfb, 3.5 * fwd_flops),
                    ratio(pfb, fb_ms)});
  }
  print_table(std::cout,
              {"seq, pass", "ours ms (TFLOPS)", "PyTorch ms (TFLOPS of its best)", "PyTorch / ours"}, rows,
              {false, true, true, true});
  return 0;
}

} // namespace tg::cli
