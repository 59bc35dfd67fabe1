# ctest driver: what ulpgate prints for people fits 120 columns (tables wrap
# their widest text columns, prose wraps, commands continue with " \"): every
# subcommand's --help and typical runs, on every target and on models.
# -DULPGATE=<ulpgate> -DMUTANT=<ulpgate_mutant> -DGOLDEN=<repo>/golden -DIUT=<ulpgate-iut>
# -DPLUGINS=<the example plugins' folder> -DWORK=<a scratch folder>
set(width 120)
# Files the commands read, made first: suites in every format, outputs to
# check (a copy of the inputs' t: wrong, so every table of check is printed),
# a recorded loss curve for drift --compare.
# Paths in the output are as long as the checkout's: a deep folder stands for
# a checkout under a long path (CI clones into one), and the plugin and the
# IUT are copied into it so that their paths are as long.
file(REMOVE_RECURSE "${WORK}")
set(WORK "${WORK}/as_deep_as_a_checkout_under_a_long_path")
file(MAKE_DIRECTORY "${WORK}")
file(COPY "${PLUGINS}/libgelu_c.so" "${IUT}" DESTINATION "${WORK}/bin")
set(PLUGINS "${WORK}/bin")
get_filename_component(iut_name "${IUT}" NAME)
set(IUT "${WORK}/bin/${iut_name}")
foreach(dtype f32 bf16 f16)
  execute_process(COMMAND "${ULPGATE}" suite export --op tanh_bwd --dtype ${dtype} --n 3000
    --out ${WORK}/in_${dtype}.npz RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "suite export --dtype ${dtype}: status ${status}\n${out}${err}")
  endif()
  list(APPEND extra_cases "u|suite!export!--op!tanh_bwd!--dtype!${dtype}!--n!100!--out!${WORK}/x_${dtype}.npz")
endforeach()
execute_process(COMMAND "${ULPGATE}" suite export --op gelu_bwd --n 3000 --out ${WORK}/gelu.txt
  RESULT_VARIABLE status)
execute_process(COMMAND "${ULPGATE}" run --op tanh_bwd --variant mulsub --target SCALAR
  --inputs ${WORK}/in_f32.npz --save-inputs ${WORK}/saved.txt --quiet RESULT_VARIABLE status)
file(WRITE "${WORK}/curve.json" "[0.9, 0.7, 0.55, 0.5, 0.45, 0.41, 0.4, 0.38, 0.37, 0.36]")
set(long_label a_curve_recorded_elsewhere_with_a_long_name_torch_cuda_compiled_bf16)
list(APPEND extra_cases
  "u|check!--help" "u|sweep!--help" "u|suite!export!--help" "u|report!--help"
  "u|check!--inputs!${WORK}/in_f32.npz!--outputs!${WORK}/in_f32.npz:t"
  "u|check!--inputs!${WORK}/in_f32.npz!--outputs!${WORK}/in_f32.npz:t!--quiet"
  "u|check!--inputs!${WORK}/in_bf16.npz!--outputs!${WORK}/in_bf16.npz:t!--period!8"
  "u|check!--op!gelu_bwd!--inputs!${WORK}/gelu.txt!--plugin!${PLUGINS}/libgelu_c.so"
  "u|sweep!--op!tanh_bwd!--dtype!bf16!--range!0:65536"
  "u|sweep!--op!gelu_bwd!--dtype!f32!--grad!1.3!--range!0x3f800000:0x3f810000!--plugin!${PLUGINS}/libgelu_c.so"
  "u|diverge!--op!gelu_tanh_bwd!--a!torch!--b!exact!--evals!2000"
  "u|compare!--op!tanh_bwd!--dtype!bf16!--a!mulsub_opmath!--b!mulsub_per_op!--n!3000"
  "u|compare!--op!tanh_bwd!--inputs!${WORK}/in_f32.npz!--a!${WORK}/in_f32.npz:t!--b!mac@SCALAR-iut!--iut!${IUT} --builtin --targets SCALAR"
  "u|compare!--op!linear_fwd!--a!sequential_fma!--b!pairwise"
  "u|matrix!--n!300!--iut!${IUT} --builtin --targets SSE4"
  "u|matrix!--op!gelu_bwd!--n!300!--plugin!${PLUGINS}/libgelu_c.so"
  "u|explain!--op!gelu_tanh_bwd!--input!grad=1!--input!x=-3.5"
  "u|run!--op!sigmoid_bwd!--dtype!bf16!--n!3000!--by!s!--target!all!--emulate-unsupported"
  "u|run!--op!tanh_bwd!--inputs!${WORK}/saved.txt!--iut!${IUT} --builtin --targets SCALAR"
  "u|drift!--scenario!seed!--epochs!10!--details"
  "u|drift!--scenario!seed!--epochs!10!--compare!${WORK}/curve.json!--label!${long_label}")
math(EXPR over "${width} + 1")
string(REPEAT "[^\n]" ${over} too_long)
# <binary: u or m>|<args, separated by !>
set(cases
  "u|--help" "u|list" "u|list!--cpu-targets!SSE4" "u|run!--help" "u|explain!--help"
  "u|diverge!--help" "u|compare!--help" "u|matrix!--help" "u|drift!--help" "u|golden!--help"
  "u|golden!check!--help" "u|golden!bless!--help" "u|gate!--help" "u|list!--help"
  "u|run!--kernel!tanh_bwd!--n!3000"
  "u|run!--kernel!tanh_bwd!--n!3000!--by!t"
  "u|run!--kernel!tanh_bwd!--suite!adversarial!--n!3000"
  "u|run!--kernel!tanh_bwd!--dtype!bf16!--suite!adversarial!--n!3000"
  "u|run!--kernel!tanh_bwd!--dtype!f16!--suite!random!--n!3000!--target!all!--emulate-unsupported"
  "u|run!--kernel!linear_fwd!--n!2"
  "u|run!--kernel!linear_bwd_weight!--n!2!--suite!adversarial"
  "u|run!--kernel!mse_fwd!--n!2!--emulate-unsupported!--cpu-targets!max:SSE4"
  "u|run!--kernel!mse_bwd!--n!2"
  "u|explain!--kernel!tanh_bwd!--input!grad=0x1.537fa2p+4!--input!t=0x1.ffffd2p-1"
  "u|explain!--kernel!tanh_bwd!--input!grad=inf!--input!t=0.5"
  "u|diverge!--kernel!tanh_bwd!--a!mac!--b!exact!--evals!3000"
  "u|matrix!--n!1000"
  "u|drift!--scenario!seed!--epochs!20!--target!all"
  "u|drift!--scenario!saturating!--epochs!20!--variants!tanh_bwd=mulsub_fma,linear=lane_parallel,sgd=fused"
  "u|golden!check!--dir!${GOLDEN}!--op!mse_bwd!--cpu-targets!max:SSE4"
  "u|gate!--quiet!--budgets!${GOLDEN}/budgets.json!--op!mse_bwd!--cpu-targets!max:AVX2"
  "u|gate!--quiet!--verbose!--budgets!${GOLDEN}/budgets.json!--op!mse_bwd!--target!SCALAR,AVX3"
  "m|golden!check!--dir!${GOLDEN}!--op!tanh_bwd!--target!AVX2,AVX3"
  "m|gate!--quiet!--verbose!--annotations!--budgets!${GOLDEN}/budgets.json!--op!tanh_bwd!--target!AVX2,AVX3")
# Annotations (--annotations) are for GitHub's runner, not for people: one
# line each, as long as its message, so they are left out of the count.
list(APPEND cases ${extra_cases})
set(ENV{ULPGATE_MUTANT} tail)
list(LENGTH cases count)
message(STATUS "${count} commands")
foreach(case IN LISTS cases)
  string(SUBSTRING "${case}" 0 1 which)
  string(SUBSTRING "${case}" 2 -1 args)
  string(REPLACE "!" ";" args "${args}")
  set(binary "${ULPGATE}")
  if(which STREQUAL "m")
    set(binary "${MUTANT}")
  endif()
  execute_process(COMMAND "${binary}" ${args} RESULT_VARIABLE status OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(status GREATER 1)
    message(FATAL_ERROR "ulpgate ${args}: status ${status}\n${err}")
  endif()
  # A line of more than `width` characters (output lines may hold ';' and
  # brackets, so they are not split into a CMake list).
  string(REGEX REPLACE "(^|\n)::error [^\n]*" "" text "${out}${err}")
  string(REGEX MATCH "${too_long}[^\n]*" line "${text}")
  if(line)
    string(LENGTH "${line}" length)
    message(FATAL_ERROR "ulpgate ${args}: a line of ${length} columns (over ${width}):\n${line}")
  endif()
endforeach()
