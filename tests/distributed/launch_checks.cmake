# cmake -DCHECK=<tool> -DMPIRUN=<mpiexec> -DCASE=die|skip|tcp|tcp-alone -P launch_checks.cmake
# A rank that dies or skips a call makes every rank end with a clear message within the timeout,
# never a hang; torchrun's RANK/WORLD_SIZE convention meets over TCP without MPI.
string(TIMESTAMP t0 "%s")
if(CASE STREQUAL "die" OR CASE STREQUAL "skip")
  execute_process(COMMAND ${MPIRUN} -np 2 --oversubscribe --bind-to none ${CHECK} ${CASE}
    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 100)
elseif(CASE STREQUAL "tcp")
  # both ranks at once (execute_process runs its commands concurrently, as a pipeline)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env WORLD_SIZE=2 RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=${PORT} ${CHECK} tcp
    COMMAND ${CMAKE_COMMAND} -E env WORLD_SIZE=2 RANK=1 MASTER_ADDR=localhost MASTER_PORT=${PORT} ${CHECK} tcp
    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULTS_VARIABLE rcs TIMEOUT 100)
  set(rc 0)
  foreach(r IN LISTS rcs)
    if(NOT r EQUAL 0)
      set(rc ${r})
    endif()
  endforeach()
elseif(CASE STREQUAL "tcp-alone")
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env WORLD_SIZE=2 RANK=0 MASTER_PORT=${PORT} TG_DISTRIBUTED_TIMEOUT=3 ${CHECK} tcp-alone
    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 100)
else()
  message(FATAL_ERROR "unknown CASE ${CASE}")
endif()
string(TIMESTAMP t1 "%s")
math(EXPR seconds "${t1} - ${t0}")
set(all "${out}\n${err}")
message("${CASE}: exit ${rc} after ${seconds} s\n${all}")

if(CASE STREQUAL "tcp")
  if(NOT rc EQUAL 0 OR NOT all MATCHES "rank 0 tcp ok" OR NOT all MATCHES "rank 1 tcp ok")
    message(FATAL_ERROR "the two ranks did not both finish")
  endif()
  if(NOT all MATCHES "rank 0 of 2 \\(env\\)" OR NOT all MATCHES "MPI is not initialized in this process")
    message(FATAL_ERROR "expected the env launcher and the CPU group's MPI message")
  endif()
  return()
endif()
# every other case must fail, quickly, saying why
if(rc EQUAL 0)
  message(FATAL_ERROR "the run succeeded; it should have failed")
endif()
if(seconds GREATER 60)
  message(FATAL_ERROR "the ranks took ${seconds} s to end (a hang, not a clear failure)")
endif()
if(CASE STREQUAL "die")
  # mpirun's own report: it ended the job because rank 1 exited with status 3
  set(expect "rank 1 step 1: 2\\.0.*(non-zero status|exited on signal).*Exit code: +3")
elseif(CASE STREQUAL "skip")
  set(expect "all-reduce on rank 0 of 2 waited [0-9.]+ s for the other ranks")
else()
  set(expect "only 0 of 1 ranks connected to 127.0.0.1:${PORT}")
endif()
if(NOT all MATCHES "${expect}")
  message(FATAL_ERROR "the output does not say why (expected /${expect}/)")
endif()
