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
