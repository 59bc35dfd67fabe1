#!/usr/bin/env bash
# The main job: set up, build, run every op's variants on every target this
# machine supports over the standard suites (tables and histograms), the
# target matrix, a check of outputs made elsewhere (PyTorch's CUDA bf16
# tanh_backward, from the peer archive), both built-in training-run drift
# scenarios in every precision with the attribution of the seed scenario's f32
# and bf16 runs, the golden check, and last the release gate over
# golden/budgets.json (its summary and verdict end the output; in GitHub
# Actions also the job's summary page and an annotation per failing row).
# Reports go to build/reports/, and with them one HTML page of them all,
# build/reports/report.html. The job fails when the golden check or the gate
# does; every report is written either way.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/build.sh
ulpgate=./build/bin/ulpgate
out=build/reports
mkdir -p "$out"
banner() { printf '\n==================================================================\n%s\n' "$1"; }
status=0

for suite in domain training adversarial random; do
  banner "tanh_bwd, suite $suite"
  by=(); [ "$suite" = domain ] && by=(--by t)  # the error map by binade of t
  $ulpgate run --kernel tanh_bwd --variant all --target all --suite "$suite" "${by[@]}" \
    --json "$out/tanh_bwd-$suite.json"
done
for dtype in bf16 f16; do
  banner "tanh_bwd in $dtype, suite training"
  $ulpgate run --kernel tanh_bwd --dtype "$dtype" --variant all --target all --suite training \
    --json "$out/tanh_bwd-training-$dtype.json"
done
for op in linear_fwd linear_bwd_input linear_bwd_weight linear_bwd_bias mse_fwd mse_bwd; do
  banner "$op, suite cancellation"
  $ulpgate run --kernel "$op" --variant all --target all --suite cancellation --json "$out/$op-cancellation.json"
done
banner "target matrix"
$ulpgate matrix --json "$out/matrix.json"
banner "check: PyTorch's CUDA bf16 tanh_backward (suites/peer/torch-2.11-h100)"
$ulpgate check --dtype bf16 --inputs suites/peer/torch-2.11-h100/tanh_bf16.npz \
  --outputs suites/peer/torch-2.11-h100/tanh_bf16.npz:cuda_aten --label torch_cuda_bf16 \
  --json "$out/check-torch-cuda-bf16.json"
for scenario in seed saturating; do
  banner "drift, scenario $scenario, every precision"
  $ulpgate drift --scenario "$scenario" --dtype all --json "$out/drift-$scenario.json" \
    --svg "$out/drift-$scenario.svg"
done
for dtype in f32 bf16; do
  banner "drift attribution, scenario seed, $dtype"
  $ulpgate drift --scenario seed --dtype "$dtype" --attribute --json "$out/attribution-seed-$dtype.json"
done

banner "golden check (golden/)"
$ulpgate golden check || status=1
banner "release gate (golden/budgets.json)"
$ulpgate gate --json "$out/gate.json" --junit "$out/gate.junit.xml" --markdown "$out/gate.md" || status=1
banner "HTML report"
$ulpgate report "$out" --html "$out/report.html" --title "ulpgate: every op, every target, a check, drift and the gate"
echo
echo "reports: $out/ (open $out/report.html)"
exit $status
