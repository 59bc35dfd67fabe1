# ctest driver (label drift): `ulpgate drift` in low precision, its
# attribution, and a loss curve recorded by one run compared beside the
# others; every bad input is one error line and exit 2.
# Variables: ULPGATE, WORK.
include("${CMAKE_CURRENT_LIST_DIR}/cli_expect.cmake")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# bf16 stalls (the SGD update rounds away), f16 does not; both are tables of
# their own, beside the exact run.
ulpgate_expect(0 "bf16: everything in bf16.*tanh_bwd=mac_opmath@[A-Z0-9_]+ +0\\.0498046875 +\\+1\\.043e\\+01 .*STALLED.*f16: everything in f16.*exact run: final loss 0\\.00435609408"
  drift --scenario seed --dtype bf16,f16 --variants tanh_bwd=mac_opmath --curves "${WORK}/curves")
ulpgate_expect(0 "mixed_bf16: mixed precision: f32 master weights.*tanh_bwd=mac_per_op"
  drift --scenario seed --dtype mixed_bf16 --epochs 50)

# Attribution names the SGD step as the op that stalls bf16 training.
ulpgate_expect(0 "sgd_step +\\+9[0-9]\\.[0-9]%.*dominant op: sgd_step.*alone, sgd_step stalls it; with sgd_step exact, it learns again"
  drift --scenario seed --dtype bf16 --attribute --epochs 400)

# A curve ulpgate wrote, read back: deviation, lag and the run that made it.
file(GLOB curves "${WORK}/curves/f16_*.csv")
list(LENGTH curves count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "expected one f16 curve in ${WORK}/curves, found: ${curves}")
endif()
ulpgate_expect(0 "recorded curve f16-curve[ \n].*1000 epochs\n  final loss 0\\.00833129883, exact 0\\.00435609408: final dev\\. \\+9\\.126e-01.*lag \\(epochs\\) at 99:[ \n]+\\+0.*closest ulpgate run: f16 *\n? *tanh_bwd=mac_opmath.*/ exact 0\\.000e\\+00"
  drift --scenario seed --dtype f32,f16 --compare "${curves}" --label f16-curve --json "${WORK}/cmp.json"
  --svg "${WORK}/cmp.svg")
file(READ "${WORK}/cmp.json" report)
string(JSON closest GET "${report}" compare 0 closest_run)
if(NOT closest MATCHES "^f16 tanh_bwd=mac_opmath")
  message(FATAL_ERROR "compare.closest_run is '${closest}'")
endif()
file(READ "${WORK}/cmp.svg" svg)
if(NOT svg MATCHES "f16-curve \\(recorded\\)")
  message(FATAL_ERROR "the SVG does not show the recorded curve")
endif()

# Bad input: one line, exit 2.
file(WRITE "${WORK}/bad.csv" "epoch,loss\n0,0.5\n1,zero\n")
ulpgate_expect(2 "bad.csv:3: 'zero' is not a number" drift --scenario seed --compare "${WORK}/bad.csv")
ulpgate_expect(2 "missing.json: cannot open" drift --scenario seed --compare "${WORK}/missing.json")
ulpgate_expect(2 "--label names a --compare curve" drift --scenario seed --label lonely)
ulpgate_expect(2 "unknown drift precision 'f64' \\(f32, bf16, f16, mixed_bf16, mixed_f16\\)"
  drift --scenario seed --dtype f64)
ulpgate_expect(2 "unknown tanh_bwd variant 'mac' in bf16 \\(mac_opmath, "
  drift --scenario seed --dtype bf16 --variants tanh_bwd=mac)
file(WRITE "${WORK}/mixed.json" "{\"layers\": [{\"type\": \"linear\", \"in\": 2, \"out\": 1}], \"targets\": [1], \"dtype\": \"f16\", \"master\": \"bf16\"}")
ulpgate_expect(2 "mixed.json: 'master' must be f32" drift --config "${WORK}/mixed.json")

# The chart: runs that differ only in the SGD step are named apart, a run has
# one style in both panels, the axes have labels and round ticks.
ulpgate_expect(0 "" drift --scenario seed --epochs 100 --target SCALAR,SSE4
  --variants tanh_bwd=mulsub_fma --variants tanh_bwd=mulsub_fma,sgd=fused --svg "${WORK}/chart.svg")
file(READ "${WORK}/chart.svg" svg)
foreach(name "sgd=unfused@SCALAR" "sgd=fused@SCALAR" "sgd=unfused@SSE4" "sgd=fused@SSE4"
        ">epoch<" ">loss<" ">relative deviation<" ">20<" ">40<" ">80<")
  string(FIND "${svg}" "${name}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the chart lacks '${name}'")
  endif()
endforeach()
foreach(series 1 2 3 4)
  set(styles)
  foreach(panel 0 1)
    if(NOT svg MATCHES "data-series='${series}' clip-path='url\\(#drift-panel${panel}\\)' fill='none' stroke='([^']*)' stroke-width='([^']*)'( stroke-dasharray='[^']*')?")
      message(FATAL_ERROR "series ${series} is not drawn in panel ${panel}")
    endif()
    list(APPEND styles "${CMAKE_MATCH_1}|${CMAKE_MATCH_2}|${CMAKE_MATCH_3}")
  endforeach()
  list(GET styles 0 first)
  list(GET styles 1 second)
  if(NOT first STREQUAL second)
    message(FATAL_ERROR "series ${series} looks different in the two panels: ${styles}")
  endif()
  list(APPEND all_styles "${first}")
endforeach()
list(REMOVE_DUPLICATES all_styles)
list(LENGTH all_styles distinct)
if(NOT distinct EQUAL 4)
  message(FATAL_ERROR "four runs in ${distinct} styles: ${all_styles}")
endif()
