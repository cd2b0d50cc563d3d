#include <boost/test/unit_test.hpp>

#include "kernel/ir/evaluate.hpp"
#include "kernel/shape/shapetracker.hpp"

using namespace tg;

namespace {
Shape S(std::initializer_list<std::int64_t> d) {
  Shape s;
  for (auto x : d) s.emplace_back(x);
  return s;
}
} // namespace

BOOST_AUTO_TEST_SUITE(view)

BOOST_AUTO_TEST_CASE(create_is_canonical) {
  View v = View::create(S({2, 1, 3}));
  BOOST_TEST(v.contiguous);
  BOOST_TEST(shape_str(v.strides) == "(3, 0, 1)");
  View m = View::create(S({2, 3}), std::nullopt, 0, Mask{{0, 2}, {0, 3}});
  BOOST_TEST(!m.mask.has_value()); // a mask covering everything is dropped
  BOOST_TEST(m.str() == "View(shape=(2, 3), strides=(3, 1), offset=0, mask=None, contiguous=True)");
}

BOOST_AUTO_TEST_CASE(errors_name_the_shapes) {
  auto st = ShapeTracker::from_shape(S({2, 3}));
  BOOST_CHECK_THROW(st.reshape(S({4, 2})), ShapeError);
  BOOST_CHECK_THROW(st.permute({0, 0}), ShapeError);
  BOOST_CHECK_THROW(st.expand(S({4, 3})), ShapeError);
  BOOST_CHECK_THROW(st.shrink({{0, 3}, {0, 3}}), ShapeError);
  BOOST_CHECK_THROW(st.pad({{-1, 0}, {0, 0}}), ShapeError);
  try {
    st.reshape(S({4, 2}));
  } catch (const ShapeError& e) {
    BOOST_TEST(std::string(e.what()) == "reshape: size mismatch, cannot reshape (2, 3) to (4, 2)");
  }
}

BOOST_AUTO_TEST_CASE(mergeable_sequences_stay_one_view) {
  auto st = ShapeTracker::from_shape(S({2, 3, 4}));
  auto a = st.permute({2, 0, 1}).reshape(S({4, 6}));
  BOOST_TEST(a.views().size() == 1u);
  BOOST_TEST(shape_str(a.views()[0].strides) == "(1, 4)");
  auto b = st.reshape(S({6, 4})).shrink({{1, 5}, {0, 4}}).flip({true, false}).reshape(S({2, 2, 4}));
  BOOST_TEST(b.views().size() == 1u);
  auto c = st.reshape(S({2, 1, 12})).expand(S({2, 5, 12})).permute({1, 0, 2}).reshape(S({5, 2, 3, 4}));
  BOOST_TEST(c.views().size() == 1u);
  auto d = st.pad({{1, 1}, {0, 0}, {0, 0}}).reshape(S({4, 3, 1, 4}));
  BOOST_TEST(d.views().size() == 1u);
  // an unmergeable reshape pushes a view; reshaping back merges it again
  auto e = ShapeTracker::from_shape(S({4, 6})).permute({1, 0});
  auto f = e.reshape(S({24}));
  BOOST_TEST(f.views().size() == 2u);
  BOOST_TEST(f.reshape(S({6, 4})).views().size() == 1u);
  BOOST_TEST((f.reshape(S({6, 4})) == e));
}

BOOST_AUTO_TEST_CASE(index_expressions) {
  auto st = ShapeTracker::from_shape(S({4, 6})).permute({1, 0});
  auto [idx, valid] = st.to_index();
  BOOST_TEST(idx->render() == "(ridx0+(ridx1*6))");
  BOOST_TEST(valid->render() == "True");
  auto p = ShapeTracker::from_shape(S({3})).pad({{1, 0}});
  auto [pi, pv] = p.to_index();
  BOOST_TEST(pi->render() == "(ridx0+-1)");
  BOOST_TEST(pv->render() == "(0<ridx0)");
  // a merged-then-split index folds back to the variable
  auto two = ShapeTracker::from_shape(S({4, 6})).permute({1, 0}).reshape(S({24}));
  auto [ti, tv] = two.to_index();
  BOOST_TEST(ti->render() == "((ridx0//4)+((ridx0%4)*6))");
  BOOST_TEST(tv->render() == "True");
}

BOOST_AUTO_TEST_CASE(symbolic_shapes) {
  auto n = UOp::variable("n", 1, 8);
  Shape shape{SInt(n), SInt(4)};
  auto st = ShapeTracker::from_shape(shape);
  BOOST_TEST(shape_str(st.views()[0].strides) == "(4, 1)");
  auto flat = st.reshape(Shape{SInt(n) * 4});
  BOOST_TEST(flat.views().size() == 1u);
  auto t = st.permute({1, 0}).shrink({{1, 3}, {0, SInt(n)}});
  BOOST_TEST(t.shape()[1] == SInt(n));
  auto [idx, valid] = t.to_index();
  Evaluator ev_idx(idx), ev_valid(valid);
  for (std::int64_t nv = 1; nv <= 8; ++nv)
    for (std::int64_t i = 0; i < 2; ++i)
      for (std::int64_t j = 0; j < nv; ++j) {
        Bindings b;
        b.set("n", nv).set("ridx0", i).set("ridx1", j);
        BOOST_TEST(const_as_int(ev_idx.run(b)) == j * 4 + i + 1);
        BOOST_TEST(const_as_int(ev_valid.run(b)) == 1);
      }
  auto e = ShapeTracker::from_shape(Shape{SInt(1), SInt(4)}).expand(Shape{SInt(n), SInt(4)});
  BOOST_TEST(e.to_index().first->render() == "ridx1");
  auto padded = st.pad({{0, 0}, {1, 1}});
  auto [pi, pv] = padded.to_index();
  BOOST_TEST(pv->render() == "((0<ridx1)&(ridx1<5))");
  BOOST_TEST(pi->render() == "(((ridx0*4)+ridx1)+-1)");
}

BOOST_AUTO_TEST_SUITE_END()
