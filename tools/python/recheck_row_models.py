#!/usr/bin/env python3
"""Recheck `ulpgate compare --json` reports whose row-reduction cause rests on row models.

Where the row statistics set free cannot part two sides of rmsnorm_fwd, softmax_fwd or
log_softmax_fwd (each side's exps of its own absorb any summation order), `compare` fits
each side to models whose parts are data (suites/engine/reductions/row_model_fit.h): the
term function (exp(z), written out in the model language by the user; RMSNorm's terms are
RN(x^2)), a named order of the row's terms (sum_orders.h), an epilogue, and the function of
the row's statistic (log S, rsqrt v), correctly rounded or set free per row within 4 ULPs.
The report names each side's parts (result.cause.row_models) and, per row, the statistic
and that function's value. This script shares no code with ulpgate: it evaluates the term
functions with tools/python/model_language.py (exact rationals), sums them again in the
named orders (each addition exact, then rounded to binary32), writes the epilogues again,
and checks

  - that each side's statistic is its order's sum of its terms (RMSNorm: RN(S/n)) on every
    row, bit for bit, and its function's value lies within 4 ULPs of the correctly rounded
    log S or 1/sqrt(v) (mpmath at 200 bits);
  - that with them each side's epilogue gives every one of its outputs bit for bit;
  - that the parts the cause does not name are the same on both sides, and that each part
    it names is needed: the side with the other side's part in its place (the other's
    order, term function or epilogue; the function of the statistic as the side's own:
    correctly rounded where all its rows are, else any value within 4 ULPs) gives some
    row otherwise, on each side.

    python3 tools/python/recheck_row_models.py REPORT.json [REPORT.json ...]

Exit 0 when everything agrees, 1 on a disagreement, 2 on unreadable input. Needs mpmath
(model_language.py's functions); no numpy.
"""

import argparse
import json
import os
import struct
import sys
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import binary32_exact as bx  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
EPS = bx.parse("0x1.0c6f7ap-20")  # kDefaultRmsNormEps
WINDOW = 4
CAUSE_WORDS = {"tree", "formula", "fusion", "function implementation", "rounding format"}


def R(v):
    return bx.round_binary32(v)


def add(a, b):
    return R(bx.add(a, b))


def ordered(v):
    b = struct.unpack("<I", struct.pack("<f", bx.to_float(v)))[0]
    return -(b & 0x7FFFFFFF) if b >> 31 else b & 0x7FFFFFFF


def from_ordered(k):
    b = (-k) | 0x80000000 if k < 0 else k
    return bx.from_bits(b)


def parse_order(name):
    """sum_orders.h's names: ('sequential',), ('pairwise',), ('binary64',) or
    ('acc', lanes, groups, halving)."""
    if name in ("sequential", "numpy_pairwise", "binary64_rounded_once"):
        return (name,)
    if not name.startswith("accumulators_"):
        raise ValueError(f"not an order: {name}")
    parts = name[len("accumulators_"):].split("_")
    lanes, groups = int(parts[0]), 1
    rest = parts[1:]
    if rest[:1] == ["groups"]:
        groups, rest = int(rest[1]), rest[2:]
    if rest not in (["in", "turn"], ["halving"]):
        raise ValueError(f"not an order: {name}")
    return ("acc", lanes, groups, rest == ["halving"])


def pairwise(a):
    """NumPy's pairwise_sum (numpy/_core/src/umath/loops_utils.h.src), blocks of 128."""
    n = len(a)
    if n < 8:
        r = bx.from_float(0.0)
        for t in a:
            r = add(r, t)
        return r
    if n <= 128:
        r = list(a[:8])
        i = 8
        while i < n - n % 8:
            for k in range(8):
                r[k] = add(r[k], a[i + k])
            i += 8
        res = add(add(add(r[0], r[1]), add(r[2], r[3])), add(add(r[4], r[5]), add(r[6], r[7])))
        for t in a[i:]:
            res = add(res, t)
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return add(pairwise(a[:n2]), pairwise(a[n2:]))


def sum_in_order(name, terms):
    order = parse_order(name)
    zero = bx.from_float(0.0)
    if order[0] == "sequential":
        s = zero
        for t in terms:
            s = add(s, t)
        return s
    if order[0] == "numpy_pairwise":
        return pairwise(terms)
    if order[0] == "binary64_rounded_once":
        total = 0.0
        for t in terms:
            total += bx.to_float(t)
        return R(bx.Value.num(Fraction(total)))
    _, lanes, groups, halving = order
    acc = [zero] * lanes
    span = lanes * groups
    for start in range(0, len(terms), span):
        group = [zero] * lanes
        for k in range(start, min(start + span, len(terms))):
            group[k % lanes] = add(group[k % lanes], terms[k])
        for j in range(lanes):
            acc[j] = add(acc[j], group[j])
    if halving:
        w = lanes // 2
        while w >= 1:
            for j in range(w):
                acc[j] = add(acc[j], acc[j + w])
            w //= 2
        return acc[0]
    s = acc[0]
    for j in range(1, lanes):
        s = add(s, acc[j])
    return s


def correctly_rounded(function, v):
    import model_language as ml
    if function == "log":
        return ml.nearest("log", v)
    # 1/sqrt(v): sqrt by mpmath at 200 bits, then the quotient, rounded once.
    import mpmath
    with mpmath.workprec(200):
        q = v.q
        y = 1 / mpmath.sqrt(mpmath.mpf(q.numerator) / q.denominator)
        sign, man, exp, _ = y._mpf_
        exact = Fraction(int(man)) * (Fraction(2) ** exp if exp >= 0 else Fraction(1, 2 ** -exp))
    return R(bx.Value.num(exact))


class Problem:
    def __init__(self, result):
        from recheck_row_statistics import load_npz  # the .npz reader, standard library only
        source = result["inputs"]
        path = source[len("file:"):] if source.startswith("file:") else source
        if not os.path.isabs(path):
            path = os.path.join(ROOT, path)
        arrays = load_npz(path)
        self.op = result["op"]
        if result["dtype"] != "f32" or self.op not in ("rmsnorm_fwd", "softmax_fwd", "log_softmax_fwd"):
            raise ValueError(f"row models are rmsnorm_fwd, softmax_fwd, log_softmax_fwd in f32, not {self.op}")
        self.rows, self.n = (int(t) for t in result["shape"].split(","))
        x = arrays["x"]
        self.x = [[bx.from_float(v) for v in x[r * self.n:(r + 1) * self.n]] for r in range(self.rows)]
        self.g = [bx.from_float(v) for v in arrays["g"]] if self.op == "rmsnorm_fwd" else None
        self.z = []
        for row in self.x:
            top = max(row, key=lambda v: v.q)
            self.z.append([R(bx.sub(v, top)) for v in row])
        self.outputs = {side: [int(b, 16) if isinstance(b, str) else int(b) for b in result["values"][side]]
                        for side in ("a", "b")}
        self._terms = {}

    def terms(self, program):
        """Per row, the terms: RN(x^2), or the program's exp(z)."""
        if program in self._terms:
            return self._terms[program]
        if self.op == "rmsnorm_fwd":
            out = [[R(bx.mul(v, v)) for v in row] for row in self.x]
        else:
            if not program:
                raise ValueError("a side's exp is ulpgate's own (no program): not rechecked here")
            import model_language as ml
            p = ml.parse(program)
            if p.calls:
                raise ValueError("a term function's program calls a free function")
            cache, out = {}, []
            for row in self.z:
                values = []
                for z in row:
                    key = bx.bits(z)
                    if key not in cache:
                        cache[key] = p.evaluate({"z": z}, bx.F32, [])[0]
                    values.append(cache[key])
                out.append(values)
        self._terms[program] = out
        return out

    def statistic(self, program, order, r):
        s = sum_in_order(order, self.terms(program)[r])
        if self.op == "rmsnorm_fwd":
            s = R(bx.Value.num(s.q / self.n))
        return s

    def takes_function(self, epilogue):
        form = epilogue.rsplit("_", 1)[0]
        return self.op == "log_softmax_fwd" or (self.op == "rmsnorm_fwd" and form in ("rsqrt", "rsqrt_function"))

    def function_argument(self, s):
        return s if self.op == "log_softmax_fwd" else R(bx.add(s, EPS))

    def gives(self, epilogue, program, r, s, g, want):
        """Whether the epilogue, term function, statistic s and function value g give the
        row's outputs `want` (encodings) bit for bit."""
        form = epilogue.rsplit("_", 1)[0]
        n = self.n
        if self.op == "softmax_fwd":
            e = self.terms(program)[r]
            if form == "reciprocal":
                inverse = R(bx.Value.num(Fraction(1) / s.q))
                ys = (R(bx.mul(e[i], inverse)) for i in range(n))
            elif form == "divide":
                ys = (R(bx.Value.num(e[i].q / s.q)) for i in range(n))
            else:
                raise ValueError(epilogue)
        elif self.op == "log_softmax_fwd":
            if form != "plain":
                raise ValueError(epilogue)
            ys = (R(bx.sub(self.z[r][i], g)) for i in range(n))
        else:
            x = self.x[r]
            if form in ("rsqrt", "rsqrt_function"):
                ys = (R(bx.mul(R(bx.mul(x[i], g)), self.g[i])) for i in range(n))
            elif form == "sqrt_divide":
                from recheck_row_statistics import sqrt32
                root = sqrt32(R(bx.add(s, EPS)))
                ys = (R(bx.mul(R(bx.Value.num(x[i].q / root.q)), self.g[i])) for i in range(n))
            else:
                raise ValueError(epilogue)
        return all(bx.bits(y) == w for y, w in zip(ys, want))

    def row_follows(self, epilogue, program, order, r, want, pinned):
        """Whether some function value (the correctly rounded one where `pinned`, else any
        within WINDOW ULPs of it) lets the parts give the row."""
        s = self.statistic(program, order, r)
        if not self.takes_function(epilogue):
            return self.gives(epilogue, program, r, s, None, want)
        centre = correctly_rounded("log" if self.op == "log_softmax_fwd" else "rsqrt", self.function_argument(s))
        offsets = [0] if pinned else range(-WINDOW, WINDOW + 1)
        return any(self.gives(epilogue, program, r, s, from_ordered(ordered(centre) + d), want) for d in offsets)

    def follows(self, epilogue, program, order, side, pinned):
        n = self.n
        return all(self.row_follows(epilogue, program, order, r, self.outputs[side][r * n:(r + 1) * n], pinned)
                   for r in range(self.rows))


def check(path):
    with open(path) as f:
        result = json.load(f)["result"]
    cause = result["cause"]
    if cause.get("basis") != "row models":
        return [], 0
    p = Problem(result)
    models = cause["row_models"]
    failures = []
    pinned = {}
    for side in ("a", "b"):
        m = models[side]
        own = 0
        for entry in m["rows"]:
            r = entry["row"]
            want = p.outputs[side][r * p.n:(r + 1) * p.n]
            s = p.statistic(m["program"], m["order"], r)
            if bx.bits(s) != bx.bits(bx.parse(entry["statistic"]["value"])):
                failures.append(f"{path}: {side} row {r}: {m['order']} of its terms is {bx.to_float(s).hex()}, "
                                f"the report says {entry['statistic']['value']}")
                continue
            g = None
            if entry["statistic_function"] is not None:
                g = bx.parse(entry["statistic_function"]["value"])
                centre = correctly_rounded("log" if p.op == "log_softmax_fwd" else "rsqrt", p.function_argument(s))
                distance = abs(ordered(g) - ordered(centre))
                own += distance != 0
                if distance > WINDOW:
                    failures.append(f"{path}: {side} row {r}: the statistic's function {distance} ULPs from its "
                                    f"correctly rounded value")
            elif p.takes_function(m["epilogue"]):
                failures.append(f"{path}: {side} row {r}: {m['epilogue']} takes a function of the statistic, none given")
                continue
            if not p.gives(m["epilogue"], m["program"], r, s, g, want):
                failures.append(f"{path}: {side} row {r}: its model does not give its outputs")
        pinned[side] = own == 0
    words = set(cause["cause"].split(" + "))
    if not words <= CAUSE_WORDS:
        failures.append(f"{path}: cause words {sorted(words - CAUSE_WORDS)}")
    a, b = models["a"], models["b"]
    parts = {
        "order": (a["order"] != b["order"], {"tree", "rounding format"}),
        "epilogue": (a["epilogue"] != b["epilogue"], {"formula", "fusion"}),
        "function": (a["program"] != b["program"], {"function implementation"}),
    }
    for part, (differs, named) in parts.items():
        if differs != bool(words & named):
            failures.append(f"{path}: the sides' {part}s {'differ' if differs else 'agree'} but the cause is "
                            f"{cause['cause']}")
    # Each part that differs is needed: with the other side's in its place a side misses.
    for part, (differs, _) in parts.items():
        if not differs:
            continue
        for side, other in (("a", "b"), ("b", "a")):
            m, o = models[side], models[other]
            swapped = dict(m, **{{"order": "order", "epilogue": "epilogue", "function": "program"}[part]:
                                 o[{"order": "order", "epilogue": "epilogue", "function": "program"}[part]]})
            if p.follows(swapped["epilogue"], swapped["program"], swapped["order"], side, pinned[side]):
                failures.append(f"{path}: {side}'s outputs follow its model with {other}'s {part} too: "
                                f"the {part} is not shown to part them")
    return failures, p.rows


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
    print(f"row models: {rows} rows of {len(args.reports)} reports rechecked, {len(failures)} disagreements")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
