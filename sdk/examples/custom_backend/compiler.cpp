// Compiling: render C, run the system C compiler on it in a private temporary folder, keep the
// shared object's bytes. Thread-safe: every compile has its own folder.
#include "compiler.hpp"

#include <tg/sdk/kernel_ir.hpp>
#include <tg/sdk/matrix_unit.hpp>
#include <tg/sdk/render/render.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sys/wait.h>

namespace fs = std::filesystem;

namespace my {
namespace {

std::string c_compiler() {
  const char* cc = std::getenv("TG_MY_CC");
  return cc && *cc ? cc : TG_MY_DEFAULT_CC;
}

// Runs a shell command; returns its exit status and what it printed (stdout and stderr).
int run(const std::string& command, std::string& output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw tg::sdk::PluginError(TG_ERROR_INTERNAL, "cannot run `" + command + "`");
  char chunk[4096];
  for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, pipe)) > 0;) output.append(chunk, n);
  int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }

// A fresh folder removed when the compile ends, whatever happens.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "tg_my_XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      throw tg::sdk::PluginError(TG_ERROR_INTERNAL, "cannot create a temporary folder");
    path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

// One MMA on my.m4n4k4.f32 as plain C: work item t holds row t of A and of C/D and all of B, so
// it computes its row of D alone (the C loop runs the 4 items one after another).
std::string mma_statement(const tg::sdk::render::MmaStatement& mma) {
  std::string s = "/* my.m4n4k4 */";
  for (size_t j = 0; j < 4; ++j) { // d[j] += sum over k of a[k] * b[k * 4 + j]
    s += " " + mma.d[j] + " +=";
    for (size_t k = 0; k < 4; ++k) s += (k ? " + " : " ") + mma.a[k] + " * " + mma.b[k * 4 + j];
    s += ";";
  }
  return s;
}

} // namespace

std::vector<tg_matrix_unit> matrix_units() {
  using tg::sdk::matrix_layout;
  // Item t's bits pick the row (t = row); element e's bits pick columns 1 and 2 (A, C: e = column).
  const tg_matrix_layout row_per_item = matrix_layout({{1, 0}, {2, 0}}, {{0, 1}, {0, 2}});
  // B is replicated: the item bits move nothing, and element e is B[e / 4][e % 4] (row = k).
  const tg_matrix_layout all_of_b = matrix_layout({{0, 0}, {0, 0}}, {{0, 1}, {0, 2}, {1, 0}, {2, 0}});
  return {tg::sdk::matrix_unit("my.m4n4k4.f32", 4, 4, 4, 2, TG_DTYPE_FLOAT32, TG_DTYPE_FLOAT32,
                               TG_DTYPE_FLOAT32, row_per_item, all_of_b, row_per_item)};
}

tg::sdk::CompileOutput Compiler::compile(const tg::sdk::CompileRequest& request) {
  if (!request.target.empty() && request.target != kTarget)
    throw tg::sdk::PluginError(TG_ERROR_INVALID_ARGUMENT, "unknown target \"" + request.target +
                                                              "\" (MY compiles for \"" + kTarget + "\")");
  tg::sdk::check_mma(request.ir, matrix_units()); // an MMA must match the unit it names
  tg::sdk::render::Options options;
  options.mma = mma_statement;
  // render_c rather than render(Dialect::c, ...): the plugin then links only the C dialect.
  tg::sdk::render::Source source = tg::sdk::render::render_c(request.ir, options);
  TempDir dir;
  std::ofstream(dir.path / "kernel.c") << source.text;
  std::string log;
  const std::string command = c_compiler() + " -O" + std::to_string(std::min(request.opt_level, 3u)) +
                              " -shared -fPIC -o " + quoted(dir.path / "kernel.so") + " " +
                              quoted(dir.path / "kernel.c") + " -lm";
  if (run(command, log) != 0)
    throw tg::sdk::PluginError(
        TG_ERROR_INTERNAL, "the C compiler failed on kernel " + request.ir.name + ": `" + command + "`", log);
  std::ifstream so(dir.path / "kernel.so", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(so)), std::istreambuf_iterator<char>());
  // payload: the entry's name, a NUL, then the shared object
  std::string payload = source.entry + '\0' + bytes;
  tg::sdk::CompileOutput out;
  out.target = kTarget;
  out.payload.resize(payload.size());
  std::memcpy(out.payload.data(), payload.data(), payload.size());
  if (request.want_source) out.source = source.text;
  out.log = log;
  return out;
}

std::string Compiler::cache_key(const std::string& target) {
  // The compiler's identity: a new compiler version may make different code.
  static const std::string version = [] {
    std::string text;
    run(c_compiler() + " --version", text);
    return text.substr(0, text.find('\n'));
  }();
  return std::string(kTarget) + "|" + c_compiler() + "|" + version + "|" + target;
}

} // namespace my
