# The loss lines of `tg train` output, for the scripts that compare runs (include()d).

# out_var = every "loss N.NNNN" value of `text`, in order.
function(losses out_var text)
  string(REGEX MATCHALL "loss [0-9.]+" found "${text}")
  list(TRANSFORM found REPLACE "loss " "")
  set(${out_var} ${found} PARENT_SCOPE)
endfunction()

# A loss printed with 4 decimals as an integer in units of 1e-4 (math() has integers only).
function(fixed4 out_var value)
  if(NOT value MATCHES "^([0-9]+)\\.([0-9][0-9][0-9][0-9])$")
    message(FATAL_ERROR "a loss with 4 decimals expected, got '${value}'")
  endif()
  math(EXPR v "${CMAKE_MATCH_1} * 10000 + 1${CMAKE_MATCH_2} - 10000")
  set(${out_var} ${v} PARENT_SCOPE)
endfunction()
