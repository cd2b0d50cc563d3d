# In-tree only: what `cmake --install` puts under a prefix, and the CMake package + pkg-config file
# that describe it. Layout (any prefix):
#   bin/tg
#   <libdir>/libtg.so -> libtg.so.<major> -> libtg.so.<version>, <libdir>/libtg_sdk*.a
#   libexec/tinygrad.cpp/   the device suites (tensor_ops_test, ...) when the tests are built
#   <libdir>/tinygrad.cpp/plugins/libtg_device_<name>.so     (tg_add_plugin(... INSTALL))
#   <libdir>/cmake/tinygrad_cpp/   tinygrad_cppConfig.cmake, ...ConfigVersion, ...Targets, TgPlugin.cmake
#   <libdir>/pkgconfig/tinygrad_cpp.pc
#   include/tinygrad.cpp/   tg/abi.h, tg/sdk/*.hpp, tinygrad/tinygrad.hpp (the public API) and the
#                           kernel/<ring>/*.hpp it includes, directly or not (tg_public_headers)
include(CMakePackageConfigHelpers)

# Libraries exported as tinygrad_cpp::<export name>. Adding an SDK library is one line here.
set(TG_EXPORTED_LIBRARIES
  "tg_abi:abi" # the ABI header (INTERFACE)
  "tg:tg"      # libtg.so, the core API
  "tg_sdk:sdk" # the plugin SDK (static)
  "tg_sdk_render:sdk_render" # the C-family renderers (static)
  "tg_onnx:onnx" # libtg_onnx.so, ONNX models (<tinygrad/onnx.hpp>)
  "tg_distributed:distributed" # libtg_distributed.so, ranks in several processes (<tinygrad/distributed.hpp>)
  "tg_models:models" # libtg_models.so, GPT (models/gpt; its headers stay in the source tree)
)
set(TG_PACKAGE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tinygrad_cpp)

# The public headers: the umbrella kernel/public/tinygrad/tinygrad.hpp and the transitive closure
# of the "kernel/..." headers it includes, found at configure time by scanning their
# `#include "kernel/..."` lines. Only these are installed; the rest of kernel/ stays internal.
# A closure and not a hand list because the installed headers must compile the umbrella: when a
# public header starts to include another kernel/ header, that one must be installed too, and a
# hand list would silently go stale (the install compiles nowhere but in the install test). The
# scan follows the code; what it must keep out, the install test checks (tests/install:
# kernel/codegen/lowerer.hpp, kernel/engine/realize.hpp), and configuring warns with the include
# chain that pulls such a header in. Every scanned file is a configure dependency, so an edited
# include list reconfigures. An #include under #if or in a block comment counts too (a superset).
# Sets <out_var> to the kernel/... paths (relative to the source tree, the umbrella excluded) and
# writes them to <build>/package/public_headers.txt.
function(tg_public_headers out_var)
  set(umbrella kernel/public/tinygrad/tinygrad.hpp)
  set(umbrellas ${umbrella} kernel/public/tinygrad/onnx.hpp kernel/public/tinygrad/distributed.hpp)
  set(queue ${umbrellas})
  set(seen)
  while(queue)
    list(POP_FRONT queue rel)
    if(rel IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${rel})
    set(file ${PROJECT_SOURCE_DIR}/${rel})
    if(NOT EXISTS ${file})
      message(FATAL_ERROR "public headers: ${rel}, included by ${from_${rel}}, does not exist")
    endif()
    set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
    file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"kernel/[^\"]+\"")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^[^\"]*\"(kernel/[^\"]+)\".*$" "\\1" included "${line}")
      if(NOT DEFINED from_${included})
        set(from_${included} ${rel})
      endif()
      list(APPEND queue ${included})
    endforeach()
  endwhile()
  foreach(internal kernel/codegen/lowerer.hpp kernel/engine/realize.hpp)
    if(internal IN_LIST seen)
      set(chain ${internal})
      set(at ${internal})
      while(NOT at STREQUAL umbrella AND DEFINED from_${at})
        set(at ${from_${at}})
        string(PREPEND chain "${at} -> ")
      endwhile()
      message(WARNING "public headers: the internal ${internal} would be installed: ${chain}")
    endif()
  endforeach()
  list(REMOVE_ITEM seen ${umbrellas})
  list(SORT seen)
  string(REPLACE ";" "\n" listing "${seen}")
  file(WRITE ${PROJECT_BINARY_DIR}/package/public_headers.txt "${listing}\n")
  set(${out_var} ${seen} PARENT_SCOPE)
endfunction()

function(tg_install_package)
  if(TARGET tg_sdk_llvm) # the LLVM IR renderer, where LLVM 14 was found; its users find LLVM first
    list(APPEND TG_EXPORTED_LIBRARIES "tg_sdk_llvm:sdk_llvm")
  endif()
  foreach(pair ${TG_EXPORTED_LIBRARIES})
    string(REPLACE ":" ";" pair "${pair}")
    list(GET pair 0 target)
    list(GET pair 1 export_name)
    set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
    target_include_directories(${target} INTERFACE $<INSTALL_INTERFACE:${TG_INCLUDE_INSTALL_DIR}>)
    install(TARGETS ${target} EXPORT tinygrad_cppTargets
      LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development
      ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  endforeach()

  install(DIRECTORY ${PROJECT_SOURCE_DIR}/abi/include/ ${PROJECT_SOURCE_DIR}/sdk/include/
    DESTINATION ${TG_INCLUDE_INSTALL_DIR})
  # The public API: <tinygrad/tinygrad.hpp> and the kernel/ headers it needs, at the paths the
  # code includes them by ("kernel/tensor/tensor.hpp"); nothing else from kernel/.
  install(FILES ${PROJECT_SOURCE_DIR}/kernel/public/tinygrad/tinygrad.hpp
    ${PROJECT_SOURCE_DIR}/kernel/public/tinygrad/onnx.hpp ${PROJECT_SOURCE_DIR}/kernel/public/tinygrad/distributed.hpp
    DESTINATION ${TG_INCLUDE_INSTALL_DIR}/tinygrad)
  tg_public_headers(public_headers)
  foreach(header IN LISTS public_headers)
    get_filename_component(dir ${header} DIRECTORY)
    install(FILES ${PROJECT_SOURCE_DIR}/${header} DESTINATION ${TG_INCLUDE_INSTALL_DIR}/${dir})
  endforeach()

  install(EXPORT tinygrad_cppTargets NAMESPACE tinygrad_cpp:: DESTINATION ${TG_PACKAGE_CMAKE_DIR})
  configure_package_config_file(${PROJECT_SOURCE_DIR}/sdk/cmake/tinygrad_cppConfig.cmake.in
    ${PROJECT_BINARY_DIR}/package/tinygrad_cppConfig.cmake
    INSTALL_DESTINATION ${TG_PACKAGE_CMAKE_DIR}
    PATH_VARS TG_PLUGIN_INSTALL_DIR TG_INCLUDE_INSTALL_DIR)
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/tinygrad_cppConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/package/tinygrad_cppConfig.cmake
                ${PROJECT_BINARY_DIR}/package/tinygrad_cppConfigVersion.cmake
                ${PROJECT_SOURCE_DIR}/sdk/cmake/TgPlugin.cmake
                ${PROJECT_SOURCE_DIR}/sdk/cmake/plugin.map
                ${PROJECT_SOURCE_DIR}/sdk/cmake/check_exports.cmake
          DESTINATION ${TG_PACKAGE_CMAKE_DIR})

  # pkg-config: relocatable (prefix found from the .pc file's own directory), so
  # `cmake --install build --prefix DIR` works for any DIR.
  file(RELATIVE_PATH TG_PC_PREFIX_FROM_PCDIR /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
  configure_file(${PROJECT_SOURCE_DIR}/sdk/cmake/tinygrad_cpp.pc.in ${PROJECT_BINARY_DIR}/package/tinygrad_cpp.pc
    @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/package/tinygrad_cpp.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()
