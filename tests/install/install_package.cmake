# cmake -DBUILD_DIR=<tinygrad.cpp build> -DWORK_DIR=<scratch> -DLIBDIR=<CMAKE_INSTALL_LIBDIR>
#       -DLIBEXECDIR=<CMAKE_INSTALL_LIBEXECDIR> -DCXX=<C++ compiler> -P install_package.cmake
# Installs the build into WORK_DIR/prefix and checks it from outside, with no TG_PLUGIN_PATH:
# the layout, the installed headers (the public header <tinygrad/tinygrad.hpp> and exactly the
# kernel/ headers it needs, none of the internal ones), a consumer project (tests/install/consumer)
# built with find_package against that prefix only, its program (including only the public
# header) computing on the installed CPU plugin, its program on the installed LLVM IR renderer,
# the installed `tg` finding libtg and its plugins, the consumer's plugin installed into its own
# prefix and found through TG_PLUGIN_PATH and the user plugin directory, and pkg-config's flags,
# with which the consumer's program is built and run again.
foreach(var BUILD_DIR WORK_DIR LIBDIR LIBEXECDIR CXX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_package.cmake: -D${var}=... is required")
  endif()
endforeach()
include(${CMAKE_CURRENT_LIST_DIR}/install_helpers.cmake)

set(prefix ${WORK_DIR}/prefix)
set(plugin_prefix ${WORK_DIR}/plugin_prefix) # the consumer's plugin, installed on its own
set(empty_home ${WORK_DIR}/empty_xdg)        # no user plugins in the way
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${empty_home})

tg_install_tree(${BUILD_DIR} ${prefix})
set(plugin_dir ${prefix}/${LIBDIR}/tinygrad.cpp/plugins)
foreach(file bin/tg ${LIBDIR}/libtg.so ${LIBDIR}/libtg.so.0 ${LIBDIR}/libtg.so.0.1.0 ${LIBDIR}/libtg_sdk.a
        ${LIBDIR}/libtg_sdk_render.a ${LIBDIR}/libtg_sdk_llvm.a
        ${LIBEXECDIR}/tinygrad.cpp/tensor_ops_test ${LIBEXECDIR}/tinygrad.cpp/tensor_api_test
        ${LIBDIR}/tinygrad.cpp/plugins/libtg_device_cpu.so
        ${LIBDIR}/cmake/tinygrad_cpp/tinygrad_cppConfig.cmake
        ${LIBDIR}/cmake/tinygrad_cpp/tinygrad_cppConfigVersion.cmake
        ${LIBDIR}/cmake/tinygrad_cpp/TgPlugin.cmake ${LIBDIR}/pkgconfig/tinygrad_cpp.pc
        include/tinygrad.cpp/tg/abi.h include/tinygrad.cpp/tg/sdk/plugin.hpp
        include/tinygrad.cpp/tinygrad/tinygrad.hpp include/tinygrad.cpp/kernel/tensor/tensor.hpp)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "the install lacks ${file} (prefix ${prefix})")
  endif()
endforeach()
if(EXISTS ${plugin_dir}/libtg_device_cpu_test_hooks.so OR EXISTS ${prefix}/${LIBDIR}/libtg_device_cpu.so)
  message(FATAL_ERROR "test-only or misplaced plugins were installed under ${prefix}/${LIBDIR}")
endif()

# The installed kernel/ headers are exactly the public header's closure (sdk/cmake/TgInstall.cmake,
# tg_public_headers, listed in the build's package/public_headers.txt), and no internal header
# got in: the consumer below compiles against them, so a missing one fails there.
set(include_root ${prefix}/include/tinygrad.cpp)
foreach(internal kernel/codegen/lowerer.hpp kernel/engine/realize.hpp)
  if(EXISTS ${include_root}/${internal})
    message(FATAL_ERROR "the internal header ${internal} was installed (${include_root}); "
      "a public header includes it: see the warning configuring ${BUILD_DIR} prints")
  endif()
endforeach()
file(GLOB_RECURSE installed_headers LIST_DIRECTORIES false RELATIVE ${include_root} ${include_root}/kernel/*)
list(SORT installed_headers)
file(STRINGS ${BUILD_DIR}/package/public_headers.txt public_headers)
list(SORT public_headers)
if(NOT installed_headers STREQUAL public_headers)
  string(REPLACE ";" "\n  " installed_shown "${installed_headers}")
  string(REPLACE ";" "\n  " public_shown "${public_headers}")
  message(FATAL_ERROR "installed kernel/ headers:\n  ${installed_shown}\n"
    "differ from the public header's closure (${BUILD_DIR}/package/public_headers.txt):\n  ${public_shown}")
endif()
list(LENGTH public_headers public_count)
message(STATUS "installed headers: tinygrad/tinygrad.hpp and its ${public_count} kernel/ headers: ok")

tg_build_consumer(${CMAKE_CURRENT_LIST_DIR}/consumer ${WORK_DIR}/consumer ${prefix}
  -DCMAKE_INSTALL_PREFIX=${plugin_prefix})

set(clean_env UNSET TG_PLUGIN_PATH TG_DEVICE ENV XDG_DATA_HOME=${empty_home})
tg_run_expect(consumer_computes_on_installed_cpu "device CPU: \\[72, 90\\] in 1 kernel ok" ${clean_env}
  COMMAND ${WORK_DIR}/consumer/consumer)
tg_run_expect(sdk_llvm_from_the_package "sdk_llvm consumer ok" COMMAND ${WORK_DIR}/consumer/llvm_loop)
tg_run_expect(installed_tg_finds_its_plugins
  "plugin cpu [^\n]* at ${plugin_dir}/libtg_device_cpu.so \\(installed plugin dir\\)" ${clean_env}
  COMMAND ${prefix}/bin/tg devices)

# The consumer's plugin in its own prefix: through TG_PLUGIN_PATH, then through the user dir.
set(own_dir ${plugin_prefix}/${LIBDIR}/tinygrad.cpp/plugins)
tg_run_expect(own_prefix_plugin_through_tg_plugin_path
  "plugin trivial 1.0 [^\n]* at ${own_dir}/libtg_device_trivial.so \\(TG_PLUGIN_PATH\\).*\nTRIVIAL +trivial device +trivial +consumer / "
  UNSET TG_DEVICE ENV XDG_DATA_HOME=${empty_home} TG_PLUGIN_PATH=${own_dir} COMMAND ${prefix}/bin/tg devices)
set(xdg ${WORK_DIR}/xdg)
file(COPY ${own_dir}/libtg_device_trivial.so DESTINATION ${xdg}/tinygrad.cpp/plugins)
tg_run_expect(own_prefix_plugin_through_user_dir
  "plugin trivial 1.0 [^\n]* \\(user plugin dir\\).*\nTRIVIAL +trivial device +trivial +consumer / "
  UNSET TG_PLUGIN_PATH TG_DEVICE ENV XDG_DATA_HOME=${xdg} COMMAND ${prefix}/bin/tg devices)

# pkg-config: the flags name the prefix's include dir and libtg.
execute_process(COMMAND ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${prefix}/${LIBDIR}/pkgconfig
                        pkg-config --cflags --libs tinygrad_cpp
  RESULT_VARIABLE rc OUTPUT_VARIABLE flags ERROR_VARIABLE flags)
tg_check_result("pkg-config --cflags --libs tinygrad_cpp" "${rc}" "${flags}")
string(STRIP "${flags}" flags)
if(NOT flags MATCHES "^-I([^ ]+) -L([^ ]+) -ltg$")
  message(FATAL_ERROR "pkg-config --cflags --libs tinygrad_cpp gave '${flags}'")
endif()
set(include_dir ${CMAKE_MATCH_1})
set(lib_dir ${CMAKE_MATCH_2})
if(NOT EXISTS ${include_dir}/tinygrad/tinygrad.hpp OR NOT EXISTS ${lib_dir}/libtg.so)
  message(FATAL_ERROR "pkg-config's -I${include_dir} / -L${lib_dir} do not point into ${prefix}")
endif()
message(STATUS "pkg-config: ${flags}")

# The consumer's program again, built with pkg-config's flags alone (as a Makefile would).
separate_arguments(pc_flags UNIX_COMMAND "${flags}")
separate_arguments(san_flags UNIX_COMMAND "${SAN_FLAGS}")
set(pc_program ${WORK_DIR}/consumer_pkg_config)
execute_process(COMMAND ${CXX} -std=c++20 ${san_flags} ${CMAKE_CURRENT_LIST_DIR}/consumer/main.cpp ${pc_flags}
                        -Wl,-rpath,${lib_dir} -o ${pc_program}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
tg_check_result("${CXX} -std=c++20 consumer/main.cpp ${flags}" "${rc}" "${out}")
tg_run_expect(pkg_config_consumer_computes "device CPU: \\[72, 90\\] in 1 kernel ok" ${clean_env}
  COMMAND ${pc_program})
