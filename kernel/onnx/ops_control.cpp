// Values and control flow: Constant, Identity, If, Loop, Scan, sequences and optionals. Loop and
// If decide on the host: their conditions and trip counts are read back each iteration.
#include "kernel/onnx/ops.hpp"

namespace tg::onnx {

namespace {

Tensor scalar_tensor(bool v, const std::string& device) {
  return Tensor::from_vector(std::vector<bool>{v}, {}, dtypes::bool_, device);
}

Tensor int64_scalar(int64_t v, const std::string& device) {
  return Tensor::from_vector(std::vector<int64_t>{v}, {}, dtypes::int64, device);
}

std::vector<Value> constant(OpContext& ctx) {
  const auto& attrs = ctx.node().attributes;
  if (attrs.size() != 1) ctx.fail("needs exactly one value attribute, got " + std::to_string(attrs.size()));
  const auto& [name, a] = *attrs.begin();
  const std::string& dev = ctx.device();
  if (name == "value") {      // copied to the device once per model, as an initializer is
    ctx.attr_tensor("value"); // (checks that it is a tensor)
    return {ctx.uploaded(a.t)};
  }
  if (name == "value_float")
    return {Tensor::from_vector(std::vector<float>{float(a.f)}, {}, dtypes::float32, dev)};
  if (name == "value_floats") {
    std::vector<float> v(a.floats.begin(), a.floats.end());
    return {Tensor::from_vector(v, {int64_t(v.size())}, dtypes::float32, dev)};
  }
  if (name == "value_int") return {int64_scalar(a.i, dev)};
  if (name == "value_ints") return {host_ints_tensor(a.ints, dev)};
  if (name == "value_string" || name == "value_strings")
    ctx.unsupported("string constants are not supported");
  if (name == "sparse_value") ctx.unsupported("sparse constants are not supported");
  ctx.fail("unknown attribute '" + name + "'");
}

bool host_bool(OpContext& ctx, size_t i) { return ctx.int_scalar(i) != 0; }

std::vector<Value> if_op(OpContext& ctx) {
  const Graph& branch = ctx.attr_graph(host_bool(ctx, 0) ? "then_branch" : "else_branch");
  return ctx.run_graph(branch, {});
}

// Scan outputs: each iteration's value stacked along a new axis 0.
Tensor stack_or_empty(const std::vector<Tensor>& items, OpContext& ctx) {
  if (items.empty()) ctx.unsupported("a loop with zero iterations and scan outputs (their shape is unknown)");
  return Tensor::stack(items, 0);
}

std::vector<Value> loop(OpContext& ctx) {
  const Graph& body = ctx.attr_graph("body");
  std::optional<int64_t> trip;
  if (ctx.has(0)) trip = ctx.int_scalar(0);
  bool cond = ctx.has(1) ? host_bool(ctx, 1) : true;
  std::vector<Value> carried;
  for (size_t i = 2; i < ctx.num_inputs(); ++i) carried.push_back(ctx.value(i));
  size_t n_carried = carried.size();
  if (body.outputs.size() < 1 + n_carried)
    ctx.fail("the body has " + std::to_string(body.outputs.size()) + " outputs, needs at least " +
             std::to_string(1 + n_carried));
  size_t n_scan = body.outputs.size() - 1 - n_carried;
  std::vector<std::vector<Tensor>> scans(n_scan);
  for (int64_t it = 0; (!trip || it < *trip) && cond; ++it) {
    std::vector<Value> in{int64_scalar(it, ctx.device()), scalar_tensor(cond, ctx.device())};
    in.insert(in.end(), carried.begin(), carried.end());
    std::vector<Value> out = ctx.run_graph(body, in);
    const Tensor& c = out.at(0).tensor();
    cond = c.cast(dtypes::bool_).item<bool>();
    for (size_t i = 0; i < n_carried; ++i) carried[i] = out[1 + i];
    for (size_t i = 0; i < n_scan; ++i) scans[i].push_back(out[1 + n_carried + i].tensor().contiguous());
    if (it > (int64_t(1) << 24)) ctx.fail("more than 2^24 iterations");
  }
  std::vector<Value> result = carried;
  for (auto& s : scans) result.emplace_back(stack_or_empty(s, ctx));
  return result;
}

// Runs the body over xs (each with its scan axis first, already in scan order) for `steps` steps:
// updates state and returns each scan output's per-step values.
std::vector<std::vector<Tensor>> scan_steps(OpContext& ctx, const Graph& body, std::vector<Value>& state,
                                            const std::vector<Tensor>& xs, int64_t steps,
                                            int64_t n_scan_out) {
  std::vector<std::vector<Tensor>> outs(static_cast<size_t>(n_scan_out));
  size_t n_state = state.size();
  for (int64_t t = 0; t < steps; ++t) {
    std::vector<Value> in = state;
    for (auto& x : xs) in.emplace_back(x[t]);
    std::vector<Value> out = ctx.run_graph(body, in);
    if (out.size() != n_state + size_t(n_scan_out))
      ctx.fail("the body returned " + std::to_string(out.size()) + " values, expected " +
               std::to_string(n_state + size_t(n_scan_out)));
    for (size_t i = 0; i < n_state; ++i) state[i] = out[i];
    for (int64_t i = 0; i < n_scan_out; ++i) outs[size_t(i)].push_back(out[n_state + size_t(i)].tensor());
  }
  return outs;
}

// Scan-8: every input and output has a batch axis 0 (the scan axis is 1), and the optional first
// input sequence_lens gives each batch item's length; scan outputs are padded with zeros to the
// longest. The batch runs one item at a time.
std::vector<Value> scan8(OpContext& ctx) {
  const Graph& body = ctx.attr_graph("body");
  int64_t n_scan_in = ctx.required_int("num_scan_inputs");
  int64_t n_state = int64_t(ctx.num_inputs()) - 1 - n_scan_in;
  if (n_state < 0 || n_scan_in < 1) ctx.fail("num_scan_inputs does not fit the inputs");
  int64_t n_scan_out = int64_t(body.outputs.size()) - n_state;
  if (n_scan_out < 0) ctx.fail("the body has fewer outputs than state variables");
  auto dirs = ctx.attr_ints("directions", std::vector<int64_t>(size_t(n_scan_in), 0));
  if (int64_t(dirs.size()) != n_scan_in) ctx.fail("directions needs one entry per scan input");
  const Tensor& first = ctx.tensor(size_t(1 + n_state));
  if (first.ndim() < 2) ctx.fail("scan inputs need a batch and a sequence axis");
  int64_t batch = first.shape()[0], max_len = first.shape()[1];
  for (int64_t i = 0; i < n_scan_in; ++i) {
    const Tensor& x = ctx.tensor(size_t(1 + n_state + i));
    if (x.ndim() < 2 || x.shape()[0] != batch || x.shape()[1] != max_len)
      ctx.fail("scan inputs differ in batch size or sequence length");
  }
  for (int64_t i = 0; i < n_state; ++i) {
    const Tensor& s = ctx.tensor(size_t(1 + i));
    if (s.ndim() < 1 || s.shape()[0] != batch) ctx.fail("state variables need the batch axis 0");
  }
  std::vector<int64_t> lens(size_t(batch), max_len);
  if (ctx.has(0)) {
    lens = ctx.ints(0);
    if (int64_t(lens.size()) != batch) ctx.fail("sequence_lens needs one entry per batch item");
    for (auto l : lens)
      if (l < 0 || l > max_len)
        ctx.fail("sequence length " + std::to_string(l) + " is outside [0, max length]");
  }
  std::vector<std::vector<Tensor>> states(static_cast<size_t>(n_state));
  std::vector<std::vector<std::vector<Tensor>>> steps_out(static_cast<size_t>(batch));
  std::optional<std::vector<Tensor>> one_step; // an output element of each scan output, for padding
  for (int64_t b = 0; b < batch; ++b) {
    int64_t n = lens[size_t(b)];
    std::vector<Value> state;
    for (int64_t i = 0; i < n_state; ++i) state.emplace_back(ctx.tensor(size_t(1 + i))[b]);
    std::vector<Tensor> xs;
    for (int64_t i = 0; i < n_scan_in; ++i) {
      Tensor x = ctx.tensor(size_t(1 + n_state + i))[b];
      x = x.slice({Slice{0, n}}); // this item's sequence length
      if (dirs[size_t(i)]) x = x.flip({0});
      xs.push_back(x);
    }
    steps_out[size_t(b)] = scan_steps(ctx, body, state, xs, n, n_scan_out);
    if (n > 0 && !one_step) {
      one_step.emplace();
      for (auto& o : steps_out[size_t(b)]) one_step->push_back(o.at(0));
    }
    for (int64_t i = 0; i < n_state; ++i) states[size_t(i)].push_back(state[size_t(i)].tensor());
  }
  std::vector<Value> result;
  for (auto& s : states) result.emplace_back(Tensor::stack(s, 0));
  for (int64_t i = 0; i < n_scan_out; ++i) {
    std::vector<Tensor> per_batch;
    for (int64_t b = 0; b < batch; ++b) {
      auto& items = steps_out[size_t(b)][size_t(i)];
      if (int64_t(items.size()) < max_len) {
        if (!one_step) ctx.unsupported("scan outputs when every sequence is empty (their shape is unknown)");
        Tensor zero = (*one_step)[size_t(i)].zeros_like();
        items.resize(size_t(max_len), zero);
      }
      per_batch.push_back(Tensor::stack(items, 0));
    }
    result.emplace_back(Tensor::stack(per_batch, 0));
  }
  return result;
}

std::vector<Value> scan(OpContext& ctx) {
  if (ctx.opset() < 9) return scan8(ctx);
  const Graph& body = ctx.attr_graph("body");
  int64_t n_scan_in = ctx.required_int("num_scan_inputs");
  int64_t n_state = int64_t(ctx.num_inputs()) - n_scan_in;
  if (n_state < 0) ctx.fail("num_scan_inputs exceeds the inputs");
  int64_t n_scan_out = int64_t(body.outputs.size()) - n_state;
  if (n_scan_out < 0) ctx.fail("the body has fewer outputs than state variables");
  auto in_axes = ctx.attr_ints("scan_input_axes", std::vector<int64_t>(size_t(n_scan_in), 0));
  auto in_dirs = ctx.attr_ints("scan_input_directions", std::vector<int64_t>(size_t(n_scan_in), 0));
  auto out_axes = ctx.attr_ints("scan_output_axes", std::vector<int64_t>(size_t(n_scan_out), 0));
  auto out_dirs = ctx.attr_ints("scan_output_directions", std::vector<int64_t>(size_t(n_scan_out), 0));
  std::vector<Value> state;
  for (int64_t i = 0; i < n_state; ++i) state.push_back(ctx.value(size_t(i)));
  std::vector<Tensor> xs;
  int64_t steps = -1;
  for (int64_t i = 0; i < n_scan_in; ++i) {
    Tensor x = ctx.tensor(size_t(n_state + i));
    int64_t axis = in_axes[size_t(i)] < 0 ? in_axes[size_t(i)] + x.ndim() : in_axes[size_t(i)];
    if (axis != 0) { // move the scan axis to the front, keeping the others' order
      Axes order{axis};
      for (int64_t d = 0; d < x.ndim(); ++d)
        if (d != axis) order.push_back(d);
      x = x.permute(order);
    }
    if (in_dirs[size_t(i)]) x = x.flip({0});
    if (steps >= 0 && x.shape()[0] != steps) ctx.fail("scan inputs differ in length");
    steps = x.shape()[0];
    xs.push_back(x);
  }
  auto outs = scan_steps(ctx, body, state, xs, steps, n_scan_out);
  std::vector<Value> result = state;
  for (int64_t i = 0; i < n_scan_out; ++i) {
    Tensor y = stack_or_empty(outs[size_t(i)], ctx);
    if (out_dirs[size_t(i)]) y = y.flip({0});
    int64_t axis = out_axes[size_t(i)] < 0 ? out_axes[size_t(i)] + y.ndim() : out_axes[size_t(i)];
    if (axis != 0) {
      Axes order;
      for (int64_t d = 1; d <= axis; ++d) order.push_back(d);
      order.push_back(0);
      for (int64_t d = axis + 1; d < y.ndim(); ++d) order.push_back(d);
      y = y.permute(order);
    }
    result.emplace_back(y);
  }
  return result;
}

int64_t position(OpContext& ctx, size_t i, int64_t size, bool inclusive_end) {
  int64_t p = ctx.int_scalar(i);
  int64_t lim = inclusive_end ? size : size - 1;
  if (p < -size || p > lim)
    ctx.fail("position " + std::to_string(p) + " is outside a sequence of " + std::to_string(size));
  return p < 0 ? p + size : p;
}

std::vector<Value> split_to_sequence(OpContext& ctx) {
  const Tensor& x = ctx.tensor(0);
  int64_t axis = ctx.attr_int("axis", 0);
  if (axis < 0) axis += x.ndim();
  int64_t n = x.shape()[size_t(axis)];
  std::vector<Tensor> parts;
  auto piece = [&](int64_t start, int64_t len) {
    std::vector<Slice> s(size_t(x.ndim()), Slice::all());
    s[size_t(axis)] = Slice{start, start + len, 1, false};
    return x.slice(s);
  };
  if (!ctx.has(1)) {
    bool keep = ctx.attr_int("keepdims", 1) != 0;
    for (int64_t i = 0; i < n; ++i) parts.push_back(keep ? piece(i, 1) : piece(i, 1).squeeze(axis));
  } else {
    auto split = ctx.ints(1);
    if (ctx.tensor(1).ndim() == 0) { // one chunk size, the last chunk smaller
      int64_t c = split.at(0);
      if (c <= 0) ctx.fail("split must be positive");
      for (int64_t s = 0; s < n; s += c) parts.push_back(piece(s, std::min(c, n - s)));
    } else {
      int64_t s = 0;
      for (auto c : split) {
        if (c < 0 || s + c > n) ctx.fail("split sizes do not fit the axis");
        parts.push_back(piece(s, c));
        s += c;
      }
      if (s != n) ctx.fail("split sizes sum to " + std::to_string(s) + ", the axis is " + std::to_string(n));
    }
  }
  return {Value::sequence(parts)};
}

// The body once per element of the first input: sequence inputs give their i-th element,
// tensor inputs themselves; each body output collects into a sequence.
std::vector<Value> sequence_map(OpContext& ctx) {
  const Graph& body = ctx.attr_graph("body");
  size_t n = ctx.value(0).sequence().size();
  for (size_t k = 1; k < ctx.num_inputs(); ++k)
    if (ctx.value(k).is_sequence() && ctx.value(k).sequence().size() != n)
      ctx.fail("input " + std::to_string(k) + " is a sequence of " +
               std::to_string(ctx.value(k).sequence().size()) + ", the first of " + std::to_string(n));
  std::vector<std::vector<Tensor>> outs(body.outputs.size());
  for (size_t i = 0; i < n; ++i) {
    std::vector<Value> in;
    for (size_t k = 0; k < ctx.num_inputs(); ++k)
      in.push_back(ctx.value(k).is_sequence() ? Value(ctx.value(k).sequence()[i]) : ctx.value(k));
    std::vector<Value> out = ctx.run_graph(body, in);
    for (size_t o = 0; o < outs.size(); ++o) outs[o].push_back(out.at(o).tensor());
  }
  std::vector<Value> result;
  for (auto& o : outs) result.push_back(Value::sequence(std::move(o)));
  return result;
}

} // namespace

void register_control_ops(OpTable& t) {
  t["SequenceMap"] = sequence_map;
  t["Constant"] = constant;
  t["Identity"] = [](OpContext& ctx) { return std::vector<Value>{ctx.value(0)}; };
  t["If"] = if_op;
  t["Loop"] = loop;
  t["Scan"] = scan;
  t["SequenceEmpty"] = [](OpContext&) { return std::vector<Value>{Value::sequence({})}; };
  t["SequenceConstruct"] = [](OpContext& ctx) {
    std::vector<Tensor> items;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) items.push_back(ctx.tensor(i));
    return std::vector<Value>{Value::sequence(items)};
  };
  t["SequenceAt"] = [](OpContext& ctx) {
    const auto& s = ctx.value(0).sequence();
    return std::vector<Value>{s[size_t(position(ctx, 1, int64_t(s.size()), false))]};
  };
  t["SequenceInsert"] = [](OpContext& ctx) {
    auto s = ctx.value(0).sequence();
    int64_t p = ctx.has(2) ? position(ctx, 2, int64_t(s.size()), true) : int64_t(s.size());
    s.insert(s.begin() + p, ctx.tensor(1));
    return std::vector<Value>{Value::sequence(s)};
  };
  t["SequenceErase"] = [](OpContext& ctx) {
    auto s = ctx.value(0).sequence();
    if (s.empty()) ctx.fail("erasing from an empty sequence");
    int64_t p = ctx.has(1) ? position(ctx, 1, int64_t(s.size()), false) : int64_t(s.size()) - 1;
    s.erase(s.begin() + p);
    return std::vector<Value>{Value::sequence(s)};
  };
  t["SequenceLength"] = [](OpContext& ctx) {
    return std::vector<Value>{int64_scalar(int64_t(ctx.value(0).sequence().size()), ctx.device())};
  };
  t["SplitToSequence"] = split_to_sequence;
  t["ConcatFromSequence"] = [](OpContext& ctx) {
    const auto& s = ctx.value(0).sequence();
    if (s.empty()) ctx.fail("concatenating an empty sequence");
    int64_t axis = ctx.required_int("axis");
    bool new_axis = ctx.attr_int("new_axis", 0) != 0;
    return std::vector<Value>{new_axis ? Tensor::stack(s, axis) : Tensor::cat(s, axis)};
  };
  t["Optional"] = [](OpContext& ctx) { return std::vector<Value>{ctx.value(0)}; };
  t["OptionalHasElement"] = [](OpContext& ctx) {
    return std::vector<Value>{scalar_tensor(!ctx.value(0).is_none(), ctx.device())};
  };
  t["OptionalGetElement"] = [](OpContext& ctx) {
    if (ctx.value(0).is_none()) ctx.fail("the optional is empty");
    return std::vector<Value>{ctx.value(0)};
  };
}

} // namespace tg::onnx
