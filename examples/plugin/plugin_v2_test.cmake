# ctest driver: a version 2 plugin (sigmoid_bwd_plugin.c) through the commands
# that take --plugin: run (the uncontracted build follows the model it claims,
# the contracted one does not and the run names the model it follows and an
# input), check (the op taken from the plugin), matrix, sweep, explain,
# diverge, golden bless/check and the gate; a gelu_bwd plugin (exp and erf
# from the C library) measured beside its model; and the loading errors of
# version 2: an unknown op, an arity the op does not have, a bad version, a
# plugin of another op than the command's. Version 1 plugins load beside it
# (plugin_test.cmake, plugin_commands_test.cmake). Skipped (77) on a CPU
# without AVX2 and FMA.
# Variables: ULPGATE, PLUGINS (the built plugins), WORK (a scratch folder).
include("${CMAKE_CURRENT_LIST_DIR}/needs_x86_64_v3.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/../../tools/cli_expect.cmake")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

set(fast "${PLUGINS}/libsigmoid_fast.so")
set(off "${PLUGINS}/libsigmoid_off.so")
set(recompiled "${PLUGINS}/libsigmoid_fast_as_off.so")
set(v1 "${PLUGINS}/libcontract_off.so")

# run: conformance to the claimed model, in f32 and bf16.
ulpgate_expect(0 "fms_c +sigmoid_off .* fms_unfused +0" run --kernel sigmoid_bwd --plugin "${off}"
  --variant none --suite domain --n 20000 --quiet --require-conformance)
ulpgate_expect(0 "fms_c +sigmoid_off .* torch_opmath +0" run --kernel sigmoid_bwd --dtype bf16
  --plugin "${off}" --variant none --suite domain --n 20000 --quiet --require-conformance)
# The contracted build follows fms_fused, not the fms_unfused it claims: the
# run fails and names the model and an input where they differ.
ulpgate_expect(1 "fms_c on sigmoid_fast: [0-9]+ of 20000 outputs off fms_unfused; first at input #[0-9]+: grad = -?0x[0-9a-f.p+-]+,[ \n]+s = 0x.*FAIL fms_c@sigmoid_fast domain: [0-9]+ outputs differ from its model fms_unfused \\(follows fms_fused\\), first at input #[0-9]+"
  run --kernel sigmoid_bwd --plugin "${fast}" --variant none --suite domain --n 20000
  --require-conformance)
# Beside the built-in kernels, in one table.
ulpgate_expect(0 "fms +SCALAR.*fms_c +sigmoid_off" run --kernel sigmoid_bwd --plugin "${off}"
  --variant fms --target SCALAR --suite domain --n 2000 --quiet)
# A version 1 plugin still loads, and plugins of different ops are told apart.
ulpgate_expect(0 "mulsub_c +contract_off .* mulsub +0" run --kernel tanh_bwd --plugin "${v1}"
  --variant none --suite domain --n 2000 --quiet --require-conformance)

# check: the op is the plugin's.
ulpgate_expect(0 "" suite export --op sigmoid_bwd --suite domain --n 5000 --out "${WORK}/in.npz")
ulpgate_expect(0 "claims model fms_unfused.*follows bit for bit: [a-z_, ]*fms_unfused" check
  --inputs "${WORK}/in.npz" --plugin "${off}" --quiet)
ulpgate_expect(1 "does not follow fms_unfused \\([0-9]+ mismatches\\)" check --inputs "${WORK}/in.npz"
  --plugin "${fast}" --require-model fms_unfused --quiet)

# matrix and sweep: the plugin's kernel in its own column.
ulpgate_expect(0 "fms_c +.*fms_unfused" matrix --kernel sigmoid_bwd --n 500 --plugin "${off}")
ulpgate_expect(0 "fms_c@sigmoid_off worst: 0.5001 ULP" sweep --kernel sigmoid_bwd --plugin "${off}" --variant none
  --dtype bf16 --range 0:0x20000 --quiet)

# The sweep calls the plugin, in its process and in this one: a bf16 kernel
# that truncates where it claims to round to nearest is caught, with the model
# it follows.
foreach(where "" "--in-process")
  ulpgate_expect(1 "sigmoid_trunc .* torch_opmath_truncating .*fms_c@sigmoid_trunc does not follow torch_opmath on [1-9][0-9]* inputs"
    sweep --kernel sigmoid_bwd --plugin "${PLUGINS}/libsigmoid_trunc.so" --variant none --dtype bf16
    --range 0:0x20000 --quiet ${where})
endforeach()

# explain and diverge.
# The input is where the contracted build first leaves fms_unfused (run above).
ulpgate_expect(0 "fms_c on sigmoid_fast: model [a-z_]+ \\(UNEXPECTED: expected fms_unfused\\).*fms_c on sigmoid_off: model fms_unfused,"
  explain --kernel sigmoid_bwd --plugin "${fast}" --plugin "${off}" --variant none
  --input grad=0x1.d7ba8ap-13 --input s=0x1.c814fp-1)
ulpgate_expect(0 "a = fms_c@sigmoid_fast, b = fms_c@sigmoid_off" diverge --kernel sigmoid_bwd
  --a fms_c@sigmoid_fast --b fms_c@sigmoid_off --evals 5000 --plugin "${fast}" --plugin "${off}")

# golden: blessed from the claimed models, checked by running the plugin; the
# contracted library under the same name differs.
set(golden "${WORK}/golden")
ulpgate_expect(0 "new +.*sigmoid_off/sigmoid_bwd.json" golden bless --dir "${golden}" --plugin "${off}")
ulpgate_expect(0 "ok +RAN +.*sigmoid_off/sigmoid_bwd.json.*1 files match, 0 differ" golden check
  --dir "${golden}" --plugin "${off}")
ulpgate_expect(1 "DIFFERS RAN +.*sigmoid_off/sigmoid_bwd.json.*conformance.model +fms_unfused +fms_fused"
  golden check --dir "${golden}" --plugin "${recompiled}")

# gate: a ledger of the plugin's own.
file(WRITE "${WORK}/budgets.json" [=[{
  "format": "ulpgate-budgets-1",
  "about": "plugin_v2_test.cmake: the sigmoid_bwd plugin's conformance.",
  "runs": [{"op": "sigmoid_bwd", "suites": ["domain"], "seed": 1, "n": 5000}],
  "rules": [{"id": "plugin.sigmoid.conformance",
             "match": {"op": "sigmoid_bwd", "target": "sigmoid_off"},
             "limits": {"conformance_required": true},
             "why": "Compiled without contraction the kernel is fms_unfused bit for bit."}]
}
]=])
ulpgate_expect(0 "plugin.sigmoid.conformance\n +PASS +conformance_required .*gate: PASS" gate
  --budgets "${WORK}/budgets.json" --plugin "${off}" --quiet --verbose)
ulpgate_expect(1 "FAIL plugin.sigmoid.conformance.conformance_required: .*fms_c@sigmoid_off.*gate: FAIL"
  gate --budgets "${WORK}/budgets.json" --plugin "${recompiled}" --quiet)

# An op whose models call exp and erf, the model claimed by name only (the
# model language cannot write it): measured beside it.
set(gelu "${PLUGINS}/libgelu_c.so")
ulpgate_expect(0 "torch_c +gelu_c .*torch_nofma" run --kernel gelu_bwd --plugin "${gelu}" --variant none
  --suite domain --n 2000 --quiet)
ulpgate_expect(0 "" suite export --op gelu_bwd --suite domain --n 2000 --out "${WORK}/gelu.npz")
ulpgate_expect(0 "torch_c@gelu_c: claims model torch_nofma" check --inputs "${WORK}/gelu.npz"
  --plugin "${gelu}" --quiet)
ulpgate_expect(0 "torch_c on gelu_c: model" explain --kernel gelu_bwd --plugin "${gelu}" --variant none
  --input grad=1 --input x=-0.5)

# Errors: a plugin of another op, an unknown op, the wrong arity, a bad version.
ulpgate_expect(2 "plugin sigmoid_off \\(.*libsigmoid_off.so\\) gives sigmoid_bwd kernels, not gelu_bwd"
  run --kernel gelu_bwd --plugin "${off}" --variant none)
ulpgate_expect(2 "plugin sigmoid_off \\(.*\\) gives sigmoid_bwd kernels, not tanh_bwd" check
  --op tanh_bwd --inputs "${WORK}/in.npz" --plugin "${off}")
ulpgate_expect(2 "plugin contract_off \\(.*\\) gives tanh_bwd kernels, not sigmoid_bwd" matrix
  --kernel sigmoid_bwd --plugin "${v1}")
ulpgate_expect(2 "libbroken_v2_unknown_op.so: unknown op 'softplus_bwd' \\(plugins take tanh_bwd, sigmoid_bwd, silu_bwd, gelu_bwd, gelu_tanh_bwd\\)"
  run --kernel sigmoid_bwd --plugin "${PLUGINS}/libbroken_v2_unknown_op.so")
ulpgate_expect(2 "libbroken_v2_arity.so: arity 3, but sigmoid_bwd takes 2 operands \\(grad, s\\)"
  run --kernel sigmoid_bwd --plugin "${PLUGINS}/libbroken_v2_arity.so")
ulpgate_expect(2 "libbroken_v2_abi.so: ABI version 3, this ulpgate takes 2 from ulpgate_plugin_v2_entry"
  run --kernel sigmoid_bwd --plugin "${PLUGINS}/libbroken_v2_abi.so")
