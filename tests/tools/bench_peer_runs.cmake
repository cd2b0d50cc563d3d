# cmake -DTG=<tg> -DFAKES=<fake_peers dir> -DWORK=<scratch dir> -DMODE=core|beam -P bench_peer_runs.cmake
# `tg bench core` and `tg bench ops --beam` time each peer in --peer-runs fresh processes and compare
# each row with its best peer. The stand-ins (fake_peers/peer_torch.py, peer_numpy.py, run by /bin/sh)
# count their processes and answer each with other figures. Checks: 3 processes of each; their
# min / median / max in the table and in --json; the best peer per row (numpy's matmul 1024, PyTorch's
# conv); a warning for the conv's spread over 2x and none for matmul 1024's (exactly 2x).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(ENV{FAKE_PEER_COUNT_DIR} ${WORK})
set(ENV{TG_BENCH_PEER_DIR} ${FAKES})
set(ENV{TG_DEVICE} CPU)
set(ENV{TG_CACHE_DIR} ${WORK}/cache) # BEAM_TIMEOUT 0 choices stay out of the user's cache
set(common --repeat 1 --peer-runs 3 --peer-python /bin/sh --json ${WORK}/out.json)
if(MODE STREQUAL "core")
  set(args bench core ${common})
  set(expect
    "matmul 1024x1024 f32 [^\n]* 20\\.00 / 30\\.00 / 40\\.00 ms +11\\.00 / 12\\.00 / 13\\.00 ms +numpy "
    "matmul 2048x2048 f32 [^\n]* 400\\.0 / 400\\.0 / 400\\.0 ms +500\\.0 / 500\\.0 / 500\\.0 ms +PyTorch "
    "conv2d 32x32x28x28 -> 64, 3x3 [^\n]* 30\\.00 / 45\\.00 / 90\\.00 ms +- +PyTorch "
    "\nwarning: conv2d 32x32x28x28 -> 64, 3x3: PyTorch's 3 processes differ by more than 2x \\(min 30\\.00 ms, max 90\\.00 ms\\)")
else()
  # BEAM_TIMEOUT 0: no search, only the heuristic's kernels (this tests the peers, not BEAM).
  set(args bench ops --device CPU --beam 1 --beam-timeout 0 ${common})
  set(expect
    "matmul 1024 f32 [^\n]* 11\\.00 / 12\\.00 / 13\\.00 +20\\.00 / 30\\.00 / 40\\.00 +numpy 11\\.00 ms "
    "matmul 2048 f32 [^\n]* 500\\.00 / 500\\.00 / 500\\.00 +400\\.00 / 400\\.00 / 400\\.00 +PyTorch 400\\.00 ms "
    "conv2d 32x32x28x28\\*64x32x3x3 [^\n]* - +30\\.00 / 45\\.00 / 90\\.00 +PyTorch 30\\.00 ms "
    "\nwarning: conv2d 32x32x28x28\\*64x32x3x3: PyTorch's 3 processes differ by more than 2x \\(min 30\\.00 ms, max 90\\.00 ms\\)")
endif()
execute_process(COMMAND ${TG} ${args} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tg ${args} failed (${rc}):\n${out}\n${err}")
endif()
foreach(peer peer_torch peer_numpy)
  file(READ ${WORK}/${peer} count)
  string(STRIP "${count}" count)
  if(NOT count STREQUAL "3")
    message(FATAL_ERROR "${peer} ran ${count} times, not 3 (--peer-runs 3):\n${out}")
  endif()
endforeach()
foreach(re IN LISTS expect)
  if(NOT out MATCHES "${re}")
    message(FATAL_ERROR "the output lacks /${re}/:\n${out}")
  endif()
endforeach()
if(out MATCHES "warning: matmul")
  message(FATAL_ERROR "matmul 1024's processes differ by exactly 2x, which is no warning:\n${out}")
endif()
file(READ ${WORK}/out.json json)
string(JSON n LENGTH "${json}" rows)
set(found "")
math(EXPR last "${n} - 1")
foreach(i RANGE ${last})
  string(JSON name GET "${json}" rows ${i} name)
  string(JSON best ERROR_VARIABLE no_best GET "${json}" rows ${i} best_peer)
  if(name MATCHES "^matmul 1024")
    string(JSON min GET "${json}" rows ${i} peers numpy min)
    string(JSON med GET "${json}" rows ${i} peers PyTorch median)
    string(JSON runs GET "${json}" rows ${i} peers PyTorch runs)
    if(NOT best STREQUAL "numpy" OR NOT min EQUAL 11 OR NOT med EQUAL 30 OR NOT runs EQUAL 3)
      message(FATAL_ERROR "--json row ${name}: best ${best}, numpy min ${min}, PyTorch median ${med}, runs ${runs}:\n${json}")
    endif()
    string(APPEND found "matmul;")
  elseif(name MATCHES "^conv2d")
    string(JSON max GET "${json}" rows ${i} peers PyTorch max)
    if(NOT best STREQUAL "PyTorch" OR NOT max EQUAL 90)
      message(FATAL_ERROR "--json row ${name}: best ${best}, PyTorch max ${max}:\n${json}")
    endif()
    string(APPEND found "conv;")
  endif()
endforeach()
if(NOT found STREQUAL "matmul;conv;")
  message(FATAL_ERROR "--json lacks the matmul 1024 or conv row:\n${json}")
endif()
message(STATUS "tg ${args}: 3 processes per peer, spreads, best peers and the >2x warning as expected")
