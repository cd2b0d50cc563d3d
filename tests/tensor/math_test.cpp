// The elementwise math of kernel/tensor/math.cpp against PyTorch: values at special inputs (0,
// branch boundaries, +-inf, NaN) in float32 and float64, gradients, int inputs, bitwise ops.
// The references are literals printed by tests/tensor/torch_refs_math.py
// (`/usr/bin/python3 tests/tensor/torch_refs_math.py`, sections "math_test.cpp").
#include "test_util.hpp"

#include <cstdint>
#include <functional>
#include <limits>
#include <map>

using namespace tt;

// Everything in the suite's namespace: the suites share unity translation units, whose
// anonymous namespaces would clash (nonfinite_test.cpp's kInf, conv_test.cpp's pat).
BOOST_AUTO_TEST_SUITE(math)

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Ref {
  std::string name;
  std::vector<double> x, y;
};

Tensor run_op(const std::string& name, const Tensor& x) {
  static const std::map<std::string, std::function<Tensor(const Tensor&)>> ops = {
      {"erf", [](const Tensor& t) { return t.erf(); }},
      {"round", [](const Tensor& t) { return t.round(); }},
      {"asin", [](const Tensor& t) { return t.asin(); }},
      {"acos", [](const Tensor& t) { return t.acos(); }},
      {"atan", [](const Tensor& t) { return t.atan(); }},
      {"sinh", [](const Tensor& t) { return t.sinh(); }},
      {"cosh", [](const Tensor& t) { return t.cosh(); }},
      {"asinh", [](const Tensor& t) { return t.asinh(); }},
      {"acosh", [](const Tensor& t) { return t.acosh(); }},
      {"atanh", [](const Tensor& t) { return t.atanh(); }},
      {"elu", [](const Tensor& t) { return t.elu(); }},
      {"elu0.5", [](const Tensor& t) { return t.elu(0.5); }},
      {"selu", [](const Tensor& t) { return t.selu(); }},
      {"celu2", [](const Tensor& t) { return t.celu(2); }},
      {"hardsigmoid", [](const Tensor& t) { return t.hardsigmoid(); }},
      {"hardsigmoid0.2", [](const Tensor& t) { return t.hardsigmoid(0.2, 0.5); }},
      {"hardswish", [](const Tensor& t) { return t.hardswish(); }},
      {"mish", [](const Tensor& t) { return t.mish(); }},
      {"softsign", [](const Tensor& t) { return t.softsign(); }},
  };
  auto it = ops.find(name);
  if (it == ops.end()) throw std::logic_error("math_test: no op " + name);
  return it->second(x);
}

// x -> f(x), float32
const std::vector<Ref> kUnary32 = {
    {"erf",
     {-3, -1.5, -0.699999988, -0.200000003, 0, 0.00100000005, 0.300000012, 0.49000001, 0.50999999, 1, 2.5, 5,
      kInf, -kInf, kNan},
     {-0.999977887, -0.966105163, -0.677801192, -0.222702593, 0, 0.00112837879, 0.328626782, 0.511668265,
      0.529243588, 0.842700779, 0.999593019, 1, 1, -1, kNan}},
    {"round",
     {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999997, -0.600000024, 1.39999998, 2.5999999, 3.5, -3.5, 100000000,
      kInf, kNan},
     {-2, -2, -0, 0, 2, 2, 0, -1, 1, 3, 4, -4, 100000000, kInf, kNan}},
    {"asin",
     {-1, -0.999000013, -0.5, -0.100000001, 0, 0.0500000007, 0.300000012, 0.699999988, 0.999899983, 1, 1.5},
     {-1.57079637, -1.52607155, -0.52359879, -0.100167423, 0, 0.0500208586, 0.304692656, 0.77539748,
      1.5566529, 1.57079637, kNan}},
    {"acos",
     {-1, -0.999000013, -0.5, -0.100000001, 0, 0.0500000007, 0.300000012, 0.699999988, 0.999899983, 1, 1.5},
     {3.14159274, 3.0968678, 2.09439516, 1.67096376, 1.57079637, 1.52077544, 1.26610363, 0.795398831,
      0.0141434269, 0, kNan}},
    {"atan",
     {-1000000, -3, -1, -0.5, -0.00999999978, 0, 0.200000003, 0.660000026, 0.699999988, 2.4000001, 2.5, 100,
      kInf, -kInf, kNan},
     {-1.5707953, -1.24904573, -0.785398126, -0.463647604, -0.00999966636, 0, 0.197395563, 0.58337301,
      0.610725939, 1.17600524, 1.19028997, 1.56079662, 1.57079637, -1.57079637, kNan}},
    {"sinh",
     {-10, -2, -0.600000024, -0.400000006, -0.00100000005, 0, 0.300000012, 0.5, 1, 5, 88.5},
     {-11013.2324, -3.62686038, -0.636653662, -0.410752326, -0.00100000016, 0, 0.304520309, 0.521095276,
      1.17520118, 74.2032089, 1.36154396e+38}},
    {"cosh",
     {-10, -2, -0.600000024, -0.400000006, -0.00100000005, 0, 0.300000012, 0.5, 1, 5, 88.5},
     {11013.2324, 3.76219583, 1.18546522, 1.08107233, 1.00000048, 1, 1.04533851, 1.12762594, 1.54308057,
      74.2099533, 1.36154396e+38}},
    {"asinh",
     {-1.00000002e+20, -5, -0.5, -0.100000001, 0, 0.00999999978, 0.123999998, 0.126000002, 1, 3,
      1.00000002e+20},
     {-46.7448463, -2.31243825, -0.481211841, -0.0998340771, 0, 0.00999983307, 0.123684406, 0.125668958,
      0.881373584, 1.81844652, 46.7448463}},
    {"acosh",
     {1, 1.00010002, 1.5, 2, 10, 1.00000002e+20, 0.5},
     {0, 0.0141431913, 0.962423682, 1.31695795, 2.99322295, 46.7448463, kNan}},
    {"atanh",
     {-1, -0.999000013, -0.5, -0.119999997, -0.00999999978, 0, 0.100000001, 0.129999995, 0.699999988,
      0.999899983, 1, 1.5},
     {-kInf, -3.80020761, -0.549306154, -0.120581016, -0.0100003332, 0, 0.100335345, 0.130739853, 0.86730051,
      4.95163584, kInf, kNan}},
    {"elu",
     {-5, -1, -0.100000001, 0, 0.100000001, 1, 3, 100},
     {-0.993262053, -0.63212055, -0.0951625705, 0, 0.100000001, 1, 3, 100}},
    {"elu0.5",
     {-5, -1, -0.100000001, 0, 0.100000001, 1, 3, 100},
     {-0.496631026, -0.316060275, -0.0475812852, 0, 0.100000001, 1, 3, 100}},
    {"selu",
     {-5, -1, -0.100000001, 0, 0.100000001, 1, 3, 100},
     {-1.74625337, -1.11133075, -0.167305246, 0, 0.105070107, 1.05070102, 3.15210295, 105.070099}},
    {"celu2",
     {-5, -1, -0.100000001, 0, 0.100000001, 1, 3, 100},
     {-1.83582997, -0.786938667, -0.0975410938, 0, 0.100000001, 1, 3, 100}},
    {"hardsigmoid",
     {-4, -3, -1, 0, 1, 2.9000001, 3, 4},
     {0, 0, 0.333333343, 0.5, 0.666666687, 0.983333349, 1, 1}},
    {"hardsigmoid0.2",
     {-4, -3, -1, 0, 1, 2.4000001, 3, 4},
     {0, 0, 0.300000012, 0.5, 0.699999988, 0.980000019, 1, 1}},
    {"hardswish",
     {-4, -3, -1, 0, 1, 2.9000001, 3, 4},
     {-0, -0, -0.333333343, 0, 0.666666687, 2.85166669, 3, 4}},
    {"mish",
     {-20, -5, -1, -0.100000001, 0, 0.100000001, 1, 5, 30, 100},
     {-4.12230747e-08, -0.0335762352, -0.30340144, -0.0567885712, 0, 0.0631794184, 0.865098357, 4.99955225,
      30, 100}},
    {"softsign",
     {-100, -2, -0.5, 0, 0.5, 2, 100},
     {-0.990099013, -0.666666687, -0.333333343, 0, 0.333333343, 0.666666687, 0.990099013}},
};

// x -> f(x), float64
const std::vector<Ref> kUnary64 = {
    {"erf",
     {-3, -1.5, -0.69999999999999996, -0.20000000000000001, 0, 0.001, 0.29999999999999999,
      0.48999999999999999, 0.51000000000000001, 1, 2.5, 5, kInf, -kInf, kNan},
     {-0.99997790950300136, -0.96610514647531076, -0.67780119383741844, -0.22270258921047847, 0,
      0.0011283787909692365, 0.32862675945912739, 0.51166826118852304, 0.52924361984117041,
      0.84270079294971489, 0.99959304798255499, 0.99999999999846256, 1, -1, kNan}},
    {"round",
     {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999997000000002, -0.59999999999999998, 1.3999999999999999,
      2.6000000000000001, 3.5, -3.5, 100000002, kInf, kNan},
     {-2, -2, -0, 0, 2, 2, 0, -1, 1, 3, 4, -4, 100000002, kInf, kNan}},
    {"asin",
     {-1, -0.999, -0.5, -0.10000000000000001, 0, 0.050000000000000003, 0.29999999999999999,
      0.69999999999999996, 0.99990000000000001, 1, 1.5},
     {-1.5707963267948966, -1.5260712396261631, -0.52359877559829893, -0.1001674211615598, 0,
      0.050020856805770016, 0.30469265401539747, 0.77539749661075297, 1.5566540733173846, 1.5707963267948966,
      kNan}},
    {"acos",
     {-1, -0.999, -0.5, -0.10000000000000001, 0, 0.050000000000000003, 0.29999999999999999,
      0.69999999999999996, 0.99990000000000001, 1, 1.5},
     {3.1415926535897931, 3.0968675664210599, 2.0943951023931957, 1.6709637479564565, 1.5707963267948966,
      1.5207754699891265, 1.2661036727794992, 0.79539883018414359, 0.014142253477512098, 0, kNan}},
    {"atan",
     {-1000000, -3, -1, -0.5, -0.01, 0, 0.20000000000000001, 0.66000000000000003, 0.69999999999999996,
      2.3999999999999999, 2.5, 100, kInf, -kInf, kNan},
     {-1.5707953267948966, -1.2490457723982544, -0.78539816339744828, -0.46364760900080609,
      -0.0099996666866652376, 0, 0.19739555984988078, 0.58337300699385597, 0.61072596438920856,
      1.176005207095135, 1.1902899496825317, 1.5607966601082315, 1.5707963267948966, -1.5707963267948966,
      kNan}},
    {"sinh",
     {-10, -2, -0.59999999999999998, -0.40000000000000002, -0.001, 0, 0.29999999999999999, 0.5, 1, 5, 88.5},
     {-11013.232874703393, -3.6268604078470186, -0.63665358214824119, -0.41075232580281551,
      -0.0010000001666666751, 0, 0.3045202934471426, 0.52109530549374738, 1.1752011936438014,
      74.203210577788752, 1.3615439125340558e+38}},
    {"cosh",
     {-10, -2, -0.59999999999999998, -0.40000000000000002, -0.001, 0, 0.29999999999999999, 0.5, 1, 5, 88.5},
     {11013.232920103323, 3.7621956910836314, 1.1854652182422676, 1.0810723718384547, 1.0000005000000416, 1,
      1.0453385141288605, 1.1276259652063807, 1.5430806348152437, 74.209948524787848,
      1.3615439125340558e+38}},
    {"asinh",
     {-1e+20, -5, -0.5, -0.10000000000000001, 0, 0.01, 0.124, 0.126, 1, 3, 1e+20},
     {-46.744849040440862, -2.3124383412727525, -0.48121182505960347, -0.099834078899207576, 0,
      0.0099998333408328859, 0.12368440813683886, 0.12566896357962659, 0.88137358701954305,
      1.8184464592320668, 46.744849040440862}},
    {"acosh",
     {1, 1.0001, 1.5, 2, 10, 1e+20, 0.5},
     {0, 0.014142017775251547, 0.96242365011920694, 1.3169578969248166, 2.9932228461263808,
      46.744849040440862, kNan}},
    {"atanh",
     {-1, -0.999, -0.5, -0.12, -0.01, 0, 0.10000000000000001, 0.13, 0.69999999999999996, 0.99990000000000001,
      1, 1.5},
     {-kInf, -3.8002011672501994, -0.54930614433405478, -0.12058102840844404, -0.010000333353334763, 0,
      0.10033534773107558, 0.13073985002887845, 0.86730052769405308, 4.9517187756430978, kInf, kNan}},
    {"elu",
     {-5, -1, -0.10000000000000001, 0, 0.10000000000000001, 1, 3, 100},
     {-0.99326205300091452, -0.63212055882855767, -0.095162581964040482, 0, 0.10000000000000001, 1, 3, 100}},
    {"elu0.5",
     {-5, -1, -0.10000000000000001, 0, 0.10000000000000001, 1, 3, 100},
     {-0.49663102650045726, -0.31606027941427883, -0.047581290982020241, 0, 0.10000000000000001, 1, 3, 100}},
    {"selu",
     {-5, -1, -0.10000000000000001, 0, 0.10000000000000001, 1, 3, 100},
     {-1.7462533606696198, -1.1113307378125625, -0.16730527262431402, 0, 0.10507009873554805,
      1.0507009873554805, 3.1521029620664414, 105.07009873554804}},
    {"celu2",
     {-5, -1, -0.10000000000000001, 0, 0.10000000000000001, 1, 3, 100},
     {-1.8358300027522023, -0.78693868057473315, -0.097541150998571968, 0, 0.10000000000000001, 1, 3, 100}},
    {"hardsigmoid",
     {-4, -3, -1, 0, 1, 2.8999999999999999, 3, 4},
     {0, 0, 0.33333333333333331, 0.5, 0.66666666666666663, 0.98333333333333339, 1, 1}},
    {"hardsigmoid0.2",
     {-4, -3, -1, 0, 1, 2.3999999999999999, 3, 4},
     {0, 0, 0.29999999999999999, 0.5, 0.69999999999999996, 0.97999999999999998, 1, 1}},
    {"hardswish",
     {-4, -3, -1, 0, 1, 2.8999999999999999, 3, 4},
     {-0, -0, -0.33333333333333331, 0, 0.66666666666666663, 2.8516666666666666, 3, 4}},
    {"mish",
     {-20, -5, -1, -0.10000000000000001, 0, 0.10000000000000001, 1, 5, 30, 100},
     {-4.1223072406287619e-08, -0.033576237730161704, -0.30340146137410895, -0.056788575212844743, 0,
      0.063179417491489726, 0.86509838826731034, 4.9995520775294056, 30, 100}},
    {"softsign",
     {-100, -2, -0.5, 0, 0.5, 2, 100},
     {-0.99009900990099009, -0.66666666666666663, -0.33333333333333331, 0, 0.33333333333333331,
      0.66666666666666663, 0.99009900990099009}},
};

// x -> d f(x).sum() / dx, float32
const std::vector<Ref> kGrad32 = {
    {"erf",
     {-3, -1.5, -0.699999988, -0.200000003, 0, 0.300000012, 0.49000001, 0.50999999, 1, 2.5, 5},
     {0.000139253054, 0.118930295, 0.691274941, 1.08413482, 1.12837923, 1.03126097, 0.887525797, 0.869951606,
      0.415107518, 0.00217828434, 1.56708674e-11}},
    {"elu",
     {-5, -1, -0.100000001, 0, 0.100000001, 1, 3, 100},
     {0.006737947, 0.36787945, 0.90483743, 1, 1, 1, 1, 1}},
    {"selu",
     {-5, -1, -0.100000001, 0.100000001, 1, 3},
     {0.0118459798, 0.64676863, 1.59079409, 1.05070102, 1.05070102, 1.05070102}},
    {"celu2",
     {-5, -1, -0.100000001, 0, 0.100000001, 1, 3},
     {0.0820849985, 0.606530666, 0.951229453, 1, 1, 1, 1}},
    {"atan",
     {-3, -1, -0.5, 0, 0.200000003, 0.699999988, 2.5, 100},
     {0.100000001, 0.5, 0.800000012, 1, 0.961538494, 0.671140909, 0.137931034, 9.99900003e-05}},
    {"asin",
     {-0.899999976, -0.5, 0, 0.300000012, 0.699999988},
     {2.29415703, 1.15470052, 1, 1.04828489, 1.40028}},
    {"acos",
     {-0.899999976, -0.5, 0, 0.300000012, 0.699999988},
     {-2.29415703, -1.15470052, -1, -1.04828489, -1.40028}},
    {"sinh", {-2, -0.400000006, 0, 0.300000012, 1}, {3.76219583, 1.08107233, 1, 1.04533851, 1.54308057}},
    {"asinh", {-5, -0.100000001, 0, 0.126000002, 3}, {0.196116135, 0.995037138, 1, 0.992155254, 0.316227764}},
    {"atanh",
     {-0.699999988, -0.100000001, 0, 0.129999995, 0.5},
     {1.96078432, 1.01010096, 1, 1.01719058, 1.33333337}},
    {"acosh", {1.5, 2, 10}, {0.89442718, 0.577350259, 0.100503787}},
    {"mish",
     {-20, -5, -1, -0.100000001, 0, 0.100000001, 1, 5, 30, 100},
     {-3.91619217e-08, -0.0267474949, 0.0592167303, 0.535702765, 0.600000024, 0.663336813, 1.04903626,
      1.00080025, 1, 1}},
    {"softsign", {-2, -0.5, 0, 0.5, 2}, {0.111111119, 0.444444478, 1, 0.444444478, 0.111111119}},
    {"hardswish", {-4, -1, 0, 1, 2.5, 4}, {0, 0.166666657, 0.5, 0.833333373, 1.33333325, 1}},
    {"round", {-1.29999995, 0.200000003, 2.70000005}, {0, 0, 0}},
};

NdArray vec(const std::vector<double>& v) { return NdArray({int64_t(v.size())}, v); }

BOOST_AUTO_TEST_CASE(unary_float32_against_torch) {
  for (const auto& r : kUnary32) {
    Tensor y = run_op(r.name, to_tensor(vec(r.x)));
    BOOST_TEST(y.dtype() == dtypes::float32, r.name);
    // erf is a rational approximation (|error| < 1.5e-7); the rest is float32 rounding
    check_close(y, vec(r.y), Tol{2e-6, 2e-7}, r.name + " float32");
  }
}

BOOST_AUTO_TEST_CASE(unary_float64_against_torch, *tt::needs({dtypes::float64})) {
  for (const auto& r : kUnary64) {
    Tensor y = run_op(r.name, to_tensor(vec(r.x), dtypes::float64));
    BOOST_TEST(y.dtype() == dtypes::float64, r.name);
    Tol tol = r.name == "erf" ? Tol{3e-7, 1.5e-7} : Tol{1e-11, 1e-14};
    check_close(y, vec(r.y), tol, r.name + " float64");
  }
}

BOOST_AUTO_TEST_CASE(unary_gradients_against_torch) {
  for (const auto& r : kGrad32) {
    Tensor x = to_tensor(vec(r.x));
    x.requires_grad_();
    run_op(r.name, x).sum().backward();
    BOOST_TEST_REQUIRE(x.grad().has_value(), r.name);
    check_close(*x.grad(), vec(r.y), Tol{2e-5, 1e-6}, r.name + " gradient");
  }
}

// Gradients stay finite where a branch that where() does not select overflows (exp of a large
// x in elu, x^2 in asinh, the series' powers in sinh).
BOOST_AUTO_TEST_CASE(gradients_finite_beside_overflowing_branches) {
  Tensor x = to_tensor(vec({-1e30, -200, 200, 1e30}));
  for (const char* name : {"elu", "selu", "celu2", "mish", "asinh", "atan", "softsign", "erf", "hardswish"}) {
    Tensor t = x.detach();
    t.requires_grad_();
    run_op(name, t).sum().backward();
    NdArray g = to_array(*t.grad());
    for (double v : g.data) BOOST_TEST(std::isfinite(v), name << " gradient " << v);
  }
}

BOOST_AUTO_TEST_CASE(isnan_isinf) {
  Tensor x = to_tensor(vec({1, kNan, kInf, -kInf, 0, -2.5}));
  BOOST_TEST(x.isnan().dtype() == dtypes::bool_);
  check_close(x.isnan(), vec({0, 1, 0, 0, 0, 0}), kExact, "isnan");
  check_close(x.isinf(), vec({0, 0, 1, 1, 0, 0}), kExact, "isinf");
  check_close(x.isinf(true, false), vec({0, 0, 1, 0, 0, 0}), kExact, "isinf positive");
  check_close(x.isinf(false, true), vec({0, 0, 0, 1, 0, 0}), kExact, "isinf negative");
  check_close(x.isinf(false, false), vec({0, 0, 0, 0, 0, 0}), kExact, "isinf neither");
  Tensor i = to_tensor(vec({1, -3}), dtypes::int32);
  check_close(i.isnan(), vec({0, 0}), kExact, "isnan int");
  check_close(i.isinf(), vec({0, 0}), kExact, "isinf int");
}

// Float math on ints computes in float32 (as sin does); round keeps ints as they are.
BOOST_AUTO_TEST_CASE(int_inputs) {
  Tensor i = to_tensor(vec({-2, 0, 3}), dtypes::int32);
  Tensor e = i.erf();
  BOOST_TEST(e.dtype() == dtypes::float32);
  check_close(e, vec({std::erf(-2.0), 0, std::erf(3.0)}), Tol{2e-6, 2e-7}, "erf int");
  check_close(i.atan(), vec({std::atan(-2.0), 0, std::atan(3.0)}), Tol{2e-6, 2e-7}, "atan int");
  check_close(i.elu(), vec({std::expm1(-2.0), 0, 3}), Tol{2e-6, 2e-7}, "elu int");
  Tensor r = i.round();
  BOOST_TEST(r.dtype() == dtypes::int32);
  check_close(r, vec({-2, 0, 3}), kExact, "round int");
  Tensor b = to_tensor(vec({0, 1}), dtypes::bool_);
  check_close(b.cosh(), vec({1, std::cosh(1.0)}), Tol{2e-6, 2e-7}, "cosh bool");
}

BOOST_AUTO_TEST_CASE(bitwise_ops) {
  const std::vector<int32_t> a = {-8, -1, 0, 5, 12, 2147483647}, b = {3, -2, 7, 6, 10, -2147483647 - 1};
  std::vector<double> want_and, want_or, want_not;
  for (size_t k = 0; k < a.size(); ++k) {
    want_and.push_back(double(a[k] & b[k]));
    want_or.push_back(double(a[k] | b[k]));
    want_not.push_back(double(~a[k]));
  }
  Tensor ta = Tensor::from_vector<int32_t>(a, {6}), tb = Tensor::from_vector<int32_t>(b, {6});
  check_close(ta.bitwise_and(tb), vec(want_and), kExact, "and int32");
  check_close(ta.bitwise_or(tb), vec(want_or), kExact, "or int32");
  check_close(ta.bitwise_not(), vec(want_not), kExact, "not int32");
  BOOST_TEST(ta.bitwise_and(tb).dtype() == dtypes::int32);
  // broadcast (2, 3) & (3,)
  Tensor m = Tensor::from_vector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3}),
         row = Tensor::from_vector<int32_t>({3, 6, 5}, {3});
  check_close(m.bitwise_and(row), NdArray({2, 3}, {1, 2, 1, 0, 4, 4}), kExact, "and broadcast");
  check_close(m.bitwise_or(row), NdArray({2, 3}, {3, 6, 7, 7, 7, 7}), kExact, "or broadcast");
  Tensor u = to_tensor(vec({0, 200, 255, 17}), dtypes::uint8);
  check_close(u.bitwise_not(), vec({255, 55, 0, 238}), kExact, "not uint8");
  BOOST_TEST(u.bitwise_not().dtype() == dtypes::uint8);
  Tensor p = to_tensor(vec({0, 0, 1, 1}), dtypes::bool_), q = to_tensor(vec({0, 1, 0, 1}), dtypes::bool_);
  check_close(p.bitwise_and(q), vec({0, 0, 0, 1}), kExact, "and bool");
  check_close(p.bitwise_or(q), vec({0, 1, 1, 1}), kExact, "or bool");
  check_close(p.bitwise_not(), vec({1, 1, 0, 0}), kExact, "not bool");
  check_close(p.logical_xor(q), vec({0, 1, 1, 0}), kExact, "logical_xor bool");
  BOOST_TEST(p.bitwise_and(q).dtype() == dtypes::bool_);
  check_close(to_tensor(vec({0, 2.5, -1, 0})).logical_xor(to_tensor(vec({0, 0, 3, 7}), dtypes::int32)),
              vec({0, 1, 0, 1}), kExact, "logical_xor float/int");
}

BOOST_AUTO_TEST_CASE(errors) {
  Tensor f = to_tensor(vec({1, 2}));
  check_error<tg::TensorError>([&] { (void)f.bitwise_and(f); }, {"bitwise_and", "float"});
  check_error<tg::TensorError>([&] { (void)f.bitwise_or(f); }, {"bitwise_or", "float"});
  check_error<tg::TensorError>([&] { (void)f.bitwise_not(); }, {"bitwise_not", "float"});
  check_error<tg::TensorError>([&] { (void)f.celu(0); }, {"celu", "alpha"});
}

BOOST_AUTO_TEST_SUITE_END()
