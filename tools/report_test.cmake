# ctest driver (label smoke): every kind of report `ulpgate report` draws,
# made small, and the page built from them: its HTML balanced, every SVG
# well-formed, nothing fetched from elsewhere, each section there
# (tools/python/check_report_html.py): a check of outputs made elsewhere with
# the models they follow and its replay; a failing gate's rows with the
# waiver's reason and expiry, the messages and the replay commands;
# histograms with labelled axes on one scale per table; the colour scale of
# the error map. report_renders_in_chromium renders the same page in a
# browser. Bad inputs are one error line and exit 2.
# Variables: ULPGATE, PYTHON, SCRIPTS (tools/python), PEER (the peer
# archives), WORK.
include("${CMAKE_CURRENT_LIST_DIR}/cli_expect.cmake")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/reports")
set(r "${WORK}/reports")
# AVX2 (on its model where this CPU cannot run it) fuses: its mulsub_fma errs
# far less than the others, so the histograms' shared x scale is tested.
ulpgate_expect(0 "" run --kernel tanh_bwd --variant all --target SCALAR,SSE4,AVX2 --emulate-unsupported
  --suite domain --n 3000 --by t --quiet --json "${r}/tanh_bwd-domain.json")
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
# A gate that fails: one limit too tight, one waived, one waiver expired.
file(WRITE "${WORK}/failing_budgets.json" [=[{
  "format": "ulpgate-budgets-1",
  "about": "a failing ledger for the report test",
  "runs": [{"op": "tanh_bwd", "suites": ["domain"], "n": 2000, "variants": ["mac", "mulsub", "mulsub_fma"]}],
  "rules": [{"id": "tight", "match": {"op": "tanh_bwd", "variant": "mulsub_fma", "target": "SCALAR"},
             "limits": {"max_ulp": 0.25}, "why": "too tight, to fail"},
            {"id": "waived", "match": {"op": "tanh_bwd", "variant": "mac"}, "limits": {"max_ulp": 0.25},
             "why": "test", "waiver": {"reason": "mac rounds twice, replaced soon", "expires": "2099-12-31"}},
            {"id": "expired", "match": {"op": "tanh_bwd", "variant": "mulsub"}, "limits": {"max_ulp": 0.25},
             "why": "test", "waiver": {"reason": "a fix that is late", "expires": "2020-01-31"}}]
}]=])
ulpgate_expect(1 "gate: FAIL \\(2 rows\\)" gate --budgets "${WORK}/failing_budgets.json" --quiet
  --json "${r}/gate-failing.json")
# Outputs made elsewhere: PyTorch's CUDA tanh_backward in bf16, with a model of
# one's own beside the built-in ones.
ulpgate_expect(1 "check: FAIL" check --dtype bf16 --inputs "${PEER}/tanh_bf16.npz"
  --outputs "${PEER}/tanh_bf16.npz:cuda_aten" --max-ulp 6 --model "mine: out = grad - grad*t*t"
  --json "${r}/check-cuda.json")
file(WRITE "${r}/not-a-report.json" "{\"format\": \"something-else\"}")
ulpgate_expect(0 "report: 7 reports -> .*report.html\n  left out \\(not a report the page draws\\):[ \n]+.*not-a-report.json[ \n]+\\(something-else\\)"
  report "${r}" --html "${WORK}/report.html" --title "ulpgate report test")
execute_process(COMMAND "${PYTHON}" "${SCRIPTS}/check_report_html.py" "${WORK}/report.html" --svgs 13
    --folded "${r}/tanh_bwd-domain.json" --expect "mac_unfused@SCALAR, SSE4, AVX2: max "
    --expect "<tr><td>mulsub@SCALAR, SSE4, AVX2</td>" --max-bytes 200000
    --expect "release gate: <span class='ok'>PASS</span>"
    --expect "release gate: <span class='bad'>FAIL</span>"
    --expect "<tr class='st-WAIVED'><td>waived</td><td>max_ulp</td><td>WAIVED</td>"
    --expect "mac rounds twice, replaced soon <span class='expires'>(expires 2099-12-31)</span>"
    --expect "a fix that is late <span class='expires'>(expires 2020-01-31)</span>"
    --expect "<li class='st-FAIL'><b>FAIL</b> <code>tight.max_ulp</code>: measured "
    --expect "<div>max_ulp = "
    --expect "<div>replay: <code class='replay'><span>ulpgate</span> <span>run</span> <span>--op</span> <span>tanh_bwd</span> <span>--variant</span> <span>mulsub_fma</span> <span>--target</span> <span>SCALAR</span> <span>--suite</span> <span>domain</span> <span>--seed</span> <span>1</span> <span>--n</span> <span>2000</span></code></div>"
    --expect "the waiver expired on 2020-01-31"
    --expect "check: cuda_aten &middot; tanh_bwd in bf16 &middot; 16384 outputs &middot; <span class='bad'>FAIL</span>"
    --expect "<td>mulsub_per_op</td><td>builtin</td><td class='n'><span class='ok'>0: follows</span>"
    --expect "<td>mine</td><td>user</td>"
    --expect "<b>FAIL</b> max ULP error 6.4 above --max-ulp 6"
    --expect "<span>ulpgate</span> <span>check</span> <span>--op</span> <span>tanh_bwd</span> <span>--dtype</span> <span>bf16</span>"
    --expect "<span>--model</span> <span>&#39;mine:</span>"
    --count "7:ULP error (bin upper bound)</text>"
    --count "7:count (log)</text>"
    --count "3:<svg class='colour-scale'"
    --expect "<title>max ULP error</title>"
    --expect ">≤0.5</text>"
    --expect ">≥4096</text>"
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
ulpgate_expect(2 "no run, matrix, check, drift or gate report among 1 JSON files" report "${WORK}/empty"
  --html "${WORK}/x.html")
file(WRITE "${WORK}/broken.json" "{\"format\": ")
ulpgate_expect(2 "broken.json:1:.*malformed JSON" report "${WORK}/broken.json" --html "${WORK}/x.html")
