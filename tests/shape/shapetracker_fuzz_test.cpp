#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <numeric>
#include <random>

#include "kernel/ir/evaluate.hpp"
#include "kernel/shape/shapetracker.hpp"

using namespace tg;

namespace {

// Brute-force reference: a materialized array of buffer indices (-1 = padding).
struct Reference {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> data;

  static std::vector<std::int64_t> strides(const std::vector<std::int64_t>& s) {
    std::vector<std::int64_t> st(s.size(), 1);
    for (std::size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
    return st;
  }
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
  std::vector<std::int64_t> unravel(std::int64_t flat) const {
    std::vector<std::int64_t> idx(shape.size());
    for (std::size_t i = shape.size(); i-- > 0;) {
      idx[i] = flat % shape[i];
      flat /= shape[i];
    }
    return idx;
  }
  // New array of shape ns whose element at index j is f(j) (an index into the old array or -1).
  template <class F> void remap(std::vector<std::int64_t> ns, F f) {
    Reference out{std::move(ns), {}};
    auto os = strides(shape);
    for (std::int64_t k = 0; k < out.numel(); ++k) {
      auto j = out.unravel(k);
      std::vector<std::int64_t> src = f(j);
      std::int64_t v = -1;
      if (!src.empty()) {
        std::int64_t flat = 0;
        for (std::size_t d = 0; d < src.size(); ++d) flat += src[d] * os[d];
        v = data[static_cast<std::size_t>(flat)];
      }
      out.data.push_back(v);
    }
    *this = std::move(out);
  }
};

Shape to_shape(const std::vector<std::int64_t>& v) {
  Shape s;
  for (auto x : v) s.emplace_back(x);
  return s;
}

struct MovementFuzzer {
  std::mt19937_64 rng;
  explicit MovementFuzzer(std::uint64_t seed) : rng(seed) {}
  std::int64_t pick(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  }

  std::vector<std::int64_t> random_reshape(std::int64_t n) {
    std::vector<std::int64_t> primes;
    for (std::int64_t p = 2; n > 1;)
      if (n % p == 0) {
        primes.push_back(p);
        n /= p;
      } else {
        ++p;
      }
    std::shuffle(primes.begin(), primes.end(), rng);
    std::vector<std::int64_t> dims;
    for (auto p : primes) {
      if (dims.empty() || pick(0, 2) == 0)
        dims.push_back(p);
      else
        dims.back() *= p;
    }
    int ones = static_cast<int>(pick(0, 2));
    for (int i = 0; i < ones; ++i)
      dims.insert(dims.begin() + pick(0, static_cast<std::int64_t>(dims.size())), 1);
    if (dims.empty()) dims.push_back(1);
    return dims;
  }

  // Applies one random movement op to both; `allow_reshape` false keeps to ops that never stack.
  void step(ShapeTracker& st, Reference& ref, bool allow_reshape) {
    auto nd = ref.shape.size();
    int op = static_cast<int>(pick(allow_reshape ? 0 : 1, 5));
    if (op == 0 && ref.numel() > 0) {
      auto ns = random_reshape(ref.numel());
      st = st.reshape(to_shape(ns));
      auto old = ref;
      ref.remap(ns, [&](const std::vector<std::int64_t>&) { return std::vector<std::int64_t>{}; });
      ref.data = old.data; // reshape keeps the row-major order
    } else if (op == 1) {
      std::vector<std::size_t> order(nd);
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      st = st.permute(order);
      std::vector<std::int64_t> ns;
      for (auto a : order) ns.push_back(ref.shape[a]);
      ref.remap(ns, [&](const std::vector<std::int64_t>& j) {
        std::vector<std::int64_t> src(nd);
        for (std::size_t d = 0; d < nd; ++d) src[order[d]] = j[d];
        return src;
      });
    } else if (op == 2) {
      auto ns = ref.shape;
      bool any = false;
      for (auto& d : ns)
        if (d == 1 && pick(0, 1)) {
          d = pick(2, 3);
          any = true;
        }
      if (!any || ref.numel() * 9 > 4000) return;
      st = st.expand(to_shape(ns));
      auto old_shape = ref.shape;
      ref.remap(ns, [&](const std::vector<std::int64_t>& j) {
        std::vector<std::int64_t> src(nd);
        for (std::size_t d = 0; d < nd; ++d) src[d] = old_shape[d] == 1 ? 0 : j[d];
        return src;
      });
    } else if (op == 3) {
      if (ref.numel() * 4 > 4000) return;
      std::vector<std::pair<SInt, SInt>> arg;
      std::vector<std::int64_t> before, ns;
      for (std::size_t d = 0; d < nd; ++d) {
        std::int64_t b = pick(0, 1), e = pick(0, 1);
        arg.emplace_back(b, e);
        before.push_back(b);
        ns.push_back(ref.shape[d] + b + e);
      }
      st = st.pad(arg);
      auto old_shape = ref.shape;
      ref.remap(ns, [&](const std::vector<std::int64_t>& j) {
        std::vector<std::int64_t> src(nd);
        for (std::size_t d = 0; d < nd; ++d) {
          src[d] = j[d] - before[d];
          if (src[d] < 0 || src[d] >= old_shape[d]) return std::vector<std::int64_t>{};
        }
        return src;
      });
    } else if (op == 4) {
      std::vector<std::pair<SInt, SInt>> arg;
      std::vector<std::int64_t> begin, ns;
      for (std::size_t d = 0; d < nd; ++d) {
        std::int64_t s = ref.shape[d];
        std::int64_t b = s > 1 ? pick(0, s / 2) : 0;
        std::int64_t e = s > 1 ? pick(std::max(b + 1, s / 2), s) : s;
        arg.emplace_back(b, e);
        begin.push_back(b);
        ns.push_back(e - b);
      }
      st = st.shrink(arg);
      ref.remap(ns, [&](const std::vector<std::int64_t>& j) {
        std::vector<std::int64_t> src(nd);
        for (std::size_t d = 0; d < nd; ++d) src[d] = j[d] + begin[d];
        return src;
      });
    } else {
      std::vector<bool> axes(nd);
      for (std::size_t d = 0; d < nd; ++d) axes[d] = pick(0, 1) == 1;
      st = st.flip(axes);
      auto shape = ref.shape;
      ref.remap(shape, [&](const std::vector<std::int64_t>& j) {
        std::vector<std::int64_t> src(nd);
        for (std::size_t d = 0; d < nd; ++d) src[d] = axes[d] ? shape[d] - 1 - j[d] : j[d];
        return src;
      });
    }
  }
};

// Every element: the ShapeTracker's (valid, index) must equal the reference.
void check_same(const ShapeTracker& st, const Reference& ref, std::size_t& checked) {
  BOOST_REQUIRE(shape_str(st.shape()) == shape_str(to_shape(ref.shape)));
  auto vars = st.index_variables();
  auto [idx, valid] = st.to_index(vars);
  Evaluator ev_idx(idx), ev_valid(valid);
  for (std::int64_t k = 0; k < ref.numel(); ++k) {
    auto j = ref.unravel(k);
    Bindings b;
    for (std::size_t d = 0; d < j.size(); ++d) b.set(vars[d], j[d]);
    bool ok = const_as_int(ev_valid.run(b)) != 0;
    std::int64_t want = ref.data[static_cast<std::size_t>(k)];
    bool same = ok == (want >= 0) && (!ok || const_as_int(ev_idx.run(b)) == want);
    if (!same) {
      BOOST_ERROR("mismatch at flat " << k << " of " << st.str() << "\n  index " << idx->render()
                                      << "\n  valid " << valid->render() << "\n  want " << want);
      return;
    }
    ++checked;
  }
}

} // namespace

BOOST_AUTO_TEST_SUITE(shapetracker_fuzz)

BOOST_AUTO_TEST_CASE(random_movement_sequences_match_reference) {
  MovementFuzzer fz(20240601);
  std::size_t checked = 0, stacked = 0;
  for (int seq = 0; seq < 600; ++seq) {
    auto base = fz.random_reshape(fz.pick(1, 4) * fz.pick(1, 6) * fz.pick(1, 5));
    Reference ref{base, {}};
    for (std::int64_t i = 0; i < ref.numel(); ++i) ref.data.push_back(i);
    auto st = ShapeTracker::from_shape(to_shape(base));
    int steps = static_cast<int>(fz.pick(1, 8));
    for (int s = 0; s < steps; ++s) fz.step(st, ref, true);
    stacked += st.views().size() > 1;
    check_same(st, ref, checked);
  }
  BOOST_TEST_MESSAGE("shapetracker fuzz: " << checked << " elements checked, " << stacked
                                           << " stacked trackers");
  BOOST_TEST(checked > 10000u);
}

BOOST_AUTO_TEST_CASE(ops_other_than_reshape_never_add_views) {
  MovementFuzzer fz(777);
  std::size_t checked = 0;
  for (int seq = 0; seq < 200; ++seq) {
    auto base = fz.random_reshape(fz.pick(1, 4) * fz.pick(1, 6) * fz.pick(1, 5));
    Reference ref{base, {}};
    for (std::int64_t i = 0; i < ref.numel(); ++i) ref.data.push_back(i);
    auto st = ShapeTracker::from_shape(to_shape(base));
    for (int s = 0; s < 6; ++s) fz.step(st, ref, false);
    BOOST_TEST(st.views().size() == 1u);
    check_same(st, ref, checked);
  }
}

BOOST_AUTO_TEST_SUITE_END()
