#!/usr/bin/python3
"""PyTorch's eager kernels and torch.compile on the CPU (suites/peer/torch-2.15-cpu-compiled):
the models `ulpgate check` names for every saved path, held to the folder's models.json
(the table of docs/peers.md), each report rechecked by recheck_check.py (exact
arithmetic, no ulpgate code), and how many outputs eager and compiled differ on,
counted here bit for bit from the archive.

    compiled_peer_test.py --ulpgate build/bin/ulpgate --archive tanh_bwd_f32 --work DIR
    compiled_peer_test.py --ulpgate build/bin/ulpgate --archive tanh_bwd_f32 --work DIR \\
        --regenerate --venv build/peers-venv

The first form needs no torch (standard library; mpmath for the recheck of the ops that
call exp, erf or tanh). With --regenerate it runs compiled_peer.py generate for that
archive in the venv's Python (torch here, on this CPU) and holds the new outputs to the
same models: a PyTorch whose paths change model fails it. Its inputs must be the saved
ones bit for bit (the same `ulpgate suite export`), else the comparison would mean
nothing. Exit 77 (a ctest skip) with the reason when the venv, torch or mpmath is absent.
"""

import argparse
import json
import math
import os
import struct
import shutil
import subprocess
import sys
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from compiled_peer import USER_MODELS  # noqa: E402  (standard library at import)
from peer_models import load_npz  # noqa: E402

SKIP = 77
FOLDER = os.path.join(os.path.dirname(os.path.dirname(HERE)), "suites", "peer",
                      "torch-2.15-cpu-compiled")
ELEMENTWISE = ("tanh_bwd", "sigmoid_bwd", "silu_bwd", "gelu_bwd", "gelu_tanh_bwd")


def bits(values):
    """Encodings to compare (every NaN alike): float32 values as Python floats are exact."""
    return ["nan" if v != v else v.hex() for v in values]


def differing(a, b):
    return sum(x != y for x, y in zip(bits(a), bits(b)))


def check_archive(ulpgate, folder, archive, rows, work, recheck):
    """Runs check on every row of `archive`; returns failures."""
    failures, reports = [], []
    path = os.path.join(folder, archive + ".npz")
    arrays = load_npz(path)
    for row in rows:
        report = os.path.join(work, "%s_%s.json" % (archive, row["path"]))
        argv = [ulpgate, "check", "--op", row["op"], "--dtype", row["dtype"], "--inputs", path,
                "--outputs", "%s:%s" % (path, row["path"]), "--quiet", "--json", report]
        for model in USER_MODELS.get(row["op"], ()):
            argv += ["--model", model]
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode not in (0, 1) or not os.path.exists(report):
            failures.append("%s failed (%d): %s" % (" ".join(argv), done.returncode, done.stderr))
            continue
        with open(report) as f:
            said = json.load(f)["results"][0]
        models = sorted(said["conformance"]["matching"])
        line = "%-18s %-18s %-5s follows %s" % (archive, row["path"], row["dtype"],
                                                ", ".join(models) or "none")
        print(line)
        if models != row["models"]:
            failures.append("%s %s: check names %s, the table %s" % (
                archive, row["path"], models or "none", row["models"] or "none"))
        if row["path"].startswith("compiled_"):
            eager = "eager_" + row["path"][len("compiled_"):]
            if eager in arrays:
                n = differing(arrays[eager], arrays[row["path"]])
                if n != row.get("differ_from_eager"):
                    failures.append("%s %s: %d outputs differ from %s, the table says %s" % (
                        archive, row["path"], n, eager, row.get("differ_from_eager")))
        reports.append((row, report))
    if recheck and reports:
        failures += run_recheck(folder, archive, reports)
    return failures


def rn32(x):
    """x rounded to binary32, nearest even. An operation on binary32 operands done in
    binary64 and then rounded to binary32 is correctly rounded for +, -, *, / and sqrt
    (53 >= 2*24 + 2: the double rounding is innocuous), so rn32(a op b) is binary32's."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def lane_sum(terms, lanes=16):
    """One binary32 accumulator per lane over k = j, j + lanes, ..., from +0, then
    lane[j] += lane[j + w] for w = lanes/2, ..., 1: a lane-parallel sum joined by halving."""
    acc = [0.0] * lanes
    for k, t in enumerate(terms):
        acc[k % lanes] = rn32(acc[k % lanes] + t)
    w = lanes // 2
    while w >= 1:
        for j in range(w):
            acc[j] = rn32(acc[j] + acc[j + w])
        w //= 2
    return acc[0]


def rmsnorm_lane16(arrays, backward, fused):
    """RMSNorm in binary32 as 16 lanes of products rounded before they are added, the mean
    square's 1/sqrt as two roundings (sqrt, then 1/s), written here apart from ulpgate's
    models: y = RN(RN(x r) g); dx = RN(-k x + RN(RN(g dy) r)) (fused or not), with
    k = RN(RN(RN(r r) r) c) and c the same lane sum's mean of RN(RN(g dy) x)."""
    g = arrays["g"]
    n = len(g)
    x, dy = arrays["x"], arrays.get("dy")
    eps = rn32(1e-6)
    out = []
    for row in range(len(x) // n):
        xs = x[row * n:(row + 1) * n]
        mean = rn32(lane_sum([rn32(v * v) for v in xs]) / n)
        s = rn32(math.sqrt(rn32(mean + eps)))
        r = rn32(1.0 / s)
        if not backward:
            out += [rn32(rn32(v * r) * gj) for v, gj in zip(xs, g)]
            continue
        dys = dy[row * n:(row + 1) * n]
        gdy = [rn32(gj * d) for gj, d in zip(g, dys)]
        c = rn32(lane_sum([rn32(p * v) for p, v in zip(gdy, xs)]) / n)
        k = rn32(rn32(rn32(r * r) * r) * c)
        for p, v in zip(gdy, xs):
            q = rn32(p * r)
            if fused:  # -k*x + q exactly, then one rounding (exact in fractions)
                out.append(rn32(float(Fraction(-k) * Fraction(v) + Fraction(q))))
            else:
                out.append(rn32(q - rn32(k * v)))
    return out


def recheck_row_model(folder, archive, rows):
    """The f32 RMSNorm paths that check says follow the 16-lane model, recomputed here
    (rmsnorm_lane16) and compared bit for bit; returns failures."""
    failures = []
    arrays = load_npz(os.path.join(folder, archive + ".npz"))
    for row in rows:
        if "lane_parallel_x16_unfused_lane_parallel_rsqrt" not in row["models"]:
            continue
        backward = row["op"] == "rmsnorm_bwd"
        got = arrays[row["path"]]
        fits = [fused for fused in ((True, False) if backward else (False,))
                if bits(rmsnorm_lane16(arrays, backward, fused)) == bits(got)]
        if fits:
            print("%-18s %-18s the 16-lane model written here gives every output%s" % (
                archive, row["path"], "" if not backward else
                " (dx's last step %s)" % ("fused" if fits[0] else "rounded twice")))
        else:
            failures.append("%s %s: check names the 16-lane model, the recheck's 16-lane "
                            "RMSNorm differs" % (archive, row["path"]))
    return failures


def run_recheck(folder, archive, reports):
    """recheck_check.py on the reports it can recheck: the elementwise ops (histogram and
    counts; tanh_bwd's models too) and the linear layer (histogram, bound fraction)."""
    path = os.path.join(folder, archive + ".npz")
    op = reports[0][0]["op"]
    script = os.path.join(HERE, "recheck_check.py")
    if op in ELEMENTWISE:
        if op != "tanh_bwd":
            try:
                import mpmath  # noqa: F401
            except ImportError:
                print("recheck of %s skipped: no mpmath in %s" % (archive, sys.executable))
                return []
        # One op per recheck_check call.
        argv = [sys.executable, script, path, reports[0][0]["dtype"]] + [r for _, r in reports]
    elif op.startswith("linear_") and reports[0][0]["dtype"] == "f32":
        argv = [sys.executable, script, "--reductions", path] + [r for _, r in reports]
    elif op.startswith("rmsnorm_") and reports[0][0]["dtype"] == "f32":
        return recheck_row_model(folder, archive, [row for row, _ in reports])
    else:
        print("recheck of %s: recheck_check.py has no exact definition of %s in %s" % (
            archive, op, reports[0][0]["dtype"]))
        return []
    done = subprocess.run(argv, capture_output=True, text=True)
    print(done.stdout, end="")
    if done.returncode != 0:
        return ["recheck_check.py disagrees with check on %s:\n%s%s" % (archive, done.stdout,
                                                                        done.stderr)]
    return []


def regenerate(args, rows):
    """compiled_peer.py generate for this archive in the venv; returns (folder, failures)."""
    python = os.path.join(args.venv, "bin", "python")
    if not os.path.exists(python):
        print("SKIP: no peers venv at %s (ci/setup_peers.sh makes it)" % args.venv)
        sys.exit(SKIP)
    unavailable = os.path.join(args.venv, "UNAVAILABLE")
    if os.path.exists(unavailable):
        with open(unavailable) as f:
            print("SKIP: the peers venv is unavailable: %s" % f.read().strip())
        sys.exit(SKIP)
    probe = subprocess.run([python, "-c", "import torch, numpy; print(torch.__version__)"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        print("SKIP: torch does not import in %s: %s" % (python, probe.stderr.strip()[-300:]))
        sys.exit(SKIP)
    with open(os.path.join(args.folder, "info.json")) as f:
        made_with = json.load(f)["torch"]
    version = probe.stdout.strip()
    print("regenerating %s with torch %s (the saved outputs: torch %s)" % (
        args.archive, version, made_with))
    out = os.path.join(args.work, "regenerated")
    stem, dtype = args.archive.rsplit("_", 1)
    env = dict(os.environ)
    # Inductor's compiled kernels cached beside the test's files, not in /tmp.
    env.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(args.work, "inductor-cache"))
    done = subprocess.run([python, os.path.join(HERE, "compiled_peer.py"), "generate",
                           "--ulpgate", args.ulpgate, "--out", out, "--only",
                           "%s:%s" % (stem, dtype)], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        return out, ["compiled_peer.py generate failed (%d): %s" % (done.returncode,
                                                                    done.stderr[-2000:])]
    saved = load_npz(os.path.join(args.folder, args.archive + ".npz"))
    new = load_npz(os.path.join(out, args.archive + ".npz"))
    failures = []
    for name in saved:
        if not name.startswith(("eager_", "compiled_")) and bits(saved[name]) != bits(new[name]):
            failures.append("input %s differs from the saved one: `ulpgate suite export` "
                            "changed; regenerate the folder" % name)
    same = [n for n in saved if n.startswith(("eager_", "compiled_")) and n in new
            and bits(saved[n]) == bits(new[n])]
    print("bit for bit as saved: %s" % (", ".join(sorted(same)) or "none"))
    for name in ("models.json", "info.json"):
        shutil.copy(os.path.join(args.folder, name), os.path.join(out, name))
    return out, failures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__)
    parser.add_argument("--ulpgate", required=True)
    parser.add_argument("--archive", required=True, help="e.g. tanh_bwd_f32, softmax_bf16")
    parser.add_argument("--work", required=True)
    parser.add_argument("--folder", default=FOLDER)
    parser.add_argument("--regenerate", action="store_true")
    parser.add_argument("--venv", default="build/peers-venv")
    args = parser.parse_args(argv)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    with open(os.path.join(args.folder, "models.json")) as f:
        rows = [r for r in json.load(f) if r["archive"] == args.archive + ".npz"]
    if not rows:
        print("no rows of %s in %s/models.json" % (args.archive, args.folder))
        return 2
    folder, failures = args.folder, []
    if args.regenerate:
        folder, failures = regenerate(args, rows)
    if not failures:
        failures = check_archive(args.ulpgate, folder, args.archive, rows, args.work,
                                 recheck=not args.regenerate)
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
