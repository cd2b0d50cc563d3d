// The blob envelope: a round trip keeps every field; any truncation or flipped byte, another
// plugin's or another target's blob is INVALID_ARGUMENT with a message saying which.
#include <tg/sdk/blob.hpp>
#include <tg/sdk/bytes.hpp>
#include <tg/sdk/plugin.hpp>

#include <boost/test/unit_test.hpp>

#include <cstring>

namespace {

using tg::sdk::Blob;
using tg::sdk::open_blob;
using tg::sdk::PluginError;
using tg::sdk::seal_blob;

Blob sample() {
  Blob b;
  b.plugin = "cpu";
  b.target = "x86_64-pc-linux-gnu:znver3";
  b.signature = {"add_kernel", {TG_DTYPE_FLOAT32, TG_DTYPE_BFLOAT16}, {TG_DTYPE_INT64}, {}};
  for (int i = 0; i < 40; ++i) b.payload.push_back(std::byte(i * 7));
  return b;
}

// The message of the PluginError that opening `bytes` throws ("" when it opens).
std::string open_error(std::span<const std::byte> bytes, std::string_view plugin = "cpu",
                       std::string_view target = "x86_64-pc-linux-gnu:znver3") {
  try {
    open_blob(bytes, plugin, target);
    return "";
  } catch (const PluginError& e) {
    BOOST_CHECK_EQUAL(e.code(), TG_ERROR_INVALID_ARGUMENT);
    return e.what();
  }
}

// Rewrites the trailing checksum so a deliberate edit passes it.
void reseal(std::vector<std::byte>& bytes) {
  uint64_t sum = tg::sdk::fnv1a64(std::span(bytes).first(bytes.size() - 8));
  std::memcpy(bytes.data() + bytes.size() - 8, &sum, 8);
}

} // namespace

BOOST_AUTO_TEST_SUITE(sdk_blob)

BOOST_AUTO_TEST_CASE(round_trip_keeps_every_field) {
  Blob in = sample();
  auto bytes = seal_blob(in);
  BOOST_CHECK(std::memcmp(bytes.data(), "TGBL", 4) == 0);
  Blob out = open_blob(bytes, "cpu", in.target);
  BOOST_CHECK_EQUAL(out.plugin, in.plugin);
  BOOST_CHECK_EQUAL(out.target, in.target);
  BOOST_CHECK(out.signature == in.signature);
  BOOST_CHECK(out.payload == in.payload);
  // Empty everything also survives.
  Blob empty;
  Blob back = open_blob(seal_blob(empty), "", "");
  BOOST_CHECK(back.payload.empty());
  BOOST_CHECK(back.signature.buffers.empty());
}

BOOST_AUTO_TEST_CASE(every_truncation_is_refused) {
  auto bytes = seal_blob(sample());
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    std::string message = open_error(std::span(bytes).first(cut));
    BOOST_TEST_CONTEXT("cut at " << cut) { BOOST_CHECK(!message.empty()); }
  }
  // With data appended, too.
  auto longer = bytes;
  longer.push_back(std::byte{0});
  BOOST_CHECK(!open_error(longer).empty());
}

BOOST_AUTO_TEST_CASE(every_flipped_byte_is_refused) {
  auto bytes = seal_blob(sample());
  for (size_t at = 0; at < bytes.size(); ++at) {
    for (std::byte mask : {std::byte{0x01}, std::byte{0x80}}) {
      auto corrupt = bytes;
      corrupt[at] ^= mask;
      std::string message = open_error(corrupt);
      BOOST_TEST_CONTEXT("byte " << at) { BOOST_CHECK(!message.empty()); }
    }
  }
  auto corrupt = bytes;
  corrupt[bytes.size() / 2] ^= std::byte{0x10};
  BOOST_CHECK(open_error(corrupt).find("checksum") != std::string::npos);
  corrupt = bytes;
  corrupt[0] = std::byte{'X'};
  BOOST_CHECK(open_error(corrupt).find("bad magic") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(other_plugin_target_or_version_is_named) {
  auto bytes = seal_blob(sample());
  BOOST_CHECK_EQUAL(open_error(bytes, "cuda"),
                    "blob was made by the 'cpu' plugin, this is the 'cuda' plugin");
  BOOST_CHECK_EQUAL(open_error(bytes, "cpu", "aarch64-unknown-linux-gnu:generic"),
                    "blob was compiled for x86_64-pc-linux-gnu:znver3, this device is "
                    "aarch64-unknown-linux-gnu:generic");
  auto future = bytes;
  uint32_t version = tg::sdk::kBlobEnvelopeVersionAligned + 1;
  std::memcpy(future.data() + 4, &version, 4);
  reseal(future);
  BOOST_CHECK(open_error(future).find("envelope version " + std::to_string(version)) != std::string::npos);
}

BOOST_AUTO_TEST_CASE(intact_but_malformed_fields_are_refused) {
  // A checksum that matches does not make an unknown dtype or a wrong payload size acceptable.
  Blob b = sample();
  b.signature.scalars = {tg_dtype(TG_DTYPE_COUNT)};
  auto bytes = seal_blob(b);
  BOOST_CHECK(open_error(bytes).find("unknown dtype") != std::string::npos);
  auto sized = seal_blob(sample());
  size_t payload_size_at = sized.size() - 8 - 40 - 8;
  uint64_t wrong = 41;
  std::memcpy(sized.data() + payload_size_at, &wrong, 8);
  reseal(sized);
  BOOST_CHECK(open_error(sized).find("payload size 41") != std::string::npos);
  // A huge string length is a truncation, not an allocation.
  auto huge = seal_blob(sample());
  uint32_t length = 0xffffffffu;
  std::memcpy(huge.data() + 8, &length, 4);
  reseal(huge);
  BOOST_CHECK(open_error(huge).find("truncated") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

// A signature whose buffers assume more than their element's alignment travels as envelope 2 and
// comes back intact; one without keeps envelope 1 (byte for byte as before).
BOOST_AUTO_TEST_CASE(alignments_round_trip_as_envelope_2) {
  Blob b = sample();
  b.signature.alignments = {16, 2};
  auto bytes = seal_blob(b);
  uint32_t version = 0;
  std::memcpy(&version, bytes.data() + 4, 4);
  BOOST_CHECK_EQUAL(version, tg::sdk::kBlobEnvelopeVersionAligned);
  Blob back = open_blob(bytes, b.plugin, b.target);
  BOOST_CHECK(back.signature == b.signature);
  b.signature.alignments.clear();
  bytes = seal_blob(b);
  std::memcpy(&version, bytes.data() + 4, 4);
  BOOST_CHECK_EQUAL(version, tg::sdk::kBlobEnvelopeVersion);
}
