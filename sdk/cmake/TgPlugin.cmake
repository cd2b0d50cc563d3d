# tg_add_plugin(NAME name SOURCES ... [LIBS ...] [INSTALL] [INSTALL_DESTINATION dir])
# Builds libtg_device_<name>.so: hidden visibility and a version script, so the only exported
# symbol is the ABI entry point, and unused sections dropped at link time (the SDK libraries are
# compiled with -ffunction-sections -fdata-sections), so the plugin carries only the parts of the
# static SDK it uses. Works in the tinygrad.cpp tree and from the installed package
# (find_package(tinygrad_cpp CONFIG)).
# - In the tree the plugin lands in build/<preset>/lib/tinygrad.cpp/plugins/, where libtg looks.
# - It installs nothing unless asked: INSTALL puts it in <prefix>/<libdir>/tinygrad.cpp/plugins
#   (the plugin directory of a libtg installed in the same prefix; a plugin in its own prefix is
#   found through TG_PLUGIN_PATH or the user plugin directory), INSTALL_DESTINATION elsewhere.
# - When the project enables testing (BUILD_TESTING, or TG_BUILD_TESTS in the tree) it registers the
#   ctest `plugin_exports_<name>`, which checks the exports with nm.
function(tg_add_plugin)
  cmake_parse_arguments(P "INSTALL" "NAME;INSTALL_DESTINATION" "SOURCES;LIBS" ${ARGN})
  set(target tg_device_${P_NAME})
  set(map ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/plugin.map)
  add_library(${target} MODULE ${P_SOURCES})
  set_target_properties(${target} PROPERTIES PREFIX "lib" OUTPUT_NAME tg_device_${P_NAME}
    C_VISIBILITY_PRESET hidden CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    LINK_DEPENDS ${map})
  # Sections are kept when reachable from the exported entry point or from static constructors
  # (.init_array), so the entry symbol and static registration objects survive the collection.
  target_compile_options(${target} PRIVATE -ffunction-sections -fdata-sections)
  if(APPLE) # ld64 has no version scripts: export the entry point by name (never run: docs/metal.md)
    target_link_options(${target} PRIVATE "LINKER:-exported_symbol,_tg_plugin_query_v1" "LINKER:-undefined,error"
      "LINKER:-dead_strip")
  else()
    target_link_options(${target} PRIVATE "LINKER:--version-script=${map}" "LINKER:--no-undefined" "LINKER:-z,defs"
      "LINKER:--gc-sections")
  endif()
  if(TARGET tg::sdk) # inside the tinygrad.cpp tree
    target_link_libraries(${target} PRIVATE tg::sdk ${P_LIBS})
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${TG_PLUGIN_OUTPUT_DIR})
    tg_warnings(${target})
  else() # from the installed package
    target_link_libraries(${target} PRIVATE tinygrad_cpp::sdk ${P_LIBS})
  endif()
  if(P_INSTALL AND NOT P_INSTALL_DESTINATION)
    include(GNUInstallDirs)
    set(P_INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/tinygrad.cpp/plugins)
  endif()
  if(P_INSTALL_DESTINATION)
    install(TARGETS ${target} LIBRARY DESTINATION ${P_INSTALL_DESTINATION})
  endif()
  if(BUILD_TESTING OR TG_BUILD_TESTS)
    add_test(NAME plugin_exports_${P_NAME}
      COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DPLUGIN=$<TARGET_FILE:${target}>
              -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/check_exports.cmake)
    set_tests_properties(plugin_exports_${P_NAME} PROPERTIES LABELS "unit;plugin-${P_NAME}" TIMEOUT 60)
  endif()
endfunction()
