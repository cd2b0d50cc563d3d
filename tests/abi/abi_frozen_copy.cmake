# cmake -DCURRENT=abi/include/tg/abi.h -DFROZEN=tests/abi/v1_0/tg/abi.h -P abi_frozen_copy.cmake
# tests/abi/v1_0/tg/abi.h is the 1.0 header, frozen: plugins built against it must keep loading.
# While the host is 1.0 the two files are identical. When the host gains a minor version, this
# check must become "the current header is an append-only extension of the copy" (same fields at
# the same offsets, new members only at the ends of structs and of tg_plugin_api): it fails until
# then, so nobody bumps the minor without updating it.
file(READ ${CURRENT} current)
file(READ ${FROZEN} frozen)
string(REGEX MATCH "#define TG_ABI_VERSION_MINOR ([0-9]+)" _ "${current}")
set(minor ${CMAKE_MATCH_1})
if(NOT minor STREQUAL "0")
  message(FATAL_ERROR "the host speaks ABI 1.${minor}: replace this identity check with an append-only "
                      "comparison against the frozen 1.0 copy ${FROZEN}")
endif()
if(NOT current STREQUAL frozen)
  message(FATAL_ERROR "${CURRENT} differs from the frozen 1.0 copy ${FROZEN} while the host is still 1.0: "
                      "a 1.0 change after release breaks plugins built against it (append in a new minor)")
endif()
message(STATUS "${CURRENT} is the frozen 1.0 header")
