# Runs `tg <ARGS>` (ARGS separated by |) with TG_PLUGIN_PATH=<PLUGIN_PATH> and fails unless it
# exits with EXPECT_EXIT and its output (stdout and stderr) matches the regex EXPECT.
# Used by tests/tools/CMakeLists.txt: `tg devices` / `tg info` report failures in the exit status
# while still printing the full listing.
foreach(var TG PLUGIN_PATH EXPECT_EXIT EXPECT ARGS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "cli_exit_status.cmake: -D${var}=... is required")
  endif()
endforeach()
string(REPLACE "|" ";" args "${ARGS}")
set(ENV{TG_PLUGIN_PATH} "${PLUGIN_PATH}")
execute_process(COMMAND ${TG} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT rc STREQUAL EXPECT_EXIT)
  message(FATAL_ERROR "tg ${args} (TG_PLUGIN_PATH=${PLUGIN_PATH}) exited with ${rc}, expected "
                      "${EXPECT_EXIT}. Output:\n${all}")
endif()
if(NOT all MATCHES "${EXPECT}")
  message(FATAL_ERROR "tg ${args} exited with ${rc} as expected, but its output does not match "
                      "'${EXPECT}'. Output:\n${all}")
endif()
message(STATUS "tg ${args}: exit ${rc}, output matches '${EXPECT}'")
