#!/usr/bin/env python3
"""Rechecks what `ulpgate drift --compare` says the recorded tanh_bwd ops of a framework's
run follow, sharing no code with ulpgate: the .npz files are read with zipfile and struct,
each model is evaluated in exact rational arithmetic (fractions) and rounded to binary32
or bf16 by hand, and the models every output follows are compared with the report's.

    recheck_drift_ops.py REPORT.json [--expect-cause LABEL_A LABEL_B OP CAUSE]

REPORT is a `drift --json` report with `compare[].ops` (curves recorded with
torch_drift.py --record-ops). Every binary32 mse_bwd entry's outputs are measured against
the exact 2 (y - target) / n: those more than 4 ULP away (no evaluation from the recorded
operands errs so much) must be among those the report counts above the op's bound. For every tanh_bwd entry in f32 or bf16, the models this
script knows (f32: mac_fused, mac_unfused, mulsub, mulsub_fused, mac_left_fused,
mac_left_unfused; bf16: each of them rounded once to bf16, `<m>_opmath`, and mac_per_op,
mulsub_per_op with every operation rounded to bf16) must be followed exactly where the
report says so. --expect-cause also checks the report's cause for one op between two
curves (and that the cause follows from the recomputed models where they settle it:
the same formula fused and unfused is `fusion`, a model in common is `none`).
Exit 1 on a disagreement.
"""
import argparse
import ast
import json
import os
import struct
import sys
import zipfile
from fractions import Fraction


def read_npz(path):
    """{name: [float]} of an .npz of float32 arrays (flattened, row-major), without NumPy."""
    out = {}
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            data = z.read(name)
            if data[:6] != b"\x93NUMPY":
                raise ValueError(f"{path}:{name}: not a .npy")
            major = data[6]
            if major == 1:
                (hlen,) = struct.unpack("<H", data[8:10])
                start = 10
            else:
                (hlen,) = struct.unpack("<I", data[8:12])
                start = 12
            header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
            if header["descr"] != "<f4" or header["fortran_order"]:  # any shape: row-major
                raise ValueError(f"{path}:{name}: expected little-endian float32, C order")
            body = data[start + hlen:]
            count = len(body) // 4
            out[name[:-4] if name.endswith(".npy") else name] = list(struct.unpack(f"<{count}f", body))
    return out


def round_to(x, precision, emin):
    """x (a Fraction) rounded to nearest, ties to even, to `precision` significant bits
    with exponents down to emin (subnormals below); no overflow in these data."""
    if x == 0:
        return Fraction(0)
    sign = -1 if x < 0 else 1
    a = abs(x)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, emin)
    scale = Fraction(2) ** (precision - 1 - e)
    n = a * scale
    q, r = divmod(n.numerator, n.denominator)
    twice = 2 * r
    if twice > n.denominator or (twice == n.denominator and q % 2 == 1):
        q += 1
    return sign * Fraction(q) / scale


def f32(x):
    return round_to(x, 24, -126)


def bf16(x):
    return round_to(x, 8, -126)


def f32_models(g, t, rnd=f32):
    """The binary32 models of tanh_bwd, each operation rounded by `rnd` (FMA: once)."""
    one = Fraction(1)
    r = rnd(t * t)
    return {
        "mac_fused": rnd(g - g * r),
        "mac_unfused": rnd(g - rnd(g * r)),
        "mulsub": rnd(g * rnd(one - r)),
        "mulsub_fused": rnd(g * rnd(one - t * t)),
        "mac_left_fused": rnd(g - rnd(g * t) * t),
        "mac_left_unfused": rnd(g - rnd(rnd(g * t) * t)),
    }


def followed(grad, t, out, dtype):
    names = None
    for gv, tv, ov in zip(grad, t, out):
        g, tt, o = Fraction(gv), Fraction(tv), Fraction(ov)
        if dtype == "f32":
            models = f32_models(g, tt)
        else:
            models = {f"{k}_opmath": bf16(v) for k, v in f32_models(g, tt).items()}
            per_op = f32_models(g, tt, bf16)
            models["mac_per_op"] = per_op["mac_unfused"]
            models["mulsub_per_op"] = per_op["mulsub"]
        hit = {k for k, v in models.items() if v == o}
        names = hit if names is None else names & hit
        models_known = set(models)
    return names or set(), models_known


def ulp_error(x, exact, precision=24, emin=-126):
    """|x - exact| in ULPs of the format at exact (x, exact: Fractions)."""
    a = abs(exact)
    if a == 0:
        return 0 if x == 0 else float("inf")
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    ulp = Fraction(2) ** (max(e, emin) - precision + 1)
    return float(abs(x - exact) / ulp)


def mse_bwd_errors(arrays, calls):
    """Per output of mse_bwd, its error in binary32 ULPs against the exact 2 (y - target) / n,
    n the elements of one call."""
    y, target, dy = arrays["y"], arrays["target"], arrays["dy"]
    n = len(y) // calls
    return [ulp_error(Fraction(d), 2 * (Fraction(a) - Fraction(b)) / n) for a, b, d in zip(y, target, dy)]


def expected_cause(a, b):
    """The cause the recomputed models settle, or None where they do not."""
    if a & b:
        return "none"
    base = lambda m: m.replace("_opmath", "").replace("_fused", "").replace("_unfused", "")
    fused = lambda m: "fused" in m and "unfused" not in m
    for x in a:
        for y in b:
            if base(x) == base(y) and fused(x) != fused(y):
                return "fusion"
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("report")
    p.add_argument("--expect-cause", nargs=4, action="append", default=[],
                   metavar=("LABEL_A", "LABEL_B", "OP", "CAUSE"))
    args = p.parse_args()
    with open(args.report) as f:
        report = json.load(f)
    failures, recomputed = [], {}
    for curve in report.get("compare", []):
        for op in curve.get("ops", []):
            if op["op"] != "tanh_bwd" or op["dtype"] not in ("f32", "bf16"):
                continue
            arrays = read_npz(op["file"])
            names, known = followed(arrays["grad"], arrays["t"], arrays["out"], op["dtype"])
            said = set(op["matching"]) & known
            recomputed[(curve["label"], op["op"], op["layer"])] = names
            print(f"{curve['label']}: tanh_bwd (layer {op['layer']}, {op['dtype']}, "
                  f"{len(arrays['out'])} outputs): recomputed {sorted(names) or 'none'}; "
                  f"ulpgate {sorted(said) or 'none'}")
            if names != said:
                failures.append(f"{curve['label']}: tanh_bwd follows {sorted(names)} recomputed, "
                                f"{sorted(said)} in the report")
    for curve in report.get("compare", []):
        for op in curve.get("ops", []):
            if op["op"] != "mse_bwd" or op["dtype"] != "f32":
                continue
            errors = mse_bwd_errors(read_npz(op["file"]), op["calls"])
            worst = max(errors)
            far = sum(1 for e in errors if e > 4)
            print(f"{curve['label']}: mse_bwd (f32, {len(errors)} outputs): largest error "
                  f"{worst:.3g} ULP against 2 (y - target) / n; {far} more than 4 ULP away; "
                  f"ulpgate: {op['above_bound']} above its bound")
            # Three roundings (a difference, a product, a quotient or its reciprocal) stay
            # within 4 ULP; ulpgate's bound is tighter, so it may flag outputs this does not,
            # never the other way round.
            if far > op["above_bound"]:
                failures.append(f"{curve['label']}: mse_bwd has {far} outputs more than 4 ULP "
                                f"from exact, ulpgate {op['above_bound']} above its bound")
    if not recomputed:
        failures.append("no recorded tanh_bwd op in the report")
    for la, lb, opname, cause in args.expect_cause:
        found = None
        for pair in report.get("op_models", []):
            if pair["curves"] != [la, lb]:
                continue
            for o in pair["ops"]:
                if o["op"] == opname:
                    found = o
        if found is None:
            failures.append(f"no {opname} between {la} and {lb} in op_models")
            continue
        print(f"{opname} between {la} and {lb}: cause {found['cause']} ({found['evidence']})")
        if found["cause"] != cause:
            failures.append(f"{opname} between {la} and {lb}: cause {found['cause']}, expected {cause}")
        keys = [(la, opname, found["layer"]), (lb, opname, found["layer"])]
        if opname == "tanh_bwd" and all(k in recomputed for k in keys):
            settled = expected_cause(recomputed[keys[0]], recomputed[keys[1]])
            if settled is not None and settled != found["cause"]:
                failures.append(f"{opname}: the recomputed models give {settled}, the report "
                                f"{found['cause']}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
