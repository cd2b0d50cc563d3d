# Steps of the install tests, for cmake -P scripts (install_package.cmake; the out-of-tree example
# plugin's test includes this file too):
#   tg_install_tree(BUILD_DIR PREFIX)                  cmake --install BUILD_DIR --prefix PREFIX
#   tg_build_consumer(SOURCE BINARY PREFIX [ARGS ...]) configure + build + install a project that sees
#                                                      only PREFIX (no package registry, no env paths)
#   tg_run_expect(NAME REGEX [ENV var=value ...] [UNSET var ...] COMMAND cmd ...)
#                                                      runs cmd, fails unless it exits 0 and its
#                                                      output matches REGEX
# Each step fails the script with the command's output.

function(tg_check_result what rc out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (exit ${rc}):\n${out}")
  endif()
endfunction()

function(tg_install_tree build_dir prefix)
  execute_process(COMMAND ${CMAKE_COMMAND} --install ${build_dir} --prefix ${prefix}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  tg_check_result("cmake --install ${build_dir} --prefix ${prefix}" "${rc}" "${out}")
endfunction()

function(tg_build_consumer source binary prefix)
  # Only the prefix: the environment's CMAKE_PREFIX_PATH and the user package registry could
  # point back at a build tree and hide a broken install.
  set(ENV{CMAKE_PREFIX_PATH} "")
  # A sanitizer build installs instrumented libraries: the consumer must be built the same way
  # (SAN_FLAGS, given by the test's registration) or it cannot link or start.
  set(san_args)
  if(SAN_FLAGS)
    foreach(var CMAKE_C_FLAGS CMAKE_CXX_FLAGS CMAKE_EXE_LINKER_FLAGS CMAKE_SHARED_LINKER_FLAGS CMAKE_MODULE_LINKER_FLAGS)
      list(APPEND san_args "-D${var}=${SAN_FLAGS}")
    endforeach()
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${source} -B ${binary} -G Ninja
                          -DCMAKE_BUILD_TYPE=Debug -DCMAKE_PREFIX_PATH=${prefix}
                          -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF
                          ${san_args} ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  tg_check_result("configuring ${source} against ${prefix}" "${rc}" "${out}")
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${binary} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  tg_check_result("building ${source}" "${rc}" "${out}")
  execute_process(COMMAND ${CMAKE_COMMAND} --install ${binary} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  tg_check_result("installing ${source}" "${rc}" "${out}")
endfunction()

function(tg_run_expect name regex)
  cmake_parse_arguments(R "" "" "ENV;UNSET;COMMAND" ${ARGN})
  set(env_args)
  foreach(var ${R_UNSET})
    list(APPEND env_args --unset=${var})
  endforeach()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env_args} ${R_ENV} ${R_COMMAND}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(REPLACE ";" " " shown "${R_COMMAND}")
  tg_check_result("${name}: ${shown}" "${rc}" "${out}")
  if(NOT out MATCHES "${regex}")
    message(FATAL_ERROR "${name}: output of ${shown} does not match '${regex}':\n${out}")
  endif()
  message(STATUS "${name}: ok")
endfunction()
