#!/usr/bin/env python3
"""Rechecks an `ulpgate run --kernel tanh_bwd --inputs FILE --json REPORT` independently.

Runs of sigmoid_bwd (grad*s*(1 - s): inputs 'grad s') are rechecked the same way with
its models (torch, mul3, fms_fused, fms_unfused and their 16-bit forms) written here.
The ops that call exp, erf or tanh are rechecked from `run --dump` (recheck_dump.py).

For every input it computes, in exact rational arithmetic (binary32_exact.py, no
MPFR): the op's exact value grad*(1 - t^2), the four models (mac_fused,
mac_unfused, mulsub, mulsub_fused) rounded one operation at a time, and their
ULP errors. For every result in the report it then checks that the reported
model is the one docs/design.md expects for the target (fused on AVX2/AVX3/AVX3_DL),
with zero mismatches, and that the histogram counts, special and signed-zero
mismatch counts, correctly rounded count and max_ulp (to 1e-6 relative) equal
those of that model's outputs.

A report of `--dtype bf16` or `--dtype f16` is rechecked the same way with the
16-bit variants' models, written here from their definitions: <model>_opmath is
a binary32 model rounded once to the format; mac_per_op and mulsub_per_op round
every operation to the format; mulsub_opmath_truncating is the binary32 mulsub
rounded toward zero (bf16, Highway's DemoteTo); mulsub_opmath_hwy_soft is the
binary32 mulsub between Highway 1.0.3's software f16 conversions (SCALAR, SSSE3,
SSE4: inf and NaN read as numbers, demotion truncating, clamping exponents above
15 and flushing below 2^-24). Errors and histograms are in the format's ULPs.

Usage: recheck_run.py INPUTS REPORT          exit 0 when everything agrees
"""
import argparse
import json
import os
import sys
from fractions import Fraction

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
F16C_TARGETS = FUSED_TARGETS  # Highway 1.0.3 converts f16 with F16C where it has FMA
# 16-bit variant -> (binary32 variant whose sequence it runs, rounding)
NARROW = {
    "mac_opmath": ("mac", "opmath"),
    "mac_unfused_opmath": ("mac_unfused", "opmath"),
    "mulsub_opmath": ("mulsub", "opmath"),
    "mulsub_fma_opmath": ("mulsub_fma", "opmath"),
    "mac_per_op": ("mac_unfused", "per_op"),
    "mulsub_per_op": ("mulsub", "per_op"),
    "mulsub_opmath_hwy": ("mulsub", "hwy"),
}


def f16_bits_of(v):
    """The f16 bit pattern of an f16 Value (NaN: the quiet NaN ulpgate passes)."""
    sign = 0x8000 if v.neg else 0
    if v.kind == "nan":
        return 0x7E00 | sign
    if v.kind == "inf":
        return 0x7C00 | sign
    a = abs(v.q)
    if a == 0:
        return sign
    e = max(b.floor_log2(a), -14)
    m = a / Fraction(2) ** (e - 10)  # an integer < 2^11
    assert m.denominator == 1
    m = int(m)
    if m < 1024:
        return sign | m  # subnormal
    return sign | ((e + 15) << 10) | (m - 1024)


def hwy_soft_f16_to_f32(bits):
    """Highway 1.0.3's f16 promotion without F16C: every exponent but 0 is normal."""
    neg = bool(bits & 0x8000)
    e, m = (bits >> 10) & 0x1F, bits & 0x3FF
    q = Fraction(m, 1 << 24) if e == 0 else (1 + Fraction(m, 1024)) * Fraction(2) ** (e - 15)
    return b.Value.num(-q if neg else q, neg_zero=neg)


def hwy_soft_f32_to_f16(v):
    """Highway 1.0.3's f16 demotion without F16C, on the binary32 bits: truncation,
    exponents clamped to 15, |x| < 2^-24 to +0, inf and NaN as exponent 128."""
    x = b.bits(v)
    sign, e32, m32 = x >> 31, (x >> 23) & 0xFF, x & 0x7FFFFF
    e = min(e32 - 127, 15)
    if e < -24:
        return b.Value.num(0)
    if e < -14:
        shift = -14 - e
        m16, e16 = (1 << (10 - shift)) + (m32 >> (13 + shift)), 0
    else:
        m16, e16 = m32 >> 13, e + 15
    q = Fraction(m16, 1 << 24) if e16 == 0 else (1 + Fraction(m16, 1024)) * Fraction(2) ** (e16 - 15)
    return b.Value.num(-q if sign else q, neg_zero=bool(sign))


# sigmoid_bwd(grad, s) = grad * s * (1 - s): its variants' sequences, each in an
# arithmetic F that rounds every operation (binary32, or a 16-bit format per op).
SIGMOID_SEQUENCES = {
    "torch": lambda g, s, F: F(b.mul(F(b.mul(g, F(b.sub(ONE, s)))), s)),
    "mul3": lambda g, s, F: F(b.mul(F(b.mul(g, s)), F(b.sub(ONE, s)))),
    "fms_fused": lambda g, s, F: F(b.fma(b.neg(F(b.mul(g, s))), s, F(b.mul(g, s)))),
    "fms_unfused": lambda g, s, F: F(b.sub(F(b.mul(g, s)), F(b.mul(F(b.mul(g, s)), s)))),
}
SIGMOID_EXPECTED = {"torch": ("torch", "torch"), "mul3": ("mul3", "mul3"),
                    "fms": ("fms_fused", "fms_unfused")}
SIGMOID_NARROW = {"torch_opmath": ("torch", "opmath"), "fms_opmath": ("fms", "opmath"),
                  "torch_per_op": ("torch", "per_op"), "torch_opmath_hwy": ("torch", "hwy")}
# The ops of a run this script rechecks: (f32 models, variant -> (fused, unfused model),
# 16-bit variant -> (sequence, rounding), exact value). The ops that call exp, erf or
# tanh (silu_bwd, gelu_bwd, gelu_tanh_bwd) have models of Highway's functions operation
# by operation, not written here: their runs are rechecked from a --dump (recheck_dump.py).
ONE = b.from_float(1.0)


def sigmoid_models(g, s):
    return {name: f(g, s, R) for name, f in SIGMOID_SEQUENCES.items()}


def sigmoid_exact(g, s):
    return b.mul(b.mul(g, s), b.sub(ONE, s))


def narrow_models(g, t, fmt, op="tanh_bwd"):
    """Every 16-bit model of the op in fmt (bf16 or f16)."""
    if op == "sigmoid_bwd":
        F = lambda v: b.round_to(v, fmt)  # noqa: E731
        f32 = sigmoid_models(g, t)
        out = {name + "_opmath": F(y) for name, y in f32.items()}
        out["torch_per_op"] = SIGMOID_SEQUENCES["torch"](g, t, F)
        if fmt is b.BF16:
            out["torch_opmath_truncating"] = b.round_to(f32["torch"], fmt, toward_zero=True)
        else:
            gs, ss = hwy_soft_f16_to_f32(f16_bits_of(g)), hwy_soft_f16_to_f32(f16_bits_of(t))
            out["torch_opmath_hwy_soft"] = hwy_soft_f32_to_f16(sigmoid_models(gs, ss)["torch"])
        return out
    return tanh_narrow_models(g, t, fmt)


def tanh_narrow_models(g, t, fmt):
    """Every 16-bit model of tanh_bwd(g, t) in fmt (bf16 or f16)."""
    one = b.from_float(1.0)
    F = lambda v: b.round_to(v, fmt)  # noqa: E731
    out = {name + "_opmath": F(y) for name, y in models(g, t).items()}
    r = F(b.mul(t, t))
    out["mac_per_op"] = F(b.sub(g, F(b.mul(g, r))))
    out["mulsub_per_op"] = F(b.mul(g, F(b.sub(one, r))))
    if fmt is b.BF16:
        out["mulsub_opmath_truncating"] = b.round_to(models(g, t)["mulsub"], fmt, toward_zero=True)
    else:
        gs, ts = hwy_soft_f16_to_f32(f16_bits_of(g)), hwy_soft_f16_to_f32(f16_bits_of(t))
        out["mulsub_opmath_hwy_soft"] = hwy_soft_f32_to_f16(models(gs, ts)["mulsub"])
    return out


def expected_model(variant, target, dtype, op="tanh_bwd"):
    """The model the variant's kernel must follow on the target."""
    fused = target in FUSED_TARGETS
    expected = SIGMOID_EXPECTED if op == "sigmoid_bwd" else EXPECTED
    narrow = SIGMOID_NARROW if op == "sigmoid_bwd" else NARROW
    if dtype == "f32":
        return expected[variant][0 if fused else 1]
    sequence, rounding = narrow[variant]
    f32_model = expected[sequence][0 if fused else 1]
    if rounding == "opmath":
        return f32_model + "_opmath"
    if rounding == "per_op":
        return variant
    if dtype == "bf16":
        return f32_model + "_opmath_truncating"
    return f32_model + ("_opmath" if target in F16C_TARGETS else "_opmath_hwy_soft")


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


def statistics(errors, fmt=b.F32):
    counts = [0] * (len(b.histogram_bounds(fmt)) + 1)
    special = signed_zero = correct = 0
    max_e = None
    for e, cr, szm in errors:
        correct += cr
        signed_zero += szm
        if e is None:
            special += 1
            continue
        counts[b.histogram_bin(e, fmt)] += 1
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
    dtypes = {r.get("dtype", "f32") for r in report["results"]}
    if len(dtypes) != 1 or not dtypes <= set(b.FORMATS):
        print("recheck_run: expected one dtype of %s in the report, found %s" %
              (", ".join(b.FORMATS), ", ".join(sorted(dtypes))), file=sys.stderr)
        return 2
    dtype = dtypes.pop()
    fmt = b.FORMATS[dtype]
    ops = {r.get("op", report.get("op", "tanh_bwd")) for r in report["results"]}
    if len(ops) != 1 or not ops <= {"tanh_bwd", "sigmoid_bwd"}:
        print("recheck_run: rechecks runs of tanh_bwd and sigmoid_bwd, found %s; the ops that "
              "call exp, erf or tanh: run with --dump and recheck_dump.py" %
              ", ".join(sorted(ops)), file=sys.stderr)
        return 2
    op = ops.pop()
    per_model = {}
    for g, t in inputs:
        if op == "sigmoid_bwd":
            x = sigmoid_exact(g, t)
            outputs = sigmoid_models(g, t) if dtype == "f32" else narrow_models(g, t, fmt, op)
        else:
            x = exact_value(g, t)
            outputs = models(g, t) if dtype == "f32" else narrow_models(g, t, fmt)
        for name, y in outputs.items():
            per_model.setdefault(name, []).append(b.ulp_error(x, y, fmt))
    stats = {m: statistics(errs, fmt) for m, errs in per_model.items()}
    failures = 0
    targets = set()
    for r in report["results"]:
        where = "%s on %s" % (r["variant"], r["target"])
        targets.add(r["target"])
        expected = expected_model(r["variant"], r["target"], dtype, op)
        counts, special, signed_zero, correct, max_e = stats[expected]
        checks = [
            ("n", r["n"], len(inputs)),
            ("conformance.expected", r["conformance"]["expected"], expected),
            ("conformance.model", r["conformance"]["model"], expected),
            ("conformance.mismatches", r["conformance"]["mismatches"], 0),
            ("histogram.counts", r["histogram"]["counts"], counts),
            ("histogram.bounds", r["histogram"]["bounds"],
             [float(x) for x in b.histogram_bounds(fmt)]),
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
    print("recheck_run: %d inputs, %d %s results over targets %s: %s" % (
        len(inputs), len(report["results"]), dtype, ",".join(sorted(targets)),
        "all agree" if failures == 0 else "%d disagreements" % failures))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
