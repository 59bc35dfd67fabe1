# ctest driver: `ulpgate check` on every tanh_bwd path of a PyTorch peer archive
# (suites/peer/), each report then rechecked independently by
# tools/python/recheck_check.py (exact rationals, no ulpgate code): histogram, special
# and signed-zero counts, correctly rounded count, the models followed bit for bit, and
# for the chunked path (--period 37) the mismatches by position.
# Variables: ULPGATE, PYTHON, SCRIPT, ARCHIVE, DTYPE, PATHS ('|'-separated), WORK.
string(REPLACE "|" ";" PATHS "${PATHS}")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(reports)
foreach(path IN LISTS PATHS)
  set(extra --quiet)
  if(path MATCHES "chunks37")
    set(extra --period 37)
  endif()
  execute_process(
    COMMAND "${ULPGATE}" check --dtype ${DTYPE} --inputs "${ARCHIVE}" --outputs "${ARCHIVE}:${path}"
            --model "mac_left: p = grad*t; out = fma(-p, t, grad)" ${extra} --json "${WORK}/${path}.json"
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE errors)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "ulpgate check ${DTYPE} ${path} failed (${status}): ${errors}")
  endif()
  if(NOT out MATCHES "follows bit for bit: ")
    message(FATAL_ERROR "${DTYPE} ${path}: check names no model:\n${out}")
  endif()
  if(path MATCHES "chunks37" AND NOT out MATCHES "by position \\(index mod 37\\)")
    message(FATAL_ERROR "${DTYPE} ${path}: no breakdown by position:\n${out}")
  endif()
  list(APPEND reports "${WORK}/${path}.json")
endforeach()
execute_process(COMMAND "${PYTHON}" "${SCRIPT}" "${ARCHIVE}" ${DTYPE} ${reports}
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the independent recheck disagrees with check's ${DTYPE} reports (${status})")
endif()
