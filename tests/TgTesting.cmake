# tg_add_test(NAME name SOURCES ... LIBS ... LABELS ... [TIMEOUT seconds] [ENV ...] [DEVICE_SUITE]
#             [LAUNCHER command ...])
# One Boost.Test executable (dynamic Boost.Test, its own main) registered with ctest.
# DEVICE_SUITE: a suite that runs on any device (TG_DEVICE); it is not registered here but once
# per device by tg_add_device_suite(), as <name>_<plugin>.
# LAUNCHER: the command that starts the suite (e.g. mpirun -np 2 for a suite every rank runs).
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
  cmake_parse_arguments(T "DEVICE_SUITE" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS;ENV;LAUNCHER" ${ARGN})
  # Tests compile as batches of TG_TEST_UNITY_BATCH sources, one translation unit each: their
  # headers (Boost.Test, the tensor API) and template instantiations dominate each file's compile,
  # and CI builds every test twice on 2 cores. The batch files are written here rather than by
  # CMake's UNITY_BUILD, whose files #include each source by its absolute path: a clone at another
  # path (CI builds a fresh one) would then miss every ccache entry. These #include the sources by
  # their path from the source root, which ccache's base dir (CMakeLists.txt) makes the same
  # everywhere. Batch 0 also defines the module's main. (A fixture in an anonymous namespace is
  # fine in a test file; GCC warns about it once the file shares a translation unit.)
  set(batch_files)
  set(content "#define BOOST_TEST_MODULE ${T_NAME}\n#include <boost/test/unit_test.hpp>\n")
  set(in_batch 0)
  list(LENGTH T_SOURCES left)
  foreach(src IN LISTS T_SOURCES)
    get_filename_component(abs ${src} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${abs})
    string(APPEND content "#include \"${rel}\"\n")
    math(EXPR in_batch "${in_batch} + 1")
    math(EXPR left "${left} - 1")
    if(in_batch EQUAL TG_TEST_UNITY_BATCH OR left EQUAL 0)
      list(LENGTH batch_files n)
      set(file ${CMAKE_CURRENT_BINARY_DIR}/${T_NAME}_batch${n}.cpp)
      file(CONFIGURE OUTPUT ${file} CONTENT "${content}")
      list(APPEND batch_files ${file})
      set(content "")
      set(in_batch 0)
    endif()
  endforeach()
  add_executable(${T_NAME} ${batch_files})
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_options(${T_NAME} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-Wno-subobject-linkage>)
  target_link_libraries(${T_NAME} PRIVATE Boost::unit_test_framework ${T_LIBS})
  tg_warnings(${T_NAME})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  if(T_DEVICE_SUITE)
    set_property(GLOBAL APPEND PROPERTY TG_DEVICE_SUITES ${T_NAME})
    set_target_properties(${T_NAME} PROPERTIES TG_SUITE_LABELS "${T_LABELS}" TG_SUITE_TIMEOUT ${T_TIMEOUT}
      TG_SUITE_ENV "${T_ENV}")
    # Installed too, so an out-of-tree plugin's author runs the suite on their device from an
    # installed package: <prefix>/libexec/tinygrad.cpp/<suite> -- --device NAME (docs/plugin-guide.md).
    file(RELATIVE_PATH libdir_from_here /p/${CMAKE_INSTALL_LIBEXECDIR}/tinygrad.cpp /p/${CMAKE_INSTALL_LIBDIR})
    set_target_properties(${T_NAME} PROPERTIES INSTALL_RPATH "$ORIGIN/${libdir_from_here}")
    install(TARGETS ${T_NAME} RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/tinygrad.cpp)
    return()
  endif()
  tg_register_test(${T_NAME} ${T_NAME} "${T_LABELS}" ${T_TIMEOUT} "${T_ENV}" ${T_LAUNCHER})
endfunction()

# Registers the executable `target` as ctest `name`, with the environment every suite gets; extra
# arguments are a launcher command put in front of it.
function(tg_register_test name target labels timeout env)
  # AddressSanitizer runs the host code (lowering, the interpreter) several times slower than -O3
  # (opt_test on a 2-core AVX2 VM: ~64 s release, ~170 s asan at -O1): a suite sized for a release
  # build gets five times its limit there, a margin for slower machines.
  if(CMAKE_CXX_FLAGS MATCHES "-fsanitize=address")
    math(EXPR timeout "${timeout} * 5")
  endif()
  add_test(NAME ${name} COMMAND ${ARGN} $<TARGET_FILE:${target}> --color_output=no --report_level=short
    --catch_system_errors=no)
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT ${timeout}
    ENVIRONMENT "BOOST_TEST_COLOR_OUTPUT=no;BOOST_TEST_CATCH_SYSTEM_ERRORS=no;TG_PLUGIN_PATH=${TG_PLUGIN_OUTPUT_DIR};${env}"
    SKIP_RETURN_CODE 77)
endfunction()

# tg_add_device_suite(plugin DEVICE [ENV var=value ...] [TIMEOUT seconds]): registers every
# DEVICE_SUITE as <suite>_<plugin>, run with TG_DEVICE=DEVICE (and ENV) and labelled
# plugin-<plugin>; TIMEOUT replaces the suites' own for a device whose compiler is slow. One line
# per in-tree plugin that can run here (tests/CMakeLists.txt); call it after the suites are defined.
function(tg_add_device_suite plugin device)
  cmake_parse_arguments(D "" "TIMEOUT" "ENV" ${ARGN})
  get_property(suites GLOBAL PROPERTY TG_DEVICE_SUITES)
  foreach(suite ${suites})
    get_target_property(labels ${suite} TG_SUITE_LABELS)
    get_target_property(timeout ${suite} TG_SUITE_TIMEOUT)
    get_target_property(env ${suite} TG_SUITE_ENV)
    if(D_TIMEOUT)
      set(timeout ${D_TIMEOUT})
    endif()
    if(NOT env)
      set(env "")
    endif()
    list(FILTER labels EXCLUDE REGEX "^plugin-")
    tg_register_test(${suite}_${plugin} ${suite} "${labels};plugin-${plugin}" ${timeout} "TG_DEVICE=${device};${env};${D_ENV}")
  endforeach()
endfunction()
