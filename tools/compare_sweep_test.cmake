# ctest driver: `compare --sweep` over bf16 pairs. On a range (-DRANGE=BEGIN:END): the
# report is the same whatever the thread count, the shards' counts add up to the whole
# range's, and the cause of mulsub_opmath against mulsub_per_op is rounding format.
# Without RANGE: every one of the 2^32 pairs (label exhaustive).
# Variables: ULPGATE, WORK, RANGE (optional).
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(range)
if(RANGE)
  set(range --range ${RANGE})
endif()

function(sweep json)
  execute_process(COMMAND "${ULPGATE}" compare --sweep --op tanh_bwd --dtype bf16 --a mulsub_opmath
    --b mulsub_per_op ${range} --quiet --json "${WORK}/${json}" ${ARGN}
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 1)
    message(FATAL_ERROR "compare --sweep ${ARGN}: exit ${status}, expected 1 (they differ)\n${out}${err}")
  endif()
  if(NOT out MATCHES "cause: rounding format")
    message(FATAL_ERROR "compare --sweep ${ARGN}: not rounding format:\n${out}")
  endif()
endfunction()

function(differing json out)
  file(READ "${WORK}/${json}" report)
  string(JSON d GET "${report}" result differing)
  set(${out} ${d} PARENT_SCOPE)
endfunction()

sweep(one.json --threads 1)
if(NOT RANGE)
  differing(one.json all)
  message(STATUS "every bf16 pair: ${all} differ")
  return()
endif()
sweep(two.json --threads 2)
file(READ "${WORK}/one.json" one)
file(READ "${WORK}/two.json" two)
if(NOT one STREQUAL two)
  message(FATAL_ERROR "the report depends on the thread count: ${WORK}/one.json, ${WORK}/two.json")
endif()
sweep(s0.json --shard 0/2)
sweep(s1.json --shard 1/2)
differing(one.json all)
differing(s0.json d0)
differing(s1.json d1)
math(EXPR sum "${d0} + ${d1}")
if(NOT sum EQUAL all OR all EQUAL 0)
  message(FATAL_ERROR "shards differ on ${d0} + ${d1} inputs, the whole range on ${all}")
endif()
message(STATUS "${all} of the range differ; shards ${d0} + ${d1}")
