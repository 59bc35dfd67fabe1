# ctest driver for `ulpgate gate` on a small ledger (a few runs, small n):
# a passing gate prints its summary and the passing rows folded by op (every
# row only with --verbose), in few lines; a limit below its measurement gives
# exit 1 naming the rule, its message and a replay command that measures the
# same value again; a waiver past its expiry gives EXPIRED and exit 1, one
# still valid WAIVED and exit 0, each with its reason and date; a truncated
# ledger gives exit 2 naming the file and leaves earlier --json/--junit files
# as they were; the JUnit XML parses with the right failure count; --json is
# byte-identical across runs and thread counts and keeps every row; the
# Markdown summary is written to --markdown and appended to
# $GITHUB_STEP_SUMMARY; GitHub Actions annotations come one per failing row,
# escaped, with --annotations or $GITHUB_ACTIONS=true and never otherwise.
# -DULPGATE=<binary> -DWORK=<scratch folder> [-DPYTHON=<python3>]
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
# Run inside a GitHub Actions job, the gate would write to the job's summary
# page and annotate it; only the steps that test that may.
unset(ENV{GITHUB_ACTIONS})
unset(ENV{GITHUB_STEP_SUMMARY})

set(template [=[{
  "format": "ulpgate-budgets-1",
  "about": "gate_cli_test: a small ledger",
  "runs": [
    {"op": "tanh_bwd", "suites": ["domain"], "n": 3000, "variants": ["mac", "mulsub_fma"]},
    {"op": "linear_fwd", "suites": ["exact"], "shape": "4,8,4", "n": 2},
    {"op": "drift", "suites": ["seed"], "n": 20, "variants": ["tanh_bwd=mulsub_fma,sgd=fused"]}
  ],
  "rules": [
    {"id": "small.mac", "match": {"op": "tanh_bwd", "variant": "mac"},
     "limits": {"max_ulp": @MAC_LIMIT@, "conformance_required": true},
     "why": "test"@WAIVER@},
    {"id": "small.mulsub_fma.fused",
     "match": {"op": "tanh_bwd", "variant": "mulsub_fma", "target": "AVX2|AVX3*"},
     "limits": {"max_ulp": 1.5, "k": 1, "max_fraction_above_k_ulp": 0.1}, "why": "test"},
    {"id": "small.exact", "match": {"op": "linear_fwd", "suite": "exact"},
     "limits": {"max_ulp": 0, "max_bound_fraction": 1}, "why": "test"},
    {"id": "small.drift", "match": {"op": "drift"},
     "limits": {"max_relative_loss_deviation": 0.001, "max_lag_epochs": 5}, "why": "test"}
  ]
}
]=])

# write_ledger(<file> <mac max_ulp> <waiver expiry or ""> [<waiver reason>])
function(write_ledger file MAC_LIMIT expires)
  set(WAIVER "")
  set(reason "test waiver")
  if(ARGC GREATER 3)
    set(reason "${ARGV3}")
  endif()
  if(expires)
    set(WAIVER ",\n     \"waiver\": {\"reason\": \"${reason}\", \"expires\": \"${expires}\"}")
  endif()
  string(CONFIGURE "${template}" text @ONLY)
  file(WRITE "${file}" "${text}")
endfunction()

# gate(<expected status> <args>...): runs `ulpgate gate --quiet <args>`,
# leaves stdout in gate_out and stderr in gate_err.
function(gate expected)
  execute_process(COMMAND "${ULPGATE}" gate --quiet ${ARGN}
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL expected)
    message(FATAL_ERROR "ulpgate gate ${ARGN}: status ${status}, expected ${expected}\n"
                        "stdout:\n${out}\nstderr:\n${err}")
  endif()
  set(gate_out "${out}" PARENT_SCOPE)
  set(gate_err "${err}" PARENT_SCOPE)
endfunction()

function(expect_match text regex what)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: no match for '${regex}' in:\n${text}")
  endif()
endfunction()

function(expect_no_match text regex what)
  if(text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: '${regex}' matches '${CMAKE_MATCH_0}' in:\n${text}")
  endif()
endfunction()

# count_lines(<var> <text>)
function(count_lines var text)
  string(REGEX MATCHALL "\n" newlines "${text}")
  list(LENGTH newlines n)
  set(${var} ${n} PARENT_SCOPE)
endfunction()

# expect_replay(<gate output> <row>): the row's replay command, run, gives
# the max ULP the gate measured for it (in gate_max_ulp, from --json).
function(expect_replay text row measured)
  string(REGEX MATCH "\n[A-Z]+ ${row}: [^\n]*\n(    [^\n]*\n)*  replay: ([^\n]*)" found "${text}")
  if(NOT found)
    message(FATAL_ERROR "no replay command under ${row}:\n${text}")
  endif()
  set(line "${CMAKE_MATCH_2}")
  string(REPLACE " " ";" command "${line}")
  list(POP_FRONT command program)
  if(NOT program STREQUAL "ulpgate")
    message(FATAL_ERROR "the replay of ${row} is not an ulpgate command: ${line}")
  endif()
  execute_process(COMMAND "${ULPGATE}" ${command} --quiet --json "${WORK}/replay.json"
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "replay of ${row} (${line}): status ${status}\n${out}${err}")
  endif()
  file(READ "${WORK}/replay.json" replay)
  string(JSON replayed GET "${replay}" results 0 max_ulp)
  if(NOT replayed EQUAL measured)
    message(FATAL_ERROR "replay of ${row} measures max_ulp ${replayed}, the gate ${measured}")
  endif()
endfunction()

# check_junit(<file> <failures> <first failing testcase>): the XML parses and
# holds that many <failure> elements.
function(check_junit file failures first)
  if(NOT PYTHON)
    return()
  endif()
  execute_process(COMMAND "${PYTHON}" -c [=[
import sys, xml.dom.minidom
dom = xml.dom.minidom.parse(sys.argv[1])
suite = dom.getElementsByTagName("testsuite")[0]
failures = dom.getElementsByTagName("failure")
assert suite.getAttribute("name") == "ulpgate gate", suite.getAttribute("name")
assert len(failures) == int(sys.argv[2]), len(failures)
assert suite.getAttribute("failures") == sys.argv[2], suite.getAttribute("failures")
case = failures[0].parentNode.getAttribute("name")
assert case == sys.argv[3], case
]=] "${file}" ${failures} ${first} RESULT_VARIABLE status ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "JUnit XML ${file}: ${err}")
  endif()
endfunction()

# 1. Within budget: the summary, the rows folded by op, exit 0; every row
# only with --verbose.
write_ledger("${WORK}/pass.json" 1000000000 "")
gate(0 --budgets "${WORK}/pass.json" --json "${WORK}/pass_report.json")
expect_match("${gate_out}" "^ulpgate gate: PASS \\(0 of 9 rows fail\\)\n  rows:  8 PASS, 0 FAIL, 0 WAIVED, 0 EXPIRED, 1 SKIPPED\n  rules: 4 PASS, 0 FAIL, 0 WAIVED, 0 EXPIRED, 1 SKIPPED \\(of 5;"
             "summary first")
expect_match("${gate_out}" "\n  held at their value: 0 of 8 PASS rows " "rows held at their value")
expect_match("${gate_out}" "\nop +rules +passed +held +least headroom +measured +limit\n" "folded table header")
expect_match("${gate_out}" "\ntanh_bwd +2 +4 of 4 +0 +small.mulsub_fma.fused.max_ulp +[0-9.e+-]+ +1.5\n" "tanh_bwd folded")
expect_match("${gate_out}" "\nlinear_fwd +1 +2 of 2 +0 +small.exact.max_bound_fraction +[0-9.e+-]+ +1\n" "linear_fwd folded")
expect_match("${gate_out}" "\ndrift +1 +2 of 2 +0 +small.drift.max_[a-z_]+ +[0-9.e+-]+ +[0-9.]+\n" "drift folded")
# A skipped row (no golden sweeps here) is not one that failed to pass.
expect_match("${gate_out}" "\nsweeps +1 +1 skipped +0 +- +- +-\n" "a skipped row folded as skipped")
expect_no_match("${gate_out}" "\n +PASS +max_ulp [^\n]*\n" "a PASS row without --verbose")
expect_no_match("${gate_out}" "replay:" "a replay command of a passing gate")
expect_match("${gate_out}" "gate: PASS\n$" "verdict last")
count_lines(lines "${gate_out}")
if(lines GREATER 25)
  message(FATAL_ERROR "a passing gate of 4 rules prints ${lines} lines, more than 25:\n${gate_out}")
endif()
gate(0 --budgets "${WORK}/pass.json" --verbose)
expect_match("${gate_out}" "status +limit +measured +limit value +where" "--verbose: the table header")
expect_match("${gate_out}" "small.mac\n +PASS +max_ulp +[0-9.e+]+ +1000000000 +mac@[A-Z0-9_]+ domain\n"
             "--verbose: a passing row")
expect_match("${gate_out}" "small.drift\n +PASS +max_relative_loss_deviation [^\n]*\n +PASS +max_lag_epochs "
             "--verbose: every row")
file(READ "${WORK}/pass_report.json" report)
string(JSON measured GET "${report}" rows 0 measured_text)
string(JSON measured_number GET "${report}" rows 0 measured)
string(JSON row_count LENGTH "${report}" rows)
if(NOT row_count EQUAL 9)
  message(FATAL_ERROR "gate JSON: ${row_count} rows, not every one of the 9")
endif()
string(JSON replay GET "${report}" rows 0 replay)
expect_match("${replay}" "^ulpgate run --op tanh_bwd --variant mac --target [A-Z0-9_]+ --suite domain --seed 1 --n 3000"
             "gate JSON: the replay of a row")
# Numbers are JSON numbers; the text the table shows sits beside them.
foreach(field measured limit_value)
  string(JSON type TYPE "${report}" rows 0 ${field})
  if(NOT type STREQUAL "NUMBER")
    message(FATAL_ERROR "gate JSON: rows/0/${field} is ${type}, not a number")
  endif()
endforeach()
string(JSON format GET "${report}" format)
if(NOT format STREQUAL "ulpgate-gate-2")
  message(FATAL_ERROR "gate JSON: format ${format}")
endif()
if(measured MATCHES "^0")
  message(FATAL_ERROR "mac's max ULP on domain is ${measured}: the next step needs it above 0.5")
endif()
# A limit set at what was measured (as bless sets them) is counted as held at
# its value; the row with the least headroom is one that has some.
write_ledger("${WORK}/held.json" "${measured_number}" "")
gate(0 --budgets "${WORK}/held.json")
expect_match("${gate_out}" "\n  held at their value: 1 of 8 PASS rows " "a limit held at its value")
expect_match("${gate_out}" "\ntanh_bwd +2 +4 of 4 +1 +small.mulsub_fma.fused.max_ulp +[0-9.e+-]+ +1.5\n"
             "the least headroom among rows that have some")

# 2. One limit below its measurement: exit 1, the rule named with its message
# and a replay command that measures the same, one JUnit failure.
write_ledger("${WORK}/fail.json" 0.5 "")
gate(1 --budgets "${WORK}/fail.json" --junit "${WORK}/fail.xml")
expect_match("${gate_out}" "^ulpgate gate: FAIL \\(1 of 9 rows fail\\)\n  rows:  7 PASS, 1 FAIL," "summary first")
expect_match("${gate_out}" "\n  rules: 3 PASS, 1 FAIL, " "rules by their worst row")
# The summary shows six digits, the message every digit.
expect_match("${gate_out}" "\nFAIL small.mac.max_ulp: max_ulp = ${measured}[0-9]* > 0.5 at mac@[A-Z0-9_]+ domain\n"
             "failure message")
expect_match("${gate_out}" "\n  replay: ulpgate run --op tanh_bwd --variant mac --target [A-Z0-9_]+ --suite domain --seed 1 --n 3000\n"
             "failing row's replay")
expect_replay("${gate_out}" "small.mac.max_ulp" "${measured_number}")
expect_match("${gate_out}" "\ntanh_bwd +2 +3 of 4 " "the failing row is not folded")
expect_match("${gate_out}" "gate: FAIL \\(1 row\\)\n$" "verdict")
expect_no_match("${gate_out}" "::error" "annotations outside GitHub Actions")
gate(1 --budgets "${WORK}/fail.json" --verbose)
expect_match("${gate_out}" "small.mac\n +FAIL +max_ulp +${measured} +0.5 +mac@" "--verbose: the failing row in the table")
check_junit("${WORK}/fail.xml" 1 small.mac.max_ulp)

# 3. A waiver that expired yesterday: EXPIRED, exit 1, saying when and why.
write_ledger("${WORK}/expired.json" 0.5 "2030-01-01")
gate(1 --budgets "${WORK}/expired.json" --today 2030-01-02 --junit "${WORK}/expired.xml")
expect_match("${gate_out}" "\nEXPIRED small.mac.max_ulp: the waiver expired on 2030-01-01 \\(\"test waiver\"\\): remove it[^\n]*\n(    [^\n]*\n)*  replay: ulpgate run "
             "expired row with its reason, date and replay")
expect_match("${gate_out}" "\nEXPIRED small.mac.conformance_required: the waiver expired on 2030-01-01" "expired passing row")
check_junit("${WORK}/expired.xml" 2 small.mac.max_ulp)

# 4. The same waiver a year before its expiry: WAIVED, exit 0.
gate(0 --budgets "${WORK}/expired.json" --today 2029-01-02)
expect_match("${gate_out}" "\nWAIVED small.mac.max_ulp: waived until 2030-01-01: test waiver; max_ulp = ${measured}[0-9]* > 0.5[^\n]*\n  replay: ulpgate run "
             "waived row with its reason, date and replay")
expect_match("${gate_out}" "\nPASS small.mac.conformance_required: passes without its waiver \\(until 2030-01-01\\): remove it\n"
             "a waiver no longer needed")
expect_match("${gate_out}" "gate: PASS\n$" "verdict")

# 5. A truncated ledger: exit 2, one line naming the file; earlier reports kept.
file(READ "${WORK}/pass.json" whole)
string(LENGTH "${whole}" length)
math(EXPR half "${length} / 2")
string(SUBSTRING "${whole}" 0 ${half} truncated)
file(WRITE "${WORK}/truncated.json" "${truncated}")
file(WRITE "${WORK}/kept.json" "earlier report\n")
file(WRITE "${WORK}/kept.xml" "earlier report\n")
gate(2 --budgets "${WORK}/truncated.json" --json "${WORK}/kept.json" --junit "${WORK}/kept.xml")
string(REGEX MATCHALL "\n" newlines "${gate_err}")
list(LENGTH newlines lines)
expect_match("${gate_err}" "^ulpgate: error: [^\n]*truncated.json:[0-9]+:[0-9]+: malformed JSON"
             "error line")
if(NOT lines EQUAL 1)
  message(FATAL_ERROR "expected one line on stderr, got:\n${gate_err}")
endif()
foreach(kept kept.json kept.xml)
  file(READ "${WORK}/${kept}" content)
  if(NOT content STREQUAL "earlier report\n")
    message(FATAL_ERROR "${kept} was overwritten by a failed gate")
  endif()
endforeach()

# 6. Reports byte-identical across runs and thread counts.
gate(0 --budgets "${WORK}/pass.json" --json "${WORK}/t1.json" --junit "${WORK}/t1.xml" --threads 1)
gate(0 --budgets "${WORK}/pass.json" --json "${WORK}/t2.json" --junit "${WORK}/t2.xml" --threads 2)
gate(0 --budgets "${WORK}/pass.json" --json "${WORK}/t2b.json" --junit "${WORK}/t2b.xml" --threads 2)
foreach(pair "t1.json|t2.json" "t2.json|t2b.json" "t1.xml|t2.xml" "t2.xml|t2b.xml")
  string(REPLACE "|" ";" files "${pair}")
  list(GET files 0 a)
  list(GET files 1 b)
  file(READ "${WORK}/${a}" content_a)
  file(READ "${WORK}/${b}" content_b)
  if(NOT content_a STREQUAL content_b)
    message(FATAL_ERROR "${WORK}/${a} and ${WORK}/${b} differ")
  endif()
endforeach()

# 7. For a CI job's summary page: Markdown appended to $GITHUB_STEP_SUMMARY
# (what the earlier steps wrote kept), and written to --markdown; one
# annotation per failing row, escaped as GitHub's runner reads them (% CR LF
# in the message, : and , too in the title), with GITHUB_ACTIONS=true or
# --annotations.
write_ledger("${WORK}/annotated.json" 0.5 "2030-01-01" "fix: 100%, soon")
file(WRITE "${WORK}/step_summary.md" "# an earlier step\n")
set(ENV{GITHUB_STEP_SUMMARY} "${WORK}/step_summary.md")
set(ENV{GITHUB_ACTIONS} "true")
gate(1 --budgets "${WORK}/annotated.json" --today 2030-01-02 --markdown "${WORK}/gate.md")
gate(1 --budgets "${WORK}/annotated.json" --today 2030-01-02)
unset(ENV{GITHUB_STEP_SUMMARY})
unset(ENV{GITHUB_ACTIONS})
# (Messages hold ';', so annotations are counted by their start, not as a list.)
string(REGEX MATCHALL "\n::error " starts "${gate_out}")
list(LENGTH starts n)
if(NOT n EQUAL 2)
  message(FATAL_ERROR "expected 2 annotations (the EXPIRED rows), got ${n}:\n${gate_out}")
endif()
string(REGEX MATCH "\n::error [^\n]*" first "${gate_out}")
string(SUBSTRING "${first}" 1 -1 first)
set(expected_annotation "::error title=ulpgate gate%3A EXPIRED small.mac.max_ulp::the waiver expired on 2030-01-01 (\"fix: 100%25, soon\"): remove it and fix the kernel or the limit; max_ulp = ${measured}")
string(FIND "${first}" "${expected_annotation}" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "annotation:\n${first}\nexpected it to start with\n${expected_annotation}")
endif()
expect_match("${first}" "%0Areplay: ulpgate run --op tanh_bwd --variant mac --target [A-Z0-9_]+ --suite domain --seed 1 --n 3000$"
             "the annotation's replay")
expect_match("${gate_out}" "\n::error title=ulpgate gate%3A EXPIRED small.mac.conformance_required::" "second annotation")
file(READ "${WORK}/step_summary.md" summary)
file(READ "${WORK}/gate.md" markdown)
string(FIND "${summary}" "# an earlier step\n## ulpgate gate: FAIL\n" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "$GITHUB_STEP_SUMMARY: the gate's summary is not appended to what was there:\n${summary}")
endif()
string(REGEX MATCHALL "## ulpgate gate: FAIL" runs "${summary}")
list(LENGTH runs n)
if(NOT n EQUAL 2 OR NOT summary STREQUAL "# an earlier step\n${markdown}${markdown}")
  message(FATAL_ERROR "$GITHUB_STEP_SUMMARY after two gates: ${n} summaries, expected the --markdown file twice:\n${summary}")
endif()
expect_match("${markdown}" "\n\\| rows \\| 9 \\| 6 \\| 0 \\| 0 \\| 2 \\| 1 \\|\n\\| rules \\| 5 \\| 3 \\| 0 \\| 0 \\| 1 \\| 1 \\|\n"
             "Markdown: the counts")
expect_match("${markdown}" "\n- \\*\\*EXPIRED\\*\\* `small.mac.max_ulp`: measured ${measured}, limit 0.5, at mac@[A-Z0-9_]+ domain\n  - the waiver expired on 2030-01-01 [(]\"fix: 100%, soon\"[)]: remove it"
             "Markdown: the expired row and its message")
expect_match("${markdown}" "\n  - replay: `ulpgate run --op tanh_bwd --variant mac " "Markdown: the replay")
expect_match("${markdown}" "<details><summary>6 PASS rows, folded by op and format; 0 held at their value</summary>"
             "Markdown: PASS folded")
expect_match("${markdown}" "\n\\| linear_fwd \\| 1 \\| 2 of 2 \\| 0 \\| `small.exact.max_bound_fraction` \\|"
             "Markdown: a folded op")
expect_match("${markdown}" "\n\\| sweeps \\| 1 \\| 1 skipped \\| 0 \\| - \\|" "Markdown: a skipped row folded as skipped")
gate(1 --budgets "${WORK}/annotated.json" --today 2030-01-02 --annotations)
expect_match("${gate_out}" "\n::error title=ulpgate gate%3A EXPIRED small.mac.max_ulp::" "--annotations")
