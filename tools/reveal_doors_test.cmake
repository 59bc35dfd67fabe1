# ctest driver: `ulpgate reveal` and `ulpgate invariance` on a plugin's and an
# IUT's linear_fwd. The example plugin's sequential and pairwise kernels are
# revealed as the chain and the cascade its C source writes; ulpgate-iut's
# built-in reductions on each runnable target give the tree and accumulator
# lines that `reveal --door VARIANT --targets TARGET` gives for ulpgate's own
# kernel; the golden's regenerate line carries --plugin; invariance through
# the plugin says batch-invariant; a missing library, an unknown variant and
# a crashing kernel are one line and exit 3 (invariance reports the crash as
# its kernel's FAULT).
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(plugin "${PLUGINS}/liblinear_example.so")
set(shape --k 16 --m 4 --n 8)

function(reveal_lines out_var)
  execute_process(COMMAND "${ULPGATE}" reveal ${ARGN}
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "ulpgate reveal ${ARGN}: status ${status}\n${out}\n${err}")
  endif()
  # The tree and accumulator lines, without the door's name.
  string(REGEX MATCHALL "\n  (tree: |products: |nodes: |model: |split: )[^\n]*" lines "${out}")
  if(NOT lines MATCHES "tree: ")
    message(FATAL_ERROR "ulpgate reveal ${ARGN}: no tree line\n${out}\n${err}")
  endif()
  set(${out_var} "${lines}" PARENT_SCOPE)
  set(last_out "${out}" PARENT_SCOPE)
endfunction()

# The plugin: sequential is a left-to-right chain of rounded products,
# pairwise a cascade of 2-term pairs (linear_plugin.c), the model checked.
reveal_lines(seq --plugin "${plugin}" --door sequential ${shape} --tree --check 1000)
if(NOT last_out MATCHES "plugin:[^\n]*liblinear_example.so:sequential: output"
   OR NOT seq MATCHES "tree: 16 terms, 15 nodes, depth 15, widest node 2 inputs: sequential chain, rounded products"
   OR NOT seq MATCHES "model: \\(\\(\\(\\(\\(\\(\\(\\(\\(\\(\\(\\(\\(\\(\\(0r\\+1r\\)\\+2r\\)"
   OR NOT last_out MATCHES "model check: 1000 of 1000 random outputs bit for bit")
  message(FATAL_ERROR "reveal --plugin sequential:\n${last_out}")
endif()
reveal_lines(pair --plugin "${plugin}" --door linear_fwd/pairwise ${shape} --tree --check 1000
  --write-golden "${WORK}/pairwise.json")
if(NOT pair MATCHES "tree: 16 terms, 15 nodes, depth 4, widest node 2 inputs: pairwise cascade, rounded products"
   OR NOT pair MATCHES "model: \\(\\(\\(\\(0r\\+1r\\)\\+\\(2r\\+3r\\)\\)\\+\\(\\(4r\\+5r\\)\\+\\(6r\\+7r\\)\\)\\)"
   OR NOT last_out MATCHES "model check: 1000 of 1000 random outputs bit for bit")
  message(FATAL_ERROR "reveal --plugin pairwise:\n${last_out}")
endif()
# The golden regenerates through the plugin, and checks through it.
file(READ "${WORK}/pairwise.json" golden)
if(NOT golden MATCHES "\"regenerate\": \"ulpgate reveal --plugin [^ ]*liblinear_example.so --door linear_fwd/pairwise --k 16")
  message(FATAL_ERROR "the golden does not regenerate through the plugin:\n${golden}")
endif()
execute_process(COMMAND "${ULPGATE}" reveal --plugin "${plugin}" --check-golden "${WORK}/pairwise.json"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0 OR NOT out MATCHES "liblinear_example.so:pairwise: [0-9]+ probes .* every output as the golden holds it")
  message(FATAL_ERROR "reveal --plugin --check-golden: status ${status}\n${out}\n${err}")
endif()
# The sequential kernel does not pass the pairwise golden.
execute_process(COMMAND "${ULPGATE}" reveal --plugin "${plugin}" --door sequential
    --check-golden "${WORK}/pairwise.json"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 1 OR NOT out MATCHES "FAILED")
  message(FATAL_ERROR "reveal --plugin sequential on the pairwise golden: status ${status}\n${out}\n${err}")
endif()

# The IUT: ulpgate-iut's built-in kernels on each runnable target, against
# ulpgate's own through reveal's built-in door. The IUT names the unfused
# chain by its kernel's name.
execute_process(COMMAND "${ULPGATE}" reveal --door pairwise --targets all ${shape} --check 0
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX MATCHALL "pairwise@[A-Z0-9_]+:" found "${out}")
if(NOT status EQUAL 0 OR NOT found)
  message(FATAL_ERROR "reveal --targets all: status ${status}\n${out}\n${err}")
endif()
set(compared 0)
foreach(f ${found})
  string(REGEX REPLACE "pairwise@([A-Z0-9_]+):" "\\1" target "${f}")
  foreach(variant sequential_fma sequential lane_parallel pairwise)
    set(iut_variant ${variant})
    if(variant STREQUAL "sequential")
      set(iut_variant sequential_unfused)
    endif()
    reveal_lines(own --door ${variant} --targets ${target} ${shape} --tree --check 0)
    reveal_lines(iut --iut "${ULPGATE_IUT} --builtin --reductions --targets ${target}"
      --door ${iut_variant} ${shape} --tree --check 200)
    if(NOT last_out MATCHES "iut:[^\n]*:${iut_variant}@${target}: output"
       OR NOT last_out MATCHES "model check: 200 of 200 random outputs bit for bit")
      message(FATAL_ERROR "reveal --iut ${variant} on ${target}:\n${last_out}")
    endif()
    if(NOT own STREQUAL iut)
      message(FATAL_ERROR "${variant} on ${target}: the IUT's tree differs from ulpgate's own\n"
        "own:${own}\niut:${iut}")
    endif()
    math(EXPR compared "${compared} + 1")
  endforeach()
endforeach()
message(STATUS "${compared} kernels revealed alike through the IUT and the built-in door")
# Its regenerate line carries the command, quoted for the shell.
execute_process(COMMAND "${ULPGATE}" reveal --iut "${ULPGATE_IUT} --builtin --reductions --targets SCALAR"
    --door pairwise ${shape} --check 0 --write-golden "${WORK}/iut.json"
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(READ "${WORK}/iut.json" golden)
if(NOT status EQUAL 0 OR NOT golden MATCHES "\"regenerate\": \"ulpgate reveal --iut '[^']*ulpgate-iut --builtin --reductions --targets SCALAR' --door pairwise")
  message(FATAL_ERROR "reveal --iut --write-golden: status ${status}\n${out}\n${err}\n${golden}")
endif()

# Invariance through the plugin: both its kernels batch-invariant.
execute_process(COMMAND "${ULPGATE}" invariance --plugin "${plugin}" --op linear_fwd/sequential,pairwise
    --k 64 --n 8 --max-batch 8 --threads-list 1 --require invariant
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
# (The table may wrap a long kernel name, where depends on the build folder's
# path: its rows are counted, and a name is found whole or with its tail on
# the next line.)
string(REGEX MATCHALL "same +same +same +- +- +same +batch-invariant" rows "${out}")
list(LENGTH rows rows)
if(NOT status EQUAL 0 OR NOT rows EQUAL 2
   OR NOT out MATCHES "liblinear_example\\.(so:sequential|[^\n]*\n +so:sequential)"
   OR NOT out MATCHES "liblinear_example\\.(so:pairwise|[^\n]*\n +so:pairwise)"
   OR NOT out MATCHES "2 of 2 kernels batch-invariant")
  message(FATAL_ERROR "invariance --plugin: status ${status}\n${out}\n${err}")
endif()
execute_process(COMMAND "${ULPGATE}" invariance --iut "${ULPGATE_IUT} --builtin --reductions --targets SCALAR"
    --op pairwise --k 64 --n 8 --max-batch 8 --threads-list 1
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0 OR NOT out MATCHES "pairwise@SCALAR" OR NOT out MATCHES "same +batch-invariant"
   OR NOT out MATCHES "1 of 1 kernels batch-invariant")
  message(FATAL_ERROR "invariance --iut: status ${status}\n${out}\n${err}")
endif()

# Errors: one line on stderr, exit 3, no tree and no verdict.
function(expect_fault what)
  execute_process(COMMAND "${ULPGATE}" ${ARGN}
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines lines)
  if(NOT status EQUAL 3 OR NOT lines EQUAL 1 OR NOT err MATCHES "^ulpgate [a-z]+: [^\n]*${what}"
     OR out MATCHES "tree:|batch-invariant")
    message(FATAL_ERROR "ulpgate ${ARGN}: status ${status}, expected 3 and one line matching '${what}'\n${out}\n${err}")
  endif()
endfunction()
expect_fault("cannot load" reveal --plugin "${WORK}/none.so" --door sequential ${shape})
expect_fault("cannot load" invariance --plugin "${WORK}/none.so" --op linear_fwd/sequential)
expect_fault("no linear_fwd kernel 'nope'" reveal --plugin "${plugin}" --door nope ${shape})
expect_fault("no linear_fwd kernel 'nope'" invariance --plugin "${plugin}" --op nope)
expect_fault("no linear_fwd kernel 'nope'" reveal --iut "${ULPGATE_IUT} --builtin --reductions --targets SCALAR"
  --door nope ${shape})
if(EXISTS "${PLUGINS}/liblinear_faulty.so")
  expect_fault("crash" reveal --plugin "${PLUGINS}/liblinear_faulty.so" --door crash ${shape})
  # Invariance reports a faulting kernel as its row's FAULT, as for any door.
  execute_process(COMMAND "${ULPGATE}" invariance --plugin "${PLUGINS}/liblinear_faulty.so" --op crash
      --k 16 --n 8 --max-batch 4
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 3 OR NOT out MATCHES "crash: FAULT:.*CRASHED: SIGSEGV"
     OR NOT out MATCHES "0 of 1 kernels batch-invariant")
    message(FATAL_ERROR "invariance on a crashing kernel: status ${status}\n${out}\n${err}")
  endif()
endif()
