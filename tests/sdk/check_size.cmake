# cmake -DFILE=<file> -DMAX_BYTES=<n> -P check_size.cmake
# Fails when FILE is larger than MAX_BYTES.
file(SIZE ${FILE} bytes)
if(bytes GREATER MAX_BYTES)
  message(FATAL_ERROR "${FILE} is ${bytes} bytes, over the bound of ${MAX_BYTES}")
endif()
message(STATUS "${FILE}: ${bytes} bytes (bound ${MAX_BYTES})")
