// Step 1: tensor basics and laziness. Every factory with its shape and dtype, dtype promotion, and
// what "lazy" means: building an expression runs nothing; realize() schedules it into kernels.
// (a + b).relu().sum() is one kernel; realizing after each op makes three.
#include "examples/common/claims.hpp"
#include <tinygrad/tinygrad.hpp>

#include <algorithm>
#include <iostream>

using tg::Tensor;
namespace dtypes = tg::dtypes;

namespace {

template <class T> std::string values(const Tensor& t) {
  std::ostringstream os;
  os << "[";
  auto v = t.to_vector<T>();
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << +v[i];
  os << "]";
  return os.str();
}

void show(const std::string& code, const Tensor& t, const std::string& vals) {
  std::cout << "  " << code << "\n      -> " << t.str() << " " << vals << "\n";
}

} // namespace

int main() {
  examples::Claims claims;

  examples::section("factories: every one gives a shape and a dtype");
  Tensor from = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  show("Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3})", from, values<float>(from));
  Tensor s = Tensor::scalar(7);
  show("Tensor::scalar(7)", s, values<float>(s));
  Tensor f = Tensor::full({2, 2}, 3.5);
  show("Tensor::full({2, 2}, 3.5)", f, values<float>(f));
  Tensor z = Tensor::zeros({3}, dtypes::int32);
  show("Tensor::zeros({3}, dtypes::int32)", z, values<int32_t>(z));
  Tensor o = Tensor::ones({2, 1});
  show("Tensor::ones({2, 1})", o, values<float>(o));
  Tensor ar = Tensor::arange(5);
  show("Tensor::arange(5)", ar, values<int32_t>(ar));
  Tensor ar2 = Tensor::arange(1, 2, 0.25);
  show("Tensor::arange(1, 2, 0.25)", ar2, values<float>(ar2));
  Tensor lin = Tensor::linspace(0, 1, 5);
  show("Tensor::linspace(0, 1, 5)", lin, values<float>(lin));
  Tensor eye = Tensor::eye(3);
  show("Tensor::eye(3)", eye, values<float>(eye));
  Tensor::manual_seed(42);
  Tensor r = Tensor::rand({2, 3});
  show("Tensor::rand({2, 3})   (after manual_seed(42))", r, values<float>(r));
  Tensor rn = Tensor::randn({4});
  show("Tensor::randn({4})", rn, values<float>(rn));
  Tensor u = Tensor::uniform({3}, -2, 2);
  show("Tensor::uniform({3}, -2, 2)", u, values<float>(u));
  Tensor ri = Tensor::randint({6}, 0, 10);
  show("Tensor::randint({6}, 0, 10)", ri, values<int32_t>(ri));
  Tensor fl = from.full_like(9);
  show("from.full_like(9)", fl, values<float>(fl));

  claims.check(from.shape() == tg::Dims{2, 3} && from.dtype() == dtypes::float32,
               "from_vector: (2, 3) float");
  claims.check(ar.dtype() == dtypes::int32 && ar.to_vector<int32_t>() == std::vector<int32_t>{0, 1, 2, 3, 4},
               "arange(5) is int32 0..4");
  claims.check(ar2.to_vector<float>() == std::vector<float>{1, 1.25f, 1.5f, 1.75f},
               "arange(1, 2, 0.25) stops before 2");
  claims.check(lin.to_vector<float>() == std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1},
               "linspace includes both ends");
  claims.check(eye.to_vector<float>() == std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1},
               "eye(3) is the identity");
  auto rv = r.to_vector<float>();
  claims.check(std::all_of(rv.begin(), rv.end(), [](float x) { return x >= 0 && x < 1; }),
               "rand is in [0, 1)");
  auto uv = u.to_vector<float>();
  claims.check(std::all_of(uv.begin(), uv.end(), [](float x) { return x >= -2 && x < 2; }),
               "uniform(-2, 2) is in [-2, 2)");
  auto iv = ri.to_vector<int32_t>();
  claims.check(ri.dtype() == dtypes::int32 &&
                   std::all_of(iv.begin(), iv.end(), [](int32_t x) { return x >= 0 && x < 10; }),
               "randint(0, 10) is int32 in [0, 10)");
  Tensor::manual_seed(42);
  claims.check(Tensor::rand({2, 3}).to_vector<float>() == rv, "the same seed gives the same numbers");

  examples::section("dtypes: tinygrad's promotion rules");
  Tensor i = Tensor::arange(3);
  std::cout << "  arange(3) + 1        -> " << (i + 1).str() << "   (a plain int keeps the tensor's dtype)\n";
  std::cout << "  arange(3) * 2.5      -> " << (i * 2.5).str() << "  (a plain float makes it float)\n";
  std::cout << "  int32 + float16      -> " << (i + Tensor::ones({3}, dtypes::float16)).str() << "\n";
  std::cout << "  arange(3).cast(bool) -> " << i.cast(dtypes::bool_).str() << " "
            << values<bool>(i.cast(dtypes::bool_)) << "\n";
  claims.check((i + 1).dtype() == dtypes::int32, "int tensor + int scalar stays int32");
  claims.check((i * 2.5).dtype() == dtypes::float32, "int tensor * float scalar is float32");
  claims.check((i + Tensor::ones({3}, dtypes::float16)).dtype() == dtypes::float16,
               "int32 + float16 is float16");
  claims.check(i.cast(dtypes::bool_).to_vector<bool>() == std::vector<bool>{false, true, true},
               "cast to bool: 0 is false");

  examples::section("laziness: an expression is a graph until realize()");
  Tensor a = Tensor::from_vector(std::vector<float>{-1, 2, -3, 4}, {4});
  Tensor b = Tensor::from_vector(std::vector<float>{3, -1, 1, -5}, {4});
  a.realize(), b.realize();
  Tensor expr = (a + b).relu().sum();
  std::cout << "  expr = (a + b).relu().sum() is " << expr.str() << ", its node is "
            << tg::op_name(expr.uop()->op()) << " (nothing ran)\n";
  std::cout << "  expr.schedule() before realize:\n" << examples::indent(tg::summarize(expr.schedule()), 4);
  claims.check(!tg::is_buffer_view(expr.uop()), "before realize the tensor is an expression, not data");
  claims.equal(expr.schedule().size(), 1u, "the schedule fuses add, relu and sum into one kernel");

  std::cout << "  with DEBUG=1 (tg::set_debug_level(1)), realize prints:\n";
  tg::set_debug_level(1);
  size_t fused = 0;
  {
    tg::LaunchCounter counter;
    expr.realize();
    fused = counter.kernels();
  }
  tg::set_debug_level(0);
  std::cout << "  expr.schedule() after realize:\n" << examples::indent(tg::summarize(expr.schedule()), 4);
  std::cout << "  expr.item<float>() = " << expr.item<float>() << "\n";
  claims.equal(fused, 1u, "realizing (a + b).relu().sum() launches one kernel");
  claims.check(expr.schedule().empty(), "after realize there is nothing left to run");
  claims.equal(expr.item<float>(), 3.0f, "relu(a + b) = [2, 1, 0, 0], sum 3");

  std::cout << "  realizing after each op (fresh inputs c, d):\n";
  Tensor c = Tensor::from_vector(std::vector<float>{-1, 2, -3, 4}, {4}).realize();
  Tensor d = Tensor::from_vector(std::vector<float>{3, -1, 1, -5}, {4}).realize();
  tg::set_debug_level(1);
  size_t stepwise = 0;
  {
    tg::LaunchCounter counter;
    Tensor t1 = (c + d).realize();
    Tensor t2 = t1.relu().realize();
    Tensor t3 = t2.sum().realize();
    stepwise = counter.kernels();
    claims.equal(t3.item<float>(), 3.0f, "the step-by-step result is the same");
  }
  tg::set_debug_level(0);
  claims.equal(stepwise, 3u, "realizing after each op makes three kernels");
  return claims.finish("01_tensor_basics");
}
