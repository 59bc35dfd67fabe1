# ctest driver: the test-only build ulpgate_mutant, whose tanh_bwd mulsub
# kernel computes 1 - t^2 as (1 - t)(1 + t) (kernels/tanh_bwd-inl.h), must
# fail both `golden check` and `gate` against the committed golden/ files,
# naming mulsub and the target, while the other variants still match.
# -DMUTANT=<ulpgate_mutant> -DGOLDEN=<repo>/golden
execute_process(COMMAND "${MUTANT}" golden check --dir "${GOLDEN}" --op tanh_bwd --target SCALAR
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(out "${out}${err}")
if(NOT status EQUAL 1)
  message(FATAL_ERROR "golden check of the mutant: status ${status}, expected 1\n${out}")
endif()
foreach(needle "DIFFERS [^\n]*SCALAR/tanh_bwd.json: 4 of 16 cases"
               "tanh_bwd mulsub SCALAR suite domain seed 1 n [0-9]+: [0-9]+ outputs differ"
               "old output +new output" "conformance.mismatches +0 +[1-9]")
  if(NOT out MATCHES "${needle}")
    message(FATAL_ERROR "golden check of the mutant: no '${needle}' in\n${out}")
  endif()
endforeach()
if(out MATCHES "tanh_bwd (mac|mac_unfused|mulsub_fma) SCALAR")
  message(FATAL_ERROR "golden check of the mutant blames an unchanged variant\n${out}")
endif()

execute_process(COMMAND "${MUTANT}" gate --quiet --budgets "${GOLDEN}/budgets.json" --target SCALAR
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 1)
  message(FATAL_ERROR "gate of the mutant: status ${status}, expected 1\n${out}${err}")
endif()
if(NOT out MATCHES "FAIL tanh_bwd.conformance.conformance_required: [^\n]*at mulsub@SCALAR")
  message(FATAL_ERROR "the gate of the mutant does not name mulsub@SCALAR\n${out}${err}")
endif()
