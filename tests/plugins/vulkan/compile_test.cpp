// The compiler's own errors and its blob: a GLSL error carries glslang's message, a blob round
// trips (SPIR-V inside, loadable, runnable) and a corrupt one is refused.
#include "vulkan_fixture.hpp"

#include "compiler.hpp"
#include "payload.hpp"

#include <tg/sdk/blob.hpp>

#include <string>
#include <vector>

using namespace tgtest;
using tg::sdk::KernelBuilder;
using Ref = KernelBuilder::Ref;

namespace {

// out[i] = in[i] * 2 for i = group id.
KernelBuilder doubler() {
  KernelBuilder k("doubler");
  Ref in = k.global(0, TG_DTYPE_INT32), out = k.global(1, TG_DTYPE_INT32);
  Ref i = k.group_id(0);
  k.store(k.index(out, i), k.mul(k.load(k.index(in, i)), k.i32(2)));
  return k;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_glsl_error_carries_the_compilers_message) {
  const std::string bad =
      "#version 450\nlayout(local_size_x = 1) in;\nvoid main() { undeclared_thing = 1; }\n";
  try {
    tg::vulkan::compile_glsl(bad, "broken");
    BOOST_ERROR("a broken shader compiled");
  } catch (const tg::sdk::PluginError& e) {
    const std::string message = e.what();
    BOOST_TEST(message.find("broken") != std::string::npos, message);
    BOOST_TEST(message.find("undeclared_thing") != std::string::npos, message); // glslang's own words
    BOOST_TEST(e.log().find("void main()") != std::string::npos, e.log());      // the source, for DEBUG
  }
}

BOOST_AUTO_TEST_CASE(the_blob_holds_valid_spirv_and_runs) {
  auto k = doubler();
  Compiled c = compile(k.serialize(), TG_COMPILE_WANT_SOURCE);
  BOOST_TEST(c.source.find("#version 450") != std::string::npos);
  BOOST_TEST(c.source.find("local_size_x_id = 0") != std::string::npos);
  tg::sdk::Blob blob = tg::sdk::open_blob(c.binary, "vulkan", tg::vulkan::kTarget);
  tg::vulkan::Payload payload = tg::vulkan::decode(blob.payload);
  BOOST_TEST(payload.spirv.at(0) == 0x07230203u); // SPIR-V magic
  BOOST_TEST(payload.bindings.size() == 2u);
  tg::vulkan::validate_spirv(payload.spirv, "doubler"); // throws when invalid
  // What the compiler made, re-sealed from its parts, loads and runs.
  Device device;
  Program program(device, tg::sdk::seal_blob(blob));
  Buffer in(device, std::vector<int32_t>{1, -2, 30}), out(device, std::vector<int32_t>(3, 0));
  program.launch({3, 1, 1}, {1, 1, 1}, {in.arg(), out.arg()});
  BOOST_TEST(out.download<int32_t>(3) == (std::vector<int32_t>{2, -4, 60}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_corrupt_blob_is_refused) {
  auto k = doubler();
  Compiled c = compile(k.serialize());
  Device device;
  auto flipped = c.binary;
  flipped[flipped.size() / 2] ^= std::byte{0x40};
  tg_program* program = nullptr;
  Status s = take(api().program_load(device.get(), flipped.data(), flipped.size(), &program));
  BOOST_TEST(s.code == TG_ERROR_INVALID_ARGUMENT);
  BOOST_TEST(s.message.find("checksum") != std::string::npos, s.message);
  // An intact envelope around a payload that is not SPIR-V: refused by the plugin itself.
  tg::sdk::Blob blob = tg::sdk::open_blob(c.binary, "vulkan", tg::vulkan::kTarget);
  tg::vulkan::Payload payload = tg::vulkan::decode(blob.payload);
  payload.spirv[0] = 0x12345678u;
  blob.payload = tg::vulkan::encode(payload);
  auto sealed = tg::sdk::seal_blob(blob);
  s = take(api().program_load(device.get(), sealed.data(), sealed.size(), &program));
  BOOST_TEST(s.code == TG_ERROR_INVALID_ARGUMENT);
  BOOST_TEST(s.message.find("SPIR-V") != std::string::npos, s.message);
  // Valid magic, garbage body: the validator refuses it.
  payload = tg::vulkan::decode(tg::sdk::open_blob(c.binary, "vulkan", tg::vulkan::kTarget).payload);
  for (size_t w = 5; w < payload.spirv.size(); w += 3) payload.spirv[w] = 0xffffffffu;
  blob.payload = tg::vulkan::encode(payload);
  sealed = tg::sdk::seal_blob(blob);
  s = take(api().program_load(device.get(), sealed.data(), sealed.size(), &program));
  BOOST_TEST(s.code == TG_ERROR_INVALID_ARGUMENT);
  BOOST_TEST(s.message.find("invalid SPIR-V") != std::string::npos, s.message);
}
