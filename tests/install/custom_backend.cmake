# cmake -DBUILD_DIR=<tinygrad.cpp build> -DSOURCE_DIR=<tinygrad.cpp source> -DWORK_DIR=<scratch>
#       -DSTEPS=<training steps> -DLIBEXECDIR=<CMAKE_INSTALL_LIBEXECDIR> [-DMAX_PLUGIN_BYTES=<n>]
#       -P custom_backend.cmake
# The capstone, as an outsider does it: install this build into a scratch prefix, build the SDK's
# out-of-tree example plugin `my` (sdk/examples/custom_backend) from that prefix only, as a
# Release build (what an author ships), then
#  - its size: at most MAX_PLUGIN_BYTES when given (the plugin links only the SDK code it uses),
#  - tg conform on it (must pass: exit 0, no failure),
#  - the installed tensor suites (<prefix>/libexec/tinygrad.cpp) on MY,
#  - the run-time swap test against it (same graph on CPU and MY, tensors moved both ways),
#  - Tensor({1,2,3}) + Tensor({4,5,6}) on MY through the installed package (the consumer program),
#  - a float32 matmul on MY (matmul_my): correct, and run on MY's matrix unit (its C shows the
#    unit's statement, marked /* my.m4n4k4 */, in DEBUG=3's source),
#  - tg train mnist --device MY,
# and `tg plugin new acme`: the written project builds from the prefix and its tests run (the
# exports check and conform).
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR STEPS LIBEXECDIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "custom_backend.cmake: -D${var}=... is required")
  endif()
endforeach()
include(${CMAKE_CURRENT_LIST_DIR}/install_helpers.cmake)

set(prefix ${WORK_DIR}/prefix)
set(my_build ${WORK_DIR}/my)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/empty_xdg ${WORK_DIR}/cache)

tg_install_tree(${BUILD_DIR} ${prefix})
tg_build_consumer(${SOURCE_DIR}/sdk/examples/custom_backend ${my_build} ${prefix} -DCMAKE_BUILD_TYPE=Release)
set(my_plugin ${my_build}/libtg_device_my.so)
if(NOT EXISTS ${my_plugin})
  message(FATAL_ERROR "the example did not produce ${my_plugin}")
endif()
file(SIZE ${my_plugin} my_plugin_bytes)
message(STATUS "libtg_device_my.so: ${my_plugin_bytes} bytes")
if(MAX_PLUGIN_BYTES AND my_plugin_bytes GREATER MAX_PLUGIN_BYTES)
  message(FATAL_ERROR "libtg_device_my.so is ${my_plugin_bytes} bytes, over the bound of ${MAX_PLUGIN_BYTES}: "
    "does tg_add_plugin still link with --gc-sections, and the SDK compile with -ffunction-sections?")
endif()

# Only the installed plugins and MY; a fresh kernel cache so every kernel really goes through cc.
set(env ENV TG_PLUGIN_PATH=${my_build} XDG_DATA_HOME=${WORK_DIR}/empty_xdg TG_CACHE_DIR=${WORK_DIR}/cache
        BOOST_TEST_COLOR_OUTPUT=no BOOST_TEST_CATCH_SYSTEM_ERRORS=no)

tg_run_expect(conform_my "tg conform my: [0-9]+ cases: [0-9]+ passed, 0 failed, [0-9]+ skipped, 0 unavailable, 0 crashed"
  ${env} COMMAND ${prefix}/bin/tg conform my --junit ${WORK_DIR}/conform_my.xml)
tg_run_expect(hello_my "on MY: \\[5, 7, 9\\]" ${env} COMMAND ${my_build}/hello_my)
tg_run_expect(matmul_my "32x48 @ 48x16 on MY: correct" ${env} COMMAND ${my_build}/matmul_my)
# The core lowers a float32 matmul onto the unit MY declares (my.m4n4k4.f32) and MY renders its MMA
# with the hook of compiler.cpp. DEBUG=3 prints each kernel's source; the cache is bypassed then.
tg_run_expect(matmul_my_uses_the_matrix_unit "--- my source[^\n]*\n.*/\\* my\\.m4n4k4 \\*/.*on MY: correct"
  ${env} DEBUG=3 COMMAND ${my_build}/matmul_my)
tg_run_expect(tg_devices_lists_my "plugin my [^\n]* at ${my_plugin} \\(TG_PLUGIN_PATH\\)" ${env}
  COMMAND ${prefix}/bin/tg devices)

foreach(suite tensor_api_test tensor_ops_test)
  tg_run_expect(${suite}_on_my "device under test: MY.*(No errors detected|passed)" ${env}
    COMMAND ${prefix}/${LIBEXECDIR}/tinygrad.cpp/${suite} --report_level=short -- --device MY)
endforeach()
# Here MY is not on the search path: the test loads it from its file while running.
tg_run_expect(swap_cpu_and_my "No errors detected" UNSET TG_PLUGIN_PATH
  ENV XDG_DATA_HOME=${WORK_DIR}/empty_xdg TG_CACHE_DIR=${WORK_DIR}/cache TG_SWAP_PLUGIN=${my_plugin}
  COMMAND ${BUILD_DIR}/bin/runtime_swap_test --run_test=the_given_plugin_computes_like_cpu_and_tensors_move_both_ways)

tg_run_expect(train_on_my "test accuracy: [0-9.]+%" ${env}
  COMMAND ${prefix}/bin/tg train mnist --device MY --steps ${STEPS} --bs 64 --test-images 512)

# tg plugin new: a project an outsider starts from; built from the prefix only, its test runs
# tg conform (every device case unavailable until the TODOs are filled in: exit 0, not "passed").
tg_run_expect(plugin_new "wrote the acme plugin project" COMMAND ${prefix}/bin/tg plugin new acme ${WORK_DIR}/acme)
tg_build_consumer(${WORK_DIR}/acme ${WORK_DIR}/acme_build ${prefix})
tg_run_expect(acme_tests "plugin_exports_acme [^\n]* Passed.*conform_acme [^\n]* Passed.*100% tests passed" ${env}
  COMMAND ${CMAKE_CTEST_COMMAND} --test-dir ${WORK_DIR}/acme_build --output-on-failure)
tg_run_expect(acme_is_unavailable "libtg_device_acme.so: [0-9]+ cases: [0-9]+ passed, 0 failed, [0-9]+ skipped, [1-9][0-9]* unavailable"
  ${env} COMMAND ${prefix}/bin/tg conform ${WORK_DIR}/acme_build/libtg_device_acme.so)
