# Builds a wheel of SOURCE with PYTHON's pip, installs it into a fresh venv under WORK and runs a
# smoke test there from an unrelated directory (so nothing of the build tree is found by accident).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
function(run)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
endfunction()
# The release preset's flags (warnings are errors) and compiler names (ccache's keys include the
# compiler's name: c++ and g++ are different keys), so ccache finds the objects it already built.
run(${CMAKE_COMMAND} -E env CC=cc CXX=c++ ${PYTHON} -m pip wheel --no-deps -w ${WORK}/dist ${SOURCE}
  --config-settings=cmake.define.TG_WARNINGS_AS_ERRORS=ON)
file(GLOB wheels ${WORK}/dist/tinygrad_cpp-*.whl)
list(LENGTH wheels n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "expected one wheel in ${WORK}/dist, found: ${wheels}")
endif()
run(${PYTHON} -m venv --system-site-packages ${WORK}/venv)
run(${WORK}/venv/bin/python -m pip install --no-deps --no-index ${wheels})
file(WRITE ${WORK}/smoke.py [=[
import os, sys
import tinygrad_cpp
from tinygrad_cpp import Tensor, Device
assert "site-packages" in tinygrad_cpp.__file__, tinygrad_cpp.__file__
assert "CPU" in tinygrad_cpp.devices(), tinygrad_cpp.devices(available_only=False)
out = (Tensor([1, 2, 3]) + Tensor([4, 5, 6])).numpy().tolist()
assert out == [5, 7, 9], out
print("wheel ok:", tinygrad_cpp.__file__, Device.DEFAULT, out)
]=])
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=PYTHONPATH --unset=TG_PLUGIN_PATH
  ${WORK}/venv/bin/python ${WORK}/smoke.py WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the installed wheel's smoke test failed (${rc})")
endif()
