# ctest driver for `ulpgate gate` on a small ledger (a few runs, small n):
# the table and exit 0; a limit below its measurement gives exit 1 naming the
# rule; a waiver past its expiry gives EXPIRED and exit 1, one still valid
# WAIVED and exit 0; a truncated ledger gives exit 2 naming the file and leaves
# earlier --json/--junit files as they were; the JUnit XML parses with the
# right failure count; --json is byte-identical across runs and thread counts.
# -DULPGATE=<binary> -DWORK=<scratch folder> [-DPYTHON=<python3>]
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

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

# write_ledger(<file> <mac max_ulp> <waiver expiry or "">)
function(write_ledger file MAC_LIMIT expires)
  set(WAIVER "")
  if(expires)
    set(WAIVER ",\n     \"waiver\": {\"reason\": \"test waiver\", \"expires\": \"${expires}\"}")
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

# 1. Within budget: the table, every row PASS, exit 0.
write_ledger("${WORK}/pass.json" 1000000000 "")
gate(0 --budgets "${WORK}/pass.json" --json "${WORK}/pass_report.json")
expect_match("${gate_out}" "limit +measured +limit value +where +status" "table header")
expect_match("${gate_out}" "small.mac\n +max_ulp +[0-9.e+]+ +1000000000 +mac@[A-Z0-9_]+ domain +PASS"
             "passing row")
expect_match("${gate_out}" "gate: PASS" "verdict")
file(READ "${WORK}/pass_report.json" report)
string(JSON measured GET "${report}" rows 0 measured_text)
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

# 2. One limit below its measurement: exit 1, the rule named, one JUnit failure.
write_ledger("${WORK}/fail.json" 0.5 "")
gate(1 --budgets "${WORK}/fail.json" --junit "${WORK}/fail.xml")
expect_match("${gate_out}" "small.mac\n +max_ulp +${measured} +0.5 +[^\n]* FAIL" "failing row")
# The table shows six digits, the message every digit.
expect_match("${gate_out}" "FAIL small.mac.max_ulp: max_ulp = ${measured}[0-9]* > 0.5" "failure message")
expect_match("${gate_out}" "gate: FAIL \\(1 row\\)" "verdict")
check_junit("${WORK}/fail.xml" 1 small.mac.max_ulp)

# 3. A waiver that expired yesterday: EXPIRED, exit 1, saying when.
write_ledger("${WORK}/expired.json" 0.5 "2030-01-01")
gate(1 --budgets "${WORK}/expired.json" --today 2030-01-02 --junit "${WORK}/expired.xml")
expect_match("${gate_out}" "small.mac\n +max_ulp [^\n]* EXPIRED" "expired row")
expect_match("${gate_out}" "expired on 2030-01-01" "expiry in the message")
check_junit("${WORK}/expired.xml" 2 small.mac.max_ulp)

# 4. The same waiver a year before its expiry: WAIVED, exit 0.
gate(0 --budgets "${WORK}/expired.json" --today 2029-01-02)
expect_match("${gate_out}" "small.mac\n +max_ulp [^\n]* WAIVED" "waived row")
expect_match("${gate_out}" "gate: PASS" "verdict")

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
