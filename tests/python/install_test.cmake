# Installs the build BUILD into a scratch prefix under WORK and imports the package from the
# prefix's site-packages with PYTHON, from an unrelated directory, without the build tree's
# environment: the module must find libtg through its RPATH and libtg the plugins beside itself.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix OUTPUT_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install ${BUILD} failed (${rc})")
endif()
file(GLOB_RECURSE inits ${WORK}/prefix/*__init__.py)
list(FILTER inits INCLUDE REGEX "/tinygrad_cpp/__init__\\.py$")
list(LENGTH inits n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "expected one installed tinygrad_cpp package under ${WORK}/prefix, found: ${inits}")
endif()
get_filename_component(package ${inits} DIRECTORY)
get_filename_component(site ${package} DIRECTORY)
file(WRITE ${WORK}/smoke.py [=[
import sys
import tinygrad_cpp
from tinygrad_cpp import Tensor
assert tinygrad_cpp.__file__.startswith(sys.argv[1]), tinygrad_cpp.__file__
assert "CPU" in tinygrad_cpp.devices(), tinygrad_cpp.devices(available_only=False)
out = (Tensor([1, 2, 3]) + Tensor([4, 5, 6])).numpy().tolist()
assert out == [5, 7, 9], out
from tinygrad_cpp.onnx import OnnxError, OnnxRunner  # the _onnx module finds libtg_onnx too
try:
  OnnxRunner(b"not a model")
  raise AssertionError("no OnnxError")
except OnnxError as e:
  assert "not a valid ONNX model" in str(e), e
print("installed package ok:", tinygrad_cpp.__file__, out)
]=])
set(preload)
if(DEFINED ENV{TG_PY_PRELOAD}) # sanitizer builds: the interpreter needs the ASan runtime first
  set(preload "LD_PRELOAD=$ENV{TG_PY_PRELOAD}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=TG_PLUGIN_PATH --unset=LD_LIBRARY_PATH PYTHONPATH=${site}
  ${preload} ${PYTHON} ${WORK}/smoke.py ${WORK}/prefix WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the installed package's smoke test failed (${rc})")
endif()
