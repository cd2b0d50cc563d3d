// Loading: the shared object goes to a private temporary file only long enough to dlopen it.
#include "program.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>

namespace my {

Program::Program(std::span<const std::byte> payload) {
  const char* begin = reinterpret_cast<const char*>(payload.data());
  const void* nul = std::memchr(begin, 0, payload.size());
  if (!nul) throw tg::sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "MY program payload has no entry name");
  const std::string entry(begin, static_cast<const char*>(nul));
  const char* so = static_cast<const char*>(nul) + 1;
  const size_t so_size = payload.size() - entry.size() - 1;

  std::string path = (std::filesystem::temp_directory_path() / "tg_my_program_XXXXXX.so").string();
  int fd = mkstemps(path.data(), 3);
  if (fd < 0)
    throw tg::sdk::PluginError(TG_ERROR_INTERNAL, "cannot create a temporary file for a MY program");
  bool written = write(fd, so, so_size) == ssize_t(so_size);
  close(fd);
  if (written) handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  const std::string error = handle_ ? "" : (written ? dlerror() : "write failed");
  unlink(path.c_str()); // the mapping keeps the code; nothing is left on disk
  if (!handle_)
    throw tg::sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "cannot load MY program " + entry + ": " + error);
  fn_ = reinterpret_cast<tg::sdk::render::CKernelFn>(dlsym(handle_, entry.c_str()));
  if (!fn_) {
    dlclose(handle_);
    throw tg::sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "MY program has no function " + entry);
  }
}

Program::~Program() { dlclose(handle_); }

} // namespace my
