#!/usr/bin/python3
"""What JAX's jit, JAX eager and NumPy follow, held to docs/peers.md's table
("JAX's jit against NumPy on the CPU").

    jax_peer_test.py saved --ulpgate build/bin/ulpgate --suite suites/peer/jax-0.10.2-cpu --work W
    jax_peer_test.py regen --ulpgate build/bin/ulpgate --venv build/peers-venv --work W

`saved` (no JAX needed): `ulpgate check` over every path kept in the suite folder must name
exactly the models the table says, and the independent recheck (recheck_check.py: exact
rationals and mpmath, no ulpgate code) must agree with each elementwise report, the
models of tanh_bwd included, and with the f32 linear report's bound fraction.

`regen` (the peers' venv with JAX): jax_peer.py computes the paths again here, from
ulpgate's own inputs, and the same models must come out; on a CPU without FMA (where
XLA cannot contract) the fused rows are reported, not asserted. Exit 77 (a ctest
skip) with the reason when the venv or JAX is absent.
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SKIP = 77

# (op, format, path) -> the models `check` names, as docs/peers.md's table has them.
# "" = none. Kept in step with the table by hand: a change here is a change of fact.
TANH = {
    "f32": {"numpy_mac_left": "mac_left_unfused", "eager_mac_left": "mac_left_unfused",
            "jit_mac_left": "mac_left_fused", "numpy_mulsub": "mulsub", "eager_mulsub": "mulsub",
            "jit_mulsub": "mulsub_fused"},
    "bf16": {"numpy_mac_left": "mac_left_unfused_per_op", "eager_mac_left": "mac_left_unfused_per_op",
             "jit_mac_left": "mac_left_unfused_per_op", "numpy_mulsub": "mulsub_per_op",
             "eager_mulsub": "mulsub_per_op", "jit_mulsub": "mulsub_per_op"},
    "f16": {"numpy_mac_left": "mac_left_unfused_per_op", "eager_mac_left": "mac_left_unfused_per_op",
            "jit_mac_left": "mac_left_fused_per_op", "numpy_mulsub": "mulsub_per_op",
            "eager_mulsub": "mulsub_per_op", "jit_mulsub": "mulsub_fused_per_op"},
}
EXPECTED = {}
for _fmt, _paths in TANH.items():
    for _path, _models in _paths.items():
        EXPECTED[("tanh_bwd", _fmt, _path)] = _models
for _fmt in ("f32", "bf16", "f16"):
    for _engine in ("numpy", "eager", "jit"):
        EXPECTED[("sigmoid_bwd", _fmt, _engine)] = "mul3" if _fmt == "f32" else "mul3_per_op"
# Where the table's rows need a fused-multiply-add unit (XLA contracts only there).
NEEDS_FMA = {k for k, v in EXPECTED.items() if "fused" in v and "unfused" not in v}


def load_extra(suite):
    """The rows of the ops whose models are the measurement's (expected.json beside the
    archives: the same table, for the ops past tanh_bwd and sigmoid_bwd)."""
    path = os.path.join(suite, "expected.json")
    out = {}
    if os.path.exists(path):
        with open(path) as f:
            for key, models in json.load(f).items():
                op, fmt, p = key.split(":")
                out[(op, fmt, p)] = models
    return out


def check(ulpgate, op, fmt, archive, path, report):
    cmd = [ulpgate, "check", "--op", op, "--dtype", fmt, "--inputs", archive,
           "--outputs", f"{archive}:{path}", "--json", report, "--quiet"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    with open(report) as f:
        result = json.load(f)["results"][0]
    return ", ".join(sorted((result.get("conformance") or {}).get("matching", [])))


def saved(args):
    expected = dict(EXPECTED)
    expected.update(load_extra(args.suite))
    os.makedirs(args.work, exist_ok=True)
    failures = []
    reports = {}
    for (op, fmt, path), want in sorted(expected.items()):
        archive = os.path.join(args.suite, f"{op}_{fmt}.npz")
        report = os.path.join(args.work, f"{op}_{fmt}_{path}.json")
        got = check(args.ulpgate, op, fmt, archive, path, report)
        status = "ok" if got == want else "FAILS"
        print(f"{op:16s} {fmt:5s} {path:16s} {got or 'none'} {status}")
        if got != want:
            failures.append(f"{op} {fmt} {path}: check names [{got}], the table [{want}]")
        reports.setdefault((op, fmt, archive), []).append(report)
    # The independent recheck, one archive at a time: every elementwise report, and the
    # f32 linear report (the recheck's reductions are f32's).
    for (op, fmt, archive), paths in sorted(reports.items()):
        if op in ("tanh_bwd", "sigmoid_bwd", "silu_bwd", "gelu_bwd", "gelu_tanh_bwd"):
            cmd = [sys.executable, os.path.join(HERE, "recheck_check.py"), archive, fmt] + paths
        elif op == "linear_fwd" and fmt == "f32":
            cmd = [sys.executable, os.path.join(HERE, "recheck_check.py"), "--reductions",
                   archive] + paths
        else:
            continue
        r = subprocess.run(cmd, capture_output=True, text=True)
        print(r.stdout.rstrip())
        if r.returncode != 0:
            failures.append(f"recheck_check.py disagrees on {os.path.basename(archive)}:\n"
                            f"{r.stdout[-2000:]}{r.stderr[-2000:]}")
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


def has_fma():
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " fma" in line for line in f)
    except OSError:
        return False


def regen(args):
    import jax_peer
    why = jax_peer.unavailable_reason(args.venv)
    if why:
        print(f"SKIP: {why}")
        return SKIP
    expected = dict(EXPECTED)
    if args.suite:
        expected.update(load_extra(args.suite))
    ops = sorted({op for op, _, _ in expected if op in args.ops})
    r = subprocess.run([sys.executable, os.path.join(HERE, "jax_peer.py"), "--venv", args.venv,
                        "--ulpgate", args.ulpgate, "--out", args.work, "--n", "4096",
                        "--ops"] + ops, capture_output=True, text=True)
    print(r.stdout.rstrip())
    if r.returncode == SKIP:
        return SKIP
    if r.returncode != 0:
        print(f"FAIL: jax_peer.py exit {r.returncode}\n{r.stderr[-3000:]}")
        return 1
    with open(os.path.join(args.work, "summary.json")) as f:
        summary = json.load(f)
    print(f"versions: {summary['versions']}")
    fma = has_fma()
    failures = []
    for (op, fmt, path), want in sorted(expected.items()):
        if op not in ops:
            continue
        got = ", ".join(summary["paths"][f"{op}:{fmt}:{path}"]["models"])
        if got != want:
            if not fma and (op, fmt, path) in NEEDS_FMA:
                print(f"{op} {fmt} {path}: [{got}] (the table's [{want}] needs FMA; this CPU has none)")
                continue
            failures.append(f"{op} {fmt} {path}: regenerated here it follows [{got}], the table "
                            f"says [{want}]")
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("saved", "regen"))
    ap.add_argument("--ulpgate", required=True)
    ap.add_argument("--suite", help="suites/peer/jax-0.10.2-cpu")
    ap.add_argument("--venv")
    ap.add_argument("--work", required=True)
    ap.add_argument("--ops", nargs="*", default=["tanh_bwd", "sigmoid_bwd"])
    args = ap.parse_args()
    return saved(args) if args.mode == "saved" else regen(args)


if __name__ == "__main__":
    sys.exit(main())
