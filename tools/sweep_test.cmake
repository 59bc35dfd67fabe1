# ctest driver: a sweep cut into 4 shards, run in parallel by GNU parallel
# (sequentially where it is not installed), merged, equals the whole sweep
# byte for byte; and the errors of sweep and merge are one line, exit 2.
# Variables: ULPGATE, PARALLEL (GNU parallel, or empty), WORK.
include("${CMAKE_CURRENT_LIST_DIR}/cli_expect.cmake")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
# 2^18 bf16 pairs around grad = 1, two variants on every target this CPU runs:
# not block-aligned at either end, so the first and last shards hold part blocks.
set(sweep sweep --dtype bf16 --range 0x3f7f8000:0x3f83c123 --variant mulsub_per_op,mulsub_opmath --quiet)
ulpgate_expect(0 "inputs 0x3f7f8000 to 0x3f83c123 \\(278819 of 4294967296\\)" ${sweep} --json "${WORK}/whole.json")
if(PARALLEL)
  execute_process(COMMAND "${PARALLEL}" --will-cite --halt now,fail=1 "${ULPGATE}" ${sweep}
      --shard {}/4 --json "${WORK}/shard{}.json" ::: 0 1 2 3
    RESULT_VARIABLE status OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "parallel: exit ${status}\n${err}")
  endif()
  message("4 shards run by GNU parallel")
else()
  foreach(k 0 1 2 3)
    ulpgate_expect(0 "" ${sweep} --shard ${k}/4 --json "${WORK}/shard${k}.json")
  endforeach()
  message("4 shards run one after another (GNU parallel not found)")
endif()
# Any order.
ulpgate_expect(0 "inputs 0x3f7f8000 to 0x3f83c123" merge "${WORK}/shard2.json" "${WORK}/shard0.json"
  "${WORK}/shard3.json" "${WORK}/shard1.json" --json "${WORK}/merged.json")
file(READ "${WORK}/whole.json" whole)
file(READ "${WORK}/merged.json" merged)
if(NOT whole STREQUAL merged)
  message(FATAL_ERROR "the merged shards differ from the whole sweep: diff ${WORK}/whole.json ${WORK}/merged.json")
endif()
file(READ "${WORK}/shard1.json" shard)
if(shard STREQUAL whole OR NOT shard MATCHES "\"range\": \\[\n    1065353216,")
  message(FATAL_ERROR "shard 1 is not the second quarter cut at a block:\n${shard}")
endif()

ulpgate_expect(2 "they overlap" merge "${WORK}/shard0.json" "${WORK}/shard0.json")
ulpgate_expect(2 "shard0.json .*shard2.json .*: they leave a gap" merge "${WORK}/shard0.json" "${WORK}/shard2.json")
ulpgate_expect(0 "" sweep --dtype f16 --range 0:100 --variant mulsub_per_op --quiet --json "${WORK}/f16.json")
ulpgate_expect(2 "not the same sweep" merge "${WORK}/shard0.json" "${WORK}/f16.json")
ulpgate_expect(2 "--shard 4/4: K runs from 0 to N-1" sweep --dtype bf16 --shard 4/4)
ulpgate_expect(2 "f32 has 2\\^64 pairs" sweep --dtype f32)
ulpgate_expect(2 "--range 5:5: expected BEGIN < END" sweep --dtype f16 --range 5:5)
ulpgate_expect(2 "--grad and --t exclude each other" sweep --dtype f32 --grad 1 --t 0.5)
ulpgate_expect(2 "a fixed value must be finite" sweep --dtype f32 --grad inf)
file(WRITE "${WORK}/bad.json" "{\"format\": \"ulpgate-gate-2\"}")
ulpgate_expect(2 "bad.json: .*is not a sweep report" merge "${WORK}/bad.json")
