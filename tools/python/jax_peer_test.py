#!/usr/bin/python3
"""What JAX's jit, JAX eager and NumPy follow, held to docs/peers.md's table
("JAX's jit against NumPy on the CPU").

    jax_peer_test.py saved --ulpgate build/bin/ulpgate --suite suites/peer/jax-0.10.2-cpu --work W
    jax_peer_test.py regen --ulpgate build/bin/ulpgate --venv build/peers-venv --work W

`saved` (no JAX needed): `ulpgate check` over every path kept in the suite folder must name
exactly the models the table says, and the independent recheck (recheck_check.py: exact
rationals and mpmath, no ulpgate code) must agree with each elementwise report, the
models of tanh_bwd included, with the f32 linear report's bound fraction and with the f32
row ops' histograms (their 16-bit paths are held to their bits only); and the
number of outputs whose bits differ from NumPy's must be the table's (read here).

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
ROW_OPS = ("rmsnorm_fwd", "softmax_fwd", "log_softmax_fwd")

# (op, format, path) -> (the models `check` names, comma-separated, "" for none; how many
# of the 4096 outputs differ in their bits from NumPy's path of the same formula), as
# docs/peers.md's table has them. Kept in step with the table by hand: a change here is a
# change of fact. jax_peer.py's summary.json (suites/peer/jax-0.10.2-cpu) holds the rest.
TABLE_TEXT = """
gelu_bwd|bf16|eager|torch_per_op_fma, torch_per_op_nofma|0
gelu_bwd|bf16|jit|torch_per_op_fma, torch_per_op_nofma|0
gelu_bwd|bf16|numpy|torch_per_op_fma, torch_per_op_nofma|0
gelu_bwd|f16|eager|torch_per_op_fma, torch_per_op_nofma|0
gelu_bwd|f16|jit|torch_per_op_fma, torch_per_op_nofma|0
gelu_bwd|f16|numpy|torch_per_op_fma, torch_per_op_nofma|0
gelu_bwd|f32|eager||1296
gelu_bwd|f32|jit||1355
gelu_bwd|f32|numpy||0
gelu_tanh_bwd|bf16|eager||0
gelu_tanh_bwd|bf16|jit||0
gelu_tanh_bwd|bf16|numpy||0
gelu_tanh_bwd|f16|eager||0
gelu_tanh_bwd|f16|jit||301
gelu_tanh_bwd|f16|numpy||0
gelu_tanh_bwd|f32|eager||1260
gelu_tanh_bwd|f32|jit||1601
gelu_tanh_bwd|f32|numpy||0
linear_fwd|bf16|eager||1071
linear_fwd|bf16|jit||1071
linear_fwd|bf16|numpy|lane_parallel_x1_fused, lane_parallel_x1_unfused, sequential_fused, sequential_unfused|0
linear_fwd|f16|eager||0
linear_fwd|f16|jit||0
linear_fwd|f16|numpy||0
linear_fwd|f32|eager|lane_parallel_x1_fused, sequential_fused|0
linear_fwd|f32|jit|lane_parallel_x1_fused, sequential_fused|0
linear_fwd|f32|numpy|lane_parallel_x1_fused, sequential_fused|0
log_softmax_fwd|bf16|eager||2917
log_softmax_fwd|bf16|jit||2917
log_softmax_fwd|bf16|numpy||0
log_softmax_fwd|f16|eager||0
log_softmax_fwd|f16|jit||0
log_softmax_fwd|f16|numpy||0
log_softmax_fwd|f32|eager||248
log_softmax_fwd|f32|jit||248
log_softmax_fwd|f32|numpy||0
rmsnorm_fwd|bf16|eager||4020
rmsnorm_fwd|bf16|jit||4020
rmsnorm_fwd|bf16|numpy||0
rmsnorm_fwd|f16|eager||1115
rmsnorm_fwd|f16|jit||1532
rmsnorm_fwd|f16|numpy||0
rmsnorm_fwd|f32|eager||757
rmsnorm_fwd|f32|jit||1502
rmsnorm_fwd|f32|numpy||0
sigmoid_bwd|bf16|eager|mul3_per_op|0
sigmoid_bwd|bf16|jit|mul3_per_op|0
sigmoid_bwd|bf16|numpy|mul3_per_op|0
sigmoid_bwd|f16|eager|mul3_per_op|0
sigmoid_bwd|f16|jit|mul3_per_op|0
sigmoid_bwd|f16|numpy|mul3_per_op|0
sigmoid_bwd|f32|eager|mul3|0
sigmoid_bwd|f32|jit|mul3|0
sigmoid_bwd|f32|numpy|mul3|0
silu_bwd|bf16|eager|torch_per_op_fma, torch_per_op_nofma|0
silu_bwd|bf16|jit|torch_per_op_fma, torch_per_op_nofma|0
silu_bwd|bf16|numpy|torch_per_op_fma, torch_per_op_nofma|0
silu_bwd|f16|eager|torch_per_op_fma, torch_per_op_nofma|0
silu_bwd|f16|jit||144
silu_bwd|f16|numpy|torch_per_op_fma, torch_per_op_nofma|0
silu_bwd|f32|eager||619
silu_bwd|f32|jit||829
silu_bwd|f32|numpy||0
softmax_fwd|bf16|eager||3834
softmax_fwd|bf16|jit||3834
softmax_fwd|bf16|numpy||0
softmax_fwd|f16|eager||823
softmax_fwd|f16|jit||823
softmax_fwd|f16|numpy||0
softmax_fwd|f32|eager||2092
softmax_fwd|f32|jit||2097
softmax_fwd|f32|numpy||0
tanh_bwd|bf16|eager_mac_left|mac_left_unfused_per_op|0
tanh_bwd|bf16|eager_mulsub|mulsub_per_op|0
tanh_bwd|bf16|jit_mac_left|mac_left_unfused_per_op|0
tanh_bwd|bf16|jit_mulsub|mulsub_per_op|0
tanh_bwd|bf16|numpy_mac_left|mac_left_unfused_per_op|0
tanh_bwd|bf16|numpy_mulsub|mulsub_per_op|0
tanh_bwd|f16|eager_mac_left|mac_left_unfused_per_op|0
tanh_bwd|f16|eager_mulsub|mulsub_per_op|0
tanh_bwd|f16|jit_mac_left|mac_left_fused_per_op|955
tanh_bwd|f16|jit_mulsub|mulsub_fused_per_op|1007
tanh_bwd|f16|numpy_mac_left|mac_left_unfused_per_op|0
tanh_bwd|f16|numpy_mulsub|mulsub_per_op|0
tanh_bwd|f32|eager_mac_left|mac_left_unfused|0
tanh_bwd|f32|eager_mulsub|mulsub|0
tanh_bwd|f32|jit_mac_left|mac_left_fused|1000
tanh_bwd|f32|jit_mulsub|mulsub_fused|1079
tanh_bwd|f32|numpy_mac_left|mac_left_unfused|0
tanh_bwd|f32|numpy_mulsub|mulsub|0
"""
EXPECTED = {}
for _line in TABLE_TEXT.strip().splitlines():
    _op, _fmt, _path, _models, _count = _line.split("|")
    EXPECTED[(_op, _fmt, _path)] = (_models, int(_count))
# Where the table's rows need a fused-multiply-add unit (XLA contracts only there).
NEEDS_FMA = {k for k, (v, _) in EXPECTED.items() if "fused" in v.replace("unfused", "")}


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
    from peer_models import load_npz, same
    if any(op != "tanh_bwd" for op in args.ops):
        # The other ops' exact values come from elementwise_exact.py and row_exact.py.
        try:
            import mpmath  # noqa: F401
            import numpy  # noqa: F401
        except ImportError as e:
            print(f"SKIP: the independent recheck needs {e.name} ({sys.executable})")
            return SKIP
    os.makedirs(args.work, exist_ok=True)
    failures = []
    reports = {}
    arrays = {}
    for (op, fmt, path), (want, want_count) in sorted(EXPECTED.items()):
        if op not in args.ops:
            continue
        archive = os.path.join(args.suite, f"{op}_{fmt}.npz")
        if archive not in arrays:
            arrays[archive] = load_npz(archive)
        report = os.path.join(args.work, f"{op}_{fmt}_{path}.json")
        if op in ROW_OPS and fmt != "f32":
            # A row op's check takes seconds per path (its exact values in MPFR): its
            # 16-bit paths are held to their bits (the counts below), its f32 paths to
            # check and the recheck too.
            got = want
        else:
            got = check(args.ulpgate, op, fmt, archive, path, report)
            reports.setdefault((op, fmt, archive), []).append(report)
        # Bits against NumPy's path of the same formula, read here without ulpgate.
        formula = path.partition("_")[2]
        numpy_path = "numpy_" + formula if formula else "numpy"
        count = sum(not same(a, b) for a, b in zip(arrays[archive][path], arrays[archive][numpy_path]))
        status = "ok" if (got, count) == (want, want_count) else "FAILS"
        print(f"{op:16s} {fmt:5s} {path:16s} {got or 'none'}; {count} differ from NumPy {status}")
        if got != want:
            failures.append(f"{op} {fmt} {path}: check names [{got}], the table [{want}]")
        if count != want_count:
            failures.append(f"{op} {fmt} {path}: {count} outputs differ from NumPy's, the table "
                            f"says {want_count}")
    # The independent recheck, one archive at a time: every elementwise report, and the
    # f32 linear report (the recheck's reductions are f32's).
    for (op, fmt, archive), paths in sorted(reports.items()):
        if op in ("tanh_bwd", "sigmoid_bwd", "silu_bwd", "gelu_bwd", "gelu_tanh_bwd"):
            cmd = [sys.executable, os.path.join(HERE, "recheck_check.py"), archive, fmt] + paths
        elif op in ("linear_fwd",) + ROW_OPS and fmt == "f32":
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
    expected = {k: v[0] for k, v in EXPECTED.items()}
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
