# ctest driver: every JSON report names its format and version in "format",
# so that a reader can refuse what it does not understand.
# -DULPGATE=<ulpgate> -DWORK=<scratch folder> -DGOLDEN=<repo>/golden
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
# <expected format>|<args, separated by !>; the report is written to WORK/r.json
set(cases
  "ulpgate-run-1|run!--kernel!tanh_bwd!--n!100!--target!SCALAR!--json!${WORK}/r.json"
  "ulpgate-run-1|run!--kernel!mse_bwd!--n!1!--target!SCALAR!--json!${WORK}/r.json"
  "ulpgate-drift-3|drift!--scenario!seed!--epochs!3!--target!SCALAR!--json!${WORK}/r.json"
  "ulpgate-explain-1|explain!--kernel!tanh_bwd!--input!grad=1.5!--input!t=0.75!--json!${WORK}/r.json"
  "ulpgate-matrix-1|matrix!--n!200!--json!${WORK}/r.json"
  "ulpgate-invariance-1|invariance!--op!planted:sequential!--k!20!--max-batch!9!--json!${WORK}/r.json"
  "ulpgate-reveal-1|reveal!--k!20!--m!2!--n!16!--check!100!--json!${WORK}/r.json"
  "ulpgate-reveal-golden-1|reveal!--k!20!--m!2!--n!16!--check!100!--write-golden!${WORK}/r.json"
  "ulpgate-compare-1|compare!--op!tanh_bwd!--a!mulsub@SCALAR!--b!mac@SCALAR!--n!100!--json!${WORK}/r.json"
  "ulpgate-compare-1|compare!--op!linear_fwd!--a!pairwise@SCALAR!--b!sequential_unfused@SCALAR!--json!${WORK}/r.json"
  "ulpgate-gate-2|gate!--quiet!--op!mse_bwd!--target!SCALAR!--budgets!${GOLDEN}/budgets.json!--json!${WORK}/r.json")
foreach(case IN LISTS cases)
  string(FIND "${case}" "|" bar)
  string(SUBSTRING "${case}" 0 ${bar} expected)
  math(EXPR bar "${bar} + 1")
  string(SUBSTRING "${case}" ${bar} -1 args)
  string(REPLACE "!" ";" args "${args}")
  file(REMOVE "${WORK}/r.json")
  execute_process(COMMAND "${ULPGATE}" ${args} RESULT_VARIABLE status OUTPUT_QUIET ERROR_QUIET)
  if(NOT EXISTS "${WORK}/r.json")
    message(FATAL_ERROR "ulpgate ${args} (status ${status}) wrote no report")
  endif()
  file(READ "${WORK}/r.json" report)
  string(JSON format ERROR_VARIABLE bad GET "${report}" format)
  if(bad OR NOT format STREQUAL expected)
    message(FATAL_ERROR "ulpgate ${args}: format '${format}', expected '${expected}' ${bad}")
  endif()
endforeach()
execute_process(COMMAND "${ULPGATE}" list --json OUTPUT_VARIABLE report)
string(JSON format ERROR_VARIABLE bad GET "${report}" format)
if(bad OR NOT format STREQUAL "ulpgate-list-1")
  message(FATAL_ERROR "list --json: format '${format}' ${bad}")
endif()
