# In-tree only: what `cmake --install` puts under a prefix, and the CMake package + pkg-config file
# that describe it. Layout (any prefix):
#   bin/tg
#   <libdir>/libtg.so -> libtg.so.<major> -> libtg.so.<version>, <libdir>/libtg_sdk*.a
#   libexec/tinygrad.cpp/   the device suites (tensor_ops_test, ...) when the tests are built
#   <libdir>/tinygrad.cpp/plugins/libtg_device_<name>.so     (tg_add_plugin(... INSTALL))
#   <libdir>/cmake/tinygrad_cpp/   tinygrad_cppConfig.cmake, ...ConfigVersion, ...Targets, TgPlugin.cmake
#   <libdir>/pkgconfig/tinygrad_cpp.pc
#   include/tinygrad.cpp/   tg/abi.h, tg/sdk/*.hpp, kernel/<ring>/*.hpp (the paths the code includes)
include(CMakePackageConfigHelpers)

# Libraries exported as tinygrad_cpp::<export name>. Adding an SDK library is one line here.
set(TG_EXPORTED_LIBRARIES
  "tg_abi:abi" # the ABI header (INTERFACE)
  "tg:tg"      # libtg.so, the core API
  "tg_sdk:sdk" # the plugin SDK (static)
  "tg_sdk_render:sdk_render" # the C-family renderers (static)
)
set(TG_PACKAGE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tinygrad_cpp)

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
  # Every ring's headers, at the paths the code includes them by ("kernel/tensor/tensor.hpp"):
  # the tensor API includes the inner rings' headers.
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/kernel/ DESTINATION ${TG_INCLUDE_INSTALL_DIR}/kernel
    FILES_MATCHING PATTERN "*.hpp")

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
