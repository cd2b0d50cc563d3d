# cmake -DTG=path/to/tg -DDEVICE=OPENCL -DSTEPS=20 -DBS=8 -DSEED=11 -DCOMPARE=5 -P train_cross_device.cmake
# `tg train mnist --device DEVICE` against the same run on the CPU (cross-device agreement): the same seed
# gives the same initial weights (threefry on the device) and the same batches (host RNG), so the
# first COMPARE losses must agree within 1e-3 relative -- what is left is float rounding, as each
# device sums convolutions, BatchNorm statistics and softmax in its own order (~1e-6 per kernel,
# grown a little by each Adam step) -- and the device's last loss must be below its first.
# A device that is missing or UNAVAILABLE prints "skipped: ..." (SKIP_REGULAR_EXPRESSION), never a pass.
set(common mnist --steps ${STEPS} --bs ${BS} --seed ${SEED} --test-images 100)

include(${CMAKE_CURRENT_LIST_DIR}/../cmake/loss_lines.cmake) # losses(), fixed4()

execute_process(COMMAND ${TG} train ${common} --device ${DEVICE}
  OUTPUT_VARIABLE dev_out ERROR_VARIABLE dev_err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  if("${dev_err}${dev_out}" MATCHES "no plugin named|\\(UNAVAILABLE\\)")
    string(STRIP "${dev_err}" why)
    message("skipped: ${DEVICE} unavailable: ${why}")
    return()
  endif()
  message(FATAL_ERROR "tg train --device ${DEVICE} failed (${rc}):\n${dev_out}\n${dev_err}")
endif()
execute_process(COMMAND ${TG} train ${common} --device CPU
  OUTPUT_VARIABLE cpu_out ERROR_VARIABLE cpu_err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tg train --device CPU failed (${rc}):\n${cpu_out}\n${cpu_err}")
endif()

losses(dev "${dev_out}")
losses(cpu "${cpu_out}")
list(LENGTH dev n_dev)
list(LENGTH cpu n_cpu)
if(NOT n_dev EQUAL STEPS OR NOT n_cpu EQUAL STEPS)
  message(FATAL_ERROR "expected ${STEPS} losses per run, got ${n_dev} (${DEVICE}) and ${n_cpu} (CPU)\n${dev_out}")
endif()
math(EXPR last_compared "${COMPARE} - 1")
foreach(i RANGE ${last_compared})
  list(GET dev ${i} d)
  list(GET cpu ${i} c)
  fixed4(d_fixed ${d})
  fixed4(c_fixed ${c})
  math(EXPR diff "${d_fixed} - ${c_fixed}")
  if(diff LESS 0)
    math(EXPR diff "-${diff}")
  endif()
  # |d - c| <= 1e-3 * c, plus one unit of the 4th decimal for the printing's rounding
  math(EXPR lhs "${diff} * 1000")
  math(EXPR rhs "${c_fixed} + 1000")
  math(EXPR step "${i} + 1")
  if(lhs GREATER rhs)
    message(FATAL_ERROR "step ${step}: ${DEVICE} loss ${d} differs from CPU loss ${c} by more than 1e-3 relative\n"
                        "${DEVICE}: ${dev}\nCPU: ${cpu}")
  endif()
endforeach()
list(GET dev 0 first)
list(GET dev -1 last)
fixed4(first_fixed ${first})
fixed4(last_fixed ${last})
if(NOT last_fixed LESS first_fixed)
  message(FATAL_ERROR "${DEVICE}: training loss did not fall: first ${first}, last ${last}\n${dev_out}")
endif()
message(STATUS "${DEVICE} losses: ${dev}")
message(STATUS "CPU losses:    ${cpu}")
message(STATUS "first ${COMPARE} losses agree within 1e-3; ${DEVICE} loss ${first} -> ${last}")
