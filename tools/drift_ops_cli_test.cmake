# ctest driver (label drift): `drift --compare` over the ops PyTorch 2.15 recorded in the
# seed scenario (suites/peer/torch-2.15-cpu-drift, eager and compiled on the CPU) names
# the op whose models differ and the cause, with no PyTorch here: in f32, tanh_bwd,
# eager multiply-add fused (mulsub_fused) and compiled not (mulsub): fusion, read from
# the models; in bf16, the compiled tanh_bwd follows none of its models on the operands
# recorded for it, and the compiled run with emulate_precision_casts follows eager's
# model: fusion, settled by that experiment; in mixed_bf16, the compiled MSE gradient
# exceeds its error bound on the operands recorded for it: fusion. The Python recheck (fractions, no code of
# ulpgate's) recomputes the models the recorded outputs follow.
# Variables: ULPGATE, PYTHON, SCRIPTS, PEER, WORK.
include("${CMAKE_CURRENT_LIST_DIR}/cli_expect.cmake")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

ulpgate_expect(0 "its ops, as recorded over the first 20 calls of its step.*tanh_bwd +3 +f32 +320 +0 +mulsub_fused\n.*ops whose models differ between torch-eager and torch-compiled \\([0-9]+ of 10;.*\n  tanh_bwd \\(layer 3, f32\\): fusion: torch-eager follows mulsub_fused, torch-compiled follows mulsub\n"
  drift --scenario seed --dtype f32 --epochs 50
  --compare "${PEER}/eager_f32.json" --label torch-eager
  --compare "${PEER}/compiled_f32.json" --label torch-compiled --json "${WORK}/f32.json")
ulpgate_expect(0 "\n  tanh_bwd \\(layer 3, bf16\\): fusion: torch-eager follows mac_fused_opmath.*emulate_precision_casts=1\\) follows mac_fused_opmath as torch-eager does"
  drift --scenario seed --dtype bf16 --epochs 50
  --compare "${PEER}/eager_bf16.json" --label torch-eager
  --compare "${PEER}/compiled_bf16.json" --label torch-compiled
  --compare "${PEER}/emulated_bf16.json" --label torch-compiled-emulated --json "${WORK}/bf16.json")

# mixed_bf16: the compiled MSE gradient read the binary32 tanh output, not the bf16 one
# autocast stores: its outputs exceed the binary32 error bound on the recorded operands.
ulpgate_expect(0 "\n  mse_bwd \\(layer 4, f32\\): fusion: torch-eager follows framework; torch-compiled follows none of them on the operands[ \n]+recorded for it and 316 of its 320 outputs exceed the error bound on them"
  drift --scenario seed --dtype mixed_bf16 --epochs 20
  --compare "${PEER}/eager_mixed_bf16.json" --label torch-eager
  --compare "${PEER}/compiled_mixed_bf16.json" --label torch-compiled --json "${WORK}/mixed_bf16.json")

# The reports: format, the op's cause and evidence.
function(expect_op_cause file pair expected)
  file(READ "${file}" report)
  string(JSON format GET "${report}" format)
  string(JSON count LENGTH "${report}" op_models ${pair} ops)
  set(found "")
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    string(JSON op GET "${report}" op_models ${pair} ops ${i} op)
    if(op STREQUAL "tanh_bwd")
      string(JSON cause GET "${report}" op_models ${pair} ops ${i} cause)
      string(JSON evidence GET "${report}" op_models ${pair} ops ${i} evidence)
      string(JSON a GET "${report}" op_models ${pair} ops ${i} models 0)
      string(JSON b GET "${report}" op_models ${pair} ops ${i} models 1)
      set(found "${cause}|${evidence}|${a}|${b}")
    endif()
  endforeach()
  if(NOT format STREQUAL "ulpgate-drift-3" OR NOT found STREQUAL "${expected}")
    message(FATAL_ERROR "${file}: format ${format}, tanh_bwd '${found}' (expected ${expected})")
  endif()
endfunction()
expect_op_cause("${WORK}/f32.json" 0 "fusion|models|mulsub_fused|mulsub")
# The pair eager, compiled; the compiled side follows no model (its nearest is named).
expect_op_cause("${WORK}/bf16.json" 0 "fusion|experiment|mac_fused_opmath|mulsub_fused_per_op")
# The compiled run against its experiment: the setting is all they differ by.
expect_op_cause("${WORK}/bf16.json" 2 "fusion|experiment|mulsub_fused_per_op|mac_fused_opmath")

foreach(check "f32|tanh_bwd" "bf16|tanh_bwd" "mixed_bf16|mse_bwd")
  string(REPLACE "|" ";" check "${check}")
  list(GET check 0 precision)
  list(GET check 1 op)
  execute_process(COMMAND "${PYTHON}" "${SCRIPTS}/recheck_drift_ops.py" "${WORK}/${precision}.json"
      --expect-cause torch-eager torch-compiled ${op} fusion
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "recheck_drift_ops.py ${precision}: exit ${status}\n${out}${err}")
  endif()
  message(STATUS "${out}")
endforeach()

# The HTML report shows the ops whose models differ, the nearest of a side that follows none.
ulpgate_expect(0 "1 reports" report "${WORK}/bf16.json" --html "${WORK}/bf16.html")
file(READ "${WORK}/bf16.html" html)
if(NOT html MATCHES "ops whose models differ: torch-eager and torch-compiled</h3>.*<td>tanh_bwd</td><td class='n'>3</td><td>bf16</td><td><b>fusion</b></td><td>experiment</td><td>mac_fused_opmath</td><td>none \\(nearest mulsub_fused_per_op\\)</td>")
  message(FATAL_ERROR "the HTML report does not show tanh_bwd's fusion")
endif()

# A curve whose recorded op names a file that is not there: one error line.
file(WRITE "${WORK}/bad.json" "{\"loss\": [0.5, 0.4], \"ops\": [{\"op\": \"tanh_bwd\", \"layer\": 3, \"dtype\": \"f32\", \"file\": \"missing.npz\", \"output\": \"out\"}]}")
ulpgate_expect(2 "missing.npz" drift --scenario seed --epochs 2 --compare "${WORK}/bad.json")
file(WRITE "${WORK}/bad_op.json" "{\"loss\": [0.5], \"ops\": [{\"op\": \"tanh_fwd\", \"dtype\": \"f32\", \"file\": \"x.npz\", \"output\": \"y\"}]}")
ulpgate_expect(2 "bad_op.json: ops\\[0\\]: 'tanh_fwd' is not an op check knows" drift --scenario seed --epochs 2 --compare "${WORK}/bad_op.json")
