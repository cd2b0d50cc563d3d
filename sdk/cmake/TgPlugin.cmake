# tg_add_plugin(NAME name SOURCES ... [LIBS ...])
# Builds libtg_device_<name>.so: hidden visibility and a version script, so the only exported
# symbol is the ABI entry point. When testing is enabled it also registers the ctest
# `plugin_exports_<name>`, which checks that with nm.
function(tg_add_plugin)
  cmake_parse_arguments(P "" "NAME" "SOURCES;LIBS" ${ARGN})
  set(target tg_device_${P_NAME})
  set(map ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/plugin.map)
  add_library(${target} MODULE ${P_SOURCES})
  set_target_properties(${target} PROPERTIES PREFIX "lib" OUTPUT_NAME tg_device_${P_NAME}
    C_VISIBILITY_PRESET hidden CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    LINK_DEPENDS ${map})
  target_link_options(${target} PRIVATE "LINKER:--version-script=${map}" "LINKER:--no-undefined" "LINKER:-z,defs")
  target_link_libraries(${target} PRIVATE tg::sdk ${P_LIBS})
  if(COMMAND tg_warnings) # inside the tinygrad.cpp tree
    tg_warnings(${target})
  endif()
  if(BUILD_TESTING OR TG_BUILD_TESTS)
    add_test(NAME plugin_exports_${P_NAME}
      COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DPLUGIN=$<TARGET_FILE:${target}>
              -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/check_exports.cmake)
    set_tests_properties(plugin_exports_${P_NAME} PROPERTIES LABELS "unit;plugin-${P_NAME}")
  endif()
endfunction()
