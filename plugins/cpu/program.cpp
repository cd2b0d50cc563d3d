#include "program.hpp"

#include "compiler.hpp"
#include "device.hpp"
#include "llvm_errors.hpp"
#include "memory.hpp"

#include <tg/sdk/bytes.hpp>
#include <tg/sdk/kernel_ir.hpp>
#include <tg/sdk/plugin.hpp>

#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/MemoryBuffer.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>

using tg::sdk::guard;
using tg::sdk::PluginError;
using tg::sdk::require;

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

// ------------------------------------------------------------------------------------------
// Blob encoding
// ------------------------------------------------------------------------------------------

uint64_t fnv1a(const std::byte* data, size_t size) { return sdk::fnv1a64({data, size}); }

constexpr size_t kMaxString = 4096;

} // namespace

std::vector<std::byte> encode_blob(const BlobContents& blob) {
  sdk::ByteWriter w;
  w.put_bytes(kBlobMagic, sizeof(kBlobMagic));
  w.put<uint32_t>(kBlobFormatVersion);
  for (uint32_t v : blob.llvm_version) w.put<uint32_t>(v);
  w.put<uint32_t>(uint32_t(blob.buffer_dtypes.size()));
  w.put<uint32_t>(uint32_t(blob.scalar_dtypes.size()));
  const std::string* strings[] = {&blob.triple, &blob.cpu, &blob.features, &blob.entry, &blob.kernel_name};
  for (const auto* s : strings) w.put<uint32_t>(uint32_t(s->size()));
  w.put<uint64_t>(uint64_t(blob.object.size()));
  for (const auto* s : strings) w.put_bytes(s->data(), s->size());
  for (tg_dtype d : blob.buffer_dtypes) w.put<uint8_t>(uint8_t(d));
  for (tg_dtype d : blob.scalar_dtypes) w.put<uint8_t>(uint8_t(d));
  w.put_bytes(blob.object.data(), blob.object.size());
  w.put<uint64_t>(fnv1a(w.out.data(), w.out.size()));
  return std::move(w.out);
}

// The fields between the magic and the checksum; a truncated field throws sdk::TruncatedError.
static BlobContents decode_fields(sdk::ByteReader& r) {
  BlobContents blob;
  auto version = r.get<uint32_t>("format version");
  if (version != kBlobFormatVersion)
    throw PluginError(TG_ERROR_INVALID_ARGUMENT, "blob format version " + std::to_string(version) +
                                                     ", this plugin reads " +
                                                     std::to_string(kBlobFormatVersion) + ": recompile");
  for (uint32_t& v : blob.llvm_version) v = r.get<uint32_t>("LLVM version");
  auto buffer_count = r.get<uint32_t>("buffer count");
  auto scalar_count = r.get<uint32_t>("scalar count");
  if (buffer_count > kMaxBufferArgs || scalar_count > kMaxScalarArgs)
    throw PluginError(TG_ERROR_INVALID_ARGUMENT, "blob declares " + std::to_string(buffer_count) +
                                                     " buffers and " + std::to_string(scalar_count) +
                                                     " scalars, beyond the device limits");
  std::string* strings[] = {&blob.triple, &blob.cpu, &blob.features, &blob.entry, &blob.kernel_name};
  uint32_t lengths[5];
  for (uint32_t& n : lengths) {
    n = r.get<uint32_t>("string lengths");
    if (n > kMaxString) throw PluginError(TG_ERROR_INVALID_ARGUMENT, "blob header string too long");
  }
  auto object_size = r.get<uint64_t>("object size");
  for (size_t k = 0; k < 5; ++k) *strings[k] = r.str(lengths[k], "header strings");
  for (uint32_t k = 0; k < buffer_count + scalar_count; ++k) {
    auto d = tg_dtype(r.get<uint8_t>("argument dtypes"));
    if (d <= TG_DTYPE_VOID || d >= TG_DTYPE_COUNT)
      throw PluginError(TG_ERROR_INVALID_ARGUMENT, "blob names an unknown dtype " + std::to_string(d));
    (k < buffer_count ? blob.buffer_dtypes : blob.scalar_dtypes).push_back(d);
  }
  if (object_size != r.remaining())
    throw PluginError(TG_ERROR_INVALID_ARGUMENT, "blob object size " + std::to_string(object_size) +
                                                     " does not match the " + std::to_string(r.remaining()) +
                                                     " bytes present");
  auto obj = r.bytes(size_t(object_size), "object");
  blob.object.assign(reinterpret_cast<const char*>(obj.data()),
                     reinterpret_cast<const char*>(obj.data()) + obj.size());
  return blob;
}

BlobContents decode_blob(const void* data, size_t size) {
  if (data == nullptr) throw PluginError(TG_ERROR_INVALID_ARGUMENT, "binary is NULL");
  const auto* bytes = static_cast<const std::byte*>(data);
  if (size < sizeof(kBlobMagic) + sizeof(uint64_t) || std::memcmp(bytes, kBlobMagic, sizeof(kBlobMagic)) != 0)
    throw PluginError(TG_ERROR_INVALID_ARGUMENT,
                      "not a CPU plugin blob (bad magic or too short: " + std::to_string(size) + " bytes)");
  uint64_t stored;
  std::memcpy(&stored, bytes + size - sizeof(stored), sizeof(stored));
  if (fnv1a(bytes, size - sizeof(stored)) != stored)
    throw PluginError(TG_ERROR_INVALID_ARGUMENT, "blob checksum mismatch: the blob is truncated or corrupt");
  sdk::ByteReader r({bytes + sizeof(kBlobMagic), size - sizeof(kBlobMagic) - sizeof(stored)});
  BlobContents blob;
  try {
    blob = decode_fields(r);
  } catch (const sdk::TruncatedError& e) {
    throw PluginError(TG_ERROR_INVALID_ARGUMENT, std::string("blob ") + e.what());
  }
  if (blob.entry.empty()) throw PluginError(TG_ERROR_INVALID_ARGUMENT, "blob has no entry symbol");
  return blob;
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

Jit::Loaded Jit::load(const BlobContents& blob) {
  auto& es = jit_->getExecutionSession();
  auto& dylib =
      unwrap(es.createJITDylib("tg_program_" + std::to_string(counter_++)), "cannot create a JITDylib");
  dylib.addToLinkOrder(jit_->getMainJITDylib());
  try {
    auto object = llvm::MemoryBuffer::getMemBufferCopy(
        llvm::StringRef(blob.object.data(), blob.object.size()), blob.kernel_name);
    check(jit_->addObjectFile(dylib, std::move(object)),
          "cannot add the object of '" + blob.kernel_name + "'", TG_ERROR_INVALID_ARGUMENT);
    auto sym = unwrap(jit_->lookup(dylib, blob.entry), "cannot link '" + blob.kernel_name + "'",
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
// ABI functions
// ------------------------------------------------------------------------------------------

tg_error* program_load(tg_device* device, const void* binary, size_t binary_size, tg_program** out_program) {
  return guard("cpu.program_load", [&] {
    require(device, "device");
    require(out_program, "out_program");
    BlobContents blob = decode_blob(binary, binary_size);
    const HostTarget& host = host_target();
    if (blob.triple != host.triple || blob.cpu != host.cpu || blob.features != host.features)
      throw PluginError(
          TG_ERROR_INVALID_ARGUMENT,
          "blob was compiled for " + blob.triple + " " + blob.cpu +
              (blob.features != host.features && blob.cpu == host.cpu ? " with other CPU features" : "") +
              ", this device is " + host.triple + " " + host.cpu);
    std::string llvm_version = std::to_string(blob.llvm_version[0]) + "." +
                               std::to_string(blob.llvm_version[1]) + "." +
                               std::to_string(blob.llvm_version[2]);
    if (llvm_version != llvm_version_string())
      throw PluginError(TG_ERROR_INVALID_ARGUMENT, "blob was compiled with LLVM " + llvm_version +
                                                       ", this plugin uses " + llvm_version_string());
    auto program = std::make_unique<tg_program>();
    program->device = device;
    program->name = blob.kernel_name;
    program->buffer_dtypes = blob.buffer_dtypes;
    program->scalar_dtypes = blob.scalar_dtypes;
    std::lock_guard lock(device->jit_mutex);
    auto loaded = device->jit().load(blob);
    program->dylib = loaded.dylib;
    program->fn = loaded.fn;
    *out_program = program.release();
  });
}

void program_free(tg_program* program) {
  if (program == nullptr) return;
  {
    std::lock_guard lock(program->device->jit_mutex);
    program->device->jit().unload(program->dylib);
  }
  delete program;
}

tg_error* launch(const tg_launch_args* args) {
  return guard("cpu.launch", [&] {
    auto a = tg::sdk::read_args(args, "args");
    tg_program* program = require(a.program, "args->program");
    tg_device* device = program->device;
    auto invalid = [](const std::string& why) { throw PluginError(TG_ERROR_INVALID_ARGUMENT, why); };
    const std::string kernel = " (kernel '" + program->name + "')";
    if (a.buffer_count != program->buffer_dtypes.size())
      invalid("buffer_count is " + std::to_string(a.buffer_count) + ", the program takes " +
              std::to_string(program->buffer_dtypes.size()) + kernel);
    if (a.scalar_count != program->scalar_dtypes.size())
      invalid("scalar_count is " + std::to_string(a.scalar_count) + ", the program takes " +
              std::to_string(program->scalar_dtypes.size()) + kernel);
    if (a.buffer_count > 0) require(a.buffers, "args->buffers");
    if (a.scalar_count > 0) require(a.scalars, "args->scalars");
    std::vector<void*> buffers(a.buffer_count);
    for (uint32_t i = 0; i < a.buffer_count; ++i) {
      const tg_buffer_arg& arg = a.buffers[i];
      std::string which = "buffers[" + std::to_string(i) + "]";
      if (arg.buffer == nullptr) invalid(which + ".buffer is NULL");
      if (arg.buffer->device != device) invalid(which + " belongs to another device");
      if (arg.offset > arg.buffer->size)
        invalid(which + ".offset " + std::to_string(arg.offset) + " is beyond the buffer's " +
                std::to_string(arg.buffer->size) + " bytes");
      size_t element = tg::sdk::dtype_size(program->buffer_dtypes[i]);
      if (element > 1 && arg.offset % element != 0)
        invalid(which + ".offset " + std::to_string(arg.offset) + " is not a multiple of the " +
                std::to_string(element) + "-byte " + tg::sdk::dtype_name(program->buffer_dtypes[i]) +
                " element");
      buffers[i] = static_cast<char*>(arg.buffer->data) + arg.offset;
    }
    std::vector<int64_t> scalars(a.scalar_count);
    for (uint32_t i = 0; i < a.scalar_count; ++i) {
      const tg_scalar_arg& arg = a.scalars[i];
      tg_dtype want = program->scalar_dtypes[i];
      if (arg.dtype != want) {
        const char* got = tg::sdk::dtype_name(arg.dtype);
        invalid("scalars[" + std::to_string(i) + "].dtype is " + (got ? got : std::to_string(arg.dtype)) +
                ", the program's DEFINE_VAR " + std::to_string(i) + " is " + tg::sdk::dtype_name(want));
      }
      std::memcpy(&scalars[i], &arg.value, sizeof(int64_t));
    }
    uint64_t local_threads = 1;
    for (int k = 0; k < 3; ++k) {
      if (a.local_size[k] == 0 || a.local_size[k] > kMaxLocalThreads)
        invalid("local_size[" + std::to_string(k) + "] is " + std::to_string(a.local_size[k]) +
                ", must be 1.." + std::to_string(kMaxLocalThreads));
      local_threads *= a.local_size[k];
      if (a.global_size[k] > kMaxGlobalSize[k])
        invalid("global_size[" + std::to_string(k) + "] is " + std::to_string(a.global_size[k]) +
                ", the limit is " + std::to_string(kMaxGlobalSize[k]));
    }
    if (local_threads > kMaxLocalThreads)
      invalid("local size " + std::to_string(a.local_size[0]) + "x" + std::to_string(a.local_size[1]) + "x" +
              std::to_string(a.local_size[2]) + " has " + std::to_string(local_threads) +
              " threads, the limit is " + std::to_string(kMaxLocalThreads));

    auto start = std::chrono::steady_clock::now();
    const uint32_t gx = a.global_size[0], gy = a.global_size[1], gz = a.global_size[2];
    if (gx != 0 && gy != 0 && gz != 0) {
      KernelFn fn = program->fn;
      void* const* bufs = buffers.data();
      const int64_t* sc = scalars.data();
      auto lx = int32_t(a.local_size[0]), ly = int32_t(a.local_size[1]), lz = int32_t(a.local_size[2]);
      uint64_t groups = uint64_t(gx) * gy * gz;
      if (groups == 1 || device->pool.size() == 1) {
        for (uint32_t z = 0; z < gz; ++z)
          for (uint32_t y = 0; y < gy; ++y) fn(bufs, sc, 0, int32_t(gx), int32_t(y), int32_t(z), lx, ly, lz);
      } else {
        // Chunks of consecutive x groups, about 8 per thread, so uneven groups still balance.
        uint64_t target = uint64_t(device->pool.size()) * 8;
        uint64_t chunk = std::clamp<uint64_t>((groups + target - 1) / target, 1, gx);
        uint64_t chunks_x = (gx + chunk - 1) / chunk;
        device->pool.parallel_for(chunks_x * gy * gz, [&](uint64_t unit) {
          uint64_t cx = unit % chunks_x, row = unit / chunks_x;
          auto begin = int32_t(cx * chunk);
          auto end = int32_t(std::min<uint64_t>(gx, (cx + 1) * chunk));
          fn(bufs, sc, begin, end, int32_t(row % gy), int32_t(row / gy), lx, ly, lz);
        });
      }
    }
    if (a.elapsed_ns != nullptr)
      *a.elapsed_ns = uint64_t(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
              .count());
  });
}

} // namespace tg::cpu
