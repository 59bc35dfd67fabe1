# ctest driver: `ulpgate check` on PyTorch's linear and MSE outputs (suites/peer/): the
# bound fraction of every path, TF32 (cuda_f32_tf32_1) reported as exceeding the f32
# bound and the others within it, each report rechecked independently by
# tools/python/recheck_check.py --reductions (exact rationals, no ulpgate code).
# Variables: ULPGATE, PYTHON, SCRIPT, PEER, WORK.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
foreach(archive linear mse)
  if(archive STREQUAL "linear")
    set(paths linear_fwd:cpu_f32 linear_fwd:cuda_f32_tf32_0 linear_fwd:cuda_f32_tf32_1
      linear_bwd_input:cpu_dx linear_bwd_input:cuda_dx linear_bwd_weight:cpu_dW
      linear_bwd_weight:cuda_dW linear_bwd_bias:cpu_db linear_bwd_bias:cuda_db)
  else()
    set(paths mse_fwd:cpu_fwd mse_fwd:cuda_fwd mse_bwd:cpu_bwd mse_bwd:cuda_bwd)
  endif()
  set(reports)
  foreach(item IN LISTS paths)
    string(REPLACE ":" ";" parts "${item}")
    list(GET parts 0 op)
    list(GET parts 1 path)
    execute_process(
      COMMAND "${ULPGATE}" check --op ${op} --inputs "${PEER}/${archive}.npz"
              --outputs "${PEER}/${archive}.npz:${path}" --json "${WORK}/${path}.json"
      RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE errors)
    if(NOT status EQUAL 0)
      message(FATAL_ERROR "ulpgate check --op ${op} ${path} failed (${status}): ${errors}")
    endif()
    if(path STREQUAL "cuda_f32_tf32_1")
      set(want "EXCEEDS the f32 error bound: [0-9]+ of 4096 outputs")
    else()
      set(want "within the f32 error bound")
    endif()
    if(NOT out MATCHES "${want}")
      message(FATAL_ERROR "${op} ${path}: expected '${want}':\n${out}")
    endif()
    list(APPEND reports "${WORK}/${path}.json")
  endforeach()
  execute_process(COMMAND "${PYTHON}" "${SCRIPT}" --reductions "${PEER}/${archive}.npz" ${reports}
    RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "the independent recheck disagrees with check's ${archive} reports")
  endif()
endforeach()
