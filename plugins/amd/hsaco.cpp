#include "hsaco.hpp"
#include "matrix_units.hpp"

#include <tg/sdk/adaptor.hpp>
#include <tg/sdk/llvm_errors.hpp>
#include <tg/sdk/llvm_renderer.hpp>

#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>

extern char** environ;

namespace tg::amd {
namespace {

constexpr const char* kTriple = "amdgcn-amd-amdhsa";
constexpr unsigned kGlobal = 1; // AMDGPU address space of kernel buffer arguments
constexpr unsigned kLocal = 3;  // AMDGPU address space of work-group memory (LDS)

// SIMT: one function invocation per work item; ids from the amdgcn intrinsics; buffers arrive as
// global pointers and are cast to generic (flat) ones, the address space the renderer uses.
class KernelShape final : public sdk::LlvmKernelShape {
public:
  KernelShape(const sdk::KernelIR& ir, std::vector<AmdMatrixUnit> units)
      : ir_(ir), units_(std::move(units)) {}

  llvm::Function* create_function(llvm::Module& m, const std::string& name) override {
    auto& c = m.getContext();
    std::vector<llvm::Type*> params(ir_.buffer_count, llvm::Type::getInt8PtrTy(c, kGlobal));
    params.insert(params.end(), ir_.scalar_count, llvm::Type::getInt64Ty(c));
    auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(c), params, false);
    fn_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, m);
    fn_->setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
    for (uint32_t i = 0; i < ir_.buffer_count; ++i) fn_->addParamAttr(i, llvm::Attribute::NoAlias);
    return fn_;
  }
  llvm::Value* buffer_pointer(llvm::IRBuilder<>& b, uint32_t index) override {
    return b.CreateAddrSpaceCast(fn_->getArg(index), b.getInt8PtrTy());
  }
  llvm::Value* scalar_bits(llvm::IRBuilder<>&, uint32_t index) override {
    return fn_->getArg(ir_.buffer_count + index);
  }
  void begin_work_items(llvm::IRBuilder<>& b) override {
    using namespace llvm;
    const Intrinsic::ID group[3] = {Intrinsic::amdgcn_workgroup_id_x, Intrinsic::amdgcn_workgroup_id_y,
                                    Intrinsic::amdgcn_workgroup_id_z};
    const Intrinsic::ID local[3] = {Intrinsic::amdgcn_workitem_id_x, Intrinsic::amdgcn_workitem_id_y,
                                    Intrinsic::amdgcn_workitem_id_z};
    for (int a = 0; a < 3; ++a) { // unused ones are removed by the optimizer
      group_[a] = b.CreateIntrinsic(group[a], {}, {});
      local_[a] = b.CreateIntrinsic(local[a], {}, {});
    }
  }
  llvm::Value* special(llvm::IRBuilder<>&, int kind, int axis) override {
    if (axis < 0 || axis > 2)
      throw sdk::PluginError(TG_ERROR_UNIMPLEMENTED, "amd: SPECIAL axis out of range");
    return kind == TG_SPECIAL_GROUP_ID ? group_[axis] : local_[axis];
  }
  void end_work_items(llvm::IRBuilder<>&) override {}
  // A module global in the LDS address space (the code object's group segment), cast to flat.
  llvm::Value* local_memory(llvm::IRBuilder<>& b, llvm::Type* element, uint64_t count,
                            const std::string& name) override {
    auto* type = llvm::ArrayType::get(element, count);
    auto* global = new llvm::GlobalVariable(*fn_->getParent(), type, false,
                                            llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(type),
                                            name, nullptr, llvm::GlobalValue::NotThreadLocal, kLocal);
    global->setAlignment(llvm::Align(16));
    return b.CreateAddrSpaceCast(global, b.getInt8PtrTy());
  }
  // s_barrier between work-group-scope fences: writes before it are visible to the group after it.
  void barrier(llvm::IRBuilder<>& b) override {
    auto& c = b.getContext();
    b.CreateFence(llvm::AtomicOrdering::Release, c.getOrInsertSyncScopeID("workgroup"));
    b.CreateIntrinsic(llvm::Intrinsic::amdgcn_s_barrier, {}, {});
    b.CreateFence(llvm::AtomicOrdering::Acquire, c.getOrInsertSyncScopeID("workgroup"));
  }

  // MMA: a call of the unit's intrinsic, declared by name with the operands' types (the verifier
  // checks those LLVM 14 knows; llc-19 checks the WMMA ones LLVM 14 lacks). MFMA's cbsz, abid and
  // blgp are 0: no broadcast, B as given. An intrinsic LLVM 14 does not know gets the attributes
  // the newer LLVM gives it: convergent (every lane of the wave takes part), no memory access.
  llvm::Value* mma(llvm::IRBuilder<>& b, int64_t unit, llvm::Value* a, llvm::Value* bv,
                   llvm::Value* c) override {
    if (unit < 0 || size_t(unit) >= units_.size())
      throw sdk::PluginError(TG_ERROR_INTERNAL, "amd: MMA names matrix unit " + std::to_string(unit));
    const AmdMatrixUnit& u = units_[size_t(unit)];
    std::vector<llvm::Value*> args = {a, bv, c};
    if (u.mfma)
      for (int k = 0; k < 3; ++k) args.push_back(b.getInt32(0));
    std::vector<llvm::Type*> types;
    for (llvm::Value* v : args) types.push_back(v->getType());
    auto* type = llvm::FunctionType::get(c->getType(), types, false);
    llvm::Module& m = *fn_->getParent();
    llvm::FunctionCallee callee = m.getOrInsertFunction(u.intrinsic, type);
    auto* f = llvm::cast<llvm::Function>(callee.getCallee());
    if (f->getIntrinsicID() == llvm::Intrinsic::not_intrinsic) {
      f->addFnAttr(llvm::Attribute::Convergent);
      f->addFnAttr(llvm::Attribute::NoUnwind);
      f->addFnAttr(llvm::Attribute::ReadNone);
      f->addFnAttr(llvm::Attribute::WillReturn);
    }
    return b.CreateCall(callee, args);
  }

private:
  const sdk::KernelIR& ir_;
  std::vector<AmdMatrixUnit> units_;
  llvm::Function* fn_ = nullptr;
  llvm::Value* group_[3] = {};
  llvm::Value* local_[3] = {};
};

const llvm::Target& amdgpu_target() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
  });
  std::string error;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(kTriple, error);
  if (!t) throw sdk::PluginError(TG_ERROR_UNAVAILABLE, "amd: this LLVM has no AMDGPU target: " + error);
  return *t;
}

// A private temporary directory, removed with everything in it.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tg_amd_XXXXXX").string();
    if (!mkdtemp(tmpl.data()))
      throw sdk::PluginError(TG_ERROR_INTERNAL, "amd: cannot make a temporary directory");
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// Runs a tool (argv[0] found on PATH) and waits; throws `failure` naming the tool when it cannot
// start or exits unsuccessfully. Its output goes to this process's stderr.
void run_tool(std::vector<std::string> args, const char* env_name) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, args[0].c_str(), nullptr, nullptr, argv.data(), environ) != 0)
    throw sdk::PluginError(TG_ERROR_UNAVAILABLE, "amd: cannot run " + args[0] + " (install it, or set " +
                                                     env_name + "; docs/amd.md)");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw sdk::PluginError(TG_ERROR_INTERNAL,
                           "amd: " + args[0] + " failed (exit status " +
                               std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
}

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

std::vector<std::byte> read_file(const std::filesystem::path& path, const std::string& tool) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.empty()) throw sdk::PluginError(TG_ERROR_INTERNAL, "amd: " + tool + " wrote nothing");
  std::vector<std::byte> out(bytes.size());
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

// object (.o) -> the code object HIP loads: a shared ELF.
std::vector<std::byte> link(const TempDir& dir, const std::string& lld) {
  const auto in = dir.path / "kernel.o", out = dir.path / "kernel.hsaco";
  run_tool({lld, "-shared", "-o", out.string(), in.string()}, "TG_AMD_LLD");
  return read_file(out, lld);
}

// Whether this LLVM (14) has the processor: createTargetMachine would take an unknown one with
// only a warning on stderr and generate generic code.
// (Asked of a generic subtarget: making one for an unknown processor prints that warning, too.)
bool llvm_knows(const llvm::Target& target, const std::string& gfx) {
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target.createMCSubtargetInfo(kTriple, "", ""));
  return sti && sti->isCPUStringValid(gfx);
}

// Everything LLVM works on during one compile; abandoned after a fatal error (llvm_errors.hpp).
struct LlvmJob {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<llvm::TargetMachine> tm;
  llvm::legacy::PassManager codegen; // declared last: destroyed before the target machine
};

} // namespace

std::string newer_llc() { return env_or("TG_AMD_LLC", "llc-19"); }

bool needs_newer_llvm(const std::string& gfx) { return !llvm_knows(amdgpu_target(), gfx); }

Hsaco compile_hsaco(const sdk::KernelIR& ir, const std::string& gfx, unsigned opt_level, bool want_ir) {
  const llvm::Target& target = amdgpu_target();
  // A processor LLVM 14 lacks (gfx942, gfx1100, ...) is compiled by a newer llc from this LLVM's
  // bitcode, which it reads (bitcode is upward compatible); the IR is optimized here for the
  // generic AMDGPU processor, whose data layout is every processor's.
  const bool external = !llvm_knows(target, gfx);
  Hsaco out;
  TempDir dir;
  auto job = std::make_shared<LlvmJob>();
  std::optional<std::string> fatal = sdk::run_catching_fatal_errors([&] {
    job->module = std::make_unique<llvm::Module>(ir.name, job->context);
    job->tm.reset(target.createTargetMachine(
        kTriple, external ? "" : gfx, "", llvm::TargetOptions(), llvm::Reloc::PIC_, llvm::None,
        opt_level == 0 ? llvm::CodeGenOpt::None : llvm::CodeGenOpt::Default));
    if (!job->tm) throw sdk::PluginError(TG_ERROR_UNIMPLEMENTED, "amd: LLVM cannot target " + gfx);
    llvm::Module& module = *job->module;
    module.setTargetTriple(kTriple);
    module.setDataLayout(job->tm->createDataLayout());
    KernelShape shape(ir, amd_matrix_units(gfx));
    sdk::render_llvm_kernel(ir, module, shape, ir.name);
    std::string log;
    llvm::raw_string_ostream log_os(log);
    if (llvm::verifyModule(module, &log_os))
      throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "amd: '" + ir.name + "' lowers to invalid LLVM IR",
                             log_os.str());
    if (opt_level > 0) sdk::optimize_llvm_module(module, *job->tm, opt_level);
    if (want_ir) {
      llvm::raw_string_ostream os(out.llvm_ir);
      module.print(os, nullptr);
    }
    std::error_code ec;
    if (external) {
      llvm::raw_fd_ostream bc((dir.path / "kernel.bc").string(), ec);
      if (ec) throw sdk::PluginError(TG_ERROR_INTERNAL, "amd: cannot write bitcode: " + ec.message());
      llvm::WriteBitcodeToFile(module, bc);
      return;
    }
    llvm::raw_fd_ostream object((dir.path / "kernel.o").string(), ec);
    if (ec) throw sdk::PluginError(TG_ERROR_INTERNAL, "amd: cannot write the object: " + ec.message());
    if (job->tm->addPassesToEmitFile(job->codegen, object, nullptr, llvm::CGFT_ObjectFile))
      throw sdk::PluginError(TG_ERROR_INTERNAL, "amd: LLVM cannot emit AMDGPU objects");
    job->codegen.run(module);
  });
  if (fatal) {
    sdk::abandon_after_fatal_error(std::move(job));
    throw sdk::PluginError(TG_ERROR_INTERNAL,
                           "amd: LLVM failed on '" + ir.name + "' for " + gfx + ": " + *fatal);
  }
  job.reset();
  if (external) {
    run_tool({newer_llc(), "-mtriple=" + std::string(kTriple), "-mcpu=" + gfx,
              "-O" + std::to_string(std::min(opt_level, 3u)), "-filetype=obj", "-o",
              (dir.path / "kernel.o").string(), (dir.path / "kernel.bc").string()},
             "TG_AMD_LLC");
    out.elf = link(dir, env_or("TG_AMD_LLD", "ld.lld-19"));
  } else {
    out.elf = link(dir, env_or("TG_AMD_LLD", "ld.lld-14"));
  }
  return out;
}

} // namespace tg::amd
