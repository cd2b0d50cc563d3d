#include "compiler.hpp"

#include "llvm_errors.hpp"
#include "program.hpp"
#include "target.hpp"
#include "test_hooks.hpp"

#include <tg/sdk/llvm_renderer.hpp>

#include <llvm/ADT/Triple.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/IntrinsicsAArch64.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <chrono>
#include <mutex>
#include <optional>

using tg::sdk::PluginError;

namespace tg::cpu {
namespace {

std::string symbol_name(const std::string& kernel_name) {
  std::string s = "tg_kernel_";
  for (char c : kernel_name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return s;
}

// The KernelFn contract (program.hpp) in LLVM IR: arguments come from the buffers/scalars arrays,
// and the body runs inside loops over work groups [gx_begin, gx_end) of row (gy, gz) and, inside
// each, local ids z, y, x.
class KernelShape final : public sdk::LlvmKernelShape {
public:
  KernelShape(const TargetSpec& spec, bool fatal_hook) : spec_(spec), fatal_hook_(fatal_hook) {}

  llvm::Function* create_function(llvm::Module& module, const std::string& name) override {
    llvm::LLVMContext& ctx = module.getContext();
    llvm::Type* i32 = llvm::Type::getInt32Ty(ctx);
    llvm::Type* buffers_t = llvm::Type::getInt8PtrTy(ctx)->getPointerTo();
    llvm::Type* scalars_t = llvm::Type::getInt64Ty(ctx)->getPointerTo();
    auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                        {buffers_t, scalars_t, i32, i32, i32, i32, i32, i32, i32}, false);
    fn_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, module);
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    fn_->addFnAttr("target-cpu", spec_.cpu);
    if (!spec_.features.empty()) fn_->addFnAttr("target-features", spec_.features);
    for (unsigned a = 0; a < 2; ++a) {
      fn_->addParamAttr(a, llvm::Attribute::NoAlias);
      fn_->addParamAttr(a, llvm::Attribute::ReadOnly);
    }
    const char* arg_names[] = {"buffers", "scalars", "gx_begin", "gx_end", "gy",
                               "gz",      "local_x", "local_y",  "local_z"};
    for (unsigned a = 0; a < fty->getNumParams(); ++a) fn_->getArg(a)->setName(arg_names[a]);
    return fn_;
  }

  llvm::Value* buffer_pointer(llvm::IRBuilder<>& b, uint32_t index) override {
    llvm::Value* slot = b.CreateConstInBoundsGEP1_64(b.getInt8PtrTy(), fn_->getArg(0), index);
    return b.CreateLoad(b.getInt8PtrTy(), slot, "buf" + std::to_string(index));
  }

  llvm::Value* scalar_bits(llvm::IRBuilder<>& b, uint32_t index) override {
    llvm::Value* slot = b.CreateConstInBoundsGEP1_64(b.getInt64Ty(), fn_->getArg(1), index);
    return b.CreateLoad(b.getInt64Ty(), slot, "var" + std::to_string(index));
  }

  void begin_work_items(llvm::IRBuilder<>& b) override {
    if (fatal_hook_) { // another architecture's intrinsic: no selector for it here
      llvm::Module& module = *fn_->getParent();
      if (llvm::Triple(spec_.triple).isX86())
        b.CreateCall(llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::aarch64_isb),
                     {b.getInt32(15)});
      else
        b.CreateCall(llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::x86_sse2_pause));
    }
    group_[1] = fn_->getArg(4);
    group_[2] = fn_->getArg(5);
    loops_[0] = sdk::open_llvm_loop(b, fn_->getArg(2), fn_->getArg(3), "gx");
    group_[0] = loops_[0].counter;
    loops_[1] = sdk::open_llvm_loop(b, b.getInt32(0), fn_->getArg(8), "lz");
    loops_[2] = sdk::open_llvm_loop(b, b.getInt32(0), fn_->getArg(7), "ly");
    loops_[3] = sdk::open_llvm_loop(b, b.getInt32(0), fn_->getArg(6), "lx");
    local_[0] = loops_[3].counter;
    local_[1] = loops_[2].counter;
    local_[2] = loops_[1].counter;
  }

  llvm::Value* special(llvm::IRBuilder<>&, int kind, int axis) override {
    return kind == TG_SPECIAL_GROUP_ID ? group_[axis] : local_[axis];
  }

  void end_work_items(llvm::IRBuilder<>& b) override {
    for (int k = 3; k >= 0; --k) sdk::close_llvm_loop(b, loops_[k]);
  }

private:
  const TargetSpec& spec_;
  bool fatal_hook_;
  llvm::Function* fn_ = nullptr;
  sdk::LlvmLoop loops_[4] = {}; // gx, lz, ly, lx
  llvm::Value* group_[3] = {nullptr, nullptr, nullptr};
  llvm::Value* local_[3] = {nullptr, nullptr, nullptr};
};

// Everything LLVM works on during one compile. After an LLVM fatal error it is abandoned, never
// used or freed again (see run_catching_fatal_errors).
struct LlvmJob {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<llvm::TargetMachine> tm;
  llvm::legacy::PassManager codegen; // declared last: destroyed before the target machine
};

// Keeps abandoned jobs reachable (leak checkers stay quiet) for the life of the process: freeing
// objects whose destructors were skipped mid-operation is not safe. A few hundred KB per failure.
void abandon(std::unique_ptr<LlvmJob> job) {
  static std::mutex mutex;
  static std::vector<std::unique_ptr<LlvmJob>> abandoned;
  std::lock_guard lock(mutex);
  abandoned.push_back(std::move(job));
}

std::vector<char> emit_object(LlvmJob& job) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  if (job.tm->addPassesToEmitFile(job.codegen, os, nullptr, llvm::CGFT_ObjectFile))
    throw PluginError(TG_ERROR_INTERNAL, "the LLVM target cannot emit object files");
  job.codegen.run(*job.module);
  return std::vector<char>(buffer.begin(), buffer.end());
}

} // namespace

sdk::CompileOutput Compiler::compile(const sdk::CompileRequest& request) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const sdk::KernelIR& ir = request.ir;
  TargetSpec spec = resolve_target(request.target.c_str());
  test_hooks::rendezvous(ir.name);

  auto us_since = [](clock::time_point t) {
    return std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - t).count());
  };
  auto phase = clock::now();
  std::string timings;
  sdk::CompileOutput out;
  const std::string entry = symbol_name(ir.name);
  std::vector<char> object;
  auto job = std::make_unique<LlvmJob>();
  // From here on LLVM may report a fatal error (an operation the target cannot select): it
  // becomes TG_ERROR_INTERNAL instead of aborting the host process.
  std::optional<std::string> fatal = run_catching_fatal_errors([&] {
    job->module = std::make_unique<llvm::Module>(ir.name, job->context);
    job->tm = make_target_machine(spec, request.opt_level);
    timings += "target " + us_since(phase) + " us";
    phase = clock::now();
    job->module->setTargetTriple(spec.triple);
    job->module->setDataLayout(job->tm->createDataLayout());
    KernelShape shape(spec, test_hooks::fatal(ir.name));
    sdk::LlvmRenderOptions options;
    options.half_math_in_float = !test_hooks::native_half(ir.name);
    options.polynomial_exp2 = true;
    sdk::render_llvm_kernel(ir, *job->module, shape, entry, options);

    std::string verify_log;
    llvm::raw_string_ostream verify_os(verify_log);
    if (llvm::verifyModule(*job->module, &verify_os)) {
      verify_os.flush();
      throw PluginError(TG_ERROR_INVALID_ARGUMENT,
                        "kernel IR of '" + ir.name + "' lowers to invalid LLVM IR (see the log)", verify_log);
    }
    timings += ", render " + us_since(phase) + " us";
    phase = clock::now();
    if (request.opt_level > 0) sdk::optimize_llvm_module(*job->module, *job->tm, request.opt_level);
    timings += ", optimize " + us_since(phase) + " us";
    if (request.want_source) {
      llvm::raw_string_ostream os(out.source);
      job->module->print(os, nullptr);
      os.flush();
    }
    phase = clock::now();
    object = emit_object(*job);
    timings += ", codegen " + us_since(phase) + " us";
  });
  if (fatal) {
    abandon(std::move(job));
    throw PluginError(TG_ERROR_INTERNAL,
                      "LLVM failed on '" + ir.name + "' for " + spec.triple + " " + spec.cpu + ": " + *fatal);
  }
  job.reset();

  const size_t object_size = object.size();
  out.target = target_string(spec);
  out.payload = encode_payload({{LLVM_VERSION_MAJOR, LLVM_VERSION_MINOR, LLVM_VERSION_PATCH},
                                spec.features,
                                entry,
                                std::move(object)});
  out.log = "cpu: compiled '" + ir.name + "' for " + spec.cpu + " at O" + std::to_string(request.opt_level) +
            " in " + us_since(start) + " us (" + std::to_string(object_size) + " byte object; " + timings +
            ")";
  return out;
}

std::string Compiler::cache_key(const std::string& target) {
  TargetSpec spec = resolve_target(target.c_str());
  return "payload " + std::to_string(kPayloadVersion) + ";llvm " + llvm_version_string() + ";" + spec.triple +
         ";" + spec.cpu + ";" + spec.features;
}

} // namespace tg::cpu
