#!/usr/bin/python3
"""The seed scenario trained by the pinned PyTorch on this CPU, eager and compiled
(Inductor), its ops recorded (torch_drift.py --record-ops), and `ulpgate drift --compare`
over them: the op whose models differ between eager and compiled must be named, with the
cause the recomputed models give (recheck_drift_ops.py: fractions, no code of ulpgate's).

In f32, tanh_bwd: whichever models eager and compiled follow on this CPU, ulpgate must
report exactly those the recheck recomputes, and the cause those settle (a model in
common: none; the same formula fused in one and not in the other: fusion). In bf16, with
the compiled run repeated under emulate_precision_casts: where the compiled tanh_bwd
follows none of its models on its recorded operands and the experiment follows eager's,
the cause must be fusion, settled by the experiment.

    peer_drift_test.py --venv build/peers-venv --ulpgate build/bin/ulpgate --work DIR

Exit status 77 (a ctest skip) without the venv or PyTorch, with the reason.
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peer_sums as ps  # noqa: E402
import recheck_drift_ops as oracle  # noqa: E402

SKIP = 77


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"{cmd[0]} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r.stdout


def tanh_entry(report, la, lb):
    for pair in report.get("op_models", []):
        if pair["curves"] == [la, lb]:
            for o in pair["ops"]:
                if o["op"] == "tanh_bwd":
                    return o
    return None


def recomputed(report, label):
    for curve in report["compare"]:
        if curve["label"] != label:
            continue
        for op in curve.get("ops", []):
            if op["op"] == "tanh_bwd":
                arrays = oracle.read_npz(op["file"])
                names, known = oracle.followed(arrays["grad"], arrays["t"], arrays["out"], op["dtype"])
                return names, set(op["matching"]) & known
    return None, None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--venv", required=True)
    ap.add_argument("--ulpgate", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--epochs", type=int, default=20)
    args = ap.parse_args()
    why = ps.unavailable_reason(args.venv)
    if why:
        print(f"SKIP: {why}")
        return SKIP
    python = os.path.join(args.venv, "bin", "python")
    probe = subprocess.run([python, "-c", "import torch; print(torch.__version__)"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"SKIP: PyTorch does not import in {args.venv}: {probe.stderr.strip()[-200:]}")
        return SKIP
    print(f"PyTorch {probe.stdout.strip()}")
    os.makedirs(args.work, exist_ok=True)
    work = args.work
    seed = os.path.join(work, "seed.json")
    run([args.ulpgate, "drift", "--scenario", "seed", "--epochs", "2", "--json", seed])
    script = os.path.join(HERE, "torch_drift.py")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    failures = []
    for precision, experiment in (("f32", False), ("bf16", True)):
        curves = []
        kinds = [("eager", []), ("compiled", ["--compile"])]
        if experiment:
            kinds.append(("emulated", ["--compile", "--inductor", "emulate_precision_casts=1"]))
        for kind, extra in kinds:
            out = os.path.join(work, f"{kind}_{precision}.json")
            run([python, script, seed, "--precision", precision, "--epochs", str(args.epochs),
                 "--record-ops", "20", "--label", f"torch-{kind}", "--out", out] + extra, env=env)
            curves += ["--compare", out, "--label", f"torch-{kind}"]
        report_path = os.path.join(work, f"drift_{precision}.json")
        text = run([args.ulpgate, "drift", "--scenario", "seed", "--dtype", precision, "--epochs",
                    str(args.epochs)] + curves + ["--json", report_path])
        print(text[text.find("ops whose"):] if "ops whose" in text else text[-600:])
        with open(report_path) as f:
            report = json.load(f)
        entry = tanh_entry(report, "torch-eager", "torch-compiled")
        eager, eager_said = recomputed(report, "torch-eager")
        compiled, compiled_said = recomputed(report, "torch-compiled")
        if entry is None or eager is None or compiled is None:
            failures.append(f"{precision}: no tanh_bwd in the report's op_models")
            continue
        print(f"{precision}: tanh_bwd eager follows {sorted(eager) or 'none'}, compiled "
              f"{sorted(compiled) or 'none'} (recomputed); ulpgate: cause {entry['cause']} "
              f"({entry['evidence']}), models {entry['models']}")
        if eager != eager_said or compiled != compiled_said:
            failures.append(f"{precision}: ulpgate says eager {sorted(eager_said)}, compiled "
                            f"{sorted(compiled_said)}; recomputed {sorted(eager)}, {sorted(compiled)}")
        settled = oracle.expected_cause(eager, compiled)
        if settled is not None:
            if entry["cause"] != settled:
                failures.append(f"{precision}: cause {entry['cause']}, the models settle {settled}")
        elif experiment and eager and not compiled:
            emulated, _ = recomputed(report, "torch-emulated")
            if emulated and emulated & eager:
                if (entry["cause"], entry["evidence"]) != ("fusion", "experiment"):
                    failures.append(f"{precision}: the experiment follows eager's models, yet the "
                                    f"cause is {entry['cause']} ({entry['evidence']})")
            elif entry["cause"] == "none":
                failures.append(f"{precision}: the models differ, yet the cause is none")
        elif entry["cause"] == "none":
            failures.append(f"{precision}: the models differ, yet the cause is none")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
