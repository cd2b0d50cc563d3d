// compile() on the CPU: LLVM IR as the rendered source, vectorized output, what the cache key names.
// Concurrency, result struct sizes and key stability are `tg conform`'s compile/* cases.
#include "plugin_fixture.hpp"

#include <thread>

using namespace tgtest;
using tg::sdk::KernelBuilder;
using Ref = KernelBuilder::Ref;

namespace {

KernelBuilder add_kernel() {
  KernelBuilder k("vector_add");
  Ref a = k.global(0, TG_DTYPE_FLOAT32), b = k.global(1, TG_DTYPE_FLOAT32), c = k.global(2, TG_DTYPE_FLOAT32);
  Ref i = k.add(k.mul(k.group_id(0), k.i32(256)), k.local_id(0));
  Ref ok = k.cmplt(i, k.var(0, TG_DTYPE_INT32));
  Ref in_bounds = k.if_(ok);
  k.store(k.index(c, i), k.add(k.load(k.index(a, i)), k.load(k.index(b, i))));
  k.end_if(in_bounds);
  return k;
}

std::string cache_key(const char* target) {
  size_t length = 0;
  std::vector<char> buf(4096);
  check(api().compile_cache_key(target, buf.data(), buf.size(), &length), "compile_cache_key");
  BOOST_REQUIRE_EQUAL(std::strlen(buf.data()), length);
  return std::string(buf.data(), length);
}

} // namespace

BOOST_AUTO_TEST_SUITE(cpu_compile)

BOOST_AUTO_TEST_CASE(want_source_returns_llvm_ir) {
  auto k = add_kernel();
  Compiled c = compile(k.serialize(), TG_COMPILE_WANT_SOURCE);
  BOOST_CHECK(c.source.find("vector_add") != std::string::npos);
  BOOST_CHECK(c.source.find("define") != std::string::npos);
  BOOST_CHECK(c.source.find("fadd") != std::string::npos);
  BOOST_CHECK(!c.log.empty());
  Compiled plain = compile(k.serialize());
  BOOST_CHECK(plain.source.empty()); // not requested
  BOOST_CHECK(plain.binary == c.binary);
}

BOOST_AUTO_TEST_CASE(optimized_source_is_vectorized) {
  auto k = add_kernel();
  Compiled c = compile(k.serialize(), TG_COMPILE_WANT_SOURCE, 2);
  BOOST_CHECK_MESSAGE(c.source.find("x float>") != std::string::npos, "expected vector types in\n"
                                                                          << c.source);
}

BOOST_AUTO_TEST_CASE(cache_key_is_stable_and_names_the_target) {
  std::string a = cache_key(nullptr), b = cache_key(nullptr);
  BOOST_CHECK_EQUAL(a, b);
  Device device;
  std::string arch = device.properties().arch;
  BOOST_CHECK_EQUAL(cache_key(arch.c_str()), a);
  BOOST_CHECK(a.find(arch) != std::string::npos);
  BOOST_CHECK(a.find("llvm 14.") != std::string::npos);
  BOOST_CHECK(cache_key("znver2") != cache_key("skylake"));
  // too small a buffer: INVALID_ARGUMENT, but the length is reported
  char small[4];
  size_t length = 0;
  BOOST_CHECK_EQUAL(take(api().compile_cache_key(nullptr, small, sizeof(small), &length)).code,
                    TG_ERROR_INVALID_ARGUMENT);
  BOOST_CHECK_EQUAL(length, a.size());
}

BOOST_AUTO_TEST_SUITE_END()
