# ctest driver: a planted quantizer defect (ulpgate_mutant,
# ULPGATE_BLOCKQUANT_MUTANT=rceil_for_floor: asked for OCP's floor rule, every
# target's kernels compute RCEIL, kernels/testing/block_quant_mutant.cc) fails
# each of `run`, `check` (the codes run --dump wrote), `sweep` (every
# non-negative binary32 amax), `golden check` and `gate`, each naming where:
# a block and its amax, or the first amax of the sweep.
# -DULPGATE=<ulpgate> -DMUTANT=<ulpgate_mutant> -DGOLDEN=<repo>/golden -DWORK=<scratch dir>
set(ENV{ULPGATE_BLOCKQUANT_MUTANT} rceil_for_floor)
set(spec mxfp8_e4m3)
set(amax "amax 0x[0-9a-fp.+-]+")

function(expect_fail what status out pattern)
  if(NOT status EQUAL 1)
    message(FATAL_ERROR "${what} of the quantizer mutant: status ${status}, expected 1\n${out}")
  endif()
  if(NOT out MATCHES "${pattern}")
    message(FATAL_ERROR "${what} of the quantizer mutant does not name where (${pattern})\n${out}")
  endif()
  string(REGEX MATCH "${pattern}" line "${out}")
  message(STATUS "${what}: ${line}")
endfunction()

file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${MUTANT}" run --op mx_quantize --dtype ${spec} --variant ocp_floor
  --target best --dump "${WORK}/mutant.npz"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect_fail(run ${status} "${out}${err}" "leaves the model: block [0-9]+ \\(${amax}\\): scale 0x[0-9a-f]+, the model's 0x[0-9a-f]+")

execute_process(COMMAND "${ULPGATE}" check --op mx_quantize --dtype ${spec} --inputs "${WORK}/mutant.npz"
  --require-model ocp_floor
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect_fail(check ${status} "${out}${err}"
  "scale rules: rceil, reciprocal\nLEAVES ocp_floor \\(required\\) in [0-9]+ of [0-9]+ blocks, first: block [0-9]+ \\(${amax}\\)")

execute_process(COMMAND "${MUTANT}" sweep --op mx_quantize --dtype ${spec} --variant ocp_floor --target best
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect_fail(sweep ${status} "${out}${err}"
  "${spec} ocp_floor on [A-Z0-9_]+: [0-9]+ steps, [0-9.]+ s: LEAVES its steps at [0-9]+ amax, first 0x[0-9a-fp.+-]+")

execute_process(COMMAND "${MUTANT}" golden check --dir "${GOLDEN}" --op mx_quantize
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect_fail("golden check" ${status} "${out}${err}"
  "mx_quantize ocp_floor [A-Z0-9_]+ ${spec} suite seeded seed 1 n [0-9]+: [0-9]+ outputs differ\n[^\n]*\n +[0-9]+  block=[0-9]+ amax=0x[0-9a-fp.+-]+ +0x[0-9a-f]+ +0x[0-9a-f]+")
if(NOT out MATCHES "conformance.model +ocp_floor +rceil")
  message(FATAL_ERROR "golden check of the quantizer mutant does not name rceil\n${out}")
endif()
if(out MATCHES "mx_quantize (ceil|even|rceil|reciprocal) [A-Z0-9_]+ [a-z0-9_]+ suite")
  message(FATAL_ERROR "golden check of the quantizer mutant blames an unchanged rule\n${out}")
endif()

execute_process(COMMAND "${MUTANT}" gate --quiet --op mx_quantize --budgets "${GOLDEN}/budgets.json"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect_fail(gate ${status} "${out}${err}"
  "FAIL mx_quantize.${spec}.rule.conformance_required: [^\n]*\n  measured: [0-9]+ \\(expected ocp_floor, follows rceil\\), first at block [0-9]+ \\(${amax}\\)")
