# ctest driver: the example plugin through `ulpgate run --plugin`. The same C
# source compiled with -ffp-contract=fast follows the fused model (GCC turns
# 1 - t*t into an FMA) although it claims mulsub; compiled with
# -ffp-contract=off it conforms; its rows sit in the same table as the
# built-in kernels'. Every load error is one line and exit 2. Skipped (77) on a
# CPU without AVX2 and FMA, which cannot run x86-64-v3 code.
# Variables: ULPGATE, PLUGINS (the folder of the built plugins).
include("${CMAKE_CURRENT_LIST_DIR}/needs_x86_64_v3.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/../../tools/cli_expect.cmake")

set(fast "${PLUGINS}/libcontract_fast.so")
set(off "${PLUGINS}/libcontract_off.so")
ulpgate_expect(1 "mulsub_c +contract_fast .* mulsub_fused \\(expected mulsub\\)" run --kernel tanh_bwd
  --plugin "${fast}" --variant none --suite domain --n 20000 --quiet --require-conformance)
ulpgate_expect(0 "mulsub_c +contract_off .* mulsub +0" run --kernel tanh_bwd --plugin "${off}"
  --variant none --suite domain --n 20000 --quiet --require-conformance)
# Beside the built-in kernels, in one table.
ulpgate_expect(0 "mulsub_fma +SCALAR.*mulsub_c +contract_off" run --kernel tanh_bwd --plugin "${off}"
  --variant mulsub_fma --target SCALAR --suite domain --n 2000 --quiet)

ulpgate_expect(2 "libbroken_abi.so: ABI version 2, this ulpgate takes 1" run --kernel tanh_bwd
  --plugin "${PLUGINS}/libbroken_abi.so" --variant none)
ulpgate_expect(2 "unknown op 'tanh_fwd' \\(version 1 plugins take tanh_bwd; other ops: version 2" run --kernel tanh_bwd
  --plugin "${PLUGINS}/libbroken_op.so" --variant none)
ulpgate_expect(2 "model 'mine', column 20: expected '\\)'" run --kernel tanh_bwd
  --plugin "${PLUGINS}/libbroken_model.so" --variant none)
ulpgate_expect(2 "no ulpgate_plugin_entry" run --kernel tanh_bwd --plugin "${PLUGINS}/libbroken_entry.so"
  --variant none)
ulpgate_expect(2 "cannot load: .*no_such.so" run --kernel tanh_bwd --plugin "${PLUGINS}/no_such.so" --variant none)
ulpgate_expect(2 "plugin contract_off \\(.*libcontract_off.so\\) gives tanh_bwd kernels, not linear_fwd" run --kernel linear_fwd --plugin "${off}")
# The bf16 kernel: widened to float, computed, rounded once.
ulpgate_expect(0 "mulsub_c +contract_off .* mulsub_opmath +0" run --kernel tanh_bwd --dtype bf16
  --plugin "${off}" --variant none --suite domain --n 20000 --quiet --require-conformance)
ulpgate_expect(2 "plugin contract_off has no tanh_bwd kernels in f16" run --kernel tanh_bwd --dtype f16
  --plugin "${off}" --variant none)
