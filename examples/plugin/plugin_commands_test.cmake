# ctest driver: a plugin's kernels through every command that takes --plugin:
# check (its kernel computes the outputs), matrix (a column of its own, in the
# digest group of the kernels that compute the same), explain, diverge, golden
# bless/check (a recompiled plugin differs from its golden) and the gate (a
# ledger of the plugin's own). Skipped (77) on a CPU without AVX2 and FMA.
# Variables: ULPGATE, PLUGINS (the built plugins), BUDGETS (the example
# ledger), WORK (a scratch folder, emptied first).
include("${CMAKE_CURRENT_LIST_DIR}/needs_x86_64_v3.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/../../tools/cli_expect.cmake")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

set(fast "${PLUGINS}/libcontract_fast.so")
set(off "${PLUGINS}/libcontract_off.so")
# contract_off's name, compiled with contraction: the regression goldens and the gate catch.
set(recompiled "${PLUGINS}/libcontract_fast_as_off.so")

# check: the kernel computes the outputs of the given inputs.
ulpgate_expect(0 "" suite export --suite domain --n 5000 --out "${WORK}/in.npz")
ulpgate_expect(0 "claims model mulsub.*follows bit for bit: mulsub_fused\n" check --inputs "${WORK}/in.npz"
  --plugin "${fast}" --quiet)
ulpgate_expect(1 "does not follow mulsub \\([0-9]+ mismatches\\)" check --inputs "${WORK}/in.npz"
  --plugin "${fast}" --require-model mulsub --quiet)
ulpgate_expect(0 "mulsub_c@contract_off: claims model mulsub.*follows bit for bit: mulsub\n" check
  --inputs "${WORK}/in.npz" --plugin "${fast}" --plugin "${off}" --variant mulsub_c@contract_off --quiet)
ulpgate_expect(2 "several kernels \\(mulsub_c@contract_fast, mulsub_c@contract_off" check
  --inputs "${WORK}/in.npz" --plugin "${fast}" --plugin "${off}")
ulpgate_expect(2 "--variant mulsub_c: several kernels \\(mulsub_c@contract_fast, mulsub_c@contract_off\\): name one"
  check --inputs "${WORK}/in.npz" --plugin "${fast}" --plugin "${off}" --variant mulsub_c)
ulpgate_expect(2 "give --outputs or --plugin, not both" check --inputs "${WORK}/in.npz"
  --outputs "${WORK}/in.npz:t" --plugin "${off}")
ulpgate_expect(0 "" suite export --dtype bf16 --suite domain --n 5000 --out "${WORK}/in_bf16.npz")
ulpgate_expect(0 "mulsub_c@contract_off: claims model mulsub_opmath.*follows bit for bit: [a-z_, ]*mulsub_opmath"
  check --dtype bf16 --inputs "${WORK}/in_bf16.npz" --plugin "${off}" --quiet)
ulpgate_expect(2 "--plugin: no tanh_bwd kernel in f16" check --op tanh_bwd --dtype f16
  --inputs "${WORK}/in.npz" --plugin "${off}")

# matrix: the contracted C code computes what the built-in mulsub_fma computes
# on every FMA target this CPU runs (one digest group), the uncontracted what
# mulsub computes everywhere.
ulpgate_expect(1 "mulsub_c +contract_fast +mulsub_fused +mulsub " matrix --n 2000
  --plugin "${fast}" --plugin "${off}" --json "${WORK}/matrix.json")
file(READ "${WORK}/matrix.json" matrix)
string(JSON cells LENGTH "${matrix}" cells)
math(EXPR last "${cells} - 1")
set(fused_group "")
set(fma_targets "")
foreach(i RANGE ${last})
  string(JSON variant GET "${matrix}" cells ${i} variant)
  string(JSON target GET "${matrix}" cells ${i} target)
  string(JSON run GET "${matrix}" cells ${i} run)
  if(NOT run)
    continue()
  endif()
  string(JSON group GET "${matrix}" cells ${i} group)
  set(group_${variant}_${target} ${group})
  string(JSON fused GET "${matrix}" cells ${i} fused_negmuladd)
  if(variant STREQUAL "mulsub_fma" AND fused)
    list(APPEND fma_targets ${target})
  endif()
endforeach()
if(NOT fma_targets)
  message(FATAL_ERROR "no FMA target ran, though this CPU has AVX2 and FMA")
endif()
foreach(target ${fma_targets})
  if(NOT group_mulsub_fma_${target} STREQUAL group_mulsub_c_contract_fast)
    message(FATAL_ERROR "mulsub_c@contract_fast (group ${group_mulsub_c_contract_fast}) is not "
      "bit-identical to mulsub_fma@${target} (group ${group_mulsub_fma_${target}})")
  endif()
endforeach()
if(NOT group_mulsub_SCALAR STREQUAL group_mulsub_c_contract_off)
  message(FATAL_ERROR "mulsub_c@contract_off is not bit-identical to mulsub@SCALAR")
endif()
message("contract_fast = mulsub_fma on ${fma_targets} (group ${group_mulsub_c_contract_fast})")

# explain: the plugin's kernels traced through the models they follow.
ulpgate_expect(0 "mulsub_c on contract_fast: model mulsub_fused \\(UNEXPECTED: expected mulsub\\).*mulsub_c on contract_off: model mulsub, .*cancellation in 1 - t\\*t"
  explain --kernel tanh_bwd --plugin "${fast}" --plugin "${off}" --variant none
  --input grad=-0x1.16417p+1 --input t=-0x1.cd81d6p-1)
ulpgate_expect(2 "unknown variant 'nope'" explain --kernel tanh_bwd --plugin "${off}" --variant nope
  --input grad=1 --input t=0.5)

# diverge: one side a plugin's kernel.
ulpgate_expect(0 "a = mulsub_c@contract_fast, b = mulsub_c@contract_off.*worst 16 inputs found.*--plugin"
  diverge --kernel tanh_bwd --a mulsub_c@contract_fast --b mulsub_c@contract_off --evals 20000
  --plugin "${fast}" --plugin "${off}")
ulpgate_expect(2 "--a mac@contract_off: contract_off has no tanh_bwd kernel 'mac' in f32 \\(built-in: mac, .*; contract_off: mulsub_c\\)"
  diverge --kernel tanh_bwd --a mac@contract_off --b exact --plugin "${off}")
# A name two plugins' kernels share is ambiguous where one kernel is meant;
# a name one kernel has needs no @.
ulpgate_expect(2 "--a mulsub_c: several kernels have that name \\(mulsub_c@contract_fast, mulsub_c@contract_off\\): name one as NAME@TARGET"
  diverge --kernel tanh_bwd --a mulsub_c --b exact --plugin "${fast}" --plugin "${off}")
ulpgate_expect(0 "a = mulsub_c@contract_off, b = exact"
  diverge --kernel tanh_bwd --a mulsub_c --b exact --evals 2000 --plugin "${off}")
# run and sweep take a plugin's kernel by its name too, or NAME@TARGET where two share it.
ulpgate_expect(0 "\nmulsub_c +contract_off[^\n]*\n[^\n]*ran 2000 inputs x 1 "
  run --kernel tanh_bwd --plugin "${fast}" --plugin "${off}" --variant mulsub_c@contract_off --n 2000 --quiet)
ulpgate_expect(0 "mulsub_c +contract_fast.*mulsub_c +contract_off"
  run --kernel tanh_bwd --plugin "${fast}" --plugin "${off}" --variant mulsub_c --n 2000 --quiet)
ulpgate_expect(0 "mulsub_c@contract_off"
  sweep --kernel tanh_bwd --dtype bf16 --plugin "${off}" --variant mulsub_c --range 0:65536)

# golden: blessed from the model the plugin claims, checked by running it; the
# recompiled library under the same name differs.
set(golden "${WORK}/golden")
ulpgate_expect(0 "new +.*contract_off/tanh_bwd.json[ \n]+\\(8[ \n]+cases\\)" golden bless --dir "${golden}"
  --plugin "${off}")
ulpgate_expect(0 "ok +RAN +.*contract_off/tanh_bwd.json[ \n]+\\(8[ \n]+cases\\).*1 files match, 0 differ" golden check
  --dir "${golden}" --plugin "${off}")
ulpgate_expect(1 "DIFFERS RAN +.*contract_off/tanh_bwd.json:[ \n]+4[ \n]+of[ \n]+8[ \n]+cases.*conformance.model +mulsub +mulsub_fused"
  golden check --dir "${golden}" --plugin "${recompiled}")
ulpgate_expect(2 "contract_off/tanh_bwd.json: /target: the goldens of plugin .contract_off. \\(libcontract_off.so\\): give it with --plugin" golden check
  --dir "${golden}")
ulpgate_expect(2 "/target: the goldens of plugin 'contract_off' \\(libcontract_off.so\\): give it with --plugin"
  golden check --dir "${golden}" --target SCALAR --plugin "${fast}")

# gate: the plugin's own ledger, its rules matching the plugin's name.
ulpgate_expect(0 "plugin.conformance\n +PASS +conformance_required .*gate: PASS" gate --budgets "${BUDGETS}"
  --plugin "${off}" --quiet --verbose)
ulpgate_expect(1 "FAIL plugin.conformance.conformance_required: .*mulsub_c@contract_off.*gate: FAIL"
  gate --budgets "${BUDGETS}" --plugin "${recompiled}" --quiet)
ulpgate_expect(2 "'contract_off' matches no compiled target or loaded plugin" gate --budgets "${BUDGETS}")

# Loading errors shared by every command.
ulpgate_expect(2 "kernel 2 \\(mulsub_c\\): a second f32 kernel of that name" matrix --plugin "${PLUGINS}/libbroken_dup.so")
ulpgate_expect(2 "the plugin is named 'SCALAR', a compiled target's name" gate
  --plugin "${PLUGINS}/libbroken_name.so")
ulpgate_expect(2 "the plugin is named 'contract_off', as .*libcontract_off.so is" golden check
  --dir "${golden}" --plugin "${off}" --plugin "${recompiled}")
set(broken "${PLUGINS}/libbroken")
ulpgate_expect(2 "kernel 2 \\(wide\\): dtype 'f64' \\(plugins take f32, bf16, f16\\)" explain --kernel tanh_bwd
  --plugin "${broken}_dtype.so" --input grad=1 --input t=0.5)
ulpgate_expect(2 "kernel 2 \\(nothing\\): no function \\(a f32 kernel's is `f32`\\)" diverge --kernel tanh_bwd
  --a mac --b exact --plugin "${broken}_no_function.so")
ulpgate_expect(2 "kernel 2 \\(both\\): a bf16 kernel has only its `u16` function" check --inputs "${WORK}/in.npz"
  --plugin "${broken}_wrong_function.so")
ulpgate_expect(2 "kernel 2: no variant name" run --kernel tanh_bwd --plugin "${broken}_no_variant.so")
ulpgate_expect(2 "libbroken_no_name.so: the plugin has no name" golden bless --dir "${WORK}/never"
  --plugin "${broken}_no_name.so")
ulpgate_expect(2 "libbroken_no_kernels.so: the plugin lists no kernels" gate --plugin "${broken}_no_kernels.so")
ulpgate_expect(2 "libbroken_null_entry.so: ulpgate_plugin_entry returned null" matrix
  --plugin "${broken}_null_entry.so")
ulpgate_expect(2 "kernel 0 \\(mulsub_c\\): unknown model 'mulsub_magic' \\(mac_fused, mac_unfused, mulsub, mulsub_fused, mac_left_fused, mac_left_unfused; or NAME: statements\\)"
  check --inputs "${WORK}/in.npz" --plugin "${broken}_unknown_model.so")
if(EXISTS "${WORK}/never")
  message(FATAL_ERROR "a bless that failed to load its plugin wrote ${WORK}/never")
endif()
