#include "program.hpp"

#include "llvm_errors.hpp"
#include "target.hpp"

#include <tg/sdk/bytes.hpp>
#include <tg/sdk/plugin.hpp>

#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/MemoryBuffer.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

using tg::sdk::PluginError;

namespace tg::cpu {
namespace {

// ------------------------------------------------------------------------------------------
// Run-time helpers the generated code may call. LLVM lowers half conversions to these libcalls
// on CPUs without F16C (and always for double -> half); libgcc may lack them, so the JIT gets ours.
// ------------------------------------------------------------------------------------------

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    float v = float(mant) * 5.9604644775390625e-8f; // 2^-24
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

uint16_t float_to_half(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  auto sign = uint16_t((x >> 16) & 0x8000u);
  uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u)
    return uint16_t(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u | ((a >> 13) & 0x3ffu) : 0u));
  if (a >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to infinity
  if (a < 0x38800000u) {                                  // subnormal half or zero
    float scaled = std::bit_cast<float>(a) * 16777216.0f; // exact: times 2^24
    return uint16_t(sign | uint32_t(std::nearbyint(scaled)));
  }
  uint32_t rounded = a + 0xfffu + ((a >> 13) & 1u);
  return uint16_t(sign | ((rounded - 0x38000000u) >> 13));
}

uint16_t double_to_half(double d) {
  uint64_t x = std::bit_cast<uint64_t>(d);
  auto sign = uint16_t((x >> 48) & 0x8000u);
  uint64_t a = x & 0x7fffffffffffffffull;
  if (a >= 0x7ff0000000000000ull)
    return uint16_t(sign | 0x7c00u |
                    (a > 0x7ff0000000000000ull ? 0x200u | uint32_t((a >> 42) & 0x3ffu) : 0u));
  if (a >= 0x40effe0000000000ull) return uint16_t(sign | 0x7c00u); // >= 65520
  if (a < 0x3f10000000000000ull) {                                 // < 2^-14
    double scaled = std::bit_cast<double>(a) * 16777216.0;
    return uint16_t(sign | uint32_t(std::nearbyint(scaled)));
  }
  uint64_t rounded = a + ((uint64_t(1) << 41) - 1) + ((a >> 42) & 1u);
  return uint16_t(sign | uint32_t((rounded - 0x3f00000000000000ull) >> 42));
}

extern "C" {
float tg_cpu_h2f(uint16_t h) { return half_to_float(h); }
uint16_t tg_cpu_f2h(float f) { return float_to_half(f); }
uint16_t tg_cpu_d2h(double d) { return double_to_half(d); }
}

template <class F> llvm::JITEvaluatedSymbol symbol(F* fn) {
  return llvm::JITEvaluatedSymbol(llvm::pointerToJITTargetAddress(fn),
                                  llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
}

[[noreturn]] void invalid(const std::string& why) { throw PluginError(TG_ERROR_INVALID_ARGUMENT, why); }

} // namespace

// ------------------------------------------------------------------------------------------
// Payload
// ------------------------------------------------------------------------------------------

std::vector<std::byte> encode_payload(const Payload& payload) {
  sdk::ByteWriter w;
  w.put<uint32_t>(kPayloadVersion);
  for (uint32_t v : payload.llvm_version) w.put<uint32_t>(v);
  for (const std::string* s : {&payload.features, &payload.entry}) {
    w.put<uint32_t>(uint32_t(s->size()));
    w.put_bytes(s->data(), s->size());
  }
  w.put<uint64_t>(uint64_t(payload.object.size()));
  w.put_bytes(payload.object.data(), payload.object.size());
  return std::move(w.out);
}

Payload decode_payload(std::span<const std::byte> bytes) {
  sdk::ByteReader r(bytes);
  Payload payload;
  try {
    auto version = r.get<uint32_t>("payload version");
    if (version != kPayloadVersion)
      invalid("CPU payload version " + std::to_string(version) + ", this plugin reads " +
              std::to_string(kPayloadVersion) + ": recompile");
    for (uint32_t& v : payload.llvm_version) v = r.get<uint32_t>("LLVM version");
    for (std::string* s : {&payload.features, &payload.entry})
      s->assign(r.str(r.get<uint32_t>("strings"), "strings"));
    auto object = r.bytes(size_t(r.get<uint64_t>("object size")), "object");
    payload.object.assign(reinterpret_cast<const char*>(object.data()),
                          reinterpret_cast<const char*>(object.data()) + object.size());
  } catch (const sdk::TruncatedError& e) {
    invalid(std::string("CPU payload ") + e.what());
  }
  if (r.remaining() != 0) invalid("CPU payload has " + std::to_string(r.remaining()) + " stray bytes");
  if (payload.entry.empty()) invalid("CPU payload has no entry symbol");
  return payload;
}

// ------------------------------------------------------------------------------------------
// JIT
// ------------------------------------------------------------------------------------------

Jit::Jit() {
  const HostTarget& host = host_target();
  auto jtmb = llvm::orc::JITTargetMachineBuilder(llvm::Triple(host.triple));
  jtmb.setCPU(host.cpu);
  jit_ = unwrap(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create(),
                "cannot create the JIT");
  auto& es = jit_->getExecutionSession();
  auto& main = jit_->getMainJITDylib();
  // Everything generated code may call, by absolute address (the plugin is loaded RTLD_LOCAL and
  // its own symbols are hidden, so a process-wide search would not find them).
  llvm::orc::SymbolMap symbols;
  auto add = [&](const char* name, auto* fn) { symbols[es.intern(name)] = symbol(fn); };
  add("__gnu_h2f_ieee", &tg_cpu_h2f);
  add("__extendhfsf2", &tg_cpu_h2f);
  add("__gnu_f2h_ieee", &tg_cpu_f2h);
  add("__truncsfhf2", &tg_cpu_f2h);
  add("__truncdfhf2", &tg_cpu_d2h);
  add("sinf", static_cast<float (*)(float)>(&::sinf));
  add("sin", static_cast<double (*)(double)>(&::sin));
  add("exp2f", static_cast<float (*)(float)>(&::exp2f));
  add("exp2", static_cast<double (*)(double)>(&::exp2));
  add("log2f", static_cast<float (*)(float)>(&::log2f));
  add("log2", static_cast<double (*)(double)>(&::log2));
  add("sqrtf", static_cast<float (*)(float)>(&::sqrtf));
  add("sqrt", static_cast<double (*)(double)>(&::sqrt));
  add("truncf", static_cast<float (*)(float)>(&::truncf));
  add("trunc", static_cast<double (*)(double)>(&::trunc));
  add("fmaf", static_cast<float (*)(float, float, float)>(&::fmaf));
  add("fma", static_cast<double (*)(double, double, double)>(&::fma));
  add("memcpy", &::memcpy);
  add("memmove", &::memmove);
  add("memset", &::memset);
  check(main.define(llvm::orc::absoluteSymbols(std::move(symbols))), "cannot define run-time symbols");
  // Anything else (unexpected libcalls) from the process.
  main.addGenerator(unwrap(
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(jit_->getDataLayout().getGlobalPrefix()),
      "cannot search the process for symbols"));
}

Jit::~Jit() = default;

Jit::Loaded Jit::load(const Payload& payload, const std::string& kernel_name) {
  auto& es = jit_->getExecutionSession();
  auto& dylib =
      unwrap(es.createJITDylib("tg_program_" + std::to_string(counter_++)), "cannot create a JITDylib");
  dylib.addToLinkOrder(jit_->getMainJITDylib());
  try {
    auto object = llvm::MemoryBuffer::getMemBufferCopy(
        llvm::StringRef(payload.object.data(), payload.object.size()), kernel_name);
    check(jit_->addObjectFile(dylib, std::move(object)), "cannot add the object of '" + kernel_name + "'",
          TG_ERROR_INVALID_ARGUMENT);
    auto sym = unwrap(jit_->lookup(dylib, payload.entry), "cannot link '" + kernel_name + "'",
                      TG_ERROR_INVALID_ARGUMENT);
    return {&dylib, llvm::jitTargetAddressToFunction<KernelFn>(sym.getAddress())};
  } catch (...) {
    unload(&dylib);
    throw;
  }
}

void Jit::unload(llvm::orc::JITDylib* dylib) {
  if (dylib == nullptr) return;
  if (auto err = jit_->getExecutionSession().removeJITDylib(*dylib)) llvm::consumeError(std::move(err));
}

// ------------------------------------------------------------------------------------------
// Programs
// ------------------------------------------------------------------------------------------

Program::Program(Jit& jit, const sdk::Blob& blob) : jit_(jit) {
  Payload payload = decode_payload(blob.payload);
  const HostTarget& host = host_target();
  if (payload.features != host.features)
    invalid("blob was compiled for " + blob.target + " with other CPU features, this device is " +
            host.triple + ":" + host.cpu);
  std::string llvm_version = std::to_string(payload.llvm_version[0]) + "." +
                             std::to_string(payload.llvm_version[1]) + "." +
                             std::to_string(payload.llvm_version[2]);
  if (llvm_version != llvm_version_string())
    invalid("blob was compiled with LLVM " + llvm_version + ", this plugin uses " + llvm_version_string());
  loaded_ = jit_.load(payload, blob.signature.kernel_name);
}

Program::~Program() { jit_.unload(loaded_.dylib); }

void Program::run(ThreadPool& pool, void* const* buffers, const int64_t* scalars,
                  std::array<uint32_t, 3> global, std::array<uint32_t, 3> local) const {
  const KernelFn fn = loaded_.fn;
  const uint32_t gx = global[0], gy = global[1], gz = global[2];
  auto lx = int32_t(local[0]), ly = int32_t(local[1]), lz = int32_t(local[2]);
  uint64_t groups = uint64_t(gx) * gy * gz;
  if (groups == 1 || pool.size() == 1) {
    for (uint32_t z = 0; z < gz; ++z)
      for (uint32_t y = 0; y < gy; ++y)
        fn(buffers, scalars, 0, int32_t(gx), int32_t(y), int32_t(z), lx, ly, lz);
    return;
  }
  // Chunks of consecutive x groups, about 8 per thread, so uneven groups still balance.
  uint64_t target = uint64_t(pool.size()) * 8;
  uint64_t chunk = std::clamp<uint64_t>((groups + target - 1) / target, 1, gx);
  uint64_t chunks_x = (gx + chunk - 1) / chunk;
  pool.parallel_for(chunks_x * gy * gz, [&](uint64_t unit) {
    uint64_t cx = unit % chunks_x, row = unit / chunks_x;
    auto begin = int32_t(cx * chunk);
    auto end = int32_t(std::min<uint64_t>(gx, (cx + 1) * chunk));
    fn(buffers, scalars, begin, end, int32_t(row % gy), int32_t(row / gy), lx, ly, lz);
  });
}

} // namespace tg::cpu
