#!/usr/bin/env python3
"""Recheck the row-statistics evidence of `ulpgate compare --json` reports on row reductions.

Where a side follows none of ulpgate's schedules, `compare` names a row reduction's cause
from its outputs: the values of the row's statistics (RMSNorm's mean of squares, softmax
backward's sum of dy y ...) with which an epilogue reproduces each side bit for bit
(suites/engine/reductions/row_statistics.h). The report lists, per row, the values it found
for each side (result.cause.row_statistics) and names the epilogues (model_a, model_b).
This script shares no code with ulpgate: it writes the epilogues again from their
definitions (docs/compare.md), in exact rationals rounded once per operation to binary32
and, for a `_per_op` epilogue, again to the 16-bit format (binary32_exact.py; square roots
through integer square roots), each output rounded to the report's format, reads the
inputs from the report's .npz, and checks

  - that with a's values model_a's epilogue gives every output of a's row, and b's with
    b's, bit for bit, on every row;
  - for each row the report calls apart (its statistic differs between the sides: "tree",
    or a narrower accumulator), with one statistic: that no value within WINDOW ULPs of
    either side's (values of the format for an epilogue rounded per op) reproduces both
    sides' rows (each value tried on both); with two: that a's values do not give b's row
    nor b's values a's;
  - for each row not apart, that b's values give a's row too (one value serves both);
  - where the cause is "rounding format" from one epilogue rounded per op on both sides,
    that some row's two values lie farther apart than two binary32 sums of its terms can
    (2 gamma_n sum |t|), less half the format's step per side (each rounded to the format)
    and, for log_softmax_fwd, a step per side for the log and the most exps within
    FUNCTION_WINDOW ULPs, rounded to the format, move the sum;
  - RMSNorm's `rsqrt_function` (per op: r = rsqrt(v) one operation, 1/sqrt(v) in
    binary32 rounded once to the format, where `rsqrt` rounds the root and the reciprocal
    each), as `rsqrt` otherwise;
  - for softmax_fwd, whose epilogue computes each element's exponential again: every
    element's Exp(RN(x - M)) is any binary32 within FUNCTION_WINDOW ULPs of exp (rounded to
    the format for an epilogue rounded per op), so that the recheck holds the division (e / S
    or e RN(1/S)) and the sum, not Highway's exp;
  - for log_softmax_fwd: Log(S) any binary32 within FUNCTION_WINDOW ULPs of log (rounded to
    the format per op), one value serving the whole row; its `statistic_in_format` form
    (ATen's 16-bit kernel) rounds the sum and that log to the format and computes each
    element in binary32, rounded once; a binary32 sum on the other side stands for the
    same row there when it rounds to this side's;
  - for log_softmax_bwd, whose exp(y) compare sets free per element, and softmax_fwd where
    compare shares its exp(RN(x - max)) between the sides (its detail says "one value
    shared by both sides"): that every element has one binary32 value within
    FUNCTION_WINDOW ULPs of that exponential with which a's epilogue and a's sum give a's
    output and b's b's (the two sides share one exp).

    python3 tools/python/recheck_row_statistics.py REPORT.json [REPORT.json ...]

Exit 0 when everything agrees, 1 on a disagreement, 2 on unreadable input. The standard
library only (the .npz read as a zip of .npy files).
"""

import argparse
import ast
import json
import math
import os
import struct
import sys
import zipfile
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import binary32_exact as bx  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EPS = float.fromhex("0x1.0c6f7ap-20")  # eps = 1e-6 as binary32 (kDefaultRmsNormEps)
WINDOW = 600
FUNCTION_WINDOW = 6  # compare's 4 ULPs around Highway's exp, and Highway's own error


def load_npz(path):
    """The float32 arrays of an .npz (little-endian, C order), flattened, as Python floats."""
    arrays = {}
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            data = z.read(name)
            if data[:6] != b"\x93NUMPY":
                continue
            major = data[6]
            size = struct.unpack("<H", data[8:10])[0] if major == 1 else struct.unpack("<I", data[8:12])[0]
            start = 10 if major == 1 else 12
            header = ast.literal_eval(data[start:start + size].decode("latin1"))
            if header["descr"] != "<f4" or header["fortran_order"]:
                continue
            body = data[start + size:]
            arrays[name[:-4] if name.endswith(".npy") else name] = list(
                struct.unpack(f"<{len(body) // 4}f", body))
    return arrays


def f32(x):
    return bx.from_float(x)


FMT = bx.F32      # the outputs' format (the report's dtype)
PER_OP = False    # whether every operation rounds to it too


def R(v):
    """One operation's rounding: to binary32, then, per op, again to the format (as NumPy's
    float16 and ml_dtypes' bfloat16 compute)."""
    r = bx.round_binary32(v)
    return bx.round_to(r, FMT) if PER_OP else r


def out_bits(v):
    """The output's encoding in the format: the binary32 result rounded to it."""
    r = bx.round_to(bx.round_binary32(v), FMT)
    if FMT is bx.F32:
        return bx.bits(r)
    if FMT is bx.BF16:
        return bx.bits(r) >> 16
    return struct.unpack("<H", struct.pack("<e", bx.to_float(r)))[0]


def sqrt32(v):
    """Correctly rounded binary32 square root of a non-negative binary32 value."""
    q = v.q
    if q == 0:
        return v
    k = 120  # sqrt(q) to 2^-120 relative: a binary32 square root is never a midpoint
    scaled = q * Fraction(2) ** (2 * k)
    root = math.isqrt(scaled.numerator // scaled.denominator)
    return bx.round_binary32(bx.Value.num(Fraction(root, 2 ** k) + Fraction(1, 2 ** (k + 1))))


def sqrt(v):
    """One operation: the square root, rounded as every operation is (R)."""
    return R(sqrt32(v))


def muladd(a, b, c, fused):
    return R(bx.fma(a, b, c)) if fused else R(bx.add(R(bx.mul(a, b)), c))


def configure(fmt, per_op):
    global FMT, PER_OP
    FMT, PER_OP = fmt, per_op


def epilogue(op, form, fused, s, row):
    """The outputs of one row (a generator, for an early stop) from statistics s."""
    if op in ("rmsnorm_fwd", "rmsnorm_bwd"):
        v = R(bx.add(s[0], f32(EPS)))
        root = sqrt(v)
        if form == "rsqrt":
            scale = R(bx.Value.num(Fraction(1) / root.q))
        elif form == "sqrt_divide":
            scale = root
        elif form == "rsqrt_function":
            # rsqrt(v) one operation: 1/sqrt(v) in binary32 (the root and the quotient each
            # rounded to binary32 only), then R: per op, one rounding to the format.
            scale = R(bx.Value.num(Fraction(1) / sqrt32(v).q))
        else:
            raise ValueError(form)
        form = "rsqrt" if form == "rsqrt_function" else form
        x, g = row["x"], row["g"]
        if op == "rmsnorm_fwd":
            for i in range(len(x)):
                t = R(bx.mul(x[i], scale)) if form == "rsqrt" else R(bx.Value.num(x[i].q / scale.q))
                yield R(bx.mul(t, g[i]))
            return
        cube = R(bx.mul(R(bx.mul(scale, scale)), scale))
        k = R(bx.mul(cube, s[1])) if form == "rsqrt" else R(bx.Value.num(s[1].q / cube.q))
        neg_k = bx.neg(k)
        dy = row["dy"]
        for i in range(len(x)):
            gdy = R(bx.mul(g[i], dy[i]))
            first = R(bx.mul(gdy, scale)) if form == "rsqrt" else R(bx.Value.num(gdy.q / scale.q))
            yield muladd(neg_k, x[i], first, fused)
        return
    if op == "softmax_bwd":
        dy, y = row["dy"], row["y"]
        for i in range(len(y)):
            if form == "plain":
                yield R(bx.mul(y[i], R(bx.sub(dy[i], s[0]))))
            elif form == "product_difference":
                yield muladd(bx.neg(y[i]), s[0], R(bx.mul(dy[i], y[i])), fused)
            else:
                raise ValueError(form)
        return
    if op == "softmax_fwd":
        # y = e / S or e RN(1/S), e = Exp(RN(x - M)): row["e"] holds, per element, the
        # values its exponential may take (exponentials_of); an element is given when one
        # of them gives it. Yields None where none does.
        inverse = R(bx.Value.num(Fraction(1) / s[0].q)) if form == "reciprocal" else None
        for i, choices in enumerate(row["e"]):
            wanted, got = row["want"][i], None
            for e in choices:
                y = R(bx.mul(e, inverse)) if form == "reciprocal" else R(bx.Value.num(e.q / s[0].q))
                if form not in ("divide", "reciprocal"):
                    raise ValueError(form)
                if got is None:
                    got = y
                if out_bits(y) == wanted:
                    got = y
                    break
            yield got
        return
    if op == "log_softmax_fwd":
        # y = RN(RN(x - M) - L), L = Log(S) given in row["log"] (one value for the row).
        if form != "plain":
            raise ValueError(form)
        x = row["x"]
        top = max(x, key=lambda v: v.q)
        for i in range(len(x)):
            yield R(bx.sub(R(bx.sub(x[i], top)), row["log"]))
        return
    if op == "log_softmax_bwd":
        # The exponentials come in row["e"]: the values shared by both sides.
        dy, e = row["dy"], row["e"]
        for i in range(len(dy)):
            if form == "plain":
                yield R(bx.sub(dy[i], R(bx.mul(e[i], s[0]))))
            elif form == "contracted":
                yield R(bx.fma(bx.neg(e[i]), s[0], dy[i]))
            else:
                raise ValueError(form)
        return
    raise ValueError(f"no epilogue written here for {op}")


def shared_exponentials(op, ea, eb, ga, gb, row, expect, fmt):
    """For every element, some binary32 e within FUNCTION_WINDOW ULPs of the element's
    exponential (math.exp rounded to binary32: of y for log_softmax_bwd, of RN(x - max)
    for softmax_fwd) with which ea gives a's output and eb b's."""
    softmax = op == "softmax_fwd"
    top = max(row["x"], key=lambda v: v.q) if softmax else None
    for i in range(len(row["x"] if softmax else row["dy"])):
        argument = R(bx.sub(row["x"][i], top)) if softmax else row["y"][i]
        centre = bx.round_binary32(bx.Value.num(Fraction(math.exp(bx.to_float(argument)))))
        one = {"x": [row["x"][i]]} if softmax else {"dy": [row["dy"][i]], "y": [row["y"][i]]}
        ok = False
        for d in range(-FUNCTION_WINDOW, FUNCTION_WINDOW + 1):
            # softmax_fwd's epilogue takes per element a list of the values to try.
            one["e"] = [[neighbour(centre, d)]] if softmax else [neighbour(centre, d)]
            if (reproduces(op, ea, [ga], one, [expect["a"][i]], fmt)
                    and reproduces(op, eb, [gb], one, [expect["b"][i]], fmt)):
                ok = True
                break
        if not ok:
            return i
    return None


EXPONENTIALS = {}


def exponentials_of(x, per_op):
    """softmax_fwd: per element of the row x, the values Exp(RN(x_i - M)) may take: every
    binary32 within FUNCTION_WINDOW ULPs of exp (math.exp of the rounded difference, itself
    rounded to binary32), rounded again to the format per op (NumPy's float16 and
    ml_dtypes' bfloat16 exp: binary32, then the format). Per op that is one value but
    where exp lies near a rounding boundary of the format."""
    top = max(x, key=lambda v: v.q)
    out = []
    for v in x:
        z = R(bx.sub(v, top))
        centre = bx.round_binary32(bx.Value.num(Fraction(math.exp(bx.to_float(z)))))
        values = {}
        for d in range(-FUNCTION_WINDOW, FUNCTION_WINDOW + 1):
            e = neighbour(centre, d)
            e = bx.round_to(e, FMT) if PER_OP else e
            values[bx.bits(e)] = e
        out.append(list(values.values()))
    return out


def reproduces(op, epilogue_name, s, row, expect, fmt):
    form, fused, per_op = split(epilogue_name)
    configure(fmt, per_op)
    if op == "log_softmax_fwd":
        # Log(S): any binary32 within FUNCTION_WINDOW ULPs of log (math.log rounded to
        # binary32), rounded again to the format per op; one of them must give the row.
        # `statistic_in_format`: the sum kept in the format (a binary32 sum rounded to it)
        # and its log rounded to the format, each element's own steps in binary32.
        in_format = form == "statistic_in_format"
        if in_format:
            s = [bx.round_to(s[0], FMT)]
            form = "plain"
        centre = bx.round_binary32(bx.Value.num(Fraction(math.log(bx.to_float(s[0])))))
        logs = {}
        for d in range(-FUNCTION_WINDOW, FUNCTION_WINDOW + 1):
            v = neighbour(centre, d)
            v = bx.round_to(v, FMT) if PER_OP or in_format else v
            logs[bx.bits(v)] = v
        for v in logs.values():
            if all(out_bits(got) == want
                   for got, want in zip(epilogue(op, form, fused, s, dict(row, log=v)), expect)):
                return True
        return False
    if op == "softmax_fwd" and "e" not in row:
        # The exponentials depend on the row and the rounding alone: computed once.
        key = (tuple(bx.bits(v) for v in row["x"]), per_op, FMT.name)
        if key not in EXPONENTIALS:
            EXPONENTIALS[key] = exponentials_of(row["x"], per_op)
        row = dict(row, e=EXPONENTIALS[key], want=expect)
    elif op == "softmax_fwd":
        row = dict(row, want=expect)  # the shared values given
    for got, want in zip(epilogue(op, form, fused, s, row), expect):
        if got is None or out_bits(got) != want:
            return False
    return True


def split(name):
    """'rsqrt_unfused' -> ('rsqrt', False, False); 'sqrt_divide_fused_per_op' -> (.., True, True)."""
    per_op = name.endswith("_per_op")
    if per_op:
        name = name[:-len("_per_op")]
    form, _, fusion = name.rpartition("_")
    return form, fusion == "fused", per_op


def neighbour(v, d):
    b = struct.unpack("<I", struct.pack("<f", bx.to_float(v)))[0]
    k = -(b & 0x7FFFFFFF) if b >> 31 else b & 0x7FFFFFFF
    k += d
    b = (-k) | 0x80000000 if k < 0 else k
    return bx.from_bits(b)


def ordered(v):
    b = struct.unpack("<I", struct.pack("<f", bx.to_float(v)))[0]
    return -(b & 0x7FFFFFFF) if b >> 31 else b & 0x7FFFFFFF


def beyond_a_binary32_sum(op, row, va, vb, fmt, n):
    """Whether two per-op values of a row's statistic lie farther apart than two binary32 sums
    of its terms rounded to the format can: the distance, in binary32 values, less half the
    format's step per side, against 2 gamma_n sum |t| in ULPs of the first value (+2, as
    compare takes it); for log_softmax_fwd less, per side, one step more (a log within
    FUNCTION_WINDOW ULPs) and the most exps within FUNCTION_WINDOW ULPs, rounded to the
    format, move the sum."""
    step = 1 << (24 - fmt.p)
    u = Fraction(1, 2 ** 24)
    gamma = n * u / (1 - n * u)
    if op in ("rmsnorm_fwd", "rmsnorm_bwd"):
        total = sum(abs(v.q) ** 2 for v in row["x"]) / n
        slack = 0
    else:
        configure(fmt, True)
        top = max(row["x"], key=lambda v: v.q)
        total, moved = Fraction(0), Fraction(0)
        for v in row["x"]:
            z = R(bx.sub(v, top))
            centre = bx.round_binary32(bx.Value.num(Fraction(math.exp(bx.to_float(z)))))
            here = bx.round_to(centre, fmt).q
            total += abs(here)
            moved += max(abs(bx.round_to(neighbour(centre, d), fmt).q - here)
                         for d in range(-FUNCTION_WINDOW, FUNCTION_WINDOW + 1))
        slack = 0
        if op == "log_softmax_fwd":
            ulp = abs(bx.to_float(neighbour(va, 1)) - bx.to_float(va))
            slack = 2 * (step + math.ceil(moved / Fraction(ulp)))
    ulp = Fraction(abs(bx.to_float(neighbour(va, 1)) - bx.to_float(va)))
    bound = 2 * gamma * total / ulp
    return abs(ordered(va) - ordered(vb)) - step - slack > bound + 2


def check(report_path):
    with open(report_path) as f:
        result = json.load(f)["result"]
    cause = result["cause"]
    if cause.get("basis") != "row statistics set free":
        return [], 0
    source = result["inputs"]
    path = source[len("file:"):] if source.startswith("file:") else source
    if not os.path.isabs(path):
        path = os.path.join(ROOT, path)
    arrays = load_npz(path)
    rows_n, n = (int(t) for t in result["shape"].split(","))
    op = result["op"]
    names = {"rmsnorm_fwd": ["x", "g"], "rmsnorm_bwd": ["dy", "x", "g"],
             "softmax_bwd": ["dy", "y"], "log_softmax_bwd": ["dy", "y"], "softmax_fwd": ["x"],
             "log_softmax_fwd": ["x"]}[op]
    tensors = {k: arrays[k] for k in names}
    outputs = {side: [int(b, 16) if isinstance(b, str) else int(b) for b in result["values"][side]]
               for side in ("a", "b")}
    fmt = bx.FORMATS[result["dtype"]]
    names_of = {"a": cause["model_a"], "b": cause["model_b"]}
    shared = "one value shared by both sides" in (cause.get("detail") or "")
    failures, checked = [], 0
    # "rounding format" from one per-op form on both sides rests on a row whose values part
    # farther than binary32 sums can: find one.
    ea0, eb0 = split(names_of["a"]), split(names_of["b"])
    narrower = cause["cause"] == "rounding format" and ea0[0] == eb0[0] and ea0[2] and eb0[2]
    beyond_rows = 0
    for entry in cause["row_statistics"]:
        r = entry["row"]
        row = {k: [f32(v) for v in (t if k == "g" else t[r * n:(r + 1) * n])]
               for k, t in tensors.items()}
        values = {side: [bx.parse(v["value"]) for v in entry[side]] for side in ("a", "b")}
        expect = {side: outputs[side][r * n:(r + 1) * n] for side in ("a", "b")}
        if op == "log_softmax_bwd" or (op == "softmax_fwd" and shared):
            # The exponentials set free, shared: each element needs one value for both.
            ga, gb = values["a"][0], values["b"][0]
            bad = shared_exponentials(op, names_of["a"], names_of["b"], ga, gb, row, expect, fmt)
            if bad is not None:
                failures.append(f"{report_path}: row {r} element {bad}: no exponential near its exp "
                                f"gives both sides with the report's sums")
            if not entry["apart"] and bx.bits(ga) != bx.bits(gb):
                failures.append(f"{report_path}: row {r} not apart, but its sums differ")
            checked += 1
            continue
        for side in ("a", "b"):
            if not reproduces(op, names_of[side], values[side], row, expect[side], fmt):
                failures.append(f"{report_path}: row {r}: {names_of[side]} with {side}'s "
                                f"values does not give {side}'s outputs")
        checked += 1
        ea, eb = names_of["a"], names_of["b"]
        if narrower and entry["apart"] and beyond_a_binary32_sum(op, row, values["a"][0], values["b"][0], fmt, n):
            beyond_rows += 1
        if entry["apart"]:
            # Per op, the statistic is a value of the format: step over its values.
            in_format = [split(e)[2] or split(e)[0] == "statistic_in_format" for e in (ea, eb)]
            step = 1 << (24 - fmt.p) if any(in_format) else 1
            if len(values["a"]) == 1:
                for centre in (values["a"][0], values["b"][0]):
                    for d in range(-WINDOW, WINDOW + 1):
                        s = [neighbour(centre, d * step)]
                        if (reproduces(op, ea, s, row, expect["a"], fmt)
                                and reproduces(op, eb, s, row, expect["b"], fmt)):
                            failures.append(f"{report_path}: row {r} called apart, but "
                                            f"{bx.to_float(s[0]).hex()} gives both sides")
                            break
            elif (reproduces(op, eb, values["a"], row, expect["b"], fmt)
                  or reproduces(op, ea, values["b"], row, expect["a"], fmt)):
                failures.append(f"{report_path}: row {r} called apart, but one side's values give "
                                f"the other's row")
        elif not reproduces(op, ea, values["b"], row, expect["a"], fmt):
            failures.append(f"{report_path}: row {r} not apart, but b's values do not give a's row")
    if narrower and beyond_rows == 0:
        failures.append(f"{report_path}: rounding format, but no row's values part farther than two "
                        f"binary32 sums rounded to {result['dtype']} can")
    elif narrower:
        print(f"{report_path}: {beyond_rows} rows' values part farther than binary32 sums can")
    return failures, checked


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("reports", nargs="+")
    args = parser.parse_args()
    failures, rows = [], 0
    for path in args.reports:
        try:
            f, checked = check(path)
        except (OSError, KeyError, ValueError) as e:
            print(f"cannot recheck {path}: {e}")
            return 2
        failures += f
        rows += checked
    for line in failures:
        print("FAIL " + line)
    print(f"row statistics: {rows} rows of {len(args.reports)} reports rechecked, "
          f"{len(failures)} disagreements")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
