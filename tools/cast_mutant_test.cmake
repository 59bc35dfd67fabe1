# ctest driver: a planted cast defect (ulpgate_mutant, ULPGATE_CAST_MUTANT=KIND
# puts it in the place of every rne_sat kernel from f32 on every target,
# kernels/testing/cast_mutants.h) fails each of `check`, `sweep`, `golden
# check` and `gate`, and each names an input where it leaves the policy
# rne_sat claims (nearest_even.saturate):
#   ties_away       a tie rounds away from zero
#   sticky_dropped  the bits below the rounding bit are ignored
#   overflow_nan    an overflow gives NaN where rne_sat saturates
#   via_bf16        rounds to bf16 first, then to the destination
# The check reads the codes the mutant kernel wrote (run --dump) for the
# boundary suite's sources (run --save-inputs).
# -DULPGATE=<ulpgate> -DMUTANT=<ulpgate_mutant> -DGOLDEN=<repo>/golden
# -DWORK=<scratch dir> -DKIND=<kind>
set(ENV{ULPGATE_CAST_MUTANT} "${KIND}")
if(KIND STREQUAL "overflow_nan")
  set(dest float8_e5m2)  # a destination with a NaN, and overflows in its boundary suite
elseif(KIND MATCHES "^(ties_away|sticky_dropped|via_bf16)$")
  set(dest float8_e4m3fn)
else()
  message(FATAL_ERROR "unknown KIND '${KIND}'")
endif()
# "0x3a800000 = 0x1p-10": a binary32 source and its value.
set(input "0x[0-9a-f]+ = -?(0x[0-9a-fp.+-]+|inf|nan)")

function(expect_fail what status out pattern)
  if(NOT status EQUAL 1)
    message(FATAL_ERROR "${what} of mutant ${KIND}: status ${status}, expected 1\n${out}")
  endif()
  if(NOT out MATCHES "${pattern}")
    message(FATAL_ERROR "${what} of mutant ${KIND} names no input (${pattern})\n${out}")
  endif()
  string(REGEX MATCH "${pattern}" line "${out}")
  message(STATUS "${what}: ${line}")
endfunction()

file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${MUTANT}" run --op cast_f32 --dtype ${dest} --variant rne_sat --target best
  --suite boundary --save-inputs "${WORK}/x_${KIND}.npy" --dump "${WORK}/codes_${KIND}.npy"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "run of mutant ${KIND}: status ${status}\n${out}${err}")
endif()

# check: the mutant's codes against the policy rne_sat claims.
execute_process(COMMAND "${ULPGATE}" check --op cast_f32 --dtype ${dest}
  --inputs "${WORK}/x_${KIND}.npy" --outputs "${WORK}/codes_${KIND}.npy"
  --require-model nearest_even.saturate
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect_fail(check ${status} "${out}${err}"
  "${input} -> 0x[0-9a-f]+ \\([^)]*\\), nearest_even.saturate gives 0x[0-9a-f]+ \\([^)]*\\)")

# sweep: every binary32 pattern through the best target's kernel.
execute_process(COMMAND "${MUTANT}" sweep --op cast_f32 --dtype ${dest} --variant rne_sat --target best
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect_fail(sweep ${status} "${out}${err}"
  "off nearest_even.saturate on the boundary inputs \\([0-9]+ of [0-9]+\\), first ${input} -> [^\n]*")

# golden check: the committed goldens of cast_f32 on every target this CPU runs.
execute_process(COMMAND "${MUTANT}" golden check --dir "${GOLDEN}" --op cast_f32
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect_fail("golden check" ${status} "${out}${err}"
  "cast_f32 rne_sat [A-Z0-9_]+ ${dest} suite boundary seed 1 n [0-9]+: [0-9]+ outputs? differs?\n[^\n]*\n +[0-9]+  x=${input}[^\n]*")
if(NOT out MATCHES "DIFFERS RAN +[^\n]*/cast_f32.json")
  message(FATAL_ERROR "golden check of mutant ${KIND}: no file differs\n${out}")
endif()
if(out MATCHES "cast_f32 (trunc|via_bf16) [A-Z0-9_]+ [a-z0-9_]+ suite")
  message(FATAL_ERROR "golden check of mutant ${KIND} blames an unchanged variant\n${out}")
endif()

# gate: the shipped ledger's cast_f32 rules.
execute_process(COMMAND "${MUTANT}" gate --quiet --op cast_f32 --budgets "${GOLDEN}/budgets.json"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect_fail(gate ${status} "${out}${err}"
  "FAIL cast_f32.${dest}.policy.conformance_required: [^\n]*\n  measured: [^\n]*first at x = 0x[0-9a-f]+ =")
if(NOT out MATCHES "FAIL cast_f32.${dest}.policy.conformance_required: [^\n]*\n  measured: [^\n]*(\n    [^\n]*)*\n  replay: ulpgate run --op cast_f32 --variant rne_sat")
  message(FATAL_ERROR "the gate of mutant ${KIND} gives no replay command\n${out}")
endif()
