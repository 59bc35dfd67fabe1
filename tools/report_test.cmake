# ctest driver (label smoke): every kind of report `ulpgate report` draws,
# made small, and the page built from them: its HTML balanced, every SVG
# well-formed, nothing fetched from elsewhere, each section there
# (tools/python/check_report_html.py). report_renders_in_chromium renders
# the same page in a browser. Bad inputs are one error line and exit 2.
# Variables: ULPGATE, PYTHON, SCRIPTS (tools/python), WORK.
include("${CMAKE_CURRENT_LIST_DIR}/cli_expect.cmake")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/reports")
set(r "${WORK}/reports")
ulpgate_expect(0 "" run --kernel tanh_bwd --variant all --target SCALAR,SSE4 --suite domain --n 3000 --by t
  --quiet --json "${r}/tanh_bwd-domain.json")
ulpgate_expect(0 "" matrix --n 500 --json "${r}/matrix.json")
ulpgate_expect(0 "" drift --scenario seed --dtype f32,bf16,mixed_f16 --epochs 150 --curves "${WORK}/curves"
  --json "${r}/drift-seed.json")
file(GLOB curves "${WORK}/curves/bf16_*.csv")
ulpgate_expect(0 "" drift --scenario seed --dtype bf16 --attribute --epochs 300 --compare ${curves}
  --label bf16-recorded --json "${r}/attribution-bf16.json")
file(WRITE "${WORK}/budgets.json" [=[{
  "format": "ulpgate-budgets-1",
  "about": "a small ledger for the report test",
  "runs": [{"op": "tanh_bwd", "suites": ["domain"], "n": 2000}],
  "rules": [{"id": "tanh_bwd.conformance", "match": {"op": "tanh_bwd"},
             "limits": {"conformance_required": true}, "why": "every kernel follows its model"}]
}]=])
ulpgate_expect(0 "gate: PASS" gate --budgets "${WORK}/budgets.json" --quiet --json "${r}/gate.json")
file(WRITE "${r}/not-a-report.json" "{\"format\": \"something-else\"}")
ulpgate_expect(0 "report: 5 reports -> .*report.html\n  left out \\(not a report the page draws\\): .*not-a-report.json \\(something-else\\)"
  report "${r}" --html "${WORK}/report.html" --title "ulpgate report test")
execute_process(COMMAND "${PYTHON}" "${SCRIPTS}/check_report_html.py" "${WORK}/report.html" --svgs 11
    --expect "release gate: <span class='ok'>PASS</span>"
    --expect "target matrix: tanh_bwd"
    --expect "tanh_bwd &middot; suite domain"
    --expect "error map: max ULP by binade of t"
    --expect "drift: scenario seed"
    --expect "attribution of bf16 tanh_bwd=mac_opmath"
    --expect "dominant op: <b>sgd_step</b>"
    --expect "recorded curve <b>bf16-recorded</b>"
    --expect "data-legend="
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "check_report_html.py: exit ${status}\n${out}${err}")
endif()
message(STATUS "${out}")

ulpgate_expect(2 "nowhere: no such file or folder" report "${WORK}/nowhere" --html "${WORK}/x.html")
file(MAKE_DIRECTORY "${WORK}/empty")
file(WRITE "${WORK}/empty/other.json" "{\"format\": \"ulpgate-sweep-1\"}")
ulpgate_expect(2 "no run, matrix, drift or gate report among 1 JSON files" report "${WORK}/empty"
  --html "${WORK}/x.html")
file(WRITE "${WORK}/broken.json" "{\"format\": ")
ulpgate_expect(2 "broken.json:1:.*malformed JSON" report "${WORK}/broken.json" --html "${WORK}/x.html")
