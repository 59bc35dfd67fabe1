#!/usr/bin/env python3
"""Recheck `ulpgate check` reports of elementwise outputs with exact arithmetic.

Independent of the C++ harness: reads the .npz archive the outputs came from (standard
library only), recomputes every output's exact value and ULP error with
fractions.Fraction (recheck_dump.py's definitions), the histogram, and the built-in
models from their op sequences written out here (binary32_exact.py: each operation
exact, then one rounding), and compares the histogram, the special and signed-zero
counts, the correctly rounded count and the set of models each path follows bit for bit
with what the report says.

    python3 tools/python/recheck_check.py ARCHIVE.npz DTYPE REPORT.json [REPORT.json ...]

    python3 tools/python/recheck_check.py --reductions ARCHIVE.npz REPORT.json [...]

Reports of sigmoid_bwd, silu_bwd, gelu_bwd and gelu_tanh_bwd (the archive's arrays grad
and s or x) are rechecked against exact values from elementwise_exact.py (mpmath, the op
definitions): histogram, special and signed-zero counts, correctly rounded count; their
models are not written here, so the matching sets are left out.

The second form rechecks reports of the linear and MSE ops (f32): histogram, special
count, the largest bound fraction and the outputs above the bound; and of RMSNorm's,
softmax's and log_softmax's forward ops (f32): histogram and special count (their values
from row_exact.py, mpmath).

With a period in the report (check --period K), the mismatches by position (index mod K)
against every built-in model are rechecked too.

The report's label names the archive's array. Of the models given by the user, only
mac_left (defined here) is rechecked; others are left out of the matching sets compared. Exit 0 when everything agrees, 1 on a disagreement, 2 on
unreadable input.
"""

import argparse
import json
import math
import os
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import binary32_exact as bx  # noqa: E402
import recheck_dump as rd  # noqa: E402
from peer_models import load_npz  # noqa: E402

ONE = bx.Value.num(1)


def models(fmt):
    """name -> function(grad, t) of exact Values, the models `check` has built in."""
    f32 = bx.F32

    def rn(v, f=f32):
        return bx.round_to(v, f)

    sequences = {
        # r = t*t; out = grad - grad*r, the subtraction fused with the product
        "mac_fused": lambda g, t, f: rn(bx.fma(bx.neg(g), rn(bx.mul(t, t), f), g), f),
        # r = t*t; p = grad*r; out = grad - p
        "mac_unfused": lambda g, t, f: rn(bx.sub(g, rn(bx.mul(g, rn(bx.mul(t, t), f)), f)), f),
        # r = t*t; s = 1 - r; out = grad*s
        "mulsub": lambda g, t, f: rn(bx.mul(g, rn(bx.sub(ONE, rn(bx.mul(t, t), f)), f)), f),
        # s = 1 - t*t fused; out = grad*s
        "mulsub_fused": lambda g, t, f: rn(bx.mul(g, rn(bx.fma(bx.neg(t), t, ONE), f)), f),
        # p = grad*t; out = grad - p*t fused: grad - grad*t*t as C and Python associate it
        "mac_left_fused": lambda g, t, f: rn(bx.fma(bx.neg(rn(bx.mul(g, t), f)), t, g), f),
        # p = grad*t; q = p*t; out = grad - q
        "mac_left_unfused": lambda g, t, f: rn(bx.sub(g, rn(bx.mul(rn(bx.mul(g, t), f), t), f)), f),
    }
    if fmt is f32:
        return {name: (lambda s: lambda g, t: s(g, t, f32))(s) for name, s in sequences.items()}
    per_op_names = {"mac_unfused": "mac_per_op", "mulsub": "mulsub_per_op"}
    out = {}
    for name, s in sequences.items():
        out[name + "_opmath"] = (lambda s: lambda g, t: rn(s(g, t, f32), fmt))(s)
        out[per_op_names.get(name, name + "_per_op")] = (lambda s: lambda g, t: s(g, t, fmt))(s)
        if fmt.name == "bf16":
            out[name + "_opmath_truncating"] = (
                lambda s: lambda g, t: bx.round_to(s(g, t, f32), fmt, toward_zero=True))(s)
    return out


def user_models(fmt):
    """Models the tests give `check` with --model, rechecked too: Python's
    grad - grad*t*t, that is (grad*t)*t, with the subtraction fused (mac_left:
    p = grad*t; out = fma(-p, t, grad), working format f32)."""
    f32 = bx.F32
    return {"mac_left": lambda g, t: bx.round_to(
        bx.round_to(bx.fma(bx.neg(bx.round_to(bx.mul(g, t), f32)), t, g), f32), fmt)}


def same(a, b):
    """Two exact Values, bit for bit (every NaN alike)."""
    if a.kind == "nan" or b.kind == "nan":
        return a.kind == b.kind
    return a.kind == b.kind and a.q == b.q and a.neg == b.neg


def recheck_reductions(archive, reports):
    """Reports of the linear and MSE ops (f32): ULP histogram, special count, and the
    bound fraction (its maximum and the outputs above the bound), from recheck_dump.py's
    exact values and bound ingredients of each output."""
    arrays = {name.lower(): values for name, values in load_npz(archive).items()}
    rd.set_format("f32")
    failures, computed = [], {}
    for path in reports:
        with open(path) as f:
            report = json.load(f)
        result = report["results"][0]
        op, label = result["op"], report["label"]
        if op not in computed:
            names = {"linear_fwd": ("x", "w", "b"), "linear_bwd_input": ("dy", "w"),
                     "linear_bwd_weight": ("dy", "x"), "linear_bwd_bias": ("dy",),
                     "mse_fwd": ("y", "target"), "mse_bwd": ("y", "target", "grad_out"),
                     "rmsnorm_fwd": ("x", "g"), "softmax_fwd": ("x",),
                     "log_softmax_fwd": ("x",)}[op]
            record = {"op": op, "shape": result["shape"],
                      "inputs": {k: [float(v).hex() for v in arrays.get(k, (1.0,))] for k in names}}
            computed[op] = list(rd.elements(record))
        outputs = arrays[label.lower()]
        counts = [0] * (len(rd.ULP_BOUNDS) + 1)
        special = above = 0
        largest = 0.0
        for y, (x, bound) in zip(outputs, computed[op]):
            u = rd.ulp_error(x, y)
            if u["special"]:
                special += 1
            else:
                counts[u["bin"]] += 1
            if bound is None:  # a row op: no bound ingredients here
                continue
            b = rd.bound_fraction(x, y, bound)
            above += b["above_one"]
            if b["fraction"] is not None:
                largest = max(largest, b["fraction"])
        said = result["bound_fraction"]
        if op in rd.ROW_OPS:
            # The row ops' bound is the C++ oracle's (recheck_dump.py): their values and
            # ULP errors are rechecked, not the bound fraction.
            checks = [("histogram", counts, result["histogram"]["counts"]),
                      ("special mismatches", special, result["special_mismatch"])]
            bad = [c for c in checks if c[1] != c[2]]
            for what, mine, theirs in bad:
                failures.append("%s (%s): %s: recheck %s, report %s" % (label, op, what, mine, theirs))
            if not bad:
                print("%-20s %s: histogram agrees" % (label, op))
            continue
        checks = [("histogram", counts, result["histogram"]["counts"]),
                  ("special mismatches", special, result["special_mismatch"]),
                  ("outputs above the bound", above, said["above_one"]),
                  ("largest bound fraction", largest, said["max"]),
                  ("exceeds_bound", above > 0, result["exceeds_bound"])]
        bad = [c for c in checks if c[1] != c[2]]
        for what, mine, theirs in bad:
            failures.append("%s (%s): %s: recheck %s, report %s" % (label, op, what, mine, theirs))
        if not bad:
            print("%-20s %s: agrees (%d above the bound, largest fraction %.4g)" %
                  (label, op, above, largest))
    for f in failures:
        print("recheck_check: " + f)
    return 1 if failures else 0


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="recheck_check.py", description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--reductions", action="store_true",
                        help="the reports are of the linear and MSE ops (no DTYPE)")
    parser.add_argument("archive", help="the .npz the outputs came from")
    parser.add_argument("rest", nargs="+", metavar="DTYPE REPORT",
                        help="elementwise ops: the dtype, then reports; --reductions: reports")
    args = parser.parse_args(argv)
    if args.reductions:
        return recheck_reductions(args.archive, args.rest)
    if len(args.rest) < 2:
        parser.error("expected DTYPE and at least one REPORT")
    archive, dtype, reports = args.archive, args.rest[0], args.rest[1:]
    try:
        arrays = load_npz(archive)
        fmt = bx.FORMATS[dtype]
        rd.set_format(dtype)
    except (OSError, ValueError, KeyError) as e:
        print("recheck_check: %s" % e)
        return 2
    try:
        opened = []
        for path in reports:
            with open(path) as f:
                opened.append((path, json.load(f)))
    except (OSError, ValueError) as e:
        print("recheck_check: %s" % e)
        return 2
    ops = {report["results"][0].get("op", "tanh_bwd") for _, report in opened}
    if len(ops) != 1:
        print("recheck_check: expected reports of one elementwise op, found %s" %
              ", ".join(sorted(ops)))
        return 2
    op = ops.pop()
    # The report's op: tanh_bwd's models are written here, every op's exact
    # value in elementwise_exact.py; an op defined in neither is an error.
    if op != "tanh_bwd" and op not in rd.ee().OPS:
        print("recheck_check: op %s: no definition in elementwise_exact.py (OPS) to recheck "
              "it against" % op)
        return 2
    second = "t" if op == "tanh_bwd" else rd.ee().OPS[op][0]
    if "grad" not in arrays or second not in arrays:
        print("recheck_check: %s: no arrays grad and %s (the operands of %s)" % (archive, second, op))
        return 2
    grads, ts = arrays["grad"], arrays[second]
    n = len(grads)
    # The models this script writes out: tanh_bwd's; the other ops' outputs are
    # rechecked against their exact values only (their models call Highway's
    # exp, erf and tanh, or are not written here), so their matching sets are not compared.
    table = {}
    if op == "tanh_bwd":
        table = models(fmt)
        table.update(user_models(fmt))
    # Every model's output and every exact value once: the paths share the inputs.
    model_outputs = {name: [] for name in table}
    exact = []
    for g, t in zip(grads, ts):
        gv, tv = bx.from_float(g), bx.from_float(t)
        for name, f in table.items():
            model_outputs[name].append(f(gv, tv))
        exact.append(rd.exact_tanh_bwd(g, t) if op == "tanh_bwd" else rd.exact_elementwise(op, g, t))
    failures = []
    for path, report in opened:
        label = report["label"]
        result = report["results"][0]
        outputs = arrays.get(label)
        if outputs is None or len(outputs) != n:
            failures.append("%s: no array %s of %d outputs in %s" % (path, label, n, archive))
            continue
        counts = [0] * (len(rd.ULP_BOUNDS) + 1)
        special = signed_zero = correctly_rounded = 0
        for x, y in zip(exact, outputs):
            e = rd.ulp_error(x, y)
            if e["special"]:
                special += 1
            else:
                counts[e["bin"]] += 1
            signed_zero += e["signed_zero"]
            correctly_rounded += e["correctly_rounded"]
        matching = sorted(name for name, outs in model_outputs.items()
                          if all(same(bx.from_float(y), m) for y, m in zip(outputs, outs)))
        said = result["conformance"]
        # The models of the report this script knows: the built-in ones and
        # its own definitions of the tests' user models.
        known = [x["name"] for x in said["models"]
                 if x["name"] in table and (x["source"] == "builtin" or x["name"] in user_models(fmt))]
        matching = [m for m in matching if m in known]
        said_matching = sorted(m for m in said["matching"] if m in known)
        period = said.get("period")
        positions = {}
        for m in said["models"]:
            if m["name"] in known and period:
                mine = [0] * period
                for i, (y, want) in enumerate(zip(outputs, model_outputs[m["name"]])):
                    if not same(bx.from_float(y), want):
                        mine[i % period] += 1
                positions[m["name"]] = (mine, m["mismatches_by_position"])
        checks = [
            ("histogram", counts, result["histogram"]["counts"]),
            ("special mismatches", special, result["special_mismatch"]),
            ("signed-zero mismatches", signed_zero, result["signed_zero_mismatch"]),
            ("correctly rounded", correctly_rounded, result["correctly_rounded"]),
            ("matching models", matching, said_matching),
        ]
        for name, (mine, theirs) in sorted(positions.items()):
            checks.append(("mismatches by position mod %d against %s" % (period, name), mine, theirs))
        ok = True
        for what, mine, theirs in checks:
            if mine != theirs:
                failures.append("%s (%s): %s: recheck %s, report %s" % (label, dtype, what, mine, theirs))
                ok = False
        if ok:
            if table:
                print("%-24s %s: agrees (follows %s)" % (label, dtype, ", ".join(matching) or "none"))
            else:
                print("%-24s %s %s: histogram and counts agree (%d outputs)" % (label, op, dtype, n))
    for f in failures:
        print("recheck_check: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
