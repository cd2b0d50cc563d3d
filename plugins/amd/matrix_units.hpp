// The matrix units the AMD plugin declares (ABI 1.4, tg_matrix_unit; docs/amd.md): per processor,
// the same list for the device (Device::matrix_units) and the compiler (check_mma, then the
// intrinsic each MMA becomes).
#pragma once

#include <tg/abi.h>

#include <string>
#include <vector>

namespace tg::amd {

struct AmdMatrixUnit {
  tg_matrix_unit unit;
  const char* intrinsic;   // the LLVM intrinsic MMA on this unit becomes
  bool mfma;               // takes MFMA's trailing cbsz, abid, blgp immediates (all 0 here)
  const char* instruction; // the mnemonic llvm-objdump prints for it on this processor
};

// `gfx` is an LLVM processor name (gfx90a, gfx942, gfx1100); others declare none.
std::vector<AmdMatrixUnit> amd_matrix_units(const std::string& gfx);
// The descriptions alone, in the same order (MMA's arg0 indexes them).
std::vector<tg_matrix_unit> matrix_unit_descriptions(const std::string& gfx);

} // namespace tg::amd
