# tg_warnings(target): the warning set for our own code; -Werror when TG_WARNINGS_AS_ERRORS is on.
function(tg_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor>
    -Wcast-align -Wunused -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough
    # GCC 12 at -O2/-O3 reports -Wrestrict inside std::string concatenation (GCC bug 105329)
    $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>)
  if(TG_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
