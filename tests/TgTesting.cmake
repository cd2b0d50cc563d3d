# tg_add_test(NAME name SOURCES ... LIBS ... LABELS ... [TIMEOUT seconds] [ENV ...])
# One Boost.Test executable (dynamic Boost.Test, its own main) registered with ctest.
#
# A crash or a hang must fail fast and never take the next test case with it:
# - --catch_system_errors=no: Boost.Test otherwise turns SIGSEGV/SIGABRT into a failed assertion by
#   jumping out of the signal handler, over every destructor on the stack (a mutex held by the
#   crashed code stays locked, and the next case deadlocks on it). Without it the process dies at
#   once and ctest reports the signal. (Set BOOST_TEST_CATCH_SYSTEM_ERRORS=no when running a test
#   binary by hand for the same behaviour; the ctest environment below does.)
# - TIMEOUT: every test has one, sized to the suite (default 300 s for a Debug build on a loaded
#   2-core machine); ctest kills a hung suite and reports it as a timeout.
function(tg_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS;ENV" ${ARGN})
  # The module's main lives in a generated file, so a suite may span several sources.
  set(main ${CMAKE_CURRENT_BINARY_DIR}/${T_NAME}_main.cpp)
  file(CONFIGURE OUTPUT ${main} CONTENT "#define BOOST_TEST_MODULE ${T_NAME}
#include <boost/test/unit_test.hpp>
")
  add_executable(${T_NAME} ${main} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE Boost::unit_test_framework ${T_LIBS})
  tg_warnings(${T_NAME})
  add_test(NAME ${T_NAME} COMMAND ${T_NAME} --color_output=no --report_level=short --catch_system_errors=no)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "BOOST_TEST_COLOR_OUTPUT=no;BOOST_TEST_CATCH_SYSTEM_ERRORS=no;TG_PLUGIN_PATH=${TG_PLUGIN_OUTPUT_DIR};${T_ENV}"
    SKIP_RETURN_CODE 77)
endfunction()
