#!/usr/bin/env python3
"""Independent re-check of `ulpgate explain --json` for tanh_bwd.

Recomputes, with exact rational arithmetic (fractions.Fraction) and its own
binary32 round-to-nearest-even (subnormals, overflow), everything explain
reports for an input: every step's exact value on its rounded operands, the
rounded value, the ideal (no rounding anywhere) value, the local and
against-ideal errors in ULPs, each step's contribution to the final error, the
op's exact and correctly rounded value, the ULP error of the kernel's output,
which models the kernel's output matches, the expected model per target, and
the condition numbers. It shares no code with ulpgate: the variants' op
sequences below are restated from the table of docs/design.md "Models and conformance", not read from the C++.

Usage:
  recheck_explain.py FILE.json...            check explain reports
  recheck_explain.py --ulpgate BIN [--fresh N] [--seed S]
                                             run explain on N fresh inputs
                                             (all targets) and check each
Exit status 0 when everything agrees, 1 on any disagreement, 2 on usage errors.
"""

import argparse
import json
import math
import os
import random
import struct
import subprocess
import sys
import tempfile
import time
from fractions import Fraction

# binary32: precision 24, normal exponents -126..127.
PRECISION = 24
EMIN = -126
EMAX = 127
MAX_FINITE = Fraction((1 << 24) - 1) * Fraction(2) ** (EMAX - 23)

# docs/design.md "Models and conformance": each model as a straight-line program over the
# names grad, t, 1 and the steps' results. fnma(a, b, c) = c - a*b, one rounding.
MODELS = {
    "mac_fused": [("mul", "t", "t"), ("fnma", "grad", "#1", "grad")],
    "mac_unfused": [("mul", "t", "t"), ("mul", "grad", "#1"), ("sub", "grad", "#2")],
    "mulsub": [("mul", "t", "t"), ("sub", "1", "#1"), ("mul", "grad", "#2")],
    "mulsub_fused": [("fnma", "t", "t", "1"), ("mul", "grad", "#1")],
    # grad - grad*t*t as C and Python associate it, (grad*t)*t; no kernel runs these.
    "mac_left_fused": [("mul", "grad", "t"), ("fnma", "#1", "t", "grad")],
    "mac_left_unfused": [("mul", "grad", "t"), ("mul", "#1", "t"), ("sub", "grad", "#2")],
}
# Variant -> (model on a target whose NegMulAdd is one FMA, model elsewhere).
EXPECTED = {
    "mac": ("mac_fused", "mac_unfused"),
    "mac_unfused": ("mac_unfused", "mac_unfused"),
    "mulsub": ("mulsub", "mulsub"),
    "mulsub_fma": ("mulsub_fused", "mulsub"),
}


# ---- binary32 -----------------------------------------------------------------

def f32_from_bits(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def same_f32(a, b):
    """Bitwise equality, any NaN equal to any NaN."""
    if math.isnan(a) and math.isnan(b):
        return True
    return f32_bits(a) == f32_bits(b)


def floor_log2(a):
    """floor(log2 a) for a Fraction a > 0, exactly."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    return e


def ulp_exponent(x):
    if x == 0:
        return EMIN - PRECISION + 1
    e = min(floor_log2(abs(x)), EMAX)
    return max(e, EMIN) - PRECISION + 1


def round_binary32(x, zero_negative=False):
    """Round a Fraction to the nearest binary32 (ties to even) as a Python float.

    zero_negative gives the sign of an exactly-zero x (IEEE's rules for the
    operation that produced it); a nonzero x that rounds to zero keeps its sign.
    """
    if x == 0:
        return -0.0 if zero_negative else 0.0
    negative = x < 0
    a = -x if negative else x
    q = ulp_exponent(a)  # the spacing of binary32 numbers around a
    m = round(a / Fraction(2) ** q)  # Fraction.__round__ rounds half to even
    value = Fraction(m) * Fraction(2) ** q
    if value > MAX_FINITE:
        result = math.inf  # a >= MAX_FINITE + ulp/2 (the tie goes to the even inf)
    else:
        result = float(value)  # exact: a binary32 value fits in a double
    return -result if negative else result


def parse_exact(text):
    """An exact hex float ("0x1.8p-3", "-0x0p+0", "inf", "nan") -> Fraction or float."""
    if text in ("inf", "-inf", "nan"):
        return float(text)
    negative = text.startswith("-")
    body = text[1:] if negative else text
    assert body.startswith("0x"), text
    mantissa, exponent = body[2:].split("p")
    whole, _, fraction = mantissa.partition(".")
    digits = int(whole + fraction, 16)
    value = Fraction(digits) * Fraction(2) ** (int(exponent) - 4 * len(fraction))
    if value == 0:
        return -0.0 if negative else 0.0
    return -value if negative else value


# ---- values and operations ------------------------------------------------------
# A value is a Python float when it is a rounded binary32 value or special (it
# carries the zero sign), or a Fraction when it is an exact, unrounded result.

def finite(v):
    return isinstance(v, Fraction) or math.isfinite(v)


def exact_of(v):
    return v if isinstance(v, Fraction) else Fraction(v)


def negative_zero(v):
    return isinstance(v, float) and v == 0 and math.copysign(1.0, v) < 0


def sign_negative(v):
    if isinstance(v, Fraction):
        return v < 0
    return math.copysign(1.0, v) < 0


def proxy(v):
    """A float with v's sign and zero-ness, for operations involving inf or NaN,
    whose result depends on nothing else."""
    if isinstance(v, float):
        return v if not math.isfinite(v) or v == 0 else math.copysign(1.0, v)
    return 0.0 if v == 0 else (1.0 if v > 0 else -1.0)


def operate(kind, operands):
    """The operation without rounding: a nonzero Fraction, or a float for a zero
    (signed by IEEE 754's rules for the operation) or a special."""
    if not all(finite(v) for v in operands):
        p = [proxy(v) for v in operands]
        if kind == "mul":
            return p[0] * p[1]
        if kind == "sub":
            return p[0] - p[1]
        a, b, c = p  # fnma: c - a*b; a*b is exact, so its proxy's special-ness is right
        return c - a * b
    x = [exact_of(v) for v in operands]
    if kind == "mul":
        r = x[0] * x[1]
        negative = sign_negative(operands[0]) != sign_negative(operands[1])
    elif kind == "sub":
        r = x[0] - x[1]
        # a - b = a + (-b): an exact zero is -0 only for (-0) - (+0).
        negative = negative_zero(operands[0]) and not sign_negative(operands[1])
    else:
        a, b, c = operands
        r = x[2] - x[0] * x[1]
        # fma(-a, b, c): a zero sum is -0 only when -(a*b) and c are both -0.
        product_negative = sign_negative(a) == sign_negative(b)
        negative = x[0] * x[1] == 0 and product_negative and negative_zero(c)
    if r == 0:
        return -0.0 if negative else 0.0
    return r


def run_model(model, grad, t, rounded_steps):
    """Runs a model with steps 1..rounded_steps rounded and the rest exact.

    Returns [(exact, value)] per step and the output value."""
    env = {"grad": grad, "t": t, "1": 1.0}
    steps = []
    for i, (kind, *names) in enumerate(MODELS[model]):
        exact = operate(kind, [env[n] for n in names])
        if i < rounded_steps and isinstance(exact, Fraction):
            value = round_binary32(exact)
        else:
            value = exact  # kept exact, or a zero or special: already binary32
        steps.append((exact, value))
        env["#%d" % (i + 1)] = value
    return steps, steps[-1][1]


def ulp_difference(frm, to, unit_of):
    """(to - frm) / ulp(unit_of) rounded to double, or None when not finite."""
    if not (finite(frm) and finite(to) and finite(unit_of)):
        return None
    return float((exact_of(to) - exact_of(frm)) / Fraction(2) ** ulp_exponent(exact_of(unit_of)))


def ulp_error(exact, y):
    """the ULP error of docs/design.md "Numerics": dict with ulp (None for a special mismatch),
    correctly_rounded, special_mismatch, signed_zero_mismatch."""
    out = {"ulp": 0.0, "correctly_rounded": False, "special_mismatch": False,
           "signed_zero_mismatch": False}
    if isinstance(exact, float) and math.isnan(exact):
        out["correctly_rounded"] = math.isnan(y)
        out["special_mismatch"] = not math.isnan(y)
        out["ulp"] = None if out["special_mismatch"] else 0.0
        return out
    if isinstance(exact, float) and math.isinf(exact):
        same = math.isinf(y) and (y < 0) == (exact < 0)
        out["correctly_rounded"] = same
        out["special_mismatch"] = not same
        out["ulp"] = 0.0 if same else None
        return out
    x = exact_of(exact)
    rounded = round_binary32(x, negative_zero(exact))
    if math.isnan(y):
        out["special_mismatch"] = True
        out["ulp"] = None
        return out
    if math.isinf(y):
        if same_f32(rounded, y):
            out["ulp"] = 0.5
            out["correctly_rounded"] = True
        else:
            out["special_mismatch"] = True
            out["ulp"] = None
        return out
    out["correctly_rounded"] = (y == 0 and rounded == 0) or same_f32(rounded, y)
    out["signed_zero_mismatch"] = (y == 0 and rounded == 0 and
                                   math.copysign(1, y) != math.copysign(1, rounded))
    out["ulp"] = float(abs(Fraction(y) - x) / Fraction(2) ** ulp_exponent(x))
    return out


# ---- checking one report ----------------------------------------------------------

class Checker:
    def __init__(self, where):
        self.where = where
        self.failures = []
        self.checks = 0

    def expect(self, ok, what):
        self.checks += 1
        if not ok:
            self.failures.append("%s: %s" % (self.where, what))

    def close(self, got, want, what, rel=1e-13):
        """Doubles that both sides computed as one rounding of the same real
        (so they agree to the last bit or two), or both undefined (None)."""
        if want is None or got is None:
            self.expect(got is None and want is None, "%s: got %r, want %r" % (what, got, want))
            return
        if isinstance(got, str) or isinstance(want, str) or math.isinf(want):
            self.expect(str(got) == str(want) or (isinstance(got, str) and float(got) == want),
                        "%s: got %r, want %r" % (what, got, want))
            return
        ok = got == want or abs(got - want) <= rel * max(abs(want), 1e-300)
        self.expect(ok, "%s: got %r, want %r" % (what, got, want))


def same_value(a, b, zero_sign=True):
    """Exact equality of two values (Fraction or float), NaN equal to NaN."""
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if isinstance(b, float) and math.isnan(b):
        return False
    if not finite(a) or not finite(b):
        return a == b
    if exact_of(a) != exact_of(b):
        return False
    if zero_sign and exact_of(a) == 0:
        return sign_negative(a) == sign_negative(b)
    return True


def float_of(field):
    value = float.fromhex(field["hex"]) if field["hex"] not in ("inf", "-inf", "nan") else float(field["hex"])
    return value


def check_report(report, where):
    c = Checker(where)
    c.expect(report.get("op") == "tanh_bwd", "op is %r" % report.get("op"))
    grad_bits = int(report["inputs"]["grad"]["bits"], 16)
    t_bits = int(report["inputs"]["t"]["bits"], 16)
    grad, t = f32_from_bits(grad_bits), f32_from_bits(t_bits)
    c.expect(same_f32(float_of(report["inputs"]["grad"]), grad), "grad hex and bits disagree")
    c.expect(same_f32(float_of(report["inputs"]["t"]), t), "t hex and bits disagree")

    # The op's exact value: grad * (1 - t*t) in extended reals (the mulsub form, exactly).
    _, exact = run_model("mulsub", grad, t, 0)
    c.expect(same_value(parse_exact(report["exact"]["hex"]), exact, zero_sign=False),
             "exact value %s, want %s" % (report["exact"]["hex"], exact))
    if finite(exact):
        want_cr = round_binary32(exact_of(exact), negative_zero(exact))
    else:
        want_cr = exact
    c.expect(same_f32(float_of(report["correctly_rounded"]), want_cr),
             "correctly rounded %s, want %s" % (report["correctly_rounded"]["hex"], float(want_cr).hex()))

    # Condition numbers: 1 for grad, |2 t^2 / (1 - t^2)| for t. An operand that
    # is 0 has 0 (0 times a finite derivative); at grad = 0 the op is 0 for
    # every t (grad * (1 - t^2) stays 0 whatever t does), so t's is 0 too.
    cond = report["condition"]
    if math.isfinite(grad) and math.isfinite(t):
        square = Fraction(t) * Fraction(t)
        if grad == 0:
            kappa_grad, kappa_t = 0.0, 0.0
        else:
            kappa_grad = 1.0
            kappa_t = math.inf if square == 1 else float(abs(2 * square / (1 - square)))
        c.close(cond["per_operand"]["grad"], kappa_grad, "kappa(grad)", rel=1e-15)
        c.close(cond["per_operand"]["t"], kappa_t if math.isfinite(kappa_t) else "inf", "kappa(t)",
                rel=1e-15)
        c.close(cond["total"], kappa_grad + kappa_t if math.isfinite(kappa_t) else "inf", "kappa",
                rel=1e-15)
    else:
        c.expect(cond["per_operand"]["t"] is None, "kappa(t) defined for non-finite input")

    model_outputs = {m: run_model(m, grad, t, len(MODELS[m]))[1] for m in MODELS}
    for case in report["cases"]:
        c.where = "%s %s@%s" % (where, case["variant"], case["target"])
        variant = case["variant"]
        fused = case["fused_negmuladd"]
        c.expect(case["expected_model"] == EXPECTED[variant][0 if fused else 1],
                 "expected model %s, want %s" % (case["expected_model"], EXPECTED[variant][0 if fused else 1]))
        kernel = float_of(case["kernel_output"])
        matching = [m for m in MODELS if same_f32(model_outputs[m], kernel)]
        c.expect(sorted(matching) == sorted(case["matching_models"]),
                 "matching models %s, want %s" % (case["matching_models"], matching))
        model = case["traced_model"]
        want_traced = (case["expected_model"] if case["expected_model"] in matching or not matching
                       else matching[0])
        c.expect(model == want_traced, "traced model %s, want %s" % (model, want_traced))
        program = MODELS[model]
        n = len(program)
        c.expect(len(case["steps"]) == n, "%d steps, want %d" % (len(case["steps"]), n))
        if len(case["steps"]) != n:
            continue
        trace, output = run_model(model, grad, t, n)
        ideal, _ = run_model(model, grad, t, 0)
        # E_j: the first j steps rounded, the rest exact.
        e = [run_model(model, grad, t, j)[1] for j in range(n + 1)]
        c.expect(same_value(parse_exact(case["sequence_exact"]["hex"]), e[0], zero_sign=False),
                 "sequence exact value %s, want %s" % (case["sequence_exact"]["hex"], e[0]))
        defined = finite(exact) and all(finite(v) for v in e)
        for i, step in enumerate(case["steps"]):
            what = "step %d (%s)" % (i + 1, step["expression"])
            want_exact, want_rounded = trace[i]
            got_exact = parse_exact(step["exact"]["hex"])
            c.expect(same_value(got_exact, want_exact), "%s exact %s, want %s" % (what, step["exact"]["hex"], want_exact))
            c.expect(same_f32(float_of(step["rounded"]), want_rounded),
                     "%s rounded %s, want %s" % (what, step["rounded"]["hex"], float(want_rounded).hex()))
            c.expect(int(step["rounded"]["bits"], 16) == f32_bits(want_rounded) or math.isnan(want_rounded),
                     "%s rounded bits %s" % (what, step["rounded"]["bits"]))
            c.expect(same_value(parse_exact(step["ideal"]["hex"]), ideal[i][0], zero_sign=False),
                     "%s ideal %s, want %s" % (what, step["ideal"]["hex"], ideal[i][0]))
            c.close(step["local_error_ulp"], ulp_difference(want_exact, want_rounded, want_exact),
                    what + " local error")
            c.close(step["error_vs_ideal_ulp"], ulp_difference(ideal[i][0], want_rounded, ideal[i][0]),
                    what + " error vs ideal")
            want_contribution = ulp_difference(e[i], e[i + 1], exact) if defined else None
            c.close(step["contribution_ulp"], want_contribution, what + " contribution")
        c.expect(same_f32(float_of(case["model_output"]), output),
                 "model output %s, want %s" % (case["model_output"]["hex"], float(output).hex()))
        c.close(case["signed_error_ulp"], ulp_difference(exact, output, exact), "signed error")
        err = ulp_error(exact, kernel)
        c.close(case["ulp_error"], err["ulp"], "ULP error of the kernel output")
        for flag in ("correctly_rounded", "special_mismatch", "signed_zero_mismatch"):
            c.expect(case[flag] == err[flag], "%s is %s, want %s" % (flag, case[flag], err[flag]))
        if defined:
            contributions = [ulp_difference(e[i], e[i + 1], exact) for i in range(n)]
            largest = max(abs(x) for x in contributions)
            if largest > 0:
                dominant = case["dominant_step"]
                c.expect(dominant is not None and abs(contributions[dominant - 1]) == largest,
                         "dominant step %s does not have the largest contribution" % dominant)
                c.expect(("rounding of " + case["steps"][dominant - 1]["expression"]) in case["verdict"],
                         "verdict does not name the dominant step: %s" % case["verdict"])
    return c


# ---- fresh inputs -------------------------------------------------------------------

def f32_round(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def fresh_inputs(rng, n):
    """Inputs from the regions that matter: random bits, the domain, near +-1
    (the cancellation), near 1/sqrt(2) (Sterbenz's edge), overflow and
    underflow, and the specials."""
    def random_finite():
        while True:
            x = f32_from_bits(rng.getrandbits(32))
            if math.isfinite(x):
                return x

    def log_uniform(lo, hi):
        return rng.choice((-1, 1)) * f32_round(math.ldexp(1 + rng.random(), rng.randrange(lo, hi)))

    makers = [
        lambda: (random_finite(), random_finite()),
        lambda: (log_uniform(-24, 8), f32_round(rng.uniform(-1, 1))),
        lambda: (log_uniform(-20, 20), rng.choice((-1, 1)) * f32_from_bits(0x3F800000 - rng.randrange(1, 4097))),
        lambda: (log_uniform(-20, 20), rng.choice((-1, 1)) * f32_from_bits(0x3F800000 + rng.randrange(1, 4097))),
        lambda: (log_uniform(-20, 20), rng.choice((-1, 1)) * f32_from_bits(0x3F3504F3 + rng.randrange(-64, 65))),
        lambda: (rng.choice((-1, 1)) * f32_from_bits(0x7F000000 + rng.randrange(1 << 23)),
                 f32_round(rng.uniform(1, 2))),
        lambda: (f32_from_bits(rng.randrange(1, 1 << 23)), f32_round(rng.uniform(-1, 1))),
    ]
    # Every special, every run: a rare one left to chance makes a test that
    # fails one run in eight.
    specials = [(math.inf, 0.5), (math.nan, 0.25), (1.0, math.inf), (0.0, math.inf), (-0.0, 1.0),
                (0.0, 0.5), (-3.0, 1.0), (math.inf, 1.0), (2.0 ** 127, 2.0 ** 64)]
    inputs = [makers[i % len(makers)]() for i in range(max(n - 1, 0))]
    return inputs + specials


def text_of(x):
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x.hex()


def run_fresh(ulpgate, n, seed):
    rng = random.Random(seed)
    print("recheck_explain: %d fresh inputs, seed %d (replay with --seed %d)" % (n, seed, seed))
    total_checks = 0
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        for k, (grad, t) in enumerate(fresh_inputs(rng, n)):
            path = os.path.join(folder, "explain_%d.json" % k)
            command = [ulpgate, "explain", "--kernel", "tanh_bwd", "--input", "grad=" + text_of(grad),
                       "--input", "t=" + text_of(t), "--target", "all", "--json", path]
            result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            where = "grad=%s t=%s" % (text_of(grad), text_of(t))
            if result.returncode != 0:
                failures.append("%s: explain exited %d: %s" % (where, result.returncode, result.stderr.strip()))
                continue
            with open(path) as f:
                report = json.load(f)
            checker = check_report(report, where)
            total_checks += checker.checks
            failures += checker.failures
            print("  %-44s %3d cases, %4d checks, %s" % (where, len(report["cases"]), checker.checks,
                                                       "ok" if not checker.failures else "FAILED"))
    return total_checks, failures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reports", nargs="*", help="explain --json reports to check")
    parser.add_argument("--ulpgate", help="the ulpgate binary, to run explain on fresh inputs")
    parser.add_argument("--fresh", type=int, default=12, help="number of fresh inputs (with --ulpgate)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the fresh inputs (default: the clock)")
    args = parser.parse_args()
    if not args.reports and not args.ulpgate:
        parser.print_usage(sys.stderr)
        return 2
    total_checks = 0
    failures = []
    for path in args.reports:
        with open(path) as f:
            checker = check_report(json.load(f), path)
        total_checks += checker.checks
        failures += checker.failures
    if args.ulpgate:
        seed = args.seed if args.seed is not None else int(time.time() * 1000) % (1 << 31)
        checks, more = run_fresh(args.ulpgate, args.fresh, seed)
        total_checks += checks
        failures += more
    for failure in failures:
        print("MISMATCH " + failure)
    print("recheck_explain: %d checks, %d mismatches" % (total_checks, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
