# tg_add_plugin(NAME name SOURCES ... [LIBS ...])
# Builds libtg_device_<name>.so: hidden visibility and a version script, so the only exported
# symbol is the ABI entry point (tests/abi checks this with nm).

function(tg_add_plugin)
  cmake_parse_arguments(P "" "NAME" "SOURCES;LIBS" ${ARGN})
  set(target tg_device_${P_NAME})
  add_library(${target} MODULE ${P_SOURCES})
  set_target_properties(${target} PROPERTIES PREFIX "lib" OUTPUT_NAME tg_device_${P_NAME}
    C_VISIBILITY_PRESET hidden CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    LINK_DEPENDS ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/plugin.map)
  target_link_options(${target} PRIVATE "LINKER:--version-script=${CMAKE_CURRENT_FUNCTION_LIST_DIR}/plugin.map"
    "LINKER:--no-undefined" "LINKER:-z,defs")
  target_link_libraries(${target} PRIVATE tg::sdk ${P_LIBS})
  tg_warnings(${target})
endfunction()
