// IDX files (raw and gzip) and the MNIST loader.
#include "kernel/tensor/datasets.hpp"
#include "test_util.hpp"

#include <zlib.h>

#include <algorithm>

using namespace st;
using tg::DatasetError;
namespace dtypes = tg::dtypes;

namespace {

void put_be(std::vector<std::byte>& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(std::byte(uint8_t(v >> (8 * i))));
}

// An IDX image: magic, big-endian dims, then `elems` (host values) stored big-endian.
template <class T>
std::vector<std::byte> idx(uint8_t type, std::vector<uint32_t> dims, const std::vector<T>& elems) {
  std::vector<std::byte> out{std::byte{0}, std::byte{0}, std::byte{type}, std::byte(uint8_t(dims.size()))};
  for (uint32_t d : dims) put_be(out, d, 4);
  for (const T& e : elems) {
    std::byte b[sizeof(T)];
    std::memcpy(b, &e, sizeof(T));
    std::reverse(b, b + sizeof(T));
    out.insert(out.end(), b, b + sizeof(T));
  }
  return out;
}

std::vector<std::byte> gzip(const std::vector<std::byte>& in) {
  z_stream zs{};
  BOOST_REQUIRE_EQUAL(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::vector<std::byte> out(deflateBound(&zs, uLong(in.size())) + 32);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data()));
  zs.avail_in = uInt(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = uInt(out.size());
  BOOST_REQUIRE_EQUAL(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

template <class T>
void check_round_trip(uint8_t type, tg::DType dt, std::vector<uint32_t> dims, std::vector<T> v) {
  TempDir dir;
  auto bytes = idx(type, dims, v);
  for (bool gz : {false, true}) {
    BOOST_TEST_CONTEXT("type " << int(type) << (gz ? " gzip" : " raw")) {
      auto p = dir / (gz ? "a.idx.gz" : "a.idx");
      write_file(p, gz ? gzip(bytes) : bytes);
      tg::IdxArray a = tg::read_idx(p);
      BOOST_CHECK(a.dtype == dt);
      BOOST_CHECK(a.shape == std::vector<int64_t>(dims.begin(), dims.end()));
      BOOST_CHECK(values_of<T>(a.data) == v);
    }
  }
}

struct MnistInstalled {
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    std::error_code ec;
    boost::test_tools::assertion_result r(
        fs::exists(tg::default_mnist_dir() / "train-images-idx3-ubyte.gz", ec) ||
        fs::exists(tg::default_mnist_dir() / "train-images-idx3-ubyte", ec));
    r.message() << "skipped: dataset-fashion-mnist not installed (" << tg::default_mnist_dir() << ")";
    return r;
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(idx_files)

BOOST_AUTO_TEST_CASE(round_trip_types) {
  check_round_trip<uint8_t>(0x08, dtypes::uint8, {2, 3}, {0, 1, 2, 128, 254, 255});
  check_round_trip<int8_t>(0x09, dtypes::int8, {3}, {-128, 0, 127});
  check_round_trip<int16_t>(0x0B, dtypes::int16, {2}, {-32768, 0x1234});
  check_round_trip<int32_t>(0x0C, dtypes::int32, {1, 2, 1}, {-1, 0x01020304});
  check_round_trip<float>(0x0D, dtypes::float32, {2}, {1.5f, -0.25f});
  check_round_trip<double>(0x0E, dtypes::float64, {2, 1}, {3.141592653589793, -1e300});
  check_round_trip<uint8_t>(0x08, dtypes::uint8, {0}, {});  // empty
  check_round_trip<uint8_t>(0x08, dtypes::uint8, {}, {42}); // 0-d: one element
  check_round_trip<uint8_t>(0x08, dtypes::uint8, {5, 0, 3}, {});
}

BOOST_AUTO_TEST_CASE(multi_member_gzip) {
  auto bytes = idx<uint8_t>(0x08, {4}, {1, 2, 3, 4});
  std::vector<std::byte> first(bytes.begin(), bytes.begin() + 6), second(bytes.begin() + 6, bytes.end());
  auto gz = gzip(first);
  auto gz2 = gzip(second);
  gz.insert(gz.end(), gz2.begin(), gz2.end());
  tg::IdxArray a = tg::parse_idx(gz);
  BOOST_CHECK(values_of<uint8_t>(a.data) == (std::vector<uint8_t>{1, 2, 3, 4}));
}

BOOST_AUTO_TEST_CASE(malformed) {
  TempDir dir;
  auto p = dir / "bad-idx1-ubyte";
  auto expect = [&](const std::vector<std::byte>& bytes, std::initializer_list<std::string> frags) {
    write_file(p, bytes);
    require_throws<DatasetError>([&] { tg::read_idx(p); }, frags);
  };
  require_throws<DatasetError>([&] { tg::read_idx(dir / "nothing-here"); },
                               {"nothing-here", "does not exist"});
  expect({}, {"bad-idx1-ubyte", "truncated"});
  expect({std::byte{0}, std::byte{0}, std::byte{8}}, {"bad-idx1-ubyte", "truncated"});
  expect({std::byte{1}, std::byte{0}, std::byte{8}, std::byte{1}}, {"bad-idx1-ubyte", "bad magic"});
  expect({std::byte{0}, std::byte{0}, std::byte{0x0A}, std::byte{0}},
         {"bad magic", "unknown data type 0x0A"});
  auto good = idx<uint8_t>(0x08, {2, 2}, {1, 2, 3, 4});
  expect(std::vector<std::byte>(good.begin(), good.begin() + 9),
         {"truncated", "2 dimensions need a 12-byte header"});
  expect(std::vector<std::byte>(good.begin(), good.end() - 1), {"truncated", "needs 4 data bytes", "has 3"});
  auto longer = good;
  longer.push_back(std::byte{9});
  expect(longer, {"size mismatch", "1 trailing bytes"});
  expect(idx<uint8_t>(0x08, {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, {}), {"truncated", "more than 2^64"});
  auto i32 = idx<int32_t>(0x0C, {2}, {1, 2});
  expect(std::vector<std::byte>(i32.begin(), i32.end() - 2), {"truncated"});
  // gzip: truncated, corrupt, trailing garbage, and a valid stream around a bad IDX.
  auto gz = gzip(good);
  expect(std::vector<std::byte>(gz.begin(), gz.end() - 5), {"bad-idx1-ubyte", "truncated gzip stream"});
  auto corrupt = gz;
  corrupt[12] ^= std::byte{0xFF};
  corrupt[13] ^= std::byte{0xFF};
  write_file(p, corrupt);
  BOOST_CHECK_THROW(tg::read_idx(p), DatasetError);
  auto trailing = gz;
  trailing.push_back(std::byte{0});
  expect(trailing, {"trailing data after the gzip stream"});
  expect(gzip(longer), {"size mismatch"});
  expect(gzip({}), {"truncated"});
}

// A gzip bomb: a small file whose header declares gigabytes. It is refused as soon as its header
// is inflated, with a message, whether the declared size exceeds what the file can hold or the
// memory there is; a file that fits both still loads.
BOOST_AUTO_TEST_CASE(gzip_bomb_refused_from_its_header) {
  // header of a 65535 x 65535 uint8 image (4.29 GB), followed by 2 MB of zeros: a ~2 KB gzip
  auto head = idx<uint8_t>(0x08, {0xFFFF, 0xFFFF}, {});
  std::vector<std::byte> body = head;
  body.resize(head.size() + (2u << 20));
  auto gz = gzip(body);
  BOOST_TEST_REQUIRE(gz.size() < 8192u);
  require_throws<DatasetError>([&] { tg::parse_idx(gz, "bomb.gz", uint64_t(1) << 40); },
                               {"bomb.gz", "4294836237 bytes", "gzip file can inflate to", "gzip bomb"});
  // within what the file can hold, but over the memory budget
  auto small = idx<uint8_t>(0x08, {1024, 1024}, std::vector<uint8_t>(1u << 20, 7));
  auto small_gz = gzip(small);
  require_throws<DatasetError>([&] { tg::parse_idx(small_gz, "big.gz", 1u << 19); },
                               {"big.gz", "1048588 bytes", "524288 bytes of memory", "before inflating"});
  require_throws<DatasetError>([&] { tg::parse_idx(small, "big.idx", 1u << 19); },
                               {"big.idx", "524288 bytes of memory"});
  // the same files load with enough memory
  tg::IdxArray a = tg::parse_idx(small_gz, "big.gz", 1u << 22);
  BOOST_TEST(a.data.size() == size_t(1u << 20));
  BOOST_TEST(int(a.data.back()) == 7);
  BOOST_TEST(tg::available_memory() > 0u);
}

BOOST_AUTO_TEST_CASE(load_mnist_small) {
  // A two-sample MNIST-format directory, raw files for train and gzip for test.
  TempDir dir;
  std::vector<uint8_t> px(2 * 28 * 28);
  for (size_t i = 0; i < px.size(); ++i) px[i] = uint8_t(i * 7);
  write_file(dir / "train-images-idx3-ubyte", idx(0x08, {2, 28, 28}, px));
  write_file(dir / "train-labels-idx1-ubyte", idx<uint8_t>(0x08, {2}, {3, 9}));
  write_file(dir / "t10k-images-idx3-ubyte.gz", gzip(idx(0x08, {1, 28, 28}, std::vector<uint8_t>(784, 5))));
  write_file(dir / "t10k-labels-idx1-ubyte.gz", gzip(idx<uint8_t>(0x08, {1}, {0})));
  // A stale uncompressed copy next to the .gz is ignored (.gz preferred).
  write_file(dir / "t10k-labels-idx1-ubyte", {std::byte{1}});
  tg::MnistData d = tg::load_mnist(dir.path);
  BOOST_CHECK(d.x_train.shape() == (tg::Dims{2, 1, 28, 28}));
  BOOST_CHECK(d.x_train.dtype() == dtypes::uint8);
  BOOST_CHECK(values_of<uint8_t>(d.x_train) == px);
  BOOST_CHECK(values_of<uint8_t>(d.y_train) == (std::vector<uint8_t>{3, 9}));
  BOOST_CHECK(d.x_test.shape() == (tg::Dims{1, 1, 28, 28}));
  BOOST_CHECK(d.y_test.shape() == (tg::Dims{1}));
  BOOST_CHECK(values_of<uint8_t>(d.y_test) == (std::vector<uint8_t>{0}));

  // Label count must match the images.
  write_file(dir / "train-labels-idx1-ubyte", idx<uint8_t>(0x08, {3}, {1, 2, 3}));
  require_throws<DatasetError>([&] { tg::load_mnist(dir.path); }, {"3 labels for 2 images"});
  write_file(dir / "train-labels-idx1-ubyte", idx<int32_t>(0x0C, {2}, {1, 2}));
  require_throws<DatasetError>([&] { tg::load_mnist(dir.path); }, {"expected uint8 labels"});
}

BOOST_AUTO_TEST_CASE(load_mnist_missing_files) {
  TempDir dir;
  write_file(dir / "train-images-idx3-ubyte.gz", {});
  require_throws<DatasetError>([&] { tg::load_mnist(dir.path); },
                               {dir.path.string(), "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                                "dataset-fashion-mnist", "--data DIR"});
  require_throws<DatasetError>([&] { tg::load_mnist(dir / "no-such-dir"); }, {"no-such-dir", "lacks"});
}

BOOST_AUTO_TEST_CASE(fashion_mnist_installed, *boost::unit_test::precondition(MnistInstalled{})) {
  tg::MnistData d = tg::load_mnist();
  BOOST_CHECK(d.x_train.shape() == (tg::Dims{60000, 1, 28, 28}));
  BOOST_CHECK(d.y_train.shape() == (tg::Dims{60000}));
  BOOST_CHECK(d.x_test.shape() == (tg::Dims{10000, 1, 28, 28}));
  BOOST_CHECK(d.y_test.shape() == (tg::Dims{10000}));
  BOOST_CHECK(d.x_train.dtype() == dtypes::uint8 && d.y_train.dtype() == dtypes::uint8);
  for (const tg::Tensor* y : {&d.y_train, &d.y_test}) {
    auto labels = values_of<uint8_t>(*y);
    BOOST_CHECK_LE(*std::max_element(labels.begin(), labels.end()), 9);
    std::vector<int> counts(10);
    for (uint8_t l : labels) counts[l]++;
    BOOST_CHECK(std::all_of(counts.begin(), counts.end(), [](int c) { return c > 0; }));
  }
  auto px = values_of<uint8_t>(d.x_test);
  BOOST_CHECK_EQUAL(*std::max_element(px.begin(), px.end()), 255);
}

BOOST_AUTO_TEST_SUITE_END()

// The MNIST loader refuses what the trainer cannot use: empty sets, images that are not 28x28,
// labels beyond 0..9. Accepted, each would crash `tg train` or train on garbage.
BOOST_AUTO_TEST_SUITE(mnist_validation)

namespace {
// A valid two-image MNIST directory; each test breaks one file of it.
void write_mnist(const TempDir& dir) {
  write_file(dir / "train-images-idx3-ubyte", idx(0x08, {2, 28, 28}, std::vector<uint8_t>(2 * 784, 1)));
  write_file(dir / "train-labels-idx1-ubyte", idx<uint8_t>(0x08, {2}, {0, 9}));
  write_file(dir / "t10k-images-idx3-ubyte", idx(0x08, {1, 28, 28}, std::vector<uint8_t>(784, 2)));
  write_file(dir / "t10k-labels-idx1-ubyte", idx<uint8_t>(0x08, {1}, {5}));
}
} // namespace

BOOST_AUTO_TEST_CASE(valid_directory_loads) {
  TempDir dir;
  write_mnist(dir);
  tg::MnistData d = tg::load_mnist(dir.path);
  BOOST_CHECK(values_of<uint8_t>(d.y_train) == (std::vector<uint8_t>{0, 9}));
  BOOST_CHECK(values_of<uint8_t>(d.y_test) == (std::vector<uint8_t>{5}));
}

BOOST_AUTO_TEST_CASE(empty_sets) {
  TempDir dir;
  write_mnist(dir);
  write_file(dir / "train-images-idx3-ubyte", idx<uint8_t>(0x08, {0, 28, 28}, {}));
  write_file(dir / "train-labels-idx1-ubyte", idx<uint8_t>(0x08, {0}, {}));
  require_throws<DatasetError>([&] { tg::load_mnist(dir.path); },
                               {"train-images-idx3-ubyte", "holds 0 images"});
  write_mnist(dir);
  write_file(dir / "t10k-images-idx3-ubyte", idx<uint8_t>(0x08, {0, 28, 28}, {}));
  write_file(dir / "t10k-labels-idx1-ubyte", idx<uint8_t>(0x08, {0}, {}));
  require_throws<DatasetError>([&] { tg::load_mnist(dir.path); },
                               {"t10k-images-idx3-ubyte", "holds 0 images"});
}

BOOST_AUTO_TEST_CASE(images_must_be_28x28) {
  TempDir dir;
  write_mnist(dir);
  write_file(dir / "train-images-idx3-ubyte", idx<uint8_t>(0x08, {2, 1, 1}, {7, 8}));
  require_throws<DatasetError>([&] { tg::load_mnist(dir.path); },
                               {"train-images-idx3-ubyte", "images are 1x1, MNIST images are 28x28"});
  write_file(dir / "train-images-idx3-ubyte", idx(0x08, {2, 28, 27}, std::vector<uint8_t>(2 * 28 * 27)));
  require_throws<DatasetError>([&] { tg::load_mnist(dir.path); }, {"images are 28x27"});
}

BOOST_AUTO_TEST_CASE(labels_must_be_classes) {
  TempDir dir;
  write_mnist(dir);
  write_file(dir / "train-labels-idx1-ubyte", idx<uint8_t>(0x08, {2}, {3, 255}));
  require_throws<DatasetError>([&] { tg::load_mnist(dir.path); },
                               {"train-labels-idx1-ubyte", "label 255 at index 1 is not a class 0..9"});
  write_mnist(dir);
  write_file(dir / "t10k-labels-idx1-ubyte", idx<uint8_t>(0x08, {1}, {10}));
  require_throws<DatasetError>([&] { tg::load_mnist(dir.path); },
                               {"t10k-labels-idx1-ubyte", "label 10 at index 0"});
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(idx_limits)

// A 64 MiB run of zeros gzips to ~64 KiB; behind a header declaring 4 bytes of data it must be
// refused after inflating about one chunk, not all of it.
BOOST_AUTO_TEST_CASE(gzip_bomb_stops_at_declared_size) {
  auto bytes = idx<uint8_t>(0x08, {4}, {1, 2, 3, 4});
  bytes.resize(bytes.size() + (size_t(64) << 20), std::byte{0});
  auto bomb = gzip(bytes);
  BOOST_REQUIRE_LT(bomb.size(), size_t(1) << 20);
  std::string msg;
  try {
    tg::parse_idx(bomb, "bomb.gz");
  } catch (const DatasetError& e) {
    msg = e.what();
  }
  BOOST_TEST_MESSAGE(msg);
  BOOST_CHECK(msg.find("bomb.gz") != std::string::npos);
  BOOST_CHECK(msg.find("inflates to more than the 12 bytes its IDX header declares") != std::string::npos);
  auto at = msg.find("stopped after ");
  BOOST_REQUIRE(at != std::string::npos);
  uint64_t stopped = std::stoull(msg.substr(at + 14));
  BOOST_CHECK_GT(stopped, 12u);
  BOOST_CHECK_LE(stopped, uint64_t(1) << 20); // one inflate chunk, not 64 MiB
}

// The limit counts every gzip member: a second member cannot add data the header did not declare.
BOOST_AUTO_TEST_CASE(gzip_limit_spans_members) {
  auto bytes = idx<uint8_t>(0x08, {2}, {1, 2});
  auto gz = gzip(bytes);
  auto extra = gzip(std::vector<std::byte>(100, std::byte{7}));
  gz.insert(gz.end(), extra.begin(), extra.end());
  require_throws<DatasetError>([&] { tg::parse_idx(gz, "two.gz"); }, {"two.gz", "more than the 10 bytes"});
}

BOOST_AUTO_TEST_CASE(read_idx_refuses_directories) {
  TempDir dir;
  fs::create_directory(dir / "train-images-idx3-ubyte");
  require_throws<DatasetError>([&] { tg::read_idx(dir / "train-images-idx3-ubyte"); },
                               {"train-images-idx3-ubyte", "is a directory"});
}

BOOST_AUTO_TEST_SUITE_END()
