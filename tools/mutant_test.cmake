# ctest driver: the test-only build ulpgate_mutant carries one kernel bug in
# tanh_bwd mulsub, picked by ULPGATE_MUTANT=KIND (kernels/testing/test_mutant.h):
#   drifted     1 - t^2 as (1 - t)(1 + t) on every target
#   avx3        the same on AVX3 only
#   tail        the remainder of a call computed with a fused NegMulAdd (shows
#               on targets with FMA and more than one lane: AVX2, AVX3, AVX3_DL)
#   misaligned  drifted when the output is not vector-aligned (every target
#               with more than one lane)
#   rare        on AVX2 only, 1 ULP off where t's low 20 bits are 0x12345: the
#               sampled cases miss it, the goldens' f32 sweeps (2^24 inputs)
#               and the gate's sweeps row find it
# `golden check` against the committed goldens and `gate` on the shipped
# ledger must fail naming mulsub and exactly the targets the bug shows on,
# among those this CPU runs (RAN). A target this CPU cannot run is checked on
# its model, which cannot see a kernel bug: then the check passes, and says so.
# -DMUTANT=<ulpgate_mutant> -DGOLDEN=<repo>/golden -DKIND=<kind>
cmake_policy(SET CMP0057 NEW)  # if(IN_LIST)
set(ENV{ULPGATE_MUTANT} "${KIND}")
if(KIND STREQUAL "drifted")
  set(shows SCALAR SSSE3 SSE4 AVX2 AVX3 AVX3_DL)
elseif(KIND STREQUAL "avx3")
  set(shows AVX3)
elseif(KIND STREQUAL "tail")
  set(shows AVX2 AVX3 AVX3_DL)
elseif(KIND STREQUAL "misaligned")
  set(shows SSSE3 SSE4 AVX2 AVX3 AVX3_DL)
elseif(KIND STREQUAL "rare")
  set(shows AVX2)
else()
  message(FATAL_ERROR "unknown KIND '${KIND}'")
endif()

execute_process(COMMAND "${MUTANT}" golden check --dir "${GOLDEN}" --op tanh_bwd
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(out "${out}${err}")
if(NOT out MATCHES "RAN \\(kernels run on this CPU\\): ([A-Z0-9_, ]+)\n")
  message(FATAL_ERROR "golden check of the mutant: no RAN line in\n${out}")
endif()
string(REPLACE ", " ";" ran "${CMAKE_MATCH_1}")
set(expected "")
foreach(t IN LISTS shows)
  if(t IN_LIST ran)
    list(APPEND expected ${t})
  endif()
endforeach()
message(STATUS "mutant ${KIND}: this CPU runs ${ran}; the bug must show on: ${expected}")

foreach(t SCALAR SSSE3 SSE4 AVX2 AVX3 AVX3_DL)
  set(differs "DIFFERS RAN +[^\n]*/${t}/tanh_bwd.json: [0-9]+ of [0-9]+ cases")
  if(t IN_LIST expected)
    if(NOT out MATCHES "${differs}")
      message(FATAL_ERROR "golden check of mutant ${KIND}: ${t} does not differ\n${out}")
    endif()
    if(KIND STREQUAL "rare")
      # Only the f32 sweep sees it, and names the first input and a replay.
      if(NOT out MATCHES "tanh_bwd mulsub ${t} sweep over_t at 0x1.4cccccp\\+0 \\[0x3f000000, 0x40000000\\):\n[^\n]*the first input where the kernel leaves its model[^\n]*\n[^\n]*\n[^\n]*t=0x1.02468ap-1[^\n]*\n(.*\n)*    replay: ulpgate explain --op tanh_bwd --input grad=0x1.4cccccp\\+0 --input t=0x1.02468ap-1")
        message(FATAL_ERROR "golden check of mutant rare: no differing mulsub sweep on ${t} naming t = 0x1.02468ap-1 and a replay\n${out}")
      endif()
      if(out MATCHES "tanh_bwd mulsub ${t} suite")
        message(FATAL_ERROR "golden check of mutant rare: a sampled case differs, so this test no longer shows what only sweeps see\n${out}")
      endif()
    elseif(NOT out MATCHES "tanh_bwd mulsub ${t} suite [a-z]+ seed 1 n [0-9]+: [0-9]+ outputs? differs?")
      message(FATAL_ERROR "golden check of mutant ${KIND}: no differing mulsub case on ${t}\n${out}")
    endif()
  elseif(out MATCHES "DIFFERS [^\n]*/${t}/tanh_bwd.json")
    message(FATAL_ERROR "golden check of mutant ${KIND}: ${t} differs, but the bug is not there\n${out}")
  endif()
endforeach()
if(out MATCHES "tanh_bwd (mac|mac_unfused|mulsub_fma) [A-Z0-9_]+ suite")
  message(FATAL_ERROR "golden check of mutant ${KIND} blames an unchanged variant\n${out}")
endif()

if(expected)
  if(NOT status EQUAL 1)
    message(FATAL_ERROR "golden check of mutant ${KIND}: status ${status}, expected 1\n${out}")
  endif()
else()
  # The bug is only on targets this CPU cannot run: their models match, and
  # the output must say that a MODEL ONLY check cannot see a kernel bug.
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "golden check of mutant ${KIND}: status ${status}, expected 0\n${out}")
  endif()
  if(NOT out MATCHES "MODEL ONLY \\(models evaluated, kernels not run\\)" OR
     NOT out MATCHES "never a bug in")
    message(FATAL_ERROR "golden check of mutant ${KIND} does not say MODEL ONLY cannot catch it\n${out}")
  endif()
endif()

execute_process(COMMAND "${MUTANT}" gate --quiet --op tanh_bwd --budgets "${GOLDEN}/budgets.json"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(out "${out}${err}")
if(expected)
  if(NOT status EQUAL 1)
    message(FATAL_ERROR "gate of mutant ${KIND}: status ${status}, expected 1\n${out}")
  endif()
  if(KIND STREQUAL "rare")
    set(failing_row "FAIL tanh_bwd.sweeps.digests_match: [^\n]*at mulsub@([A-Z0-9_]+)")
  else()
    set(failing_row "FAIL tanh_bwd.conformance.conformance_required: [^\n]*at mulsub@([A-Z0-9_]+) ")
  endif()
  if(NOT out MATCHES "${failing_row}")
    message(FATAL_ERROR "the gate of mutant ${KIND} does not fail (${failing_row})\n${out}")
  endif()
  if(NOT CMAKE_MATCH_1 IN_LIST expected)
    message(FATAL_ERROR "the gate of mutant ${KIND} blames ${CMAKE_MATCH_1}, not one of ${expected}\n${out}")
  endif()
  # ... and says how to see it again.
  if(NOT out MATCHES "${failing_row}[^\n]*\n(  [^\n]*\n)*  replay: ulpgate [a-z]+ --op tanh_bwd ")
    message(FATAL_ERROR "the gate of mutant ${KIND} gives no replay command for its failing row\n${out}")
  endif()
else()
  if(NOT status EQUAL 0 OR NOT out MATCHES "cannot catch a bug in that target's kernels")
    message(FATAL_ERROR "gate of mutant ${KIND}: status ${status}, expected 0 and the MODEL ONLY "
                        "caveat\n${out}")
  endif()
endif()
