# ctest driver: `ulpgate compare` through each door, one cause each: fusion (tanh_bwd
# mulsub against mulsub_fma on an FMA target, a plugin compiled with contraction against
# one without, an IUT's SCALAR mac against the built-in one), rounding format (bf16
# opmath against per-op, built-in and saved PyTorch outputs), formula (mac against
# mulsub; saved compiled outputs against a built-in kernel), tree (linear_fwd sequential
# against pairwise), flush to zero (saved text outputs), none (exit 0); bad input as one
# error line with exit 2; the JSON report rechecked by tools/python/recheck_compare.py.
# Variables: ULPGATE, ULPGATE_IUT, PLUGINS (the example plugins' folder), PEER
# (suites/peer/torch-2.11-h100), PYTHON, RECHECK (recheck_compare.py), WORK.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
include("${CMAKE_CURRENT_LIST_DIR}/cli_expect.cmake")

# ulpgate_expect with a pattern whose spaces also match where the line wraps.
function(compare_expect expected pattern)
  string(REPLACE " " "[ \\\n]+" pattern "${pattern}")
  ulpgate_expect(${expected} "${pattern}" ${ARGN})
endfunction()

# Built-in kernels, one cause each; 1 when they differ, like diff.
compare_expect(1 "cause: fusion \\(mulsub against mulsub_fused, followed on every input\\): in 1 - t\\*t, the product t\\*t is exact"
  compare --op tanh_bwd --a mulsub --b mulsub_fma --n 3000 --quiet)
compare_expect(1 "cause: rounding format \\(mulsub_opmath against mulsub_per_op[^)]*\\): t\\*t is rounded to f32 in mulsub_opmath, rounded to bf16"
  compare --op tanh_bwd --dtype bf16 --a mulsub_opmath --b mulsub_per_op --n 3000 --quiet)
compare_expect(1 "cause: formula \\(mac_fused against mulsub[^)]*\\): mac_fused computes grad - t\\*t\\*grad, mulsub computes \\(1 - t\\*t\\)\\*grad"
  compare --op tanh_bwd --a mac --b mulsub --n 3000 --quiet)
compare_expect(0 "identical: every output the same in every bit.*cause: none"
  compare --op tanh_bwd --a mulsub --b mulsub --n 3000 --quiet)
# Another op, through the same rules: sigmoid_bwd's torch and fms forms.
compare_expect(1 "cause: formula \\(torch against fms"
  compare --op sigmoid_bwd --a torch --b fms --n 2000 --quiet)

# The nearest differing inputs with their bits and a replay that gives the same answer.
compare_expect(1 "nearest differing inputs:.*grad = -0x1.16417p\\+1 \\(0xc00b20b8\\).*replay: ulpgate compare --op tanh_bwd --a mulsub@[A-Z0-9_]+ --b mulsub_fma@[A-Z0-9_]+ --input grad=-0x1.16417p\\+1"
  compare --op tanh_bwd --a mulsub --b mulsub_fma --n 3000 --examples 1)
compare_expect(1 "differ: 1 of 1 outputs.*cause: fusion"
  compare --op tanh_bwd --a mulsub --b mulsub_fma --input grad=-0x1.16417p+1 --input t=-0x1.cd81d6p-1 --quiet)

# Saved outputs (the layout check reads: one .npz, operands and outputs by name).
compare_expect(1 "cause: rounding format \\(mulsub_per_op against mulsub_opmath"
  compare --op tanh_bwd --dtype bf16 --inputs "${PEER}/tanh_bf16.npz" --a "${PEER}/tanh_bf16.npz:cpu_eager_mulsub"
  --b "${PEER}/tanh_bf16.npz:cpu_compiled_mulsub" --quiet)
compare_expect(1 "b = mac@[A-Z0-9_]+ \\(builtin\\).*cause: formula \\(mac_left_fused against mac_fused"
  compare --op tanh_bwd --inputs "${PEER}/tanh_f32.npz" --a "${PEER}/tanh_f32.npz:cuda_compiled_mac_left" --b mac --quiet)
# Saved outputs cannot be computed again: their replay explains the models at the input.
compare_expect(1 "replay: ulpgate explain --op tanh_bwd --input grad="
  compare --op tanh_bwd --inputs "${PEER}/tanh_f32.npz" --a "${PEER}/tanh_f32.npz:cuda_compiled_mac_left" --b mac --examples 1)

# A plugin door and an IUT door.
compare_expect(1 "a = mulsub_c@contract_fast \\(plugin\\).*cause: fusion \\(mulsub_fused against mulsub"
  compare --op tanh_bwd --plugin "${PLUGINS}/libcontract_fast.so" --plugin "${PLUGINS}/libcontract_off.so"
  --a mulsub_c@contract_fast --b mulsub_c@contract_off --n 3000 --quiet)
compare_expect(1 "a = mac@SCALAR-iut \\(iut\\).*cause: fusion \\(mac_unfused against mac_fused"
  compare --op tanh_bwd --iut "${ULPGATE_IUT} --builtin --targets SCALAR" --a mac@SCALAR-iut --b mac@AVX2
  --n 3000 --quiet)

# A reduction: the summation order.
compare_expect(1 "cause: tree \\(sequential_unfused against pairwise"
  compare --op linear_fwd --a sequential_unfused --b pairwise --shape 8,64,8 --quiet)
compare_expect(1 "cause: fusion \\(sequential_fused against sequential_unfused"
  compare --op linear_fwd --a sequential_fma@AVX2 --b sequential_unfused --shape 8,64,8 --quiet)
compare_expect(1 "nearest differing outputs:.*instance 0, y\\[[0-9]+,[0-9]+\\]: a .*replay: ulpgate compare --op linear_fwd --a sequential_unfused --b pairwise --suite cancellation --shape 8,64,8 --seed 1 --n 1"
  compare --op linear_fwd --a sequential_unfused --b pairwise --shape 8,64,8 --examples 1)
# Each side's summation tree revealed from its outputs (reveal's probes), through a
# plugin's door and an IUT's, beside the schedules' models.
compare_expect(1 "cause: tree.*revealed a: tree: 64 terms, 63 nodes, depth 63.*sequential chain, rounded products.*revealed b: tree: 64 terms, 63 nodes, depth 6,.*pairwise cascade"
  compare --op linear_fwd --plugin "${PLUGINS}/liblinear_example.so" --a sequential@linear_example --b pairwise@AVX2
  --shape 4,64,4 --reveal --quiet)
compare_expect(1 "revealed a: .*sequential chain, rounded products.*revealed b: .*8 strided chains \\+ halving tree, fused"
  compare --op linear_fwd --iut "${ULPGATE_IUT} --builtin --reductions --targets SCALAR" --a lane_parallel@SCALAR-iut
  --b lane_parallel@AVX2 --shape 4,64,4 --reveal --quiet)
compare_expect(0 "cause: none"
  compare --op linear_fwd --a pairwise --b pairwise@SCALAR --shape 8,64,8 --quiet)

# Flush to zero: a zero where the other side's output is subnormal.
file(WRITE "${WORK}/in.txt" "0x1p-140 0.5\n1 0.5\n0x1p-3 0x1p-1\n")
file(WRITE "${WORK}/ftz.txt" "0\n0x1.8p-1\n0x1.8p-4\n")
compare_expect(1 "differ: 1 of 3 outputs.*cause: flush to zero"
  compare --op tanh_bwd --inputs "${WORK}/in.txt" --a mulsub --b "${WORK}/ftz.txt" --quiet)
# NaN payloads: a difference in bits, named as what it is.
file(WRITE "${WORK}/nan_in.txt" "nan 0.5\n1 0.5\n")
file(WRITE "${WORK}/nan.txt" "bits:0x7fc00001\n0x1.8p-1\n")
compare_expect(1 "0 \\(bits only\\) 1.*cause: unknown: both sides give NaN wherever they differ"
  compare --op tanh_bwd --inputs "${WORK}/nan_in.txt" --a mulsub --b "${WORK}/nan.txt" --quiet)

# Bad input: one line, exit 2.
file(WRITE "${WORK}/short.txt" "0\n")
compare_expect(2 "short.txt: 1 outputs for 3 inputs"
  compare --op tanh_bwd --inputs "${WORK}/in.txt" --a mulsub --b "${WORK}/short.txt")
compare_expect(2 "unknown elementwise op 'nope'" compare --op nope --a mulsub --b mac)
compare_expect(2 "--a: .*unknown variant 'mulsup'" compare --op tanh_bwd --a mulsup --b mac)
compare_expect(2 "saved outputs need the inputs they were made from"
  compare --op tanh_bwd --a "${WORK}/ftz.txt" --b mac)
# Saved outputs in an .npz that holds the operands: its inputs by default.
compare_expect(1 "\\(file:[^)]*tanh_f32.npz\\).*cause: formula \\(mac_left_fused against mac_fused"
  compare --op tanh_bwd --a "${PEER}/tanh_f32.npz:cuda_compiled_mac_left" --b mac --quiet)
compare_expect(2 "give one of --inputs, --suite and --input"
  compare --op tanh_bwd --a mac --b mulsub --suite domain --input grad=1 --input t=0.5)
compare_expect(2 "--input grad: 0x1.ff04p-135 is not a value of bf16"
  compare --op tanh_bwd --dtype bf16 --a mulsub_opmath --b mulsub_per_op --input grad=bits:0x7fc1 --input t=0.5)

# A row reduction's --model writes out its exp: only softmax and log-softmax in f32 take
# one, and it must write its function out.
set(jax "${PEER}/../jax-0.10.2-cpu")
compare_expect(2 "--model and --models: for a reduction, only softmax_fwd and log_softmax_fwd in f32"
  compare --op rmsnorm_fwd --a "${jax}/rmsnorm_fwd_f32.npz:numpy" --b "${jax}/rmsnorm_fwd_f32.npz:jit" --model "m: out = z")
compare_expect(2 "a row model writes its exp\\(z\\) out; it calls a free function"
  compare --op softmax_fwd --a "${jax}/softmax_fwd_f32.npz:numpy" --b "${jax}/softmax_fwd_f32.npz:jit"
  --model "m: out = exp(z)")
compare_expect(2 "model 'm', column 14: unknown name 'w'"
  compare --op softmax_fwd --a "${jax}/softmax_fwd_f32.npz:numpy" --b "${jax}/softmax_fwd_f32.npz:jit"
  --model "m: out = 1 + w")

compare_expect(2 "--sweep: every pair of a 16-bit format"
  compare --sweep --op tanh_bwd --a mulsub --b mac)
compare_expect(2 "--sweep: both sides must be kernels"
  compare --sweep --op tanh_bwd --dtype bf16 --a mulsub_opmath --b "${PEER}/tanh_bf16.npz:cpu_aten")
compare_expect(2 "--range and --shard go with --sweep"
  compare --op tanh_bwd --a mulsub --b mac --range 0:10)
compare_expect(2 "--shard 2/2: K runs from 0 to N-1"
  compare --sweep --op tanh_bwd --dtype bf16 --a mulsub_opmath --b mulsub_per_op --shard 2/2)

# The JSON report, rechecked by a script that shares no code with ulpgate.
compare_expect(1 "" compare --op tanh_bwd --a mulsub --b mulsub_fma --n 300 --quiet --json "${WORK}/f32.json")
compare_expect(1 "" compare --op tanh_bwd --dtype bf16 --a mulsub_opmath --b mulsub_per_op --n 300 --quiet
  --json "${WORK}/bf16.json")
compare_expect(1 "" compare --op tanh_bwd --dtype f16 --a mac_opmath --b mac_per_op --suite adversarial --n 300
  --quiet --json "${WORK}/f16.json")
compare_expect(1 "" compare --op linear_fwd --a sequential_unfused --b pairwise --shape 8,64,8 --quiet
  --json "${WORK}/linear.json")
file(READ "${WORK}/f32.json" report)
string(JSON format GET "${report}" format)
string(JSON cause GET "${report}" result cause cause)
if(NOT format STREQUAL "ulpgate-compare-1" OR NOT cause STREQUAL "fusion")
  message(FATAL_ERROR "f32.json: format ${format}, cause ${cause}")
endif()
set(python "${PYTHON}")
if(NOT python)
  find_program(python3_found python3 REQUIRED)
  set(python "${python3_found}")
endif()
execute_process(COMMAND "${python}" "${RECHECK}" "${WORK}/f32.json" "${WORK}/bf16.json" "${WORK}/f16.json"
  "${WORK}/linear.json" RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "recheck_compare.py: exit ${status}\n${out}${err}")
endif()
message(STATUS "${out}")
