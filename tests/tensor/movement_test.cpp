// Movement ops against the reference: each op (and random chains of them) applied on top of every
// input layout, Python slice semantics with positive and negative steps, cat/stack/repeat/gather.
#include "test_util.hpp"

using namespace tt;
using ref::Dims;

namespace {

// One random movement op applied to both sides. Keeps tensors small (<= 4 dims, dims <= 8).
void random_movement(Rng& rng, Tensor& t, NdArray& r, std::string& log) {
  const int64_t nd = r.ndim();
  switch (rint(rng, 0, 7)) {
  case 0: { // reshape: split or merge, -1 now and then
    Dims s = r.shape;
    if (nd >= 2 && rint(rng, 0, 1)) {
      int64_t i = rint(rng, 0, nd - 2);
      s[size_t(i)] *= s[size_t(i) + 1];
      s.erase(s.begin() + i + 1);
    } else if (nd < 4) {
      s.push_back(1);
      std::rotate(s.begin() + rint(rng, 0, nd), s.end() - 1, s.end());
    }
    if (!s.empty() && rint(rng, 0, 1) && ref::prod(s) != 0)
      s[size_t(rint(rng, 0, int64_t(s.size()) - 1))] = -1;
    t = t.reshape(s);
    r = ref::reshape(r, s);
    log += " reshape" + ref::str(s);
    return;
  }
  case 1: {
    std::vector<int64_t> order(r.shape.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    t = t.permute(order);
    r = ref::permute(r, order);
    log += " permute" + ref::str(order);
    return;
  }
  case 2: {
    Dims s = r.shape;
    for (auto& d : s)
      if (d == 1 && rint(rng, 0, 1)) d = rint(rng, 2, 3);
    if (s.size() < 4 && rint(rng, 0, 1)) s.insert(s.begin(), 2);
    t = t.expand(s);
    r = ref::expand(r, s);
    log += " expand" + ref::str(s);
    return;
  }
  case 3: {
    std::vector<std::pair<int64_t, int64_t>> p;
    for (auto d : r.shape) p.emplace_back(std::max<int64_t>(-d / 2, rint(rng, -1, 2)), rint(rng, 0, 1));
    double v = rint(rng, 0, 1) ? 0.0 : 3.5;
    t = t.pad(p, v);
    r = ref::pad(r, p, v);
    log += " pad value " + std::to_string(v);
    return;
  }
  case 4: {
    std::vector<std::pair<int64_t, int64_t>> s;
    for (auto d : r.shape) {
      int64_t b = rint(rng, 0, d), e = rint(rng, b, d);
      s.emplace_back(b, e);
    }
    t = t.shrink(s);
    r = ref::shrink(r, s);
    log += " shrink";
    return;
  }
  case 5: {
    std::vector<int64_t> axes;
    for (int64_t i = 0; i < nd; ++i)
      if (rint(rng, 0, 1)) axes.push_back(i);
    t = t.flip(axes);
    r = ref::flip(r, axes);
    log += " flip" + ref::str(axes);
    return;
  }
  case 6: {
    if (nd < 2) return;
    int64_t a = rint(rng, -nd, nd - 1), b = rint(rng, -nd, nd - 1);
    t = t.transpose(a, b);
    r = ref::transpose(r, a, b);
    log += " transpose";
    return;
  }
  default: {
    std::vector<tg::Slice> ts;
    std::vector<ref::SliceSpec> rs;
    for (int64_t i = 0; i < nd; ++i) {
      auto opt = [&]() -> std::optional<int64_t> {
        if (rint(rng, 0, 2) == 0) return std::nullopt;
        return rint(rng, -r.shape[size_t(i)] - 1, r.shape[size_t(i)] + 1);
      };
      int64_t step = rint(rng, 0, 1) ? rint(rng, 1, 3) : -rint(rng, 1, 3);
      auto a = opt(), b = opt();
      ts.push_back(tg::Slice{a, b, step});
      rs.push_back(ref::SliceSpec{a, b, step});
    }
    t = t.slice(ts);
    r = ref::slice(r, rs);
    log += " slice";
    return;
  }
  }
}

} // namespace

BOOST_AUTO_TEST_SUITE(movement)

BOOST_AUTO_TEST_CASE(random_chains_over_layouts) {
  Rng rng(555);
  for (int trial = 0; trial < 40; ++trial) {
    Layout l = kLayouts[trial % 7];
    DType dt = trial % 5 == 4 ? dtypes::int32 : dtypes::float32;
    Dims shape = rand_shape(rng, rint(rng, 1, 3), 4, true);
    Input x = make_input(rng, shape, dt, l);
    std::string log = ctx("chain", shape, dt, l) + ":";
    Tensor t = x.t;
    NdArray r = x.r;
    int n = int(rint(rng, 1, 4));
    for (int i = 0; i < n; ++i) random_movement(rng, t, r, log);
    BOOST_TEST(t.shape() == r.shape, log);
    // read it directly (a strided copy) and through an elementwise consumer (a fused index)
    check_close(t, r, kExact, log);
    check_close(t * 2, ref::map(r, [](double v) { return v * 2; }), kExact, log + " then *2");
  }
}

BOOST_AUTO_TEST_CASE(reshape_permute_expand_basics) {
  Rng rng(1);
  Input x = make_input(rng, {2, 3, 4}, dtypes::float32, Layout::Permuted);
  check_close(x.t.reshape({4, -1}), ref::reshape(x.r, {4, 6}), kExact, "reshape -1");
  check_close(x.t.reshape({24}), ref::reshape(x.r, {24}), kExact, "reshape flat");
  check_close(x.t.permute({2, 0, 1}), ref::permute(x.r, {2, 0, 1}), kExact, "permute");
  check_close(x.t.permute({-1, 0, 1}), ref::permute(x.r, {2, 0, 1}), kExact, "permute negative axes");
  check_close(x.t.transpose(0, 1), ref::transpose(x.r, 0, 1), kExact, "transpose");
  check_close(x.t.transpose(-1, 0), ref::transpose(x.r, 2, 0), kExact, "transpose negative");
  check_close(x.t.reshape({6, 4}).T(), ref::transpose(ref::reshape(x.r, {6, 4}), 1, 0), kExact, "T");
  check_close(x.t.reshape({2, 1, 12}).expand({2, 5, 12}),
              ref::expand(ref::reshape(x.r, {2, 1, 12}), {2, 5, 12}), kExact, "expand");
  check_close(x.t.reshape({2, 1, 12}).expand({3, -1, 2, -1}),
              ref::expand(ref::reshape(x.r, {2, 1, 12}), {3, 2, 2, 12}), kExact,
              "expand new leading dim, -1 keeps");
  check_close(x.t.reshape({2, 3, 4}), x.r, kExact, "reshape identity");
  // squeeze / unsqueeze / flatten
  Tensor u = x.t.reshape({2, 1, 3, 1, 4});
  BOOST_TEST(u.squeeze().shape() == (Dims{2, 3, 4}));
  BOOST_TEST(u.squeeze(1).shape() == (Dims{2, 3, 1, 4}));
  BOOST_TEST(u.squeeze(-2).shape() == (Dims{2, 1, 3, 4}));
  BOOST_TEST(u.squeeze(0).shape() == u.shape()); // not size 1: unchanged
  BOOST_TEST(x.t.unsqueeze(0).shape() == (Dims{1, 2, 3, 4}));
  BOOST_TEST(x.t.unsqueeze(-1).shape() == (Dims{2, 3, 4, 1}));
  BOOST_TEST(x.t.unsqueeze(3).shape() == (Dims{2, 3, 4, 1}));
  check_close(x.t.flatten(), ref::reshape(x.r, {24}), kExact, "flatten");
  check_close(x.t.flatten(1), ref::reshape(x.r, {2, 12}), kExact, "flatten(1)");
  check_close(x.t.flatten(0, 1), ref::reshape(x.r, {6, 4}), kExact, "flatten(0, 1)");
  BOOST_TEST(Tensor::scalar(3).flatten().shape() == (Dims{1}));
  // zero-size
  Tensor z = Tensor::ones({0, 3});
  check_close(z.reshape({3, 0}), NdArray({3, 0}), kExact, "reshape of empty");
  check_close(z.permute({1, 0}).expand({3, 0}), NdArray({3, 0}), kExact, "permute of empty");
  check_close(z.pad({{1, 1}, {0, 0}}, 2), NdArray({2, 3}, 2.0), kExact, "pad of empty");
}

BOOST_AUTO_TEST_CASE(pad_shrink_flip) {
  Rng rng(2);
  for (Layout l : kLayouts) {
    Dims shape = rand_shape(rng, 3, 4);
    Input x = make_input(rng, shape, dtypes::float32, l);
    std::vector<std::pair<int64_t, int64_t>> p;
    for (auto d : shape) p.emplace_back(rint(rng, std::max<int64_t>(-d + 1, -1), 2), rint(rng, 0, 2));
    check_close(x.t.pad(p), ref::pad(x.r, p), kExact, ctx("pad", shape, dtypes::float32, l));
    check_close(x.t.pad(p, -7.25), ref::pad(x.r, p, -7.25), kExact,
                ctx("pad value", shape, dtypes::float32, l));
    std::vector<std::pair<int64_t, int64_t>> s;
    for (auto d : shape) {
      int64_t b = rint(rng, 0, d - 1);
      s.emplace_back(b, rint(rng, b + 1, d));
    }
    check_close(x.t.shrink(s), ref::shrink(x.r, s), kExact, ctx("shrink", shape, dtypes::float32, l));
    check_close(x.t.flip({0, -1}), ref::flip(x.r, {0, 2}), kExact, ctx("flip", shape, dtypes::float32, l));
  }
  // pad of int and bool tensors with a value
  Tensor i = Tensor::from_vector<int32_t>({1, 2, 3}, {3});
  BOOST_TEST(i.pad({{1, 2}}, -1).to_vector<int32_t>() == (std::vector<int32_t>{-1, 1, 2, 3, -1, -1}),
             boost::test_tools::per_element());
  Tensor b = Tensor::from_vector<bool>({false, true}, {2});
  BOOST_TEST(b.pad({{1, 0}}, 1).to_vector<bool>() == (std::vector<bool>{true, false, true}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(slice_python_semantics) {
  Rng rng(3);
  Input x = make_input(rng, {7, 6}, dtypes::float32, Layout::Contiguous);
  const std::vector<std::pair<tg::Slice, ref::SliceSpec>> cases = {
      {{}, {}},
      {{1, 5, 1}, {1, 5, 1}},
      {{1, 5, 2}, {1, 5, 2}},
      {{std::nullopt, std::nullopt, 3}, {std::nullopt, std::nullopt, 3}},
      {{std::nullopt, std::nullopt, -1}, {std::nullopt, std::nullopt, -1}},
      {{std::nullopt, std::nullopt, -2}, {std::nullopt, std::nullopt, -2}},
      {{5, 1, -1}, {5, 1, -1}},
      {{5, 0, -3}, {5, 0, -3}},
      {{-2, std::nullopt, -2}, {-2, std::nullopt, -2}},
      {{-1, -5, -1}, {-1, -5, -1}},
      {{-100, 100, 2}, {-100, 100, 2}},
      {{100, -100, -2}, {100, -100, -2}},
      {{4, 2, 1}, {4, 2, 1}},   // empty
      {{2, 4, -1}, {2, 4, -1}}, // empty
      {{3, 4, 1}, {3, 4, 1}},
  };
  for (const auto& [ts, rs] : cases)
    for (const auto& [ts2, rs2] :
         std::vector<std::pair<tg::Slice, ref::SliceSpec>>{{{}, {}}, {{-1, 0, -2}, {-1, 0, -2}}}) {
      std::string c = "slice [" + std::to_string(ts.start.value_or(999)) + ":" +
                      std::to_string(ts.stop.value_or(999)) + ":" + std::to_string(ts.step) + "] then [" +
                      std::to_string(ts2.start.value_or(999)) + ":" + std::to_string(ts2.stop.value_or(999)) +
                      ":" + std::to_string(ts2.step) + "]";
      check_close(x.t.slice({ts, ts2}), ref::slice(x.r, {rs, rs2}), kExact, c);
    }
  // indexing
  check_close(x.t[2], ref::reshape(ref::slice(x.r, {{2, 3, 1}}), {6}), kExact, "x[2]");
  check_close(x.t[-1], ref::reshape(ref::slice(x.r, {{6, 7, 1}}), {6}), kExact, "x[-1]");
  check_close(x.t[3][-2], ref::reshape(ref::slice(x.r, {{3, 4, 1}, {4, 5, 1}}), {}), kExact, "x[3][-2]");
  // slices of non-contiguous views
  for (Layout l : kLayouts) {
    Input y = make_input(rng, {5, 4, 3}, dtypes::float32, l);
    check_close(
        y.t.slice({{4, std::nullopt, -2}, {1, std::nullopt, 2}, {std::nullopt, std::nullopt, -1}}),
        ref::slice(y.r, {{4, std::nullopt, -2}, {1, std::nullopt, 2}, {std::nullopt, std::nullopt, -1}}),
        kExact, ctx("slice of view", {5, 4, 3}, dtypes::float32, l));
  }
}

BOOST_AUTO_TEST_CASE(cat_stack_repeat) {
  Rng rng(4);
  for (int trial = 0; trial < 8; ++trial) {
    Dims base = rand_shape(rng, 3, 4);
    int64_t axis = rint(rng, -3, 2);
    int64_t ax = axis < 0 ? axis + 3 : axis;
    std::vector<Tensor> ts;
    std::vector<NdArray> rs;
    DType dt = trial == 6 ? dtypes::bool_ : trial == 7 ? dtypes::int8 : dtypes::float32;
    int n = int(rint(rng, 1, 3));
    for (int i = 0; i < n; ++i) {
      Dims s = base;
      s[size_t(ax)] = rint(rng, 0, 3);
      Input in = make_input(rng, s, dt, kLayouts[rint(rng, 0, 6)]);
      ts.push_back(in.t);
      rs.push_back(in.r);
    }
    std::string c = "cat of " + std::to_string(n) + " " + dt.name() + " axis " + std::to_string(axis);
    Tensor out = Tensor::cat(ts, axis);
    BOOST_TEST(out.dtype() == dt, c);
    check_close(out, ref::cat(rs, axis), kExact, c);
  }
  // mixed dtypes promote
  Tensor a = Tensor::from_vector<int32_t>({1, 2}, {2}), b = Tensor::from_vector<float>({0.5f}, {1});
  Tensor ab = Tensor::cat({a, b});
  BOOST_TEST(ab.dtype() == dtypes::float32);
  check_close(ab, NdArray({3}, {1, 2, 0.5}), kExact, "cat int + float");
  // stack
  for (int64_t axis : {0, 1, 2, -1, -3}) {
    std::vector<Tensor> ts;
    std::vector<NdArray> rs;
    for (int i = 0; i < 3; ++i) {
      Input in = make_input(rng, {2, 3}, dtypes::float32, kLayouts[(i + axis + 7) % 7]);
      ts.push_back(in.t);
      rs.push_back(in.r);
    }
    check_close(Tensor::stack(ts, axis), ref::stack(rs, axis), kExact, "stack axis " + std::to_string(axis));
  }
  // repeat
  for (const Dims& reps : {Dims{2, 1}, Dims{1, 3}, Dims{2, 2, 2}, Dims{0, 1}, Dims{1, 1}}) {
    Input in = make_input(rng, {2, 3}, dtypes::float32, Layout::Flipped);
    check_close(in.t.repeat(reps), ref::repeat(in.r, reps), kExact, "repeat " + ref::str(reps));
  }
}

BOOST_AUTO_TEST_CASE(gather) {
  Rng rng(6);
  for (int trial = 0; trial < 8; ++trial) {
    Dims shape = rand_shape(rng, 3, 4);
    int64_t axis = rint(rng, -3, 2), ax = axis < 0 ? axis + 3 : axis;
    Input x = make_input(rng, shape, trial % 2 ? dtypes::int32 : dtypes::float32, kLayouts[trial % 7]);
    Dims is = shape;
    for (size_t d = 0; d < is.size(); ++d)
      is[d] = int64_t(d) == ax ? rint(rng, 1, 5) : rint(rng, 1, shape[d]);
    NdArray idx = rand_int_array(rng, is, 0, shape[size_t(ax)] - 1);
    DType idt = trial % 3 == 0 ? dtypes::int64 : dtypes::int32;
    Tensor out = x.t.gather(axis, to_tensor(idx, idt));
    BOOST_TEST(out.dtype() == x.t.dtype());
    check_close(out, ref::gather(x.r, axis, idx), kExact,
                "gather axis " + std::to_string(axis) + " of " + ref::str(shape) + " index " + ref::str(is));
  }
}

BOOST_AUTO_TEST_SUITE_END()
