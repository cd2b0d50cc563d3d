// Uses the installed LLVM IR renderer (tinygrad_cpp::sdk_llvm): builds `i32 count(i32 n)`, which
// counts a loop from 0 to n made by open_llvm_loop/close_llvm_loop, verifies it and prints it.
#include <tg/sdk/llvm_renderer.hpp>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

int main() {
  llvm::LLVMContext context;
  llvm::Module module("consumer", context);
  llvm::IRBuilder<> b(context);
  llvm::Type* i32 = b.getInt32Ty();
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(i32, {i32}, false),
                                    llvm::Function::ExternalLinkage, "count", module);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", fn));
  tg::sdk::LlvmLoop loop = tg::sdk::open_llvm_loop(b, b.getInt32(0), fn->getArg(0), "i");
  tg::sdk::close_llvm_loop(b, loop);
  b.CreateRet(loop.counter);
  if (llvm::verifyModule(module, &llvm::errs())) return 1;
  module.print(llvm::outs(), nullptr);
  llvm::outs() << "sdk_llvm consumer ok\n";
  return 0;
}
