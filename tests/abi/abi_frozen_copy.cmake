# cmake -DCURRENT=abi/include/tg/abi.h -DFROZEN=tests/abi/v1_0/tg/abi.h -P abi_frozen_copy.cmake
# tests/abi/v1_0/tg/abi.h is the 1.0 header, frozen (v1_1 and v1_2 likewise): plugins built
# against it must keep loading. The current header must be an append-only extension of it: every line of the copy appears
# in the current header, in the same order (new lines may only be inserted), except the two lines
# a minor bump must change (the minor number and the size guards of the structs it appends to). The golden offsets in
# abi_layout_test.cpp check that insertions only appended to structs and to tg_plugin_api.
cmake_policy(SET CMP0007 NEW) # keep empty lines as list items
file(READ ${CURRENT} current)
file(READ ${FROZEN} frozen)
string(REGEX MATCH "#define TG_ABI_VERSION_MINOR ([0-9]+)" _ "${current}")
set(minor ${CMAKE_MATCH_1})
if(minor STREQUAL "0")
  if(NOT current STREQUAL frozen)
    message(FATAL_ERROR "${CURRENT} differs from the frozen 1.0 copy ${FROZEN} while the host is 1.0")
  endif()
  return()
endif()
# Lines as list items (semicolons and brackets escaped so list() keeps each line whole).
function(lines_of text out)
  string(REPLACE ";" "<semi>" text "${text}")
  string(REPLACE "[" "<lb>" text "${text}")
  string(REPLACE "]" "<rb>" text "${text}")
  string(REPLACE "\n" ";" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()
lines_of("${current}" cur)
lines_of("${frozen}" old)
list(LENGTH cur ncur)
set(i 0)
foreach(line IN LISTS old)
  if(line MATCHES "^#define TG_ABI_VERSION_MINOR " OR line MATCHES "^TG_ABI_STATIC_ASSERT\\(sizeof\\(tg_[a-z_]+\\) ==")
    continue()
  endif()
  set(found FALSE)
  while(i LESS ncur)
    list(GET cur ${i} c)
    math(EXPR i "${i} + 1")
    if(c STREQUAL line)
      set(found TRUE)
      break()
    endif()
  endwhile()
  if(NOT found)
    string(REPLACE "<semi>" ";" line "${line}")
    message(FATAL_ERROR "${CURRENT} (ABI 1.${minor}) is not an append-only extension of the frozen "
                        "copy ${FROZEN}: this frozen line is missing or out of order:\n${line}")
  endif()
endforeach()
message(STATUS "${CURRENT} (ABI 1.${minor}) extends the frozen header ${FROZEN} append-only")
