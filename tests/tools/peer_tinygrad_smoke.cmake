# cmake -DSCRIPTS=tools/bench -P peer_tinygrad_smoke.cmake
# Runs the real tinygrad peers of `tg bench gpu` / `tg bench train` on tinygrad's CPU backend at
# smoke sizes (peer_tinygrad_gpu.py --small checks each row's TinyJit answer against its eager one;
# peer_tinygrad_train.py must report a finite loss and the batch it was given) and checks that
# their JSON holds every key tg reads. Needs an interpreter that imports tinygrad:
# $TG_TEST_TINYGRAD_PYTHON, else python3; without one it says "skipped:" (ctest reports a skip).
set(python "$ENV{TG_TEST_TINYGRAD_PYTHON}")
if(python STREQUAL "")
  set(python python3)
endif()
execute_process(COMMAND ${python} -c "import tinygrad" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(NOT rc EQUAL 0)
  message("skipped: ${python} cannot import tinygrad (set TG_TEST_TINYGRAD_PYTHON)")
  return()
endif()

function(run_peer out)
  execute_process(COMMAND ${python} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${python} ${ARGN} exited with ${rc}:\n${text}${err}")
  endif()
  string(REGEX MATCH "{[^\n]*}" json "${text}")
  set(${out} "${json}" PARENT_SCOPE)
endfunction()

function(expect_number json key)
  string(JSON type ERROR_VARIABLE err TYPE "${json}" ${key})
  if(NOT type STREQUAL "NUMBER")
    message(FATAL_ERROR "no number under \"${key}\" in ${json}")
  endif()
endfunction()

run_peer(gpu ${SCRIPTS}/peer_tinygrad_gpu.py --device CPU --small --repeat 1)
foreach(row elementwise sum matmul_f32 matmul_f16 conv tiny)
  expect_number("${gpu}" ${row}_ms)
  expect_number("${gpu}" ${row}_eager_ms)
  string(JSON shape GET "${gpu}" ${row}_shape)
endforeach()
string(JSON shape GET "${gpu}" tiny_shape)
if(NOT shape STREQUAL "16")
  message(FATAL_ERROR "tiny_shape is ${shape}, not 16")
endif()

run_peer(train ${SCRIPTS}/peer_tinygrad_train.py --device CPU --bs 4 --steps 1)
foreach(key step_ms peak_rss_mb bs loss)
  expect_number("${train}" ${key})
endforeach()
string(JSON bs GET "${train}" bs)
if(NOT bs EQUAL 4)
  message(FATAL_ERROR "the train peer reports batch ${bs}, not 4")
endif()
message(STATUS "gpu peer: ${gpu}\ntrain peer: ${train}")
