# cmake -DTG=<tg> -P train_jit.cmake
# `tg train --jit` end to end: the same seed with and without the JIT gives the same printed losses
# and test accuracy (steps 3+ are replays; the default cosine lr schedule reaches them as a step
# input), and the run says it replayed through the JIT.
set(common mnist --steps 6 --bs 32 --seed 5 --test-images 200)
foreach(mode eager jit)
  set(flag "")
  if(mode STREQUAL "jit")
    set(flag --jit)
  endif()
  execute_process(COMMAND ${TG} train ${common} ${flag} OUTPUT_VARIABLE out_${mode} ERROR_VARIABLE err
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "tg train ${flag} failed (${rc}):\n${out_${mode}}\n${err}")
  endif()
  string(REGEX MATCHALL "loss [0-9.]+" losses_${mode} "${out_${mode}}")
  string(REGEX MATCH "test accuracy: [0-9.]+%" acc_${mode} "${out_${mode}}")
endforeach()
if(NOT out_jit MATCHES "jit: [0-9]+ kernels per step, [1-9][0-9]* replay")
  message(FATAL_ERROR "tg train --jit did not report replays:\n${out_jit}")
endif()
if(losses_eager STREQUAL "" OR NOT losses_eager STREQUAL losses_jit OR NOT acc_eager STREQUAL acc_jit)
  message(FATAL_ERROR "--jit differs from eager:\n${losses_eager} ${acc_eager}\n${losses_jit} ${acc_jit}")
endif()
message(STATUS "${losses_jit}; ${acc_jit} with and without --jit")
