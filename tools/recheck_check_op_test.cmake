# ctest driver: `ulpgate check` on outputs of an elementwise op made outside
# ulpgate (numpy float32 through elementwise_exact.py's PyTorch-like sequence,
# exp, erf and tanh from mpmath rounded to float32: errors of a few ULPs, and
# large ones where the op cancels), on the given suites; each
# report then rechecked by tools/python/recheck_check.py against exact values
# from the op's definition in mpmath (histogram, special and signed-zero
# counts, correctly rounded count).
# Variables: ULPGATE, PYTHON (with numpy and mpmath), SCRIPT (recheck_check.py),
# OP, DTYPE, SUITES ('|'-separated), WORK.
string(REPLACE "|" ";" SUITES "${SUITES}")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
get_filename_component(tools "${SCRIPT}" DIRECTORY)
file(WRITE "${WORK}/outputs.py" [=[
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import elementwise_exact as ee
op, dtype, path, out_path = sys.argv[2:6]
import npz_values
arrays = npz_values.load_float32(path)
second = ee.OPS[op][0]
models = ee.model_outputs(op, ee.FORMATS[dtype], arrays["grad"], arrays[second])
name = "~torch" if "~torch" in models else "torch"
arrays["out"] = np.asarray(models[name], dtype=np.float32)
np.savez(out_path, **arrays)
]=])
set(reports)
foreach(suite IN LISTS SUITES)
  set(in "${WORK}/${suite}_in.npz")
  set(io "${WORK}/${suite}.npz")
  foreach(step
      "${ULPGATE};suite;export;--op;${OP};--dtype;${DTYPE};--suite;${suite};--n;300;--out;${in}"
      "${PYTHON};${WORK}/outputs.py;${tools};${OP};${DTYPE};${in};${io}"
      "${ULPGATE};check;--op;${OP};--dtype;${DTYPE};--inputs;${io};--outputs;${io}:out;--quiet;--json;${WORK}/${suite}.json")
    execute_process(COMMAND ${step} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT status EQUAL 0)
      string(REPLACE ";" " " shown "${step}")
      message(FATAL_ERROR "${shown}: status ${status}\n${out}${err}")
    endif()
  endforeach()
  list(APPEND reports "${WORK}/${suite}.json")
endforeach()
# One archive per report: recheck_check.py reads the arrays of one, so each suite alone.
foreach(suite IN LISTS SUITES)
  execute_process(COMMAND "${PYTHON}" "${SCRIPT}" "${WORK}/${suite}.npz" ${DTYPE} "${WORK}/${suite}.json"
    RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "recheck_check.py disagrees with check's ${OP} ${DTYPE} ${suite} report (${status})")
  endif()
endforeach()
