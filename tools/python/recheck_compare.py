#!/usr/bin/env python3
"""Recheck `ulpgate compare --json` reports with exact arithmetic.

Independent of the C++ harness: reads the report's inputs and both sides' outputs
(result.values: encodings of the format, one list per operand and per side), and
re-derives, with fractions.Fraction only:

  - the number of outputs whose encodings differ, the specials among them (a NaN or an
    infinity against another value) and the signed zeros (+0 against -0);
  - every differing output's distance in ULPs of the format at the larger of the two
    (|a - b| / 2^(max(floor(log2 max(|a|, |b|)), emin) - p + 1)), the largest and the
    histogram over the report's bins;
  - for tanh_bwd, whose models recheck_check.py writes out (binary32_exact.py: each
    operation exact, then one rounding): that each side's outputs equal every model the
    report says it follows, on every input and on the differing inputs, bit for bit, and
    that no model written there and left out of those sets is followed;
  - where the cause rests on two models of the model language (the report's
    cause.expression_a and _b: a user's, or the op's sequences with exp, erf and tanh
    free), that side a's outputs are model a's and b's model b's (model_language.py: exact
    rationals, the functions by mpmath, each free within cause.function_ulps binary32 ULPs)
    on up to 256 differing inputs and 128 others, evenly spaced (the differing ones only
    where the cause's basis is the differing inputs); and where both call functions, which
    of those differing inputs no one value of each function (at an argument both share)
    serves: the report's functions_apart_inputs among them (and its functions_compared
    where every differing input was rechecked).

    python3 tools/python/recheck_compare.py REPORT.json [REPORT.json ...]

A report without values (more than 2^20 outputs) is refused. Exit 0 when everything
agrees, 1 on a disagreement, 2 on unreadable input.
"""

import argparse
import json
import math
import os
import struct
import sys
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import binary32_exact as bx  # noqa: E402
from recheck_check import models as tanh_bwd_models, same  # noqa: E402
import model_language  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
STRUCTURAL = ("fusion", "rounding format", "formula")
# How many differing inputs (and others) the cause's models are rechecked on.
DIFFERING_SAMPLE = 256
OTHERS_SAMPLE = 128


def decode(fmt, bits):
    """An encoding of fmt -> exact Value (NaN payloads aside: every NaN is NaN)."""
    if fmt is bx.F32:
        return bx.from_bits(bits)
    if fmt is bx.BF16:
        return bx.from_bits(bits << 16)
    return bx.from_float(struct.unpack("<e", struct.pack("<H", bits))[0])


def apart(fmt, a, b):
    """ULPs of fmt between two values at the larger one; inf for a special against
    another value, 0 for two NaNs or two zeros."""
    if a.kind == "nan" or b.kind == "nan":
        return Fraction(0) if a.kind == b.kind else math.inf
    if a.kind == "inf" or b.kind == "inf":
        return Fraction(0) if (a.kind == b.kind and a.neg == b.neg) else math.inf
    if a.q == b.q:
        return Fraction(0)
    larger = max(abs(a.q), abs(b.q))
    e = max(bx.floor_log2(larger), fmt.emin)
    return abs(a.q - b.q) / Fraction(2) ** (e - fmt.p + 1)


def bin_bound(label):
    """The report's bin label ('<=4', '>65536', 'special') -> (kind, bound)."""
    if label == "special":
        return ("special", None)
    if label.startswith("<="):
        return ("le", Fraction(label[2:]))
    return ("gt", Fraction(label[1:]))


def recheck(path, report):
    failures = []
    r = report["result"]
    fmt = bx.FORMATS[r["dtype"]]
    values = r.get("values")
    if values is None:
        raise ValueError("%s: no values (more outputs than the report lists)" % path)
    a_bits, b_bits = values["a"], values["b"]
    operands = [k for k in values if k not in ("a", "b")]
    n = r["n"]
    if len(a_bits) != n or len(b_bits) != n or any(len(values[k]) != n for k in operands):
        raise ValueError("%s: values of other lengths than n = %d" % (path, n))
    a = [decode(fmt, x) for x in a_bits]
    b = [decode(fmt, x) for x in b_bits]
    differing = [i for i in range(n) if a_bits[i] != b_bits[i]]
    distances = [apart(fmt, a[i], b[i]) for i in differing]
    special = sum(1 for d in distances if d == math.inf)
    signed_zero = sum(1 for i in differing if a[i].is_zero() and b[i].is_zero())
    finite = [d for d in distances if d != math.inf]
    largest = max(finite) if finite else Fraction(0)
    bins = [bin_bound(x["bin"]) for x in r["apart_histogram"]]
    counts = [0] * len(bins)
    for d in distances:
        for k, (kind, bound) in enumerate(bins):
            if (kind == "special" and d == math.inf) or \
               (kind == "le" and d != math.inf and d <= bound) or \
               (kind == "gt" and d != math.inf and d > bound):
                counts[k] += 1
                break
    checks = [
        ("differing outputs", len(differing), r["differing"]),
        ("special differences", special, r["special"]),
        ("signed zeros", signed_zero, r["signed_zero"]),
        ("histogram of ULPs apart", counts, [x["count"] for x in r["apart_histogram"]]),
        ("largest distance (ULPs)", float(largest), float(r["max_apart_ulp"])),
    ]
    if r["op"] == "tanh_bwd":
        table = tanh_bwd_models(fmt)
        grad = [decode(fmt, x) for x in values[operands[0]]]
        t = [decode(fmt, x) for x in values[operands[1]]]
        for name, outputs in (("a", a), ("b", b)):
            side = r[name]
            follows_all, follows_differing = [], []
            for model, f in table.items():
                want = [f(grad[i], t[i]) for i in range(n)]
                if all(same(outputs[i], want[i]) for i in range(n)):
                    follows_all.append(model)
                if differing and all(same(outputs[i], want[i]) for i in differing):
                    follows_differing.append(model)
            known = set(table)
            checks.append(("%s: models on every input" % name, sorted(follows_all),
                           sorted(m for m in side["models_all_inputs"] if m in known)))
            checks.append(("%s: models on the differing inputs" % name, sorted(follows_differing),
                           sorted(m for m in side["models_differing_inputs"] if m in known)))
    cause = r["cause"]
    if cause.get("expression_a") and cause.get("expression_b"):
        checks += recheck_cause_models(fmt, r, values, operands, a, b, differing)
    if cause.get("basis") == "summation orders":
        checks += recheck_sum_orders(r, a, b)
    if cause.get("basis") == "bias after the product's rounding":
        checks += recheck_bias_rounding(r, fmt, a, b, differing)
    for what, mine, theirs in checks:
        if mine != theirs:
            failures.append("%s: %s: recheck %s, report %s" % (path, what, mine, theirs))
    return failures


def recheck_cause_models(fmt, r, values, operands, a, b, differing):
    """The checks of the models the cause names (see the module's docstring)."""
    cause = r["cause"]
    ulps = cause["function_ulps"]
    pa = model_language.parse(cause["expression_a"])
    pb = model_language.parse(cause["expression_b"])
    n = r["n"]
    inputs = [[decode(fmt, x) for x in values[k]] for k in operands]
    # Evenly spaced samples: every claim is rechecked exactly on them, the search over
    # the functions' values in exact rationals being slow in Python.
    def spaced(indices, most):
        return indices[:: max(1, -(-len(indices) // most))][:most]
    chosen = spaced(differing, DIFFERING_SAMPLE)
    in_differing = set(differing)
    others = [i for i in range(n) if i not in in_differing]
    sample = chosen + (spaced(others, OTHERS_SAMPLE) if cause["basis"].startswith("all inputs") else [])
    differing = chosen
    out = []
    choices = {}
    for name, program, outputs in (("a", pa, a), ("b", pb, b)):
        missed = []
        for i in sample:
            ops = {k: inputs[j][i] for j, k in enumerate(operands)}
            found = program.choices(ops, outputs[i], fmt, ulps)
            if i in differing:
                choices[(name, i)] = found
            if not found:
                missed.append(i)
        out.append(("side %s follows %s (%d inputs rechecked): inputs it does not" %
                    (name, cause["model_" + name], len(sample)), missed[:10], []))
    if any(w in cause["cause"] for w in STRUCTURAL) and pa.calls + pa.implemented > 0 and pb.calls + pb.implemented > 0:
        apart, compared = [], 0
        for i in differing:
            va, vb = choices[("a", i)], choices[("b", i)]
            if not va or not vb:
                continue
            if not any(f == g and x.kind == y.kind and x.q == y.q and x.neg == y.neg
                       for f, x, _ in va[0] for g, y, _ in vb[0]):
                continue
            compared += 1

            def agree(ca, cb):
                return all(not (f == g and same_value(x, y)) or same_value(u, v)
                           for f, x, u in ca for g, y, v in cb)
            if not any(agree(ca, cb) for ca in va for cb in vb):
                apart.append(i)
        chosen_set = set(chosen)
        out.append(("rechecked differing inputs no one value of each function serves", apart,
                    [i for i in cause["functions_apart_inputs"] if i in chosen_set]))
        named = cause["cause"].endswith("+ function implementation")
        out.append(("'+ function implementation' in the cause", bool(cause["functions_apart_inputs"]), named))
        if len(chosen) == len(in_differing):
            out.append(("differing inputs where both call a function at the same argument", compared,
                        cause["functions_compared"]))
    return out


def sum_in_order(order, terms):
    """A binary32 sum of terms (exact Values) in a named order (sum_orders.h's names),
    each addition exact and then rounded to binary32; binary64_rounded_once: the sum in
    Python floats (binary64), in turn, rounded once to binary32. Written once, in
    recheck_row_models.py, for both rechecks."""
    from recheck_row_models import sum_in_order as summed
    return summed(order, terms)


def recheck_sum_orders(r, a, b):
    """linear_bwd_bias, cause "tree" from summation orders: every output of a is the sum of
    its column of dy in model_a's order and every one of b's in model_b's, neither side's
    outputs are all the binary64 sum rounded once, and model_a's order does not give b."""
    from recheck_row_statistics import load_npz  # the .npz reader, standard library only
    if r["op"] != "linear_bwd_bias" or r["dtype"] != "f32":
        return [("summation orders: op", r["op"], "linear_bwd_bias in f32")]
    source = r["inputs"]
    path = source[len("file:"):] if source.startswith("file:") else source
    if not os.path.isabs(path):
        path = os.path.join(os.path.dirname(os.path.dirname(HERE)), path)
    dy = load_npz(path)["dy"]
    outs = len(a)
    batch = len(dy) // outs
    columns = [[bx.from_float(dy[k * outs + o]) for k in range(batch)] for o in range(outs)]
    cause = r["cause"]
    def gives(order, side):
        return all(same(sum_in_order(order, columns[o]), side[o]) for o in range(outs))
    return [
        ("a's outputs in order %s" % cause["model_a"], gives(cause["model_a"], a), True),
        ("b's outputs in order %s" % cause["model_b"], gives(cause["model_b"], b), True),
        ("%s gives b's outputs too" % cause["model_a"], gives(cause["model_a"], b), False),
        ("a's outputs the binary64 sum rounded once", gives("binary64_rounded_once", a), False),
        ("b's outputs the binary64 sum rounded once", gives("binary64_rounded_once", b), False),
    ]


def recheck_bias_rounding(r, fmt, a, b, differing):
    """linear_fwd in 16 bits, cause "rounding format" with basis "bias after the product's
    rounding": on up to DIFFERING_SAMPLE differing outputs and OTHERS_SAMPLE others, evenly
    spaced, with D the sequential binary32 sum of the products (each rounded to binary32
    before it is added, or exact inside a fused multiply-add: the model's name), the side
    that follows the model is RN16(RN32(D + bias)) and the other RN16(RN32(RN16(D) + bias))."""
    from recheck_row_statistics import load_npz  # the .npz reader, standard library only
    cause = r["cause"]
    plain = cause["model_a"] if not cause["model_a"].endswith("+rounded_product") else cause["model_b"]
    if r["op"] != "linear_fwd" or not plain.startswith(("sequential_", "lane_parallel_x1_")):
        return [("bias rounding: op and model", (r["op"], plain), "linear_fwd, a sequential model")]
    fused = plain.endswith("_fused")
    source = r["inputs"]
    path = source[len("file:"):] if source.startswith("file:") else source
    if not os.path.isabs(path):
        path = os.path.join(os.path.dirname(os.path.dirname(HERE)), path)
    arrays = load_npz(path)
    batch, inner, outs = (int(v) for v in r["shape"].split(","))
    x, w, bias = arrays["x"], arrays["w"], arrays["b"]
    def spaced(indices, most):
        return indices[:: max(1, -(-len(indices) // most))][:most]
    in_differing = set(differing)
    others = [i for i in range(len(a)) if i not in in_differing]
    chosen = spaced(differing, DIFFERING_SAMPLE) + spaced(others, OTHERS_SAMPLE)
    once_side, rounded_side = (a, b) if plain == cause["model_a"] else (b, a)
    bad_once = bad_rounded = 0
    for i in chosen:
        row, o = divmod(i, outs)
        acc = bx.from_float(0.0)
        for k in range(inner):
            p = bx.mul(bx.from_float(x[row * inner + k]), bx.from_float(w[o * inner + k]))
            acc = bx.round_binary32(bx.add(acc, p if fused else bx.round_binary32(p)))
        beta = bx.from_float(bias[o])
        once = bx.round_to(bx.round_binary32(bx.add(acc, beta)), fmt)
        rounded = bx.round_to(bx.round_binary32(bx.add(bx.round_to(acc, fmt), beta)), fmt)
        bad_once += not same(once, once_side[i])
        bad_rounded += not same(rounded, rounded_side[i])
    return [("outputs of %d checked unlike %s's sum and bias rounded once" % (len(chosen), plain), bad_once, 0),
            ("outputs of %d checked unlike RN16(RN16(D) + bias)" % len(chosen), bad_rounded, 0)]


def same_value(x, y):
    return x.kind == y.kind and x.q == y.q and x.neg == y.neg


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="recheck_compare.py", description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("reports", nargs="+", help="compare --json reports")
    args = parser.parse_args(argv)
    failures = []
    for path in args.reports:
        try:
            with open(path) as f:
                report = json.load(f)
            if report.get("format") != "ulpgate-compare-1":
                raise ValueError("%s: not a compare report (format %s)" % (path, report.get("format")))
            mine = recheck(path, report)
        except (OSError, ValueError, KeyError) as e:
            print("recheck_compare: %s" % e)
            return 2
        failures += mine
        if not mine:
            r = report["result"]
            print("%s: %s in %s, %d outputs, %d differ, cause %s: rechecked" %
                  (path, r["op"], r["dtype"], r["n"], r["differing"], r["cause"]["cause"]))
    for f in failures:
        print("MISMATCH " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
