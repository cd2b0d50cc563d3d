// Test-only behaviour, compiled in only when TG_CPU_TEST_HOOKS is defined: the build tree makes a
// second copy of this plugin with it (tests/plugins/CMakeLists.txt, outside lib/), so the real
// plugin never has it. A kernel opts in by its name:
//   tg_test_fatal_*        renders a call to another architecture's intrinsic, which the target's
//                          instruction selector cannot select: LLVM reports a fatal error.
//   tg_test_native_half_*  renders float16 EXP2/LOG2/SIN in half precision (what the plugin did
//                          before it computed them in float): fatal on CPUs with native fp16.
//   tg_test_rendezvous_<n>_* waits in compile() until n such compiles run at once (or fails after
//                          10 s), which proves that the caller compiles in parallel.
#pragma once

#include <string>

namespace tg::cpu::test_hooks {

#ifdef TG_CPU_TEST_HOOKS
inline constexpr bool kEnabled = true;
#else
inline constexpr bool kEnabled = false;
#endif

inline bool fatal(const std::string& kernel) { return kEnabled && kernel.rfind("tg_test_fatal_", 0) == 0; }
inline bool native_half(const std::string& kernel) {
  return kEnabled && kernel.rfind("tg_test_native_half_", 0) == 0;
}
// Blocks as described above; throws PluginError on timeout. No-op without the hooks.
void rendezvous(const std::string& kernel);

} // namespace tg::cpu::test_hooks
