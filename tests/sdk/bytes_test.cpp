// The SDK's little-endian ByteReader/ByteWriter: round trips, bounds checks that name the field.
#include <boost/test/unit_test.hpp>

#include <tg/sdk/bytes.hpp>

#include <string>

using tg::sdk::ByteReader;
using tg::sdk::ByteWriter;
using tg::sdk::TruncatedError;

BOOST_AUTO_TEST_CASE(writer_lays_out_little_endian_fields) {
  ByteWriter w;
  w.put<uint16_t>(0x0102);
  w.put<uint32_t>(0x03040506);
  w.put_bytes("ab", 2);
  BOOST_TEST_REQUIRE(w.out.size() == 8u);
  const unsigned char expected[] = {0x02, 0x01, 0x06, 0x05, 0x04, 0x03, 'a', 'b'};
  for (size_t i = 0; i < 8; ++i) BOOST_TEST(std::to_integer<unsigned>(w.out[i]) == expected[i]);
}

BOOST_AUTO_TEST_CASE(reader_round_trips_and_tracks_position) {
  ByteWriter w;
  w.put<int64_t>(-5);
  w.put<double>(2.5);
  w.put_bytes("xyz", 3);
  ByteReader r(w.out);
  BOOST_TEST(r.get<int64_t>("a") == -5);
  BOOST_TEST(r.get<double>("b") == 2.5);
  BOOST_TEST(r.position() == 16u);
  BOOST_TEST(r.str(3, "c") == "xyz");
  BOOST_TEST(r.remaining() == 0u);
}

BOOST_AUTO_TEST_CASE(reading_past_the_end_names_the_field_and_offset) {
  ByteWriter w;
  w.put<uint32_t>(7);
  w.put<uint8_t>(1);
  ByteReader r(w.out);
  BOOST_TEST(r.get<uint32_t>("count") == 7u);
  try {
    (void)r.get<uint32_t>("object size");
    BOOST_FAIL("a 4-byte read from 1 byte must throw");
  } catch (const TruncatedError& e) {
    BOOST_TEST(std::string(e.what()) == "truncated while reading the object size at byte 4 of 5");
  }
  BOOST_TEST(r.position() == 4u); // a failed read consumes nothing
  BOOST_CHECK_THROW((void)r.bytes(2, "tail"), TruncatedError);
  BOOST_TEST(r.get<uint8_t>("last") == 1u);
}
