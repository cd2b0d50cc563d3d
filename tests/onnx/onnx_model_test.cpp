// tg::onnx::Model on models built here with ONNX's protobuf classes: values, dynamic dims, fusion,
// TinyJit, and every kind of bad input (each a typed error that names what and where).
#include "kernel/engine/launch_counter.hpp"
#include "kernel/engine/realized_cache.hpp"
#include "kernel/onnx/onnx.hpp"
#include "kernel/tensor/jit.hpp"

#include <onnx/onnx_pb.h>

#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;
using tg::Dims;
using tg::Tensor;
using tg::onnx::Model;
using tg::onnx::OnnxError;
using tg::onnx::OnnxUnsupportedError;

namespace onnx_model_test {

void add_input(::onnx::GraphProto& g, const std::string& name, int elem,
               std::vector<std::variant<int64_t, std::string>> dims) {
  auto* v = g.add_input();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem);
  auto* shape = t->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (auto n = std::get_if<int64_t>(&d))
      dim->set_dim_value(*n);
    else
      dim->set_dim_param(std::get<std::string>(d));
  }
}

void add_output(::onnx::GraphProto& g, const std::string& name) { g.add_output()->set_name(name); }

::onnx::NodeProto* add_node(::onnx::GraphProto& g, const std::string& op, std::vector<std::string> in,
                            std::vector<std::string> out, const std::string& name = "") {
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}

::onnx::ModelProto model_with(int64_t opset = 13) {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

std::string bytes_of(const ::onnx::ModelProto& m) {
  std::string s;
  BOOST_REQUIRE(m.SerializeToString(&s));
  return s;
}

// y = relu(x @ w + b): w, b initializers; x (N, 3) with N named
::onnx::ModelProto linear_relu() {
  auto m = model_with();
  auto& g = *m.mutable_graph();
  add_input(g, "x", ::onnx::TensorProto::FLOAT, {std::string("N"), int64_t(3)});
  auto* w = g.add_initializer();
  w->set_name("w");
  w->set_data_type(::onnx::TensorProto::FLOAT);
  w->add_dims(3);
  w->add_dims(2);
  for (float v : {1.f, -1.f, 2.f, 0.5f, -3.f, 1.f}) w->add_float_data(v);
  auto* b = g.add_initializer();
  b->set_name("b");
  b->set_data_type(::onnx::TensorProto::FLOAT);
  b->add_dims(2);
  for (float v : {0.5f, -0.5f}) b->add_float_data(v);
  add_node(g, "MatMul", {"x", "w"}, {"xw"});
  add_node(g, "Add", {"xw", "b"}, {"z"});
  add_node(g, "Relu", {"z"}, {"y"});
  add_output(g, "y");
  return m;
}

// For tests that look at the graph a run builds: no replays.
const tg::onnx::ModelOptions eager{.device = "", .replay = false};

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("tg_onnx_test_" + std::to_string(::getpid()) + "_" + std::to_string(std::rand()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

template <class E> void check_throws(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    BOOST_ERROR("no exception");
  } catch (const E& e) {
    std::string what = e.what();
    for (const auto& p : parts) BOOST_TEST(what.find(p) != std::string::npos, "'" << p << "' in: " << what);
  }
}

} // namespace onnx_model_test

using namespace onnx_model_test;

BOOST_AUTO_TEST_SUITE(onnx_model)

BOOST_AUTO_TEST_CASE(runs_with_named_dims_and_fuses) {
  Model model = Model::from_bytes(bytes_of(linear_relu()));
  BOOST_TEST(model.inputs().size() == 1u);
  BOOST_TEST(model.opset() == 13);
  // w = [[1, -1], [2, .5], [-3, 1]], b = [.5, -.5], x = [[1, 2, 3], [-1, 0, 1]]:
  // xw = [[1+4-9, -1+1+3], [-1-3, 1+1]] = [[-4, 3], [-4, 2]], + b = [[-3.5, 2.5], [-3.5, 1.5]]
  Tensor x = Tensor::from_vector<float>({1, 2, 3, -1, 0, 1}, {2, 3});
  Tensor y = model.run({{"x", x}}).at("y");
  BOOST_TEST(y.schedule().size() <= 2u); // the matmul, bias and relu fuse
  BOOST_TEST(y.to_vector<float>() == (std::vector<float>{0, 2.5f, 0, 1.5f}),
             boost::test_tools::per_element());
  // another N binds again: [1, 1, 1] @ w + b = [0 + .5, .5 - .5]
  Tensor x1 = Tensor::from_vector<float>({1, 1, 1}, {1, 3});
  BOOST_TEST(model.run({{"x", x1}}).at("y").to_vector<float>() == (std::vector<float>{0.5f, 0.0f}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(runs_under_tinyjit) {
  Model model = Model::from_bytes(bytes_of(linear_relu()));
  tg::TinyJit jit([&](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{model.run({{"x", in[0]}}).at("y")};
  });
  for (int i = 0; i < 4; ++i) {
    float s = float(i + 1);
    Tensor x = Tensor::from_vector<float>({s, 0, 0, 0, s, 0}, {2, 3});
    // row 0: s * w[0] + b = [s + .5, -s - .5]; row 1: s * w[1] + b = [2s + .5, .5s - .5]
    std::vector<float> want{s + 0.5f, 0, 2 * s + 0.5f, std::max(0.5f * s - 0.5f, 0.f)};
    BOOST_TEST(jit({x})[0].to_vector<float>() == want, boost::test_tools::per_element());
  }
}

// Shape arithmetic as a PyTorch export emits it (Shape -> Gather -> Div -> Mul into a Slice's
// bounds) folds to host values: after the first run, a run launches only the kernel of the
// slice itself, no kernel and no read back for the bounds; the values stay right when a named
// dim changes.
BOOST_AUTO_TEST_CASE(shape_arithmetic_folds_on_the_host) {
  auto m = model_with();
  auto& g = *m.mutable_graph();
  add_input(g, "x", ::onnx::TensorProto::FLOAT, {int64_t(2), std::string("W")});
  auto ints = [&](const std::string& name, int64_t v) {
    auto* t = g.add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::INT64);
    t->add_dims(1);
    t->add_int64_data(v);
  };
  ints("one", 1);
  ints("three", 3);
  ints("two", 2);
  add_node(g, "Shape", {"x"}, {"shape"});
  add_node(g, "Gather", {"shape", "one"}, {"w"}); // [W]
  add_node(g, "Div", {"w", "three"}, {"start"});  // [W / 3]
  add_node(g, "Mul", {"start", "two"}, {"end"});  // [2W / 3]
  add_node(g, "Slice", {"x", "start", "end", "one"}, {"y"});
  add_output(g, "y");
  Model model = Model::from_bytes(bytes_of(m), {}, eager);
  for (int64_t width : {6, 9}) {
    std::vector<float> xs;
    for (int64_t i = 0; i < 2 * width; ++i) xs.push_back(float(i));
    Tensor x = Tensor::from_vector<float>(xs, {2, width});
    std::vector<float> want;
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t c = width / 3; c < 2 * width / 3; ++c) want.push_back(float(r * width + c));
    BOOST_TEST(model.run({{"x", x}}).at("y").to_vector<float>() == want, boost::test_tools::per_element());
    tg::LaunchCounter counter;
    Tensor y = model.run({{"x", x}}).at("y");
    BOOST_TEST(y.to_vector<float>() == want, boost::test_tools::per_element());
    BOOST_TEST(counter.kernels() <= 1u, "width " << width << ": " << counter.kernels() << " kernels");
  }
}

// Gemm with transB = 1 and B an initializer (a Linear layer's weight): B^T is made in the first
// run and kept, so a later run launches the product's kernel alone. Values vs hand-computed.
BOOST_AUTO_TEST_CASE(gemm_keeps_a_constant_transposed_b) {
  auto m = model_with();
  auto& g = *m.mutable_graph();
  add_input(g, "x", ::onnx::TensorProto::FLOAT, {int64_t(2), int64_t(3)});
  auto* w = g.add_initializer(); // (out 2, in 3)
  w->set_name("w");
  w->set_data_type(::onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->add_dims(3);
  for (float v : {1.f, 2.f, 3.f, -1.f, 0.f, 1.f}) w->add_float_data(v);
  add_node(g, "Gemm", {"x", "w"}, {"y"})->add_attribute()->CopyFrom([] {
    ::onnx::AttributeProto a;
    a.set_name("transB");
    a.set_type(::onnx::AttributeProto::INT);
    a.set_i(1);
    return a;
  }());
  add_output(g, "y");
  Model model = Model::from_bytes(bytes_of(m), {}, eager);
  // x = [[1, 0, 2], [0, 1, -1]]: x @ w^T = [[1 + 6, -1 + 2], [2 - 3, -1]] = [[7, 1], [-1, -1]]
  Tensor x = Tensor::from_vector<float>({1, 0, 2, 0, 1, -1}, {2, 3});
  const std::vector<float> want{7, 1, -1, -1};
  BOOST_TEST(model.run({{"x", x}}).at("y").to_vector<float>() == want, boost::test_tools::per_element());
  tg::LaunchCounter counter;
  BOOST_TEST(model.run({{"x", x}}).at("y").to_vector<float>() == want, boost::test_tools::per_element());
  BOOST_TEST(counter.kernels() == 1u, counter.kernels() << " kernels");
}

// One-element Constants (Clip's bounds, Pow's exponent) become constants inside the kernel: the
// fused kernel reads only x and the three-element Constant, which is uploaded once per model
// (the same buffer in every run); x^2 is a product, not exp2(2 log2 |x|). Values vs hand-computed.
BOOST_AUTO_TEST_CASE(scalar_constants_fold_into_kernels) {
  auto m = model_with();
  auto& g = *m.mutable_graph();
  add_input(g, "x", ::onnx::TensorProto::FLOAT, {int64_t(2), int64_t(3)});
  auto constant = [&](const std::string& name, std::vector<float> values) {
    auto* n = add_node(g, "Constant", {}, {name});
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(::onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(::onnx::TensorProto::FLOAT);
    if (values.size() > 1) t->add_dims(int64_t(values.size()));
    for (float v : values) t->add_float_data(v);
  };
  constant("lo", {0});
  constant("hi", {6});
  constant("two", {2});
  constant("bias", {1, 2, 3});
  add_node(g, "Clip", {"x", "lo", "hi"}, {"c"});
  add_node(g, "Pow", {"c", "two"}, {"p"});
  add_node(g, "Add", {"p", "bias"}, {"y"});
  add_output(g, "y");
  Model model = Model::from_bytes(bytes_of(m), {}, eager);
  // x = [[-1, 2, 7], [3, 0.5, 6]]: clip [[0, 2, 6], [3, .5, 6]], squared + [1, 2, 3]
  Tensor x = Tensor::from_vector<float>({-1, 2, 7, 3, 0.5f, 6}, {2, 3}).realize();
  const std::vector<float> want{1, 6, 39, 10, 2.25f, 39};
  std::vector<const tg::UOp*> bias; // the input buffer that is not x's, each run
  for (int run = 0; run < 2; ++run) {
    Tensor y = model.run({{"x", x}}).at("y");
    auto items = y.schedule();
    BOOST_REQUIRE(items.size() == 1u);
    BOOST_TEST(items[0].buffers.size() == 3u, "output, x and the bias: " << items[0].buffers.size());
    const std::string ast = items[0].ast->str();
    BOOST_TEST(ast.find("EXP2") == std::string::npos, ast);
    for (size_t i = 1; i < items[0].buffers.size(); ++i)
      if (items[0].buffers[i] != tg::stored_buffer(x.uop())) bias.push_back(items[0].buffers[i].get());
    BOOST_TEST(y.to_vector<float>() == want, boost::test_tools::per_element());
  }
  BOOST_REQUIRE(bias.size() == 2u);
  BOOST_TEST(bias[0] == bias[1], "the three-element Constant is uploaded once");
}

// From the third run with the same input shapes on, run() replays the captured kernels: each
// run's values are its own inputs' (hand-computed), a replay's output does not share storage
// with an earlier one's, and another N (another signature) runs eagerly and then replays too.
BOOST_AUTO_TEST_CASE(replays_the_kernels_of_earlier_runs) {
  Model model = Model::from_bytes(bytes_of(linear_relu()));
  // x = [[s, 0, 0], [0, s, 0]]: [s * w[0] + b, s * w[1] + b] = [[s + .5, -s - .5], [2s + .5, .5s - .5]]
  auto want = [](float s) {
    return std::vector<float>{s + 0.5f, 0, 2 * s + 0.5f, std::max(0.5f * s - 0.5f, 0.f)};
  };
  std::vector<Tensor> kept;
  for (int i = 0; i < 5; ++i) {
    float s = float(i + 1);
    Tensor x = Tensor::from_vector<float>({s, 0, 0, 0, s, 0}, {2, 3});
    kept.push_back(model.run({{"x", x}}).at("y"));
    BOOST_TEST(kept.back().to_vector<float>() == want(s), boost::test_tools::per_element());
  }
  BOOST_TEST(model.replays() == 3);
  for (int i = 0; i < 5; ++i) // the earlier outputs still hold their own values
    BOOST_TEST(kept[size_t(i)].to_vector<float>() == want(float(i + 1)), boost::test_tools::per_element());
  // N = 1: [1, 1, 1] @ w + b = [0.5, 0]; its third run replays
  for (int i = 0; i < 3; ++i)
    BOOST_TEST(model.run({{"x", Tensor::from_vector<float>({1, 1, 1}, {1, 3})}}).at("y").to_vector<float>() ==
                   (std::vector<float>{0.5f, 0.0f}),
               boost::test_tools::per_element());
  BOOST_TEST(model.replays() == 4);
  Tensor x = Tensor::from_vector<float>({7, 0, 0, 0, 7, 0}, {2, 3});
  BOOST_TEST(model.run({{"x", x}}).at("y").to_vector<float>() == want(7), boost::test_tools::per_element());
  BOOST_TEST(model.replays() == 5);
  // replay off: every run builds its graph (lazy outputs)
  Model plain = Model::from_bytes(bytes_of(linear_relu()), {}, eager);
  for (int i = 0; i < 4; ++i) BOOST_TEST(!plain.run({{"x", x}}).at("y").schedule().empty());
  BOOST_TEST(plain.replays() == 0);
}

// A run whose graph depends on an input's values (a Reshape to a shape given as an input, read
// back on the host; NonZero, whose output shape is a count) of x + x never replays: every run is right
// for its own values although the inputs' shapes do not change.
BOOST_AUTO_TEST_CASE(value_dependent_runs_do_not_replay) {
  auto m = model_with();
  auto& g = *m.mutable_graph();
  add_input(g, "x", ::onnx::TensorProto::FLOAT, {int64_t(6)});
  add_input(g, "s", ::onnx::TensorProto::INT64, {int64_t(2)});
  add_node(g, "Add", {"x", "x"}, {"d"});
  add_node(g, "Reshape", {"d", "s"}, {"r"});
  add_node(g, "NonZero", {"d"}, {"n"});
  add_node(g, "Add", {"n", "n"}, {"nz"}); // computed by a kernel, so the run can be captured
  add_output(g, "r");
  add_output(g, "nz");
  Model model = Model::from_bytes(bytes_of(m));
  for (int i = 0; i < 5; ++i) {
    // x = [0, 1, 0, 3, ...]: i + 1 leading zeros at most; shape (2, 3) or (3, 2) in turn
    std::vector<float> xs{1, 2, 3, 4, 5, 6};
    for (int j = 0; j <= i && j < 6; ++j) xs[size_t(j)] = 0;
    Dims shape = i % 2 ? Dims{3, 2} : Dims{2, 3};
    auto out = model.run({{"x", Tensor::from_vector<float>(xs, {6})},
                          {"s", Tensor::from_vector<int64_t>({shape[0], shape[1]}, {2})}});
    BOOST_TEST(out.at("r").shape() == shape);
    std::vector<float> doubled;
    for (float v : xs) doubled.push_back(2 * v);
    BOOST_TEST(out.at("r").to_vector<float>() == doubled, boost::test_tools::per_element());
    std::vector<int64_t> nz;
    for (int64_t j = 0; j < 6; ++j)
      if (xs[size_t(j)] != 0) nz.push_back(2 * j);
    BOOST_TEST(out.at("nz").shape() == (Dims{1, int64_t(nz.size())}));
    BOOST_TEST(out.at("nz").to_vector<int64_t>() == nz, boost::test_tools::per_element());
  }
  BOOST_TEST(model.replays() == 0);
}

// An output that no kernel computes (the input itself) cannot be captured: the runs stay eager
// and right.
BOOST_AUTO_TEST_CASE(an_output_no_kernel_computes_runs_eagerly) {
  auto m = model_with();
  auto& g = *m.mutable_graph();
  add_input(g, "x", ::onnx::TensorProto::FLOAT, {int64_t(3)});
  add_node(g, "Identity", {"x"}, {"y"});
  add_output(g, "y");
  Model model = Model::from_bytes(bytes_of(m));
  for (int i = 0; i < 4; ++i) {
    std::vector<float> xs{float(i), 2, 3};
    BOOST_TEST(model.run({{"x", Tensor::from_vector<float>(xs, {3})}}).at("y").to_vector<float>() == xs,
               boost::test_tools::per_element());
  }
  BOOST_TEST(model.replays() == 0);
}

BOOST_AUTO_TEST_CASE(input_checks) {
  Model model = Model::from_bytes(bytes_of(linear_relu()));
  check_throws<OnnxError>(
      [&] {
        model.run({{"x", Tensor::zeros({2, 4})}});
      },
      {"input 'x'", "(N, 3)", "(2, 4)"});
  check_throws<OnnxError>(
      [&] {
        model.run({{"x", Tensor::zeros({2, 3}, tg::dtypes::int32)}});
      },
      {"input 'x'", "FLOAT"});
  check_throws<OnnxError>([&] { model.run({}); }, {"input 'x' is not given"});
  check_throws<OnnxError>(
      [&] {
        model.run({{"x", Tensor::zeros({1, 3})}, {"q", Tensor::zeros({1})}});
      },
      {"no input named 'q'"});
}

BOOST_AUTO_TEST_CASE(named_dims_must_agree) {
  auto m = model_with();
  auto& g = *m.mutable_graph();
  add_input(g, "a", ::onnx::TensorProto::FLOAT, {std::string("N")});
  add_input(g, "b", ::onnx::TensorProto::FLOAT, {std::string("N")});
  add_node(g, "Add", {"a", "b"}, {"c"});
  add_output(g, "c");
  Model model = Model::from_bytes(bytes_of(m));
  check_throws<OnnxError>(
      [&] {
        model.run({{"a", Tensor::zeros({2})}, {"b", Tensor::zeros({3})}});
      },
      {"dim 'N'", "3", "2"});
}

BOOST_AUTO_TEST_CASE(garbage_and_truncated_files) {
  check_throws<OnnxError>([] { Model::from_bytes("this is not a protobuf at all"); },
                          {"not a valid ONNX model"});
  std::string good = bytes_of(linear_relu());
  for (size_t cut : {size_t(1), good.size() / 3, good.size() / 2, good.size() - 3}) {
    try { // a cut may land between fields and still parse; it must never crash or run
      Model m = Model::from_bytes(good.substr(0, cut));
      m.run({{"x", Tensor::zeros({1, 3})}}).at("y").realize();
    } catch (const OnnxError&) {
    } catch (const tg::Error&) {
    }
  }
  check_throws<OnnxError>([] { Model::load("/nonexistent/model.onnx"); },
                          {"/nonexistent/model.onnx", "cannot open"});
}

BOOST_AUTO_TEST_CASE(unsupported_op_names_node_op_and_opset) {
  auto m = model_with(11);
  auto& g = *m.mutable_graph();
  add_input(g, "x", ::onnx::TensorProto::FLOAT, {int64_t(2)});
  add_node(g, "FancyNewOp", {"x"}, {"y"}, "the_node");
  add_output(g, "y");
  Model model = Model::from_bytes(bytes_of(m));
  check_throws<OnnxUnsupportedError>(
      [&] {
        model.run({{"x", Tensor::zeros({2})}});
      },
      {"the_node", "FancyNewOp", "opset 11", "not supported"});
}

BOOST_AUTO_TEST_CASE(opset_newer_than_supported) {
  auto m = linear_relu();
  m.mutable_opset_import(0)->set_version(tg::onnx::kMaxOpset + 1);
  check_throws<OnnxUnsupportedError>([&] { Model::from_bytes(bytes_of(m)); },
                                     {"opset " + std::to_string(tg::onnx::kMaxOpset + 1), "newer"});
}

BOOST_AUTO_TEST_CASE(dims_that_overflow) {
  auto m = linear_relu();
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("huge");
  t->set_data_type(::onnx::TensorProto::FLOAT);
  t->add_dims(int64_t(1) << 40);
  t->add_dims(int64_t(1) << 40);
  check_throws<OnnxError>([&] { Model::from_bytes(bytes_of(m)); }, {"huge", "overflow"});
}

BOOST_AUTO_TEST_CASE(external_data) {
  TempDir dir;
  auto m = linear_relu();
  auto* w = m.mutable_graph()->mutable_initializer(0);
  w->clear_float_data();
  w->set_data_location(::onnx::TensorProto::EXTERNAL);
  auto set_location = [&](const std::string& loc) {
    w->clear_external_data();
    auto* kv = w->add_external_data();
    kv->set_key("location");
    kv->set_value(loc);
    auto* off = w->add_external_data();
    off->set_key("offset");
    off->set_value("4");
  };
  { // 4 bytes of padding, then the weight
    std::ofstream f(dir.path / "weights.bin", std::ios::binary);
    float vals[7] = {99, 1, -1, 2, 0.5f, -3, 1};
    f.write(reinterpret_cast<const char*>(vals), sizeof(vals));
  }
  set_location("weights.bin");
  {
    std::ofstream f(dir.path / "model.onnx", std::ios::binary);
    f << bytes_of(m);
  }
  Model model = Model::load(dir.path / "model.onnx");
  Tensor x = Tensor::from_vector<float>({1, 2, 3, -1, 0, 1}, {2, 3});
  BOOST_TEST(model.run({{"x", x}}).at("y").to_vector<float>() == (std::vector<float>{0, 2.5f, 0, 1.5f}),
             boost::test_tools::per_element());
  for (const std::string& bad :
       {std::string("../weights.bin"), std::string("/etc/passwd"), std::string("a/../../x")}) {
    set_location(bad);
    std::ofstream(dir.path / "model.onnx", std::ios::binary) << bytes_of(m);
    check_throws<OnnxError>([&] { Model::load(dir.path / "model.onnx"); }, {"external data location"});
  }
  set_location("weights.bin");
  fs::resize_file(dir.path / "weights.bin", 12); // shorter than offset + 24 bytes
  std::ofstream(dir.path / "model.onnx", std::ios::binary) << bytes_of(m);
  check_throws<OnnxError>([&] { Model::load(dir.path / "model.onnx"); }, {"weights.bin", "12 bytes"});
}

BOOST_AUTO_TEST_CASE(wrong_initializer_size) {
  auto m = linear_relu();
  m.mutable_graph()->mutable_initializer(0)->add_float_data(7); // 7 values for (3, 2)
  check_throws<OnnxError>([&] { Model::from_bytes(bytes_of(m)); }, {"'w'", "6 elements", "7"});
}

BOOST_AUTO_TEST_CASE(a_node_reading_nothing) {
  auto m = model_with();
  auto& g = *m.mutable_graph();
  add_input(g, "x", ::onnx::TensorProto::FLOAT, {int64_t(2)});
  add_node(g, "Relu", {"nowhere"}, {"y"}, "lost");
  add_output(g, "y");
  Model model = Model::from_bytes(bytes_of(m));
  check_throws<OnnxError>([&] { model.run({{"x", Tensor::zeros({2})}}); }, {"lost", "'nowhere'"});
}

BOOST_AUTO_TEST_CASE(a_bad_shape_inside_names_the_node) {
  auto m = model_with();
  auto& g = *m.mutable_graph();
  add_input(g, "a", ::onnx::TensorProto::FLOAT, {int64_t(2), int64_t(3)});
  add_input(g, "b", ::onnx::TensorProto::FLOAT, {int64_t(4), int64_t(5)});
  add_node(g, "MatMul", {"a", "b"}, {"c"}, "mm");
  add_output(g, "c");
  Model model = Model::from_bytes(bytes_of(m));
  check_throws<OnnxError>(
      [&] {
        model.run({{"a", Tensor::zeros({2, 3})}, {"b", Tensor::zeros({4, 5})}});
      },
      {"'mm'", "MatMul"});
}

BOOST_AUTO_TEST_SUITE_END()
