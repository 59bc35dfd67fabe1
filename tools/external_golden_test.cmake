# ctest driver: outputs made elsewhere as golden files and gate inputs. In a scratch
# repository (data/ and golden/): a check report blessed with `golden bless --check`,
# replayed by `golden check` (ok; DIFFERS once the recorded record is edited), and a
# small ledger whose label rules the gate evaluates on it: PASS within the limits, FAIL
# (exit 1) below the measured max ULP or against a model the outputs do not follow, and
# exit 2 for a label that matches no external golden; a golden directory copied elsewhere
# (the data travels with it) replays there.
# Variables: ULPGATE, PEER (suites/peer/torch-2.11-h100), WORK.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/data" "${WORK}/golden")
file(COPY "${PEER}/tanh_bf16.npz" DESTINATION "${WORK}/data")

set(ULPGATE_WORKDIR "${WORK}")
include("${CMAKE_CURRENT_LIST_DIR}/cli_expect.cmake")

ulpgate_expect(0 "follows bit for bit: mulsub_per_op" check --dtype bf16 --inputs data/tanh_bf16.npz
  --outputs data/tanh_bf16.npz:cuda_aten --label torch_eager --quiet --json report.json)
ulpgate_expect(0 "wrote   EXTERNAL   golden/external/torch_eager.json" golden bless --check report.json
  --expect-model mulsub_per_op)
ulpgate_expect(1 "ok      EXTERNAL   golden/external/torch_eager.json" golden check)

# The ledger: one small run of ulpgate's own, and label rules.
function(ledger max_ulp model label)
  file(WRITE "${WORK}/golden/budgets.json" "{
  \"format\": \"ulpgate-budgets-1\", \"about\": \"external_golden_test\",
  \"runs\": [{\"op\": \"tanh_bwd\", \"suites\": [\"domain\"], \"n\": 200, \"variants\": [\"mulsub\"]}],
  \"rules\": [
    {\"id\": \"torch.eager\", \"match\": {\"op\": \"tanh_bwd\", \"dtype\": \"bf16\", \"label\": \"${label}\"},
     \"limits\": {\"max_ulp\": ${max_ulp}, \"conformance_required\": true}, \"why\": \"test\"}
  ]}\n")
endfunction()
ledger(6.5 mulsub_per_op "torch_*")
ulpgate_expect(0 "torch.eager\n +PASS +max_ulp [^\n]*\n +PASS +conformance_required +0 \\(follows mulsub_per_op\\).*gate: PASS"
  gate --budgets golden/budgets.json --verbose)
ledger(6 mulsub_per_op "torch_*")
# The failing row replays as the check it was blessed from, named from here.
ulpgate_expect(1 "\nFAIL torch.eager.max_ulp: max_ulp = 6.39916992[0-9]* > 6 at[ \n]+torch_eager@external[^\n]*\n  replay: ulpgate check --op tanh_bwd --dtype bf16 --inputs golden/external/torch_eager.npz --outputs[ \\\\\n]+golden/external/torch_eager.npz:cuda_aten[ \\\\\n]+--label torch_eager --require-model mulsub_per_op\n"
  gate --budgets golden/budgets.json)
ulpgate_expect(1 "\n +FAIL +max_ulp +6.39917 +6 +torch_eager@external"
  gate --budgets golden/budgets.json --verbose)
ledger(6.5 mulsub_per_op "pytorch_*")
ulpgate_expect(2 "label 'pytorch_\\*' matches no external golden of tanh_bwd" gate --budgets golden/budgets.json)
# Blessed against a model it does not follow: conformance_required fails.
ulpgate_expect(0 "wrote   EXTERNAL" golden bless --check report.json --expect-model mulsub_opmath)
ledger(6.5 mulsub_opmath "torch_*")
ulpgate_expect(1 "expected mulsub_opmath, follows mulsub_per_op" gate --budgets golden/budgets.json)

# An edited record: golden check says what differs.
file(READ "${WORK}/golden/external/torch_eager.json" text)
string(REPLACE "\"max_ulp\": 6.399169921875" "\"max_ulp\": 6.0" text "${text}")
file(WRITE "${WORK}/golden/external/torch_eager.json" "${text}")
ulpgate_expect(1 "DIFFERS EXTERNAL   golden/external/torch_eager.json:\n  max_ulp 6.0 -> 6.399169921875" golden check)

# Blessing copies the data beside the golden: a golden directory blessed from
# files anywhere, then copied elsewhere with the originals gone, replays there,
# and the gate finds it from the copied ledger.
file(MAKE_DIRECTORY "${WORK}/repo/golden")
ulpgate_expect(0 "wrote   EXTERNAL   repo/golden/external/torch_eager.json" golden bless --dir repo/golden
  --check report.json --expect-model mulsub_per_op)
file(COPY "${WORK}/golden/budgets.json" DESTINATION "${WORK}/repo/golden")
file(COPY "${WORK}/repo/golden" DESTINATION "${WORK}/elsewhere/copy")
file(REMOVE_RECURSE "${WORK}/data" "${WORK}/repo")
if(NOT EXISTS "${WORK}/elsewhere/copy/golden/external/torch_eager.npz")
  message(FATAL_ERROR "golden bless --check did not copy the data beside the golden")
endif()
ulpgate_expect(1 "ok      EXTERNAL   elsewhere/copy/golden/external/torch_eager.json"
  golden check --dir elsewhere/copy/golden)
ledger(6.5 mulsub_per_op "torch_*")
file(COPY "${WORK}/golden/budgets.json" DESTINATION "${WORK}/elsewhere/copy/golden")
ulpgate_expect(0 "torch.eager.*follows mulsub_per_op.*gate: PASS"
  gate --verbose --budgets elsewhere/copy/golden/budgets.json)
