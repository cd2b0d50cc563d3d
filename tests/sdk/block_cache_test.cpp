// sdk::BlockCache, the caching allocator's free lists of the GPU plugins (amd, cuda): rounding,
// exact-size reuse, and drain handing every block back once.
#include <tg/sdk/block_cache.hpp>

#include <boost/test/unit_test.hpp>

#include <algorithm>

using Cache = tg::sdk::BlockCache<int>;

BOOST_AUTO_TEST_CASE(block_cache_rounds_small_sizes_to_512_and_large_to_2_mib) {
  BOOST_TEST(Cache::rounded(0) == 512u);
  BOOST_TEST(Cache::rounded(1) == 512u);
  BOOST_TEST(Cache::rounded(512) == 512u);
  BOOST_TEST(Cache::rounded(513) == 1024u);
  BOOST_TEST(Cache::rounded(1u << 20) == (1u << 20));
  BOOST_TEST(Cache::rounded((1u << 20) + 1) == (2u << 20));
  BOOST_TEST(Cache::rounded((2u << 20) + 1) == (4u << 20));
}

BOOST_AUTO_TEST_CASE(block_cache_reuses_only_the_same_rounded_size) {
  Cache cache;
  BOOST_TEST(!cache.take(512).has_value());
  cache.give(512, 1);
  cache.give(1024, 2);
  cache.give(512, 3);
  BOOST_TEST(!cache.take(1536).has_value());
  const int a = cache.take(512).value(), b = cache.take(512).value();
  BOOST_TEST(std::min(a, b) == 1);
  BOOST_TEST(std::max(a, b) == 3);
  BOOST_TEST(!cache.take(512).has_value());
  cache.give(4096, 4);
  std::vector<int> drained = cache.drain();
  std::sort(drained.begin(), drained.end());
  BOOST_TEST(drained == (std::vector<int>{2, 4}), boost::test_tools::per_element());
  BOOST_TEST(cache.empty());
  BOOST_TEST(cache.drain().empty());
}

BOOST_AUTO_TEST_CASE(aligned_block_over_allocates_only_above_the_natural_alignment) {
  using tg::sdk::AlignedBlock;
  // at or below the allocator's own 256 bytes: the block is the buffer
  BOOST_TEST(AlignedBlock::block_size(1000, 0, 256) == 1000u);
  BOOST_TEST(AlignedBlock::block_size(1000, 256, 256) == 1000u);
  BOOST_TEST(AlignedBlock::start(0x10100, 256, 256) == 0x10100u);
  // above: room for the slack, and the first 4096-aligned address inside the block
  BOOST_TEST(AlignedBlock::block_size(1000, 4096, 256) == 5096u);
  BOOST_TEST(AlignedBlock::start(0x10100, 4096, 256) == 0x11000u);
  BOOST_TEST(AlignedBlock::start(0x11000, 4096, 256) == 0x11000u); // already aligned: no move
  // the buffer always fits: start + size <= block + block_size
  for (uint64_t block = 0x10000; block < 0x12000; block += 256)
    BOOST_TEST(AlignedBlock::start(block, 4096, 256) + 1000 <=
               block + AlignedBlock::block_size(1000, 4096, 256));
}
