#!/usr/bin/env python3
"""Recheck an `ulpgate run --dump` file with exact rational arithmetic.

Independent of the C++ harness: it reads only the dump (docs/dump-format.md),
recomputes every exact value from the inputs with fractions.Fraction, and from
it every ULP error, histogram bin, flag and bound fraction, by the definitions
of docs/design.md ("Numerics") and oracles/reduction_bound.h, and compares them with
what the dump says. Doubles must agree exactly: both sides round the exact
rational to the nearest double once.

    python3 tools/python/recheck_dump.py run.jsonl [more.jsonl ...]

Exit status 0 when everything agrees, 1 on any disagreement (the first ones
are printed), 2 on an unreadable file.

    python3 tools/python/recheck_dump.py --ops-of build/bin/ulpgate

asks ulpgate for its ops (`list --json`, the registry) and exits 1 naming
those this script cannot recheck (an elementwise op elementwise_exact.py does
not define, a reduction it does not know), 0 when it knows every one.
"""

import argparse
import json
import math
import os
import sys
from fractions import Fraction

FORMAT = "ulpgate-dump-1"

# The output format: binary32 unless a record's "dtype" says bf16 or f16
# (set_format): its ULP, rounding and histogram bounds (0, 1/2, 1, ..., 2^p).
FORMATS = {"f32": (24, -126, 127), "bf16": (8, -126, 127), "f16": (11, -14, 15)}
PRECISION, EMIN, EMAX = FORMATS["f32"]
MAX_FINITE = Fraction((1 << 24) - 1) * Fraction(2) ** 104


def set_format(dtype):
    """Makes `dtype` the format of what follows; KeyError for an unknown one."""
    global PRECISION, EMIN, EMAX, MAX_FINITE, ULP_BOUNDS
    PRECISION, EMIN, EMAX = FORMATS[dtype]
    MAX_FINITE = Fraction((1 << PRECISION) - 1) * Fraction(2) ** (EMAX - PRECISION + 1)
    ULP_BOUNDS = [Fraction(0), Fraction(1, 2)] + [Fraction(2) ** k for k in range(PRECISION + 1)]


def representable(y):
    """True when the float y is a value of the current format."""
    if math.isnan(y) or math.isinf(y) or y == 0:
        return True
    a = abs(Fraction(y))
    if a > MAX_FINITE:
        return False
    quantum = Fraction(2) ** (max(floor_log2(a), EMIN) - PRECISION + 1)
    return (a / quantum).denominator == 1
ULP_BOUNDS = [Fraction(0), Fraction(1, 2)] + [Fraction(2) ** k for k in range(PRECISION + 1)]
BOUND_FRACTION_BOUNDS = [Fraction(0)] + [Fraction(1, 2 ** k) for k in (10, 8, 6, 5, 4, 3, 2, 1, 0)]
INVERSE_U = 1 << 24
SMALLEST_SUBNORMAL = Fraction(1, 2 ** 149)
HALF_SMALLEST_SUBNORMAL = Fraction(1, 2 ** 150)


class Special:
    """+inf, -inf or NaN of the extended reals."""

    def __init__(self, kind):
        self.kind = kind  # "inf", "-inf", "nan"

    def __eq__(self, other):
        return isinstance(other, Special) and self.kind == other.kind

    def __repr__(self):
        return self.kind


class Value:
    """An exact real with the sign of zero kept, or a Special. `approximate`: the real is
    within 2^-64 binary32 ULPs of the value (an op that calls exp, erf or tanh), and is
    compared with a dump's 320-bit value within that."""

    def __init__(self, real=None, negative_zero=False, special=None):
        self.real = real
        self.negative_zero = negative_zero
        self.special = special
        self.approximate = False
        self.zero_sign_free = False

    def text(self):
        if self.special:
            return self.special.kind
        if self.real == 0:
            return "-0" if self.negative_zero else "0"
        # A significand and a power of two: a value of 2^-14000 (exp of a large
        # negative argument) has more digits than str() of a Fraction allows.
        e = floor_log2(abs(self.real))
        return "%.17g*2^%d" % (float(self.real / Fraction(2) ** e), e)


def parse_float(text):
    """A dumped binary32 (hex float, inf, nan) as a Python float (exact)."""
    return float.fromhex(text)


def float_value(y):
    if math.isnan(y):
        return Value(special=Special("nan"))
    if math.isinf(y):
        return Value(special=Special("inf" if y > 0 else "-inf"))
    return Value(Fraction(y), negative_zero=(y == 0 and math.copysign(1, y) < 0))


TINY_EXPONENT = -1300


def parse_exact(text):
    """"[-]0x<hex>[.<hex>]p<exp>[/<den>]", "inf", "-inf", "nan"."""
    if text in ("inf", "-inf", "nan"):
        return Value(special=Special(text))
    denominator = 1
    if "/" in text:
        text, den = text.split("/")
        denominator = int(den)
    negative = text.startswith("-")
    body = text[1:] if negative else text
    assert body.startswith("0x"), text
    mantissa, exponent = body[2:].split("p")
    whole, _, fraction = mantissa.partition(".")
    significand = Fraction(int(whole + fraction, 16), 16 ** len(fraction))
    if significand != 0 and int(exponent) < TINY_EXPONENT:
        # exp of a large negative argument: 2^-900000000 would be an integer of
        # 10^8 bytes here. Below 2^TINY_EXPONENT a value only says it is not zero
        # (every format and every double error rounds it to 0), so it is held as
        # 2^TINY_EXPONENT, its sign kept.
        value = Fraction(2) ** TINY_EXPONENT
    else:
        value = significand * Fraction(2) ** int(exponent) / denominator
    return Value(-value if negative else value, negative_zero=(negative and value == 0))


def approximation_error(x):
    """How far an approximate exact value may be from the real one: 2^-64 binary32 ULPs
    (elementwise_exact.py's ACCURACY_BITS) and the dump's 2^-320 relative."""
    if x.real == 0:
        return Fraction(1, 2 ** 1100)
    return Fraction(2) ** (max(floor_log2(abs(x.real)), -126) - 23 - 63)


def floor_log2(a):
    """floor(log2 a) for a Fraction a > 0."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    elif Fraction(2) ** (e + 1) <= a:
        e += 1
    return e


def ulp_exponent(x):
    if x == 0:
        return EMIN - PRECISION + 1
    e = min(floor_log2(abs(x)), EMAX)
    return max(e, EMIN) - PRECISION + 1


def round_to_binary32(v):
    """RN-even of an exact Value to the current format, as a Python float (or inf)."""
    if v.special:
        return {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}[v.special.kind]
    x = v.real
    if x == 0:
        return -0.0 if v.negative_zero else 0.0
    a = abs(x)
    quantum = Fraction(2) ** (max(floor_log2(a), EMIN) - PRECISION + 1)
    m = a / quantum
    n = m.numerator // m.denominator
    rest = m - n
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1):
        n += 1
    r = n * quantum
    if r > MAX_FINITE:
        return -math.inf if x < 0 else math.inf
    result = float(r)  # exact: a binary32 value
    return -result if x < 0 else result  # a negative x that rounds to 0 gives -0.0


def same_bits(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


def ulp_error(x, y):
    """The ULP error of docs/design.md "Numerics": dict(ulp, bin, special, signed_zero, correctly_rounded)."""
    r = {"ulp": 0.0, "bin": 0, "special": False, "signed_zero": False, "correctly_rounded": False}
    y_nan, y_inf = math.isnan(y), math.isinf(y)
    if x.special and x.special.kind == "nan":
        r["correctly_rounded"] = y_nan
        r["special"] = not y_nan
        return r
    if x.special:
        same = y_inf and ((y < 0) == (x.special.kind == "-inf"))
        r["correctly_rounded"] = same
        r["special"] = not same
        return r
    rounded = round_to_binary32(x)
    if y_nan:
        r["special"] = True
        return r
    if y_inf:
        if same_bits(rounded, y):
            r.update(ulp=0.5, bin=1, correctly_rounded=True)
        else:
            r["special"] = True
        return r
    r["correctly_rounded"] = (y == 0 and rounded == 0) or same_bits(rounded, y)
    r["signed_zero"] = y == 0 and rounded == 0 and math.copysign(1, y) != math.copysign(1, rounded)
    e = abs(Fraction(y) - x.real) / Fraction(2) ** ulp_exponent(x.real)
    r["ulp"] = float(e)
    r["bin"] = bin_of(e, ULP_BOUNDS)
    return r


def bin_of(e, bounds):
    if e == 0:
        return 0
    for i in range(1, len(bounds)):
        if e <= bounds[i]:
            return i
    return len(bounds)


def gamma(m):
    return Fraction(m, INVERSE_U - m)


def bound_fraction(exact, y, bound):
    """oracles/reduction_bound.h: dict(fraction, bin, above_one, exempt).

    The classical bound of a binary32 evaluation, B = gamma_m A / N + U; an
    output in a narrower format (bf16, f16: binary32 accumulation, one final
    rounding to precision p) adds that rounding: B (1 + 2^-p) + 2^-p |x| +
    2^(emin - p). Overflow is judged against the output format's threshold
    (2 - 2^-p) 2^emax, the least magnitude that rounds to infinity in it."""
    a_scaled, m, underflow, peak, denominator = bound
    x = exact.real
    threshold = (2 - Fraction(1, 2 ** PRECISION)) * Fraction(2) ** EMAX
    overflow_possible = peak * INVERSE_U >= threshold * (INVERSE_U - m)
    if math.isinf(y) or math.isnan(y):
        if overflow_possible:
            return {"fraction": None, "bin": None, "above_one": False, "exempt": True}
        return {"fraction": math.inf, "bin": len(BOUND_FRACTION_BOUNDS), "above_one": True,
                "exempt": False}
    error = abs(Fraction(y) - x)
    allowance = gamma(m) * a_scaled / denominator + underflow
    if PRECISION != 24:
        u = Fraction(1, 2 ** PRECISION)
        allowance = allowance * (1 + u) + u * abs(x) + Fraction(2) ** (EMIN - PRECISION)
    if error == 0:
        return {"fraction": 0.0, "bin": 0, "above_one": False, "exempt": False}
    if allowance == 0:
        return {"fraction": math.inf, "bin": len(BOUND_FRACTION_BOUNDS), "above_one": True,
                "exempt": False}
    f = error / allowance
    b = bin_of(f, BOUND_FRACTION_BOUNDS)
    return {"fraction": float(f), "bin": b, "above_one": b == len(BOUND_FRACTION_BOUNDS),
            "exempt": False}


# ---- The ops' exact values and bound ingredients, from their definitions ----

def fr(v):
    return Fraction(v)


def exact_sum(terms):
    """An exact sum from +0: a zero result is +0 (x + (-x) = +0 and +0 + -0 = +0)."""
    return Value(sum(terms, Fraction(0)))


def exact_tanh_bwd(grad, t):
    """grad * (1 - t*t) in the extended reals, with IEEE zero signs."""
    if math.isnan(grad) or math.isnan(t):
        return Value(special=Special("nan"))
    if math.isinf(t):
        s = Value(special=Special("-inf"))  # 1 - inf
    else:
        s = Value(1 - fr(t) * fr(t))  # a zero here is +0 (1 - 1)
    grad_negative = math.copysign(1, grad) < 0
    if s.special:
        if grad == 0:
            return Value(special=Special("nan"))
        return Value(special=Special("inf" if grad_negative else "-inf"))
    if math.isinf(grad):
        if s.real == 0:
            return Value(special=Special("nan"))
        return Value(special=Special("inf" if (grad > 0) == (s.real > 0) else "-inf"))
    product = fr(grad) * s.real
    if product == 0:
        s_negative = s.real < 0
        return Value(Fraction(0), negative_zero=(grad_negative != s_negative))
    return Value(product)


# The elementwise ops other than tanh_bwd: their exact values come from
# elementwise_exact.py (mpmath, imported on first use so that the other ops
# need only the standard library), which defines each op (OPS). The ops are
# the dump's: an op that is neither one of the reductions below nor defined
# there is an error, never skipped.
REDUCTIONS = ("linear_fwd", "linear_bwd_input", "linear_bwd_weight", "linear_bwd_bias",
              "mse_fwd", "mse_bwd")
# The row reductions (RMSNorm, softmax): their values call sqrt, exp and log,
# from row_exact.py's definitions in mpmath (imported on first use).
ROW_OPS = ("rmsnorm_fwd", "rmsnorm_bwd", "softmax_fwd", "softmax_bwd", "log_softmax_fwd",
           "log_softmax_bwd")
# The binary32 value nearest 1e-6, the registered RMSNorm ops' eps.
ROW_EPS = float.fromhex("0x1.0c6f7ap-20")
_ee = None
_rows = None


def rows():
    global _rows
    if _rows is None:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import row_exact
        _rows = row_exact
    return _rows


def exact_row_values(op, inputs, shape):
    """The row op's values, row by row, as Fractions within 2^-1500 relative of
    the real ones (row_exact.py at 1600 bits), approximate. Beyond 2^3100 and
    below 2^-3000 they are held at those powers of two, as the C++ oracle holds
    exponentials beyond MPFR's range: beyond or below every format alike. The
    sign of a zero is the dump's (mpmath's zeros carry none)."""
    from mpmath import mp, mpf
    mp.prec = 1600
    n_rows, n = shape
    out = []
    for r in range(n_rows):
        operands = {k: (v if k == "g" else v[r * n:(r + 1) * n]) for k, v in inputs.items()}
        values = rows().DEFINITIONS[op](operands, ROW_EPS)
        if op == "log_softmax_bwd":
            # The oracle holds an exponential beyond 2^3000 (e^y of a y drawn
            # at random) at 2^3000, then takes dy - e G.
            from mpmath import exp as mp_exp
            g = sum(mpf(d) for d in operands["dy"])
            values = [mpf(d) - min(mp_exp(mpf(y)), mpf(2) ** 3000) * g
                      for d, y in zip(operands["dy"], operands["y"])]
        for v in values:
            if v != 0 and abs(v) > mpf(2) ** 3100:
                v = mpf(2) ** 3100 * (1 if v > 0 else -1)
            if v != 0 and abs(v) < mpf(2) ** -3000:
                v = mpf(2) ** -3000 * (1 if v > 0 else -1)
            sign, man, exp, _ = v._mpf_  # mpmath's own (sign, mantissa, exponent, bits)
            x = Fraction(-int(man) if sign else int(man)) * (Fraction(2) ** int(exp))
            value = Value(x)
            value.approximate = True
            value.zero_sign_free = True
            out.append(value)
    return out


def ee():
    global _ee
    if _ee is None:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import elementwise_exact
        _ee = elementwise_exact
    return _ee


def exact_elementwise(op, grad, v):
    """grad * D(v), D the op's derivative factor, in the extended reals as
    docs/design.md defines the ops' values: sigmoid_bwd exactly (D = s (1 - s), so
    s = +-inf gives -inf); the ops that call exp, erf or tanh as a Fraction within
    2^-64 binary32 ULPs of the real value, enough to decide every rounding and bin
    (Value.approximate), and NaN at x = +-inf, where their definitions meet inf * 0
    (elementwise_exact.py takes the limits there instead). A zero is signed as grad
    times D(v) is."""
    transcendental = not ee().OPS[op][1]
    if transcendental and math.isinf(v) and not math.isnan(grad):
        return Value(special=Special("nan"))
    x, _ = ee().exact(op, grad, v)
    if not isinstance(x, Fraction):
        if math.isnan(x):
            return Value(special=Special("nan"))
        return Value(special=Special("inf" if x > 0 else "-inf"))
    value = Value(x)
    value.approximate = transcendental
    if x == 0:
        # sigmoid_bwd: the product (grad*s)*(1 - s), 1 - 1 = +0; elsewhere D(v) > 0 or
        # < 0 (its zeros are not binary32 values) and grad is the zero.
        if op == "sigmoid_bwd":
            factor_negative = (math.copysign(1, v) < 0) != (1 - Fraction(v) < 0)
        else:
            d, _ = ee().exact(op, 1.0, v)
            factor_negative = d < 0
            # Where |D(v)| is below 2^-1000 (exp(-x^2/2) at |x| near 2^128) no format
            # and no exponent range holds it: the sign of grad * D is then how an
            # evaluation underflows, a convention, and the dump's is taken.
            value.zero_sign_free = abs(d) < Fraction(1, 2 ** 1000)
        value.negative_zero = (math.copysign(1, grad) < 0) != factor_negative
    return value


def shape_of(record):
    extents = [int(v) for v in str(record["shape"]).split(",")]
    return extents


def elements(record):
    """Yields (exact Value, bound ingredients or None) per output element."""
    op = record["op"]
    inputs = {k: [parse_float(v) for v in vs] for k, vs in record["inputs"].items()}
    if op == "tanh_bwd":
        yield exact_tanh_bwd(inputs["grad"][0], inputs["t"][0]), None
        return
    if op in ROW_OPS:
        # The bound of the row ops (docs/design.md "Row reductions") is the
        # C++ oracle's; only the values and the ULP errors are rechecked here.
        for value in exact_row_values(op, inputs, shape_of(record)):
            yield value, None
        return
    if op not in REDUCTIONS:
        if op not in ee().OPS:
            raise ValueError("op %s: no definition in elementwise_exact.py (OPS) to recheck "
                             "it against" % op)
        second = ee().OPS[op][0]
        yield exact_elementwise(op, inputs["grad"][0], inputs[second][0]), None
        return
    sub = HALF_SMALLEST_SUBNORMAL * 2  # 2^-149
    if op in ("linear_fwd", "linear_bwd_input", "linear_bwd_weight", "linear_bwd_bias"):
        batch, n_in, n_out = shape_of(record)
        if op == "linear_fwd":
            x, w, b = inputs["x"], inputs["w"], inputs["b"]
            for r in range(batch):
                for o in range(n_out):
                    products = [fr(x[r * n_in + k]) * fr(w[o * n_in + k]) for k in range(n_in)]
                    a = sum((abs(p) for p in products), Fraction(0)) + abs(fr(b[o]))
                    yield exact_sum(products + [fr(b[o])]), (a, n_in + 1, n_in * sub, a, 1)
        elif op == "linear_bwd_input":
            dy, w = inputs["dy"], inputs["w"]
            for r in range(batch):
                for i in range(n_in):
                    products = [fr(dy[r * n_out + o]) * fr(w[o * n_in + i]) for o in range(n_out)]
                    a = sum((abs(p) for p in products), Fraction(0))
                    yield exact_sum(products), (a, n_out, n_out * sub, a, 1)
        elif op == "linear_bwd_weight":
            dy, x = inputs["dy"], inputs["x"]
            for o in range(n_out):
                for i in range(n_in):
                    products = [fr(dy[r * n_out + o]) * fr(x[r * n_in + i]) for r in range(batch)]
                    a = sum((abs(p) for p in products), Fraction(0))
                    yield exact_sum(products), (a, batch, batch * sub, a, 1)
        else:
            dy = inputs["dy"]
            for o in range(n_out):
                terms = [fr(dy[r * n_out + o]) for r in range(batch)]
                a = sum((abs(t) for t in terms), Fraction(0))
                yield exact_sum(terms), (a, max(batch - 1, 0), Fraction(0), a, 1)
        return
    (n,) = shape_of(record)
    y, t = inputs["y"], inputs["target"]
    if op == "mse_fwd":
        s = sum(((fr(y[i]) - fr(t[i])) ** 2 for i in range(n)), Fraction(0))
        yield Value(s / n), (s, n + 4, (n + 1) * sub, s, n)
        return
    if op == "mse_bwd":
        g = inputs["grad_out"][0]
        for i in range(n):
            d = fr(y[i]) - fr(t[i])
            e = 2 * d * fr(g)
            # IEEE zero signs: y - t is -0 only for (-0) - (+0); the products xor signs.
            d_negative = d < 0 or (d == 0 and math.copysign(1, y[i]) < 0 and
                                   math.copysign(1, t[i]) > 0)
            negative_zero = e == 0 and (d_negative != (math.copysign(1, g) < 0))
            u = HALF_SMALLEST_SUBNORMAL + abs(fr(g)) * sub
            yield (Value(e / n, negative_zero=negative_zero),
                   (abs(e), 4, u, 2 * abs(d) + abs(e), n))
        return
    raise ValueError("unknown op " + op)


class Checker:
    def __init__(self):
        self.problems = []
        self.records = 0
        self.outputs = 0

    def problem(self, where, what):
        self.problems.append(where + ": " + what)

    def check_record(self, record, where):
        if record.get("format") != FORMAT:
            self.problem(where, "format is %r, expected %r" % (record.get("format"), FORMAT))
            return
        dtype = record.get("dtype", "f32")
        if dtype not in FORMATS:
            self.problem(where, "unknown dtype %r" % dtype)
            return
        set_format(dtype)
        self.records += 1
        computed = list(elements(record))
        dumped = [parse_exact(s) for s in record["exact"]]
        if len(computed) != len(dumped):
            self.problem(where, "%d exact values, expected %d" % (len(dumped), len(computed)))
            return
        for e, ((x, _), d) in enumerate(zip(computed, dumped)):
            if x.zero_sign_free and not d.special and d.real == 0:
                x.negative_zero = d.negative_zero
            if x.special or d.special:
                same = x.special == d.special
            elif x.approximate:
                same = (abs(x.real - d.real) <= approximation_error(x) and
                        (x.real != 0 or x.negative_zero == d.negative_zero))
            else:
                same = x.real == d.real and (x.real != 0 or x.negative_zero == d.negative_zero)
            if not same:
                self.problem(where, "element %d: exact %s, dump says %s" % (e, x.text(), d.text()))
            elif x.approximate:
                # The same real to 2^-64 binary32 ULPs: the errors are recomputed from the
                # dump's value, exact to its 320 bits. Where the op's value is below
                # 2^-1000 (exp(-x^2/2) at |x| near 2^128) MPFR's exponent range holds it
                # as its least number of the value's sign, and the errors are the dump's.
                computed[e] = (d, computed[e][1])
        for result in record["results"]:
            self.check_result(record, result, computed, where)

    def check_result(self, record, result, computed, where):
        name = "%s %s on %s" % (record["op"], result["variant"], result["target"])
        outputs = [parse_float(v) for v in result["outputs"]]
        sets = {k: set(result.get(k, [])) for k in (
            "special_mismatch", "signed_zero_mismatch", "not_correctly_rounded", "above_one",
            "overflow_exempt")}
        with_bound = "bound_fraction" in result
        for e, (y, (x, bound)) in enumerate(zip(outputs, computed)):
            self.outputs += 1
            at = "%s, %s, element %d (output %s, exact %s)" % (where, name, e, y.hex(), x.text())
            if not representable(y):
                self.problem(at, "output is not a %s value" % record.get("dtype", "f32"))
            u = ulp_error(x, y)
            want_ulp = None if u["special"] else u["ulp"]
            want_bin = None if u["special"] else u["bin"]
            if result["ulp_error"][e] != want_ulp:
                self.problem(at, "ULP error %r, recomputed %r" % (result["ulp_error"][e], want_ulp))
            if result["ulp_bin"][e] != want_bin:
                self.problem(at, "ULP bin %r, recomputed %r" % (result["ulp_bin"][e], want_bin))
            for key, flag in (("special_mismatch", u["special"]),
                              ("signed_zero_mismatch", u["signed_zero"]),
                              ("not_correctly_rounded", not u["correctly_rounded"])):
                if (e in sets[key]) != flag:
                    self.problem(at, "%s is %s in the dump, recomputed %s" %
                                 (key, e in sets[key], flag))
            if with_bound and bound is not None:
                b = bound_fraction(x, y, bound)
                dumped = result["bound_fraction"][e]
                dumped = math.inf if dumped == "inf" else dumped
                if dumped != b["fraction"]:
                    self.problem(at, "bound fraction %r, recomputed %r" % (dumped, b["fraction"]))
                if result["bound_bin"][e] != b["bin"]:
                    self.problem(at, "bound bin %r, recomputed %r" % (result["bound_bin"][e], b["bin"]))
                for key, flag in (("above_one", b["above_one"]), ("overflow_exempt", b["exempt"])):
                    if (e in sets[key]) != flag:
                        self.problem(at, "%s is %s in the dump, recomputed %s" %
                                     (key, e in sets[key], flag))


def missing_ops(ulpgate):
    """The ops `ulpgate list --json` names that elements() has no definition for."""
    import subprocess
    listed = json.loads(subprocess.run([ulpgate, "list", "--json"], check=True,
                                       stdout=subprocess.PIPE).stdout)["ops"]
    missing = []
    for op in listed:
        # Elementwise ops list their operands' domains; the reductions do not.
        elementwise = "operand_domains" in op
        known = (op["name"] in ee().OPS if elementwise else
                 op["name"] in REDUCTIONS or op["name"] in ROW_OPS)
        if not known:
            missing.append(op["name"])
    return [op["name"] for op in listed], missing


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dumps", nargs="*", metavar="DUMP",
                        help="JSON Lines written by `ulpgate run --dump`")
    parser.add_argument("--ops-of", metavar="ULPGATE",
                        help="check that every op this ulpgate registers has a definition here")
    args = parser.parse_args(argv)
    if args.ops_of:
        ops, missing = missing_ops(args.ops_of)
        if missing:
            print("recheck_dump: no definition to recheck %s against (elementwise_exact.py's "
                  "OPS, or the reductions here)" % ", ".join(missing), file=sys.stderr)
            return 1
        print("recheck_dump: a definition for each of the %d ops: %s" % (len(ops), ", ".join(ops)))
        return 0
    if not args.dumps:
        parser.error("no DUMP given")
    checker = Checker()
    for path in args.dumps:
        try:
            with open(path) as f:
                for number, line in enumerate(f, 1):
                    if line.strip():
                        checker.check_record(json.loads(line), "%s:%d" % (path, number))
        except (OSError, ValueError) as error:
            print("recheck_dump: %s: %s" % (path, error), file=sys.stderr)
            return 2
    if checker.records == 0:
        print("recheck_dump: no records", file=sys.stderr)
        return 1
    if checker.problems:
        for p in checker.problems[:20]:
            print(p)
        print("recheck_dump: %d disagreement(s) in %d records, %d outputs" %
              (len(checker.problems), checker.records, checker.outputs))
        return 1
    print("recheck_dump: %d records, %d outputs: exact values, ULP errors, bins, flags and "
          "bound fractions all agree" % (checker.records, checker.outputs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
