# ctest driver: `ulpgate reveal` names the tree it finds and checks its model
# (exit 0); writes a golden and passes its check on the same kernel; fails the
# check (exit 1) on a kernel whose split moved by one term, naming the first
# probe whose output changed; rejects an unknown kernel (exit 2, one line).
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${ULPGATE}" reveal --door lane_parallel --targets SCALAR,SSE4 --k 40 --m 4 --n 64 --check 2000
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0 OR NOT out MATCHES "lane_parallel@SSE4: .*4 strided chains \\+ halving tree, rounded products"
   OR NOT out MATCHES "lane_parallel@SCALAR: .*sequential chain, rounded products"
   OR NOT out MATCHES "model check: 2000 of 2000 random outputs bit for bit")
  message(FATAL_ERROR "ulpgate reveal lane_parallel: status ${status}\n${out}\n${err}")
endif()
execute_process(COMMAND "${ULPGATE}" reveal --door planted:f32_splitk3 --k 64 --m 4 --n 64
    --check 1000 --write-golden "${WORK}/splitk.json"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0 OR NOT out MATCHES "split: 3 sequential parts of 24, 16, 24 terms"
   OR NOT EXISTS "${WORK}/splitk.json")
  message(FATAL_ERROR "ulpgate reveal --write-golden: status ${status}\n${out}\n${err}")
endif()
file(READ "${WORK}/splitk.json" golden)
if(NOT golden MATCHES "\"regenerate\": \"ulpgate reveal --door planted:f32_splitk3 --k 64")
  message(FATAL_ERROR "the golden does not say how to regenerate it:\n${golden}")
endif()
execute_process(COMMAND "${ULPGATE}" reveal --check-golden "${WORK}/splitk.json"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0 OR NOT out MATCHES "every output as the golden holds it")
  message(FATAL_ERROR "ulpgate reveal --check-golden: status ${status}\n${out}\n${err}")
endif()
execute_process(COMMAND "${ULPGATE}" reveal --check-golden "${WORK}/splitk.json"
    --door planted:f32_splitk3_late
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 1 OR NOT out MATCHES "FAILED\n  [0-9]+ probe outputs changed; first: probe [0-9]+ \\(lca [0-9]+ [0-9]+\\): kernel ")
  message(FATAL_ERROR "ulpgate reveal --check-golden on a moved split: status ${status}\n${out}\n${err}")
endif()
execute_process(COMMAND "${ULPGATE}" reveal --door planted:nothing
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 2 OR NOT err MATCHES "^ulpgate: error: --door: no planted kernel 'planted:nothing'")
  message(FATAL_ERROR "ulpgate reveal --door planted:nothing: status ${status}\n${out}\n${err}")
endif()
