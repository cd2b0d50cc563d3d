#include "hsaco.hpp"

#include <tg/sdk/adaptor.hpp>
#include <tg/sdk/llvm_renderer.hpp>

#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>

extern char** environ;

namespace tg::amd {
namespace {

constexpr const char* kTriple = "amdgcn-amd-amdhsa";
constexpr unsigned kGlobal = 1; // AMDGPU address space of kernel buffer arguments

// SIMT: one function invocation per work item; ids from the amdgcn intrinsics; buffers arrive as
// global pointers and are cast to generic (flat) ones, the address space the renderer uses.
class KernelShape final : public sdk::LlvmKernelShape {
public:
  explicit KernelShape(const sdk::KernelIR& ir) : ir_(ir) {}

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

private:
  const sdk::KernelIR& ir_;
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

std::vector<std::byte> link_with_lld(const std::vector<char>& object) {
  const char* env = std::getenv("TG_AMD_LLD");
  std::string lld = env && *env ? env : "ld.lld-14";
  TempDir dir;
  const auto in = dir.path / "kernel.o", out = dir.path / "kernel.hsaco";
  std::ofstream(in, std::ios::binary).write(object.data(), std::streamsize(object.size()));
  std::string a1 = "-shared", a2 = "-o", a3 = out.string(), a4 = in.string();
  char* argv[] = {lld.data(), a1.data(), a2.data(), a3.data(), a4.data(), nullptr};
  pid_t pid = 0;
  if (posix_spawnp(&pid, lld.c_str(), nullptr, nullptr, argv, environ) != 0)
    throw sdk::PluginError(TG_ERROR_UNAVAILABLE, "amd: cannot run the linker " + lld + " (set TG_AMD_LLD)");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw sdk::PluginError(TG_ERROR_INTERNAL, "amd: " + lld + " failed to link the code object");
  std::ifstream f(out, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.empty()) throw sdk::PluginError(TG_ERROR_INTERNAL, "amd: " + lld + " wrote no code object");
  std::vector<std::byte> elf(bytes.size());
  std::memcpy(elf.data(), bytes.data(), bytes.size());
  return elf;
}

} // namespace

Hsaco compile_hsaco(const sdk::KernelIR& ir, const std::string& gfx, unsigned opt_level, bool want_ir) {
  const llvm::Target& target = amdgpu_target();
  llvm::LLVMContext context;
  auto module = std::make_unique<llvm::Module>(ir.name, context);
  std::unique_ptr<llvm::TargetMachine> tm(
      target.createTargetMachine(kTriple, gfx, "", llvm::TargetOptions(), llvm::Reloc::PIC_, llvm::None,
                                 opt_level == 0 ? llvm::CodeGenOpt::None : llvm::CodeGenOpt::Default));
  if (!tm) throw sdk::PluginError(TG_ERROR_UNIMPLEMENTED, "amd: LLVM cannot target " + gfx);
  module->setTargetTriple(kTriple);
  module->setDataLayout(tm->createDataLayout());
  KernelShape shape(ir);
  sdk::render_llvm_kernel(ir, *module, shape, ir.name);
  std::string log;
  llvm::raw_string_ostream log_os(log);
  if (llvm::verifyModule(*module, &log_os))
    throw sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "amd: '" + ir.name + "' lowers to invalid LLVM IR",
                           log_os.str());
  if (opt_level > 0) sdk::optimize_llvm_module(*module, *tm, opt_level);
  Hsaco out;
  if (want_ir) {
    llvm::raw_string_ostream os(out.llvm_ir);
    module->print(os, nullptr);
  }
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager codegen;
  if (tm->addPassesToEmitFile(codegen, os, nullptr, llvm::CGFT_ObjectFile))
    throw sdk::PluginError(TG_ERROR_INTERNAL, "amd: LLVM cannot emit AMDGPU objects");
  codegen.run(*module);
  out.elf = link_with_lld(std::vector<char>(buffer.begin(), buffer.end()));
  return out;
}

} // namespace tg::amd
