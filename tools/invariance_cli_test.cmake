# ctest driver: `ulpgate invariance` names 8 as the first batch size where the
# planted split-by-batch kernel changes the probe's bits (and exits 1 when
# --require invariant), passes the planted sequential kernel and ulpgate's own
# linear_fwd kernels on every target, catches the planted nondeterministic one
# run to run, writes its JSON report, and refuses bad arguments in one line.
# -DULPGATE=<ulpgate> -DWORK=<scratch folder>
include("${CMAKE_CURRENT_LIST_DIR}/cli_expect.cmake")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(small --k 100 --n 19 --max-batch 70)
# Where the text may wrap.
set(_ "[ \n]+")

ulpgate_expect(1 "planted:split_by_batch +m=8 +same +same +- +same +NOT: batch size\n.*planted:split_by_batch: not batch-invariant \\(first at m=8\\).*first${_}at${_}m=8:${_}[0-9]+${_}of${_}19${_}outputs,${_}max${_}[0-9]+${_}ULP;${_}as${_}alone${_}up${_}to${_}m=7.*trees${_}of${_}C\\[0\\]\\[0\\].*m=7:${_}sequential${_}chain;${_}m=8:${_}2${_}parts${_}added:${_}0-49${_}\\(chain\\),${_}50-99${_}\\(chain\\)"
  invariance --op planted:split_by_batch ${small} --require invariant --json ${WORK}/split.json)
file(READ "${WORK}/split.json" report)
string(JSON format GET "${report}" format)
string(JSON first GET "${report}" kernels 0 first_changed_batch)
string(JSON last GET "${report}" kernels 0 last_invariant_batch)
string(JSON verdict GET "${report}" kernels 0 verdict)
string(JSON batch_changed GET "${report}" kernels 0 dimensions 0 bits_changed)
string(JSON batch_first GET "${report}" kernels 0 dimensions 0 first_change what)
string(JSON tree_after GET "${report}" kernels 0 trees short_after)
if(NOT tree_after STREQUAL "2 parts added: 0-49 (chain), 50-99 (chain)")
  message(FATAL_ERROR "invariance --json: trees.short_after '${tree_after}'")
endif()
if(NOT format STREQUAL "ulpgate-invariance-1" OR NOT first EQUAL 8 OR NOT last EQUAL 7
   OR NOT verdict STREQUAL "not batch-invariant (first at m=8)" OR NOT batch_changed
   OR NOT batch_first STREQUAL "m=8")
  message(FATAL_ERROR "invariance --json: ${format} ${first} ${last} '${verdict}' ${batch_changed} ${batch_first}\n${report}")
endif()
# Deterministic it is: --require deterministic passes it.
ulpgate_expect(0 "1 of 1 deterministic" invariance --kernel planted:split_by_batch ${small}
  --require deterministic)

ulpgate_expect(0 "planted:sequential +same +same +same +- +same +batch-invariant\n.*1 of 1 kernels batch-invariant"
  invariance --kernel planted:sequential ${small} --require invariant)
ulpgate_expect(1 "planted:order_by_call: nondeterministic \\(run to run\\).*run to run: bits change in [0-9]+ of [0-9]+ trials.*first${_}at${_}m=1${_}call${_}2:"
  invariance --kernel planted:order_by_call ${small} --require deterministic)
ulpgate_expect(1 "planted:split_by_threads +same +same +same +m=1 t=2 +same +NOT: threads"
  invariance --kernel planted:split_by_threads ${small} --require invariant)
ulpgate_expect(0 "planted:peel_to_alignment +same +m=2 row 1 +m=1 ABC\\+1 "
  invariance --kernel planted:peel_to_alignment ${small})

# ulpgate's own kernels: every variant on every runnable target.
# (--require invariant: exit 0 only when every kernel is.)
ulpgate_expect(0 "linear_fwd/pairwise@SCALAR +same +same +same +- +same +batch-invariant\n"
  invariance ${small} --require invariant --json ${WORK}/linear.json)
file(READ "${WORK}/linear.json" report)
string(JSON count LENGTH "${report}" kernels)
if(count LESS 4)
  message(FATAL_ERROR "invariance of linear_fwd --json: ${count} kernels")
endif()
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON invariant GET "${report}" kernels ${i} invariant)
  string(JSON deterministic GET "${report}" kernels ${i} deterministic)
  if(NOT invariant OR NOT deterministic)
    message(FATAL_ERROR "invariance of linear_fwd --json: kernel ${i} not invariant\n${report}")
  endif()
endforeach()
# reveal's planted kernels (FP8 and bf16 operands among them) keep one tree
# whatever the call.
ulpgate_expect(0 "planted:fp8_trunc14_promote128 +same +same +same +- +same +batch-invariant\n.*planted:bf16_fused4 +same.*4 of 4 kernels batch-invariant"
  invariance --kernel planted:fp8_trunc14_promote128,planted:bf16_fused4,planted:f32_splitk3,planted:f32_splitk3_late
  ${small} --require invariant)

ulpgate_expect(2 "unknown kernel 'bogus'" invariance --kernel bogus)
ulpgate_expect(2 "linear_fwd has no variant 'nope'" invariance --kernel linear_fwd/nope)
ulpgate_expect(2 "--require: expected none, invariant or deterministic, got 'maybe'"
  invariance --require maybe)
ulpgate_expect(2 "unknown kernel 'planted:nope'" invariance --kernel planted:nope)
ulpgate_expect(2 "--threads-list: expected thread counts from 1 to 1024, got '0'"
  invariance --kernel planted:sequential --threads-list 1,0)
ulpgate_expect(2 "--k: expected the reduced dimension" invariance --k 0)
ulpgate_expect(0 "planted:split_by_batch" invariance --help)
