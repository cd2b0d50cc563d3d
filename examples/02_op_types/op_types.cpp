// Step 2: the three op types. Elementwise ops (unary, binary, ternary) fuse into one kernel;
// reduce ops fuse with the elementwise ops before them (and a few after); movement ops (reshape,
// permute, expand, pad, shrink, flip) only change how memory is indexed and make no kernel at all.
// We predict the kernel count of (x.permute(1,0) @ y.reshape(4,4)).sum(1), then count it, and
// build matmul from expand, multiply and sum.
#include "examples/common/claims.hpp"
#include <tinygrad/tinygrad.hpp>

using tg::Tensor;

namespace {

// Kernels that realizing `t` launches, with the schedule printed first.
size_t count_kernels(const std::string& code, Tensor t) {
  std::cout << "  " << code << "\n" << examples::indent(tg::summarize(t.schedule()), 4);
  tg::LaunchCounter counter;
  t.realize();
  return counter.kernels();
}

Tensor input(tg::Dims shape, float scale) {
  std::vector<float> v(size_t(tg::dims_prod(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * float(int(i % 7) - 3);
  return Tensor::from_vector(v, shape).realize();
}

} // namespace

int main() {
  examples::Claims claims;
  Tensor x = input({4, 4}, 1), y = input({16}, 0.5f), w = input({4, 4}, 2);

  examples::section("elementwise: unary, binary and ternary ops fuse into one kernel");
  claims.equal(count_kernels("x.exp2()", x.exp2()), 1u, "one unary op: one kernel");
  claims.equal(count_kernels("((x + w) * 2).abs().sqrt().neg()", ((x + w) * 2).abs().sqrt().neg()), 1u,
               "a chain of unary and binary ops: still one kernel");
  claims.equal(count_kernels("x.lt(w).where(x, w)", x.lt(w).where(x, w)), 1u,
               "a ternary op (where) fuses too");

  examples::section("reduce: sum, max, ... fuse with the elementwise ops that feed them");
  claims.equal(count_kernels("(x * w).sum(1)", (x * w).sum({1})), 1u,
               "elementwise into a reduce: one kernel");
  claims.equal(count_kernels("(x * w).sum(1).relu()", (x * w).sum({1}).relu()), 1u,
               "elementwise after a reduce fuses when the result is not broadcast");
  claims.equal(count_kernels("x - x.max(1, keepdim)", x - x.max({1}, true)), 2u,
               "a reduce broadcast back over its axis is stored first: two kernels");
  claims.equal(count_kernels("x.softmax()", x.softmax()), 3u,
               "softmax: max, sum of exp, divide = three kernels");

  examples::section("movement: reshape, permute, expand, pad, shrink, flip make no kernel");
  Tensor moved = x.permute({1, 0}).reshape({2, 8}).shrink({{0, 1}, {2, 8}}).flip({1}).expand({3, 6});
  claims.equal(count_kernels("x.permute(1,0).reshape(2,8).shrink(...).flip(1).expand(3,6)", moved), 0u,
               "movement ops alone: zero kernels (a view of x's buffer)");
  claims.check(tg::is_buffer_view(moved.uop()), "the result is x's buffer seen through movement ops");
  auto xv = x.to_vector<float>(), mv = moved.to_vector<float>();
  // moved[r][c] = x.T.reshape(2,8)[0][7 - c] for c < 6 = x.T flat[7 - c] = x[(7 - c) % 4][(7 - c) / 4]
  std::vector<float> want;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 6; ++c) want.push_back(xv[size_t(((7 - c) % 4) * 4 + (7 - c) / 4)]);
  claims.check(mv == want, "reading it gives the indexed values (checked by hand indexing)");
  claims.equal(count_kernels("x.pad({{1,1},{0,0}}) + 1", x.pad({{1, 1}, {0, 0}}) + 1), 1u,
               "a movement op under an elementwise op is only the kernel's index math");

  examples::section("predict, then count: (x.permute(1,0) @ y.reshape(4,4)).sum(1)");
  std::cout << "  prediction: permute and reshape are movement (0 kernels); @ is multiply + sum over k\n"
               "  (1 reduce); .sum(1) reduces again, and two reduces in a row with nothing in between\n"
               "  merge into one reduce over both axes. So: 1 kernel.\n";
  const size_t predicted = 1;
  Tensor r = (x.permute({1, 0}).matmul(y.reshape({4, 4}))).sum({1});
  claims.equal(count_kernels("(x.permute(1,0) @ y.reshape(4,4)).sum(1)", r), predicted,
               "the count matches the prediction");
  auto yv = y.to_vector<float>();
  std::vector<double> hand;
  for (int i = 0; i < 4; ++i) {
    double s = 0;
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 4; ++k) s += double(xv[size_t(k * 4 + i)]) * double(yv[size_t(k * 4 + j)]);
    hand.push_back(s);
  }
  claims.close(examples::doubles(r.to_vector<float>()), hand, 1e-6, 1e-5,
               "values equal the hand-written loops");

  examples::section("matmul is expand, multiply and sum");
  // (4, 4, 1) * (1, 4, 4) -> (4, 4, 4) indexed [i, k, j]; summing k gives [i, j] = sum_k x[i,k] w[k,j].
  Tensor by_hand = (x.reshape({4, 4, 1}).expand({4, 4, 4}) * w.reshape({1, 4, 4}).expand({4, 4, 4})).sum({1});
  Tensor builtin = x.matmul(w);
  size_t hand_kernels =
      count_kernels("(x.reshape(4,4,1).expand(4,4,4) * w.reshape(1,4,4).expand(4,4,4)).sum(1)", by_hand);
  size_t builtin_kernels = count_kernels("x @ w", builtin);
  claims.close(examples::doubles(by_hand.to_vector<float>()), examples::doubles(builtin.to_vector<float>()),
               0, 1e-5, "expand * sum equals @");
  claims.check(hand_kernels == 1 && builtin_kernels == 1,
               "both are one kernel: the (4,4,4) product is never stored",
               std::to_string(hand_kernels) + " and " + std::to_string(builtin_kernels));
  return claims.finish("02_op_types");
}
