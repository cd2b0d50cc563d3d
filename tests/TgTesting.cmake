# tg_add_test(NAME name SOURCES ... LIBS ... LABELS ... [ENV ...])
# One Boost.Test executable (dynamic Boost.Test, its own main) registered with ctest.
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
  add_test(NAME ${T_NAME} COMMAND ${T_NAME} --color_output=no --report_level=short)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT}
    ENVIRONMENT "BOOST_TEST_COLOR_OUTPUT=no;TG_PLUGIN_PATH=${PROJECT_BINARY_DIR}/lib;${T_ENV}"
    SKIP_RETURN_CODE 77)
endfunction()
