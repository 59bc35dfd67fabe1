#!/usr/bin/env python3
"""Rechecks an `ulpgate run --kernel tanh_bwd --inputs FILE --json REPORT` independently.

For every input it computes, in exact rational arithmetic (binary32_exact.py, no
MPFR): the op's exact value grad*(1 - t^2), the four models (mac_fused,
mac_unfused, mulsub, mulsub_fused) rounded one operation at a time, and their
ULP errors. For every result in the report it then checks that the reported
model is the one docs/design.md expects for the target (fused on AVX2/AVX3/AVX3_DL),
with zero mismatches, and that the histogram counts, special and signed-zero
mismatch counts, correctly rounded count and max_ulp (to 1e-6 relative) equal
those of that model's outputs.

Usage: recheck_run.py INPUTS REPORT          exit 0 when everything agrees
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import binary32_exact as b  # noqa: E402

FUSED_TARGETS = {"AVX2", "AVX3", "AVX3_DL"}
EXPECTED = {  # variant -> (model on fused targets, model elsewhere)
    "mac": ("mac_fused", "mac_unfused"),
    "mac_unfused": ("mac_unfused", "mac_unfused"),
    "mulsub": ("mulsub", "mulsub"),
    "mulsub_fma": ("mulsub_fused", "mulsub"),
}
R = b.round_binary32


def models(g, t):
    one = b.from_float(1.0)
    r = R(b.mul(t, t))
    return {
        "mac_fused": R(b.fma(b.neg(g), r, g)),
        "mac_unfused": R(b.sub(g, R(b.mul(g, r)))),
        "mulsub": R(b.mul(g, R(b.sub(one, r)))),
        "mulsub_fused": R(b.mul(g, R(b.fma(b.neg(t), t, one)))),
    }


def exact_value(g, t):
    return b.mul(g, b.sub(b.from_float(1.0), b.mul(t, t)))


def read_inputs(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].replace(",", " ").split()
            if line:
                rows.append((b.parse(line[0]), b.parse(line[1])))
    return rows


def statistics(errors):
    counts = [0] * (len(b.histogram_bounds()) + 1)
    special = signed_zero = correct = 0
    max_e = None
    for e, cr, szm in errors:
        correct += cr
        signed_zero += szm
        if e is None:
            special += 1
            continue
        counts[b.histogram_bin(e)] += 1
        max_e = e if max_e is None or e > max_e else max_e
    return counts, special, signed_zero, correct, max_e


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", help="the input file given to `ulpgate run --inputs`")
    parser.add_argument("report", help="the JSON report of that run (--json)")
    args = parser.parse_args(argv)
    try:
        inputs = read_inputs(args.inputs)
        with open(args.report) as f:
            report = json.load(f)
    except (OSError, ValueError) as error:
        print("recheck_run: %s" % error, file=sys.stderr)
        return 2
    per_model = {m: [] for m in ("mac_fused", "mac_unfused", "mulsub", "mulsub_fused")}
    for g, t in inputs:
        x = exact_value(g, t)
        for name, y in models(g, t).items():
            per_model[name].append(b.ulp_error(x, y))
    stats = {m: statistics(errs) for m, errs in per_model.items()}
    failures = 0
    targets = set()
    for r in report["results"]:
        where = "%s on %s" % (r["variant"], r["target"])
        targets.add(r["target"])
        fused, unfused = EXPECTED[r["variant"]]
        expected = fused if r["target"] in FUSED_TARGETS else unfused
        counts, special, signed_zero, correct, max_e = stats[expected]
        checks = [
            ("n", r["n"], len(inputs)),
            ("conformance.expected", r["conformance"]["expected"], expected),
            ("conformance.model", r["conformance"]["model"], expected),
            ("conformance.mismatches", r["conformance"]["mismatches"], 0),
            ("histogram.counts", r["histogram"]["counts"], counts),
            ("histogram.bounds", r["histogram"]["bounds"],
             [float(x) for x in b.histogram_bounds()]),
            ("special_mismatch", r["special_mismatch"], special),
            ("signed_zero_mismatch", r["signed_zero_mismatch"], signed_zero),
            ("correctly_rounded", r["correctly_rounded"], correct),
        ]
        for name, got, want in checks:
            if got != want:
                failures += 1
                print("MISMATCH %s: %s = %s, recomputed %s" % (where, name, got, want))
        want_max = float(max_e) if max_e is not None else 0.0
        if abs(r["max_ulp"] - want_max) > 1e-6 * max(abs(want_max), 1e-300):
            failures += 1
            print("MISMATCH %s: max_ulp = %r, recomputed %r" % (where, r["max_ulp"], want_max))
    print("recheck_run: %d inputs, %d results over targets %s: %s" % (
        len(inputs), len(report["results"]), ",".join(sorted(targets)),
        "all agree" if failures == 0 else "%d disagreements" % failures))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
