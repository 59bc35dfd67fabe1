#!/usr/bin/python3
"""Exact values, roundings, ULP errors, bound fractions and step-by-step models of the
elementwise backward ops (tanh_bwd, sigmoid_bwd, silu_bwd, gelu_bwd, gelu_tanh_bwd), written
from their definitions and independent of ulpgate's C++ (mpmath, fractions, numpy only).

Run it with Debian's /usr/bin/python3: numpy, mpmath and torch are Debian packages
(python3-numpy, python3-mpmath, python3-torch, see ci/setup.sh), and a `python3` found first
on PATH (pyenv, a venv) may not see them.

    /usr/bin/python3 tools/python/elementwise_exact.py value OP DTYPE GRAD V
    /usr/bin/python3 tools/python/elementwise_exact.py models

`value` prints the exact value of one input (GRAD and V as decimal or C99 hex floats, each
rounded once to DTYPE first; put `--` before a negative value in exponent form), its
rounding to DTYPE, the bound scale S and every model's output with its ULP error and bound
fraction. `models` lists the models and their sequences.
As a module it is the oracle of torch_elementwise_peer.py, peer_table.py and
peer_elementwise_test.py.

Definitions (docs/design.md, "Numerics", and the ops as PyTorch defines them):

  tanh_bwd(g, t)      = g (1 - t^2)                              S = 1 + t^2
  sigmoid_bwd(g, s)   = g s (1 - s)                              S = |s| (1 + |s|)
  silu_bwd(g, x)      = g sig (1 + x (1 - sig)), sig = 1/(1+e^-x)  S = sig (1 + |x| (1 + sig))
  gelu_bwd(g, x)      = g (Phi(x) + x phi(x))                    S = 1/2 + |erf(x/sqrt2)|/2 + |x phi(x)|
  gelu_tanh_bwd(g, x) = g d/dx [x (1 + tanh(k (x + c x^3))) / 2], k = sqrt(2/pi), c = 0.044715
                                                  S = (1 + |th|)/2 + |x| (1 + th^2) k (1 + 3 c x^2) / 2

ULP of a real x in a format (p, emin, emax): 2^(max(E, emin) - p + 1), E = floor(log2 |x|)
capped at emax; ulp(0) is the smallest subnormal. ULP error e = |y - x| / ulp(x); a finite x
and an infinite y give e = 1/2 when x rounds to that infinity (an overflow), otherwise a
special mismatch, as does a NaN y for a finite x; a NaN x (an undefined input such as
inf * 0) is matched by any NaN. Signed zeros are not told apart here.

Bound fraction: |y - x| / B, B = 2^-p |g| S + (smallest subnormal) / 2. S is the sum of the
magnitudes of the terms the definition adds, so a fraction near or below 1 says the error is
what rounding the terms costs even where they cancel and the ULP error is large.

Models (MODELS below) are op sequences evaluated one rounded float32 operation at a time
(numpy float32, FMA exact then rounded once). Those of silu/gelu/gelu_tanh call exp, erf or
tanh, which no formula fixes bit for bit: ~NAME takes them correctly rounded (an idealised,
approximate model) and NAME@glibc / NAME@sleef take this machine's glibc and SLEEF functions
(what PyTorch's scalar and AVX2 kernels call), which makes them exact models of this
machine's kernels. For bf16 and f16, NAME is the f32 model rounded once and NAME/perop rounds
every operation to the format.
"""

import argparse
import math
import sys
from fractions import Fraction

# Third-party modules are imported on first use, so that --help works with any Python.
np = None
mp = None


def _imports():
    global np, mp
    if np is None:
        import numpy
        import mpmath
        np, mp = numpy, mpmath
    return np, mp


# ----------------------------------------------------------------------------- formats

class Format:
    """A binary format: precision p (with the implicit bit), normal exponents emin..emax."""

    def __init__(self, name, p, emin, emax):
        self.name, self.p, self.emin, self.emax = name, p, emin, emax
        self.u = Fraction(1, 1 << p)                      # unit roundoff 2^-p
        self.min_sub = Fraction(2) ** (emin - p + 1)      # smallest subnormal = ulp(0)
        self.half_min_sub = self.min_sub / 2
        self.overflow = Fraction(2) ** (emax + 1)         # a rounded magnitude this big is inf

    def __repr__(self):
        return self.name


F32 = Format("f32", 24, -126, 127)
BF16 = Format("bf16", 8, -126, 127)    # binary32's exponent range, 8 bits of precision
F16 = Format("f16", 11, -14, 15)
FORMATS = {f.name: f for f in (F32, BF16, F16)}


def floor_log2(a):
    """floor(log2 a) of a positive Fraction, exactly."""
    n, d = a.numerator, a.denominator
    e = n.bit_length() - d.bit_length()
    # 2^e <= n/d < 2^(e+1) or 2^(e-1) <= n/d < 2^e: one comparison decides.
    if (n << max(0, -e)) < (d << max(0, e)):
        e -= 1
    return e


def ulp(fmt, x):
    """ulp of an exact finite value (Fraction) in fmt, as a Fraction."""
    if x == 0:
        return fmt.min_sub
    e = min(max(floor_log2(abs(x)), fmt.emin), fmt.emax)
    return Fraction(2) ** (e - fmt.p + 1)


def round_fraction(fmt, x):
    """Round-to-nearest-even of an exact Fraction to fmt, with subnormals and overflow to
    infinity. Returns a Python float (every value of the three formats is a double)."""
    if x == 0:
        return 0.0
    a = abs(x)
    sh = max(floor_log2(a), fmt.emin) - fmt.p + 1     # the quantum is 2^sh
    n, d = a.numerator, a.denominator
    if sh >= 0:
        d <<= sh
    else:
        n <<= -sh
    m, r = divmod(n, d)
    if 2 * r > d or (2 * r == d and m & 1):
        m += 1
    # A carry to 2^p moves to the next binade exactly; a magnitude of 2^(emax+1) overflows
    # (max_finite has an odd significand, so a tie above it goes to infinity too).
    if Fraction(m) * Fraction(2) ** sh >= fmt.overflow:
        v = math.inf
    else:
        v = math.ldexp(m, sh)
    return -v if x < 0 else v


def round_float(fmt, v):
    """Round a double to fmt in one rounding (inf and NaN pass through)."""
    if math.isnan(v) or math.isinf(v):
        return v
    return round_fraction(fmt, Fraction(v))


# ----------------------------------------------------------------------------- exact values

OPS = {
    # name: (second operand, whether the value is a polynomial in the inputs, definition)
    "tanh_bwd": ("t", True, "grad * (1 - t^2)"),
    "sigmoid_bwd": ("s", True, "grad * s * (1 - s)"),
    "silu_bwd": ("x", False, "grad * sig(x) * (1 + x * (1 - sig(x)))"),
    "gelu_bwd": ("x", False, "grad * (Phi(x) + x * phi(x))"),
    "gelu_tanh_bwd": ("x", False,
                      "grad * d/dx 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))"),
}
KAPPA = Fraction(44715, 10 ** 6)       # gelu_tanh's 0.044715, the exact decimal

# Working precision of the transcendental ops. It starts here and doubles until the result
# is proven good enough (see _accept), so no fixed precision has to be argued for: 128 bits
# suffice for almost every input, and near the zeros of the derivatives (silu_bwd at
# x = -1.2785, gelu_bwd and gelu_tanh_bwd near x = -0.7518), where the sum cancels, the
# loop raises it. The polynomial ops are computed exactly in rationals.
START_PREC = 128
MAX_PREC = 1 << 15
# Each transcendental value is a few dozen mpmath operations, each within a few units of
# 2^-prec relative; 2^12 units of the terms' magnitudes bound the evaluation error with room.
SLACK_BITS = 12
# Demanded accuracy: the error bound at most 2^-64 of an ulp of f32 (so every ULP error is
# exact to 2^-64 and no histogram bin moves), and the value not within the error bound of a
# point of the half-ulp grid of f32 (midpoints, representables, powers of 2, the overflow
# threshold): then its rounding and binade, in every format here, are those of the true
# value, since the grids of bf16 and f16 are subsets of f32's.
ACCURACY_BITS = 64


# Magnitudes below 2^-TINY_EXP round to zero in every format and cost nothing in a bound
# (B >= half the smallest subnormal); they are held as +-2^-TINY_EXP, since an mpf such as
# exp(-1e38) has an exponent no Fraction can hold.
TINY_EXP = 1100


def _mpf_fraction(v):
    """An mpf as an exact Fraction (magnitudes below 2^-TINY_EXP clamped to it)."""
    v = mp.mpf(v)
    if v == 0:
        return Fraction(0)
    if mp.mag(v) < -TINY_EXP:
        return Fraction(1 if v > 0 else -1, 1 << TINY_EXP)
    if mp.mag(v) > 4 * TINY_EXP:
        raise OverflowError("an intermediate of 2^%d: not expected of these ops" % mp.mag(v))
    sign, man, exp, _ = v._mpf_          # mpmath's raw tuple: the sign is apart from man
    man = -int(man) if sign else int(man)
    return Fraction(man) * (Fraction(2) ** exp) if exp >= 0 else Fraction(man, 1 << -exp)


def _accept(x, err):
    """True when the exact value lies within err of x and that suffices (see ACCURACY_BITS)."""
    if abs(x) <= Fraction(1, 1 << TINY_EXP):
        return True                                 # zero in every format, whatever err is
    q = ulp(F32, x)
    if err > q / (1 << ACCURACY_BITS):
        return False
    h = q / 2
    if abs(x) < F32.min_sub:
        h = F32.half_min_sub
    k = math.floor(x / h)
    return x - k * h > err and (k + 1) * h - x > err


# From x = SATURATION on, D(x) is within 0.1 of 1 and tends to it: the value g D is then
# computed as g + g (D - 1), with D - 1 from a form that does not cancel, so that a value
# a hair off the representable g lands on its true side (and in its true binade) at any
# precision, and no precision loop has to resolve 1 - erfc(7e29) against 1.
SATURATION = 2


def _transcendental(op, v):
    """For x = v: (d, t, s) with d the derivative factor D(x) (or D(x) - 1 from
    x >= SATURATION on), t the sum of magnitudes of what this evaluation adds (its error
    bound is t times a few units of 2^-prec) and s the bound scale S; mpf at the current
    precision."""
    x = mp.mpf(v)
    tail = v >= SATURATION
    if op == "silu_bwd":
        e = mp.exp(-x)
        sig = 1 / (1 + e)
        q = e / (1 + e)                      # 1 - sig without cancelling for large x
        if tail:                             # D - 1 = (1 - sig)(x sig - 1)
            d, t = q * (x * sig - 1), q * (x * sig + 1)
        else:
            d, t = sig * (1 + x * q), sig * (1 + abs(x * q))
        s = sig * (1 + abs(x) * (1 + sig))
    elif op == "gelu_bwd":
        z = x / mp.sqrt(2)
        pdf = mp.exp(-x * x / 2) / mp.sqrt(2 * mp.pi)
        if tail:                             # D - 1 = x phi(x) - Phi(-x)
            upper = mp.erfc(z) / 2
            d, t = x * pdf - upper, x * pdf + upper
            abs_erf = 1 - 2 * upper
        else:
            # Phi from erfc for x < 0: 1 + erf(z) cancels there (to nothing below x = -40).
            if x < 0:
                cdf = mp.erfc(-z) / 2
                abs_erf = 1 - 2 * cdf
            else:
                erf = mp.erf(z)
                cdf = (1 + erf) / 2
                abs_erf = erf
            d, t = cdf + x * pdf, cdf + abs(x * pdf)
        s = mp.mpf(0.5) + abs_erf / 2 + abs(x * pdf)
    elif op == "gelu_tanh_bwd":
        k = mp.sqrt(2 / mp.pi)
        c = mp.mpf(KAPPA.numerator) / KAPPA.denominator
        y = k * (x + c * x ** 3)
        a = mp.exp(-2 * abs(y))
        # 1 + tanh(y), 1 - tanh(y) and 1 - tanh(y)^2 from exp(-2|y|): no cancellation as
        # tanh -> +-1.
        one_plus = 2 / (1 + a) if y >= 0 else 2 * a / (1 + a)
        sech2 = 4 * a / (1 + a) ** 2
        th = mp.tanh(y)
        inner_d = k * (1 + 3 * c * x * x)
        right = x * sech2 * inner_d / 2
        if tail:                             # D - 1 = right - (1 - tanh)/2, y > 0 here
            half_one_minus = a / (1 + a)
            d, t = right - half_one_minus, abs(right) + half_one_minus
        else:
            d, t = one_plus / 2 + right, one_plus / 2 + abs(right)
        s = (1 + abs(th)) / 2 + abs(x) * (1 + th * th) * inner_d / 2
    else:
        raise ValueError(op)
    return d, t, s


def _special(op, g, v):
    """The value at non-finite inputs, following the definition in extended reals; for the
    transcendental ops at x = +-inf, their limits (1 and 0: the definitions' 0 * inf forms
    are removable there). Returns a float (nan or +-inf or a finite factor) or None."""
    if math.isnan(g) or math.isnan(v):
        return math.nan
    if math.isinf(v):
        if op == "tanh_bwd":
            factor = -math.inf                 # 1 - inf^2
        elif op == "sigmoid_bwd":
            factor = -math.inf                 # s (1 - s) = inf * -inf or -inf * inf
        else:
            factor = 1.0 if v > 0 else 0.0
        r = g * factor if not (g == 0 and math.isinf(factor)) else math.nan
        return Fraction(r) if math.isfinite(r) else r
    return None


def _s_at(op, v):
    with mp.workprec(START_PREC):
        return _mpf_fraction(_transcendental(op, v)[2])


_cache = {}


def exact(op, g, v):
    """(x, S) for finite or special inputs g, v (Python floats): x the exact value as a
    Fraction (or a float nan/inf for non-finite cases), S the bound scale as a Fraction (None
    where x is not finite)."""
    key = (op, g, v)
    hit = _cache.get(key)
    if hit is not None:
        return hit
    _imports()
    if math.isinf(g) or math.isnan(g) or math.isinf(v) or math.isnan(v):
        if math.isinf(g) and not (math.isinf(v) or math.isnan(v)):
            # inf * D(v): the sign of D decides; D(v) = 0 gives NaN.
            xv, _ = exact(op, 1.0, v)
            r = math.nan if xv == 0 else math.copysign(math.inf, g) * (1 if xv > 0 else -1)
        else:
            r = _special(op, g, v)
        out = (r, Fraction(1) if isinstance(r, Fraction) else None)
    elif OPS[op][1]:
        gq, vq = Fraction(g), Fraction(v)
        if op == "tanh_bwd":
            out = (gq * (1 - vq * vq), 1 + vq * vq)
        else:
            out = (gq * vq * (1 - vq), abs(vq) * (1 + abs(vq)))
    elif v == 0:
        # sig(0) = Phi(0) = 1/2 and tanh(0) = 0: every transcendental op is g/2 exactly at
        # x = 0, a value the precision loop could never separate from the grid it lies on.
        # (At other binary x the values are irrational: Lindemann-Weierstrass for silu_bwd
        # and gelu_tanh_bwd; for gelu_bwd an exact hit would stop the loop with an error.)
        out = (Fraction(g) / 2, Fraction(1, 2))
    elif g == 0:
        out = (Fraction(0), _s_at(op, v))
    else:
        gq = Fraction(g)
        prec = START_PREC
        while True:
            with mp.workprec(prec):
                d, t, s = _transcendental(op, v)
                x = gq * _mpf_fraction(d)
                if v >= SATURATION:
                    x += gq                       # g + g (D - 1), exactly in rationals
                err = abs(gq) * _mpf_fraction(t) / (Fraction(2) ** (prec - SLACK_BITS))
                sq = _mpf_fraction(s)
            if _accept(x, err):
                break
            prec *= 2
            if prec > MAX_PREC:
                raise ArithmeticError("%s(%r, %r): no precision up to %d bits decides it"
                                      % (op, g, v, MAX_PREC))
        out = (x, sq)
    _cache[key] = out
    return out


def ulp_error(fmt, x, y):
    """(e, special): the ULP error of y (a float holding a value of fmt) against the exact x,
    and whether it is a special mismatch (e is then nan)."""
    if isinstance(x, float):                        # NaN or infinity: exact or nothing
        if math.isnan(x):
            return (0.0, False) if math.isnan(y) else (math.nan, True)
        return (0.0, False) if y == x else (math.nan, True)
    if math.isnan(y):
        return math.nan, True
    if math.isinf(y):
        return (0.5, False) if round_fraction(fmt, x) == y else (math.nan, True)
    return float(abs(Fraction(y) - x) / ulp(fmt, x)), False


def bound(fmt, g, s):
    """B = 2^-p |g| S + half the smallest subnormal."""
    return fmt.u * abs(Fraction(g)) * s + fmt.half_min_sub


def bound_fraction(fmt, g, x, s, y):
    """|y - x| / B for a finite x and y; nan otherwise (an overflow or a special case)."""
    if isinstance(x, float) or math.isnan(y) or math.isinf(y):
        return math.nan
    return float(abs(Fraction(y) - x) / bound(fmt, g, s))


def oracle(op, grad, v):
    """Exact values of op over arrays (float32 arrays holding values of the dtype)."""
    return [exact(op, float(a), float(b)) for a, b in zip(grad, v)]


def correctly_rounded(fmt, exacts):
    """RN_fmt of every exact value, as a float32 array."""
    _imports()
    return np.array([x if isinstance(x, float) else round_fraction(fmt, x)
                     for x, _ in exacts], dtype=np.float32)


def measure(fmt, grad, exacts, y):
    """ULP errors, bound fractions and special-mismatch flags of outputs y (float32 array)."""
    _imports()
    e = np.empty(len(y))
    f = np.empty(len(y))
    special = np.zeros(len(y), dtype=bool)
    for i, ((x, s), yi) in enumerate(zip(exacts, y)):
        yi = float(yi)
        e[i], special[i] = ulp_error(fmt, x, yi)
        f[i] = bound_fraction(fmt, float(grad[i]), x, s, yi)
    return e, f, special


# ----------------------------------------------------------------------------- arithmetic

def same_bits(a, b):
    """Element-wise equality of float32 arrays bit for bit, every NaN equal to every NaN
    (docs/design.md, "NaN bits"); +0 and -0 differ."""
    _imports()
    a = np.asarray(a, dtype=np.float32)
    b = np.asarray(b, dtype=np.float32)
    return (a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))


def to_format(fmt, a):
    """Round a float32 array to fmt once (round to nearest even, overflow to inf, NaN kept),
    returned as float32 holding the values of fmt."""
    _imports()
    a = np.asarray(a, dtype=np.float32)
    if fmt is F32:
        return a.copy()
    if fmt is F16:
        # numpy's float32 -> float16 conversion rounds to nearest even with subnormals and
        # overflow; a half widens to float32 exactly.
        with np.errstate(over="ignore"):
            return a.astype(np.float16).astype(np.float32)
    # bf16: the top 16 bits of binary32, rounded by adding 0x7fff plus the kept lsb (a
    # carry into the exponent is the next binade or infinity; subnormals round the same way).
    u64 = np.uint64                  # numpy constants: a Python int would promote to float
    bits = np.atleast_1d(a).view(np.uint32).astype(u64)
    bits = (bits + u64(0x7FFF) + ((bits >> u64(16)) & u64(1))) & u64(0xFFFF0000)
    out = bits.astype(np.uint32).view(np.float32).reshape(a.shape)
    out = np.where(np.isnan(a), np.float32(np.nan), out)
    return out.astype(np.float32)


def const(fmt, c):
    """A C++ constant `scalar_t(c)` with c a double: rounded to float first, then (16-bit
    scalar_t) to the format, as c10's BFloat16/Half constructors take a float."""
    _imports()
    return to_format(fmt, np.array([np.float32(c)], dtype=np.float32))[0]


def fma_f32(a, b, c):
    """fma(a, b, c) of float32 arrays with one rounding, exactly: a*b is exact in double
    (24 + 24 bits), TwoSum gives the exact ab + c = s + r, and s rounds to the right float32
    unless it is exactly a float32 midpoint with r != 0, which is settled in rationals."""
    _imports()
    a, b, c = (np.asarray(z, dtype=np.float32) for z in (a, b, c))
    a, b, c = np.broadcast_arrays(a, b, c)
    with np.errstate(all="ignore"):
        p = a.astype(np.float64) * b.astype(np.float64)
        cd = c.astype(np.float64)
        s = p + cd
        bb = s - p
        r = (p - (s - bb)) + (cd - bb)               # TwoSum: s + r == p + c exactly
        out = s.astype(np.float32)
        # A float32 midpoint has a zero below bit 25 of the significand; only there can
        # rounding s differ from rounding s + r.
        lo = out.astype(np.float64)
        # Rounded up to infinity, the lower neighbour's midpoint is with 2^128 in its place.
        lo = np.where(np.isinf(lo) & np.isfinite(s), np.copysign(2.0 ** 128, s), lo)
        hi = np.nextafter(out, np.where(s > lo, np.float32(np.inf), np.float32(-np.inf)))
        mid = (lo + hi.astype(np.float64)) / 2
        tricky = np.isfinite(s) & np.isfinite(r) & (r != 0) & (s == mid)
    for i in np.flatnonzero(tricky):
        exact_v = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))
        out[i] = round_fraction(F32, exact_v)
    return out.astype(np.float32)


_cr_cache = {}


def cr_function(fmt, name, a):
    """A transcendental function (exp, erf, tanh) of float32 array a, correctly rounded to
    fmt (Ziv's loop: more precision until the value is off the half-ulp grid)."""
    _imports()
    out = np.empty(len(a), dtype=np.float32)
    for i, v in enumerate(np.asarray(a, dtype=np.float32)):
        v = float(v)
        key = (fmt.name, name, v)
        r = _cr_cache.get(key)
        if r is None:
            if math.isnan(v):
                r = math.nan
            elif math.isinf(v):
                r = {"exp": math.inf if v > 0 else 0.0, "erf": math.copysign(1.0, v),
                     "tanh": math.copysign(1.0, v)}[name]
            elif v == 0:
                r = 1.0 if name == "exp" else v         # exact: exp(0) = 1, erf, tanh keep 0
            else:
                r = _cr_nonzero(fmt, name, v)
            _cr_cache[key] = r
        out[i] = r
    return out


def _cr_nonzero(fmt, name, v):
    # erf and tanh tend to +-1: their distance to it, c = erfc(|v|) or 1 - tanh|v|, decides
    # directly when it is below a quarter of the ulp under 1 (the value then rounds to +-1
    # and is no tie, c being nonzero); otherwise Ziv's loop below cancels at most p+2 bits.
    if name in ("erf", "tanh"):
        with mp.workprec(64):
            a = mp.mpf(abs(v))
            c = mp.erfc(a) if name == "erf" else 2 / (mp.exp(2 * a) + 1)
            if c < mp.mpf(2) ** -(fmt.p + 2):
                return math.copysign(1.0, v)
    prec = 96
    while True:
        with mp.workprec(prec):
            y = getattr(mp, name)(mp.mpf(v))
            if mp.mag(y) < -TINY_EXP:                # exp of a large negative: zero anywhere
                return 0.0
            if mp.mag(y) > fmt.emax + 2:              # exp of a large positive: overflow
                return math.inf
            y = _mpf_fraction(y)
        # mpmath's functions are within a few units of 2^-prec; 2^8 units is room enough.
        err = abs(y) / (Fraction(2) ** (prec - 8))
        if _accept_fmt(fmt, y, err):
            return round_fraction(fmt, y)
        prec *= 2
        if prec > MAX_PREC:
            raise ArithmeticError("%s(%r) undecided" % (name, v))


def _accept_fmt(fmt, x, err):
    q = ulp(fmt, x)
    h = q / 2 if abs(x) >= fmt.min_sub else fmt.half_min_sub
    k = math.floor(x / h)
    return x - k * h > err and (k + 1) * h - x > err


# The float32 exp, erf and tanh that PyTorch's kernels call, for models of them: glibc's
# (the scalar lambdas and the default capability's Vectorized code call std::exp etc.) and
# SLEEF's (PyTorch's AVX2 Vectorized<float>::exp/erf/tanh call Sleef_*f8_u10; the scalar
# FMA builds Sleef_*f1_u10purecfma run the same algorithm one lane at a time, and gave the
# same bits as the AVX2 kernels on every input measured). Both are loaded through ctypes
# from this machine's libraries (libm.so.6; libsleef.so.3, which Debian's libtorch depends
# on), so a model over them says what this machine computes, not what the function is.
LIBRARIES = {
    "glibc": ("libm.so.6", {"exp": "expf", "erf": "erff", "tanh": "tanhf"}),
    "sleef": ("libsleef.so.3", {"exp": "Sleef_expf1_u10purecfma",
                                "erf": "Sleef_erff1_u10purecfma",
                                "tanh": "Sleef_tanhf1_u10purecfma"}),
}
_libraries = {}


def library(name):
    """{'exp', 'erf', 'tanh': float32 array -> float32 array} of a library, or None when
    this machine lacks it."""
    if name not in _libraries:
        import ctypes
        soname, symbols = LIBRARIES[name]
        try:
            lib = ctypes.CDLL(soname)
            fns = {}
            for fn_name, symbol in symbols.items():
                f = getattr(lib, symbol)
                f.restype, f.argtypes = ctypes.c_float, [ctypes.c_float]
                fns[fn_name] = (lambda f: lambda a: np.array(
                    [f(float(v)) for v in np.atleast_1d(a)], dtype=np.float32))(f)
            _libraries[name] = fns
        except (OSError, AttributeError):
            _libraries[name] = None
    return _libraries[name]


class F32Arith:
    """Binary32 arithmetic on float32 arrays, one IEEE rounding per operation (numpy does
    each float32 operation in float32, subnormals kept). exp, erf and tanh come from `lib`
    (library() above) or, with lib None, are correctly rounded: an idealisation, for the
    approximate models ("~" names)."""
    fmt = F32

    def __init__(self, lib=None):
        self.lib = lib

    def c(self, v):
        return np.float32(v)

    def round(self, a):
        return np.asarray(a, dtype=np.float32)

    def mul(self, a, b):
        return self.round(np.multiply(a, b, dtype=np.float32))

    def add(self, a, b):
        return self.round(np.add(a, b, dtype=np.float32))

    def sub(self, a, b):
        return self.round(np.subtract(a, b, dtype=np.float32))

    def div(self, a, b):
        return self.round(np.divide(a, b, dtype=np.float32))

    def neg(self, a):
        return np.negative(a, dtype=np.float32)

    def fma(self, a, b, c):
        return fma_f32(a, b, c)

    def fn(self, name, a):
        a = np.atleast_1d(np.asarray(a, np.float32))
        return self.lib[name](a) if self.lib else cr_function(F32, name, a)


class PerOpArith(F32Arith):
    """Every operation rounded to a 16-bit format: the binary32 result rounded again, which
    equals one rounding of the exact result for +, -, * and / since 24 >= 2p + 2 (p = 8, 11);
    fma is rounded once from its exact value; constants go double -> float -> format.
    A library function is computed in float and rounded to the format, as c10's
    std::exp(BFloat16) and Vectorized<BFloat16>::exp do; without one, it is correctly
    rounded to the format directly."""

    def __init__(self, fmt, lib=None):
        self.fmt, self.lib = fmt, lib

    def c(self, v):
        return const(self.fmt, v)

    def round(self, a):
        return to_format(self.fmt, np.asarray(a, dtype=np.float32))

    def fma(self, a, b, c):
        a, b, c = np.broadcast_arrays(*(np.asarray(z, dtype=np.float32) for z in (a, b, c)))
        out = np.empty(a.shape, dtype=np.float32)
        for i in range(len(out)):
            ai, bi, ci = float(a[i]), float(b[i]), float(c[i])
            if all(math.isfinite(z) for z in (ai, bi, ci)):
                out[i] = round_fraction(self.fmt, Fraction(ai) * Fraction(bi) + Fraction(ci))
            else:
                out[i] = ai * bi + ci
        return out

    def fn(self, name, a):
        a = np.atleast_1d(np.asarray(a, np.float32))
        if self.lib:
            return to_format(self.fmt, self.lib[name](a))
        return cr_function(self.fmt, name, a)


# ----------------------------------------------------------------------------- models

# Sequences as functions of (arith, grad, v). A model of an op with no transcendental call
# is exact: a kernel that runs its sequence in binary32 must give its output bit for bit.
# The models of silu/gelu/gelu_tanh ("~" in their names) run PyTorch's op sequences with
# correctly rounded exp/erf/tanh: no library computes those (glibc and Sleef are within an
# ulp or so), so they are approximate: how often a path agrees with one is a measurement,
# not a conformance verdict.

def _tanh_mulsub(A, g, t):
    r = A.mul(t, t)
    s = A.sub(A.c(1), r)
    return A.mul(g, s)


def _tanh_mulsub_fused(A, g, t):
    s = A.fma(A.neg(t), t, A.c(1))
    return A.mul(g, s)


def _tanh_mac_unfused(A, g, t):
    r = A.mul(t, t)
    p = A.mul(g, r)
    return A.sub(g, p)


def _tanh_mac_fused(A, g, t):
    r = A.mul(t, t)
    return A.fma(A.neg(g), r, g)


def _tanh_mac_left(A, g, t):
    p = A.mul(g, t)
    q = A.mul(p, t)
    return A.sub(g, q)


def _tanh_mac_left_fused(A, g, t):
    p = A.mul(g, t)
    return A.fma(A.neg(p), t, g)


def _sigmoid_torch(A, g, s):
    a = A.sub(A.c(1), s)
    b = A.mul(g, a)
    return A.mul(b, s)


def _sigmoid_fused(A, g, s):
    p = A.mul(g, s)
    return A.fma(A.neg(p), s, p)


def _sigmoid_mul3(A, g, s):
    p = A.mul(g, s)
    a = A.sub(A.c(1), s)
    return A.mul(p, a)


# <math.h>'s constants as the literals glibc defines them, so that the doubles are the ones
# C++ folds (2/sqrt(pi) computed in double can differ from M_2_SQRTPI in the last bit).
M_SQRT1_2 = float("0.70710678118654752440")
M_SQRT2 = float("1.41421356237309504880")
M_2_SQRTPI = float("1.12837916709551257390")


def _silu_torch(A, g, x, fused=False):
    # PyTorch: sigmoid = 1 / (1 + exp(-x)); dy * sigmoid * (1 + x * (1 - sigmoid))
    one = A.c(1)
    sig = A.div(one, A.add(one, A.fn("exp", A.neg(x))))
    q = A.sub(one, sig)
    inner = A.fma(x, q, one) if fused else A.add(one, A.mul(x, q))
    return A.mul(A.mul(g, sig), inner)


def _gelu_torch(A, g, x, fused=False):
    # PyTorch: cdf = 0.5 (1 + erf(x kAlpha)); pdf = kBeta exp(x x (-0.5)); dy (cdf + x pdf)
    k_alpha = A.c(M_SQRT1_2)
    k_beta = A.c(M_2_SQRTPI * M_SQRT1_2 * 0.5)     # the product in double, as C++ folds it
    cdf = A.mul(A.c(0.5), A.add(A.c(1), A.fn("erf", A.mul(x, k_alpha))))
    pdf = A.mul(k_beta, A.fn("exp", A.mul(A.mul(x, x), A.c(-0.5))))
    s = A.fma(x, pdf, cdf) if fused else A.add(cdf, A.mul(x, pdf))
    return A.mul(g, s)


def _gelu_tanh_torch(A, g, x, fused=False):
    # PyTorch's sequence (Activation.cpp, GeluBackwardKernelImpl, GeluType::Tanh). fused:
    # the three multiply-adds GCC contracts in the -mfma build (measured against the AVX2
    # kernel); left_derivative + right_derivative stays an add, as contracting 0.5 * right
    # into it changes nothing (0.5 * right is exact).
    k_beta = A.c(M_SQRT2 * M_2_SQRTPI * 0.5)
    k_kappa = A.c(0.044715)
    one, three, half = A.c(1), A.c(3), A.c(0.5)
    x_sq = A.mul(x, x)
    x_cube = A.mul(A.mul(x, x), x)
    if fused:
        inner = A.mul(k_beta, A.fma(k_kappa, x_cube, x))
    else:
        inner = A.mul(k_beta, A.add(x, A.mul(k_kappa, x_cube)))
    tanh_inner = A.fn("tanh", inner)
    left = A.mul(half, x)
    right = A.add(one, tanh_inner)
    left_derivative = A.mul(half, right)
    three_kappa = A.mul(three, k_kappa)
    if fused:
        tanh_derivative = A.fma(A.neg(tanh_inner), tanh_inner, one)
        inner_derivative = A.mul(k_beta, A.fma(three_kappa, x_sq, one))
    else:
        tanh_derivative = A.sub(one, A.mul(tanh_inner, tanh_inner))
        inner_derivative = A.mul(k_beta, A.add(one, A.mul(three_kappa, x_sq)))
    right_derivative = A.mul(A.mul(left, tanh_derivative), inner_derivative)
    return A.mul(g, A.add(left_derivative, right_derivative))


MODELS = {
    # op: [(name, sequence text, function, calls exp/erf/tanh)]
    "tanh_bwd": [
        ("mulsub", "r = t*t; s = 1 - r; out = grad*s", _tanh_mulsub, False),
        ("mulsub_fused", "s = fma(-t, t, 1); out = grad*s", _tanh_mulsub_fused, False),
        ("mac_unfused", "r = t*t; p = grad*r; out = grad - p", _tanh_mac_unfused, False),
        ("mac_fused", "r = t*t; out = fma(-grad, r, grad)", _tanh_mac_fused, False),
        ("mac_left", "p = grad*t; q = p*t; out = grad - q", _tanh_mac_left, False),
        ("mac_left_fused", "p = grad*t; out = fma(-p, t, grad)", _tanh_mac_left_fused, False),
    ],
    "sigmoid_bwd": [
        ("torch", "a = 1 - s; b = grad*a; out = b*s", _sigmoid_torch, False),
        ("fused", "p = grad*s; out = fma(-p, s, p)", _sigmoid_fused, False),
        ("mul3", "p = grad*s; a = 1 - s; out = p*a", _sigmoid_mul3, False),
    ],
    "silu_bwd": [
        ("torch", "sig = 1/(1 + exp(-x)); out = (grad*sig) * (1 + x*(1 - sig))",
         _silu_torch, True),
        ("torch_fused", "as torch with 1 + x*(1 - sig) = fma(x, 1 - sig, 1)",
         lambda A, g, x: _silu_torch(A, g, x, True), True),
    ],
    "gelu_bwd": [
        ("torch", "cdf = 0.5*(1 + erf(x*kAlpha)); pdf = kBeta*exp((x*x)*-0.5); "
         "out = grad*(cdf + x*pdf); kAlpha = float(M_SQRT1_2), "
         "kBeta = float(M_2_SQRTPI*M_SQRT1_2*0.5)", _gelu_torch, True),
        ("torch_fused", "as torch with cdf + x*pdf = fma(x, pdf, cdf)",
         lambda A, g, x: _gelu_torch(A, g, x, True), True),
    ],
    "gelu_tanh_bwd": [
        ("torch", "x_sq = x*x; x_cube = (x*x)*x; inner = kBeta*(x + kKappa*x_cube); "
         "th = tanh(inner); left = 0.5*x; right = 1 + th; left_d = 0.5*right; "
         "tanh_d = 1 - th*th; inner_d = kBeta*(1 + (3*kKappa)*x_sq); "
         "right_d = (left*tanh_d)*inner_d; out = grad*(left_d + right_d); "
         "kBeta = float(M_SQRT2*M_2_SQRTPI*0.5), kKappa = float(0.044715)",
         _gelu_tanh_torch, True),
        ("torch_fused", "as torch with x + kKappa*x_cube = fma(kKappa, x_cube, x), "
         "tanh_d = fma(-th, th, 1), 1 + (3*kKappa)*x_sq = fma(3*kKappa, x_sq, 1)",
         lambda A, g, x: _gelu_tanh_torch(A, g, x, True), True),
    ],
}


def model_outputs(op, fmt, grad, v):
    """{model name: float32 output array}. f32: each model in binary32. A 16-bit format:
    NAME is the binary32 model rounded once to the format ('opmath', what PyTorch does when it
    computes a reduced-precision op in float), NAME/perop every operation rounded to it.
    A sequence that calls exp, erf or tanh gives ~NAME (the functions correctly rounded:
    approximate) and NAME@glibc, NAME@sleef (this machine's libraries, where present)."""
    _imports()
    grad = np.asarray(grad, dtype=np.float32)
    v = np.asarray(v, dtype=np.float32)
    out = {}
    with np.errstate(all="ignore"):
        for base, _, fn, transcendental in MODELS[op]:
            variants = [(base, None)]
            if transcendental:
                variants = [("~" + base, None)] + [
                    ("%s@%s" % (base, lib), library(lib)) for lib in LIBRARIES
                    if library(lib) is not None]
            for name, lib in variants:
                y = fn(F32Arith(lib), grad, v)
                if fmt is F32:
                    out[name] = np.asarray(y, dtype=np.float32)
                else:
                    out[name] = to_format(fmt, y)
                    out[name + "/perop"] = np.asarray(fn(PerOpArith(fmt, lib), grad, v),
                                                      np.float32)
    return out


def model_is_exact(name):
    return not name.startswith("~")


# ----------------------------------------------------------------------------- command line

def _parse_value(fmt, text):
    t = text.strip().lower()
    if t in ("nan", "+nan", "-nan"):
        return math.nan
    if t in ("inf", "+inf", "infinity"):
        return math.inf
    if t in ("-inf", "-infinity"):
        return -math.inf
    v = float.fromhex(t) if "0x" in t else float(t)
    return round_float(fmt, float(np.float32(v)) if fmt is not F32 else v)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="elementwise_exact.py",
        description="Exact values and models of the elementwise backward ops (mpmath). "
                    "Run with /usr/bin/python3 (Debian's numpy, mpmath).",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("value", help="one input: exact value, rounding, models")
    p.add_argument("op", choices=sorted(OPS))
    p.add_argument("dtype", choices=sorted(FORMATS))
    p.add_argument("grad")
    p.add_argument("v", help="the second operand (t, s or x)")
    sub.add_parser("models", help="list the models of every op")
    args = parser.parse_args(argv)
    try:
        _imports()
    except ImportError as e:
        print("elementwise_exact.py: needs numpy and mpmath (Debian: python3-numpy, "
              "python3-mpmath; run /usr/bin/python3): %s" % e, file=sys.stderr)
        return 2
    if args.command == "models":
        for op, models in MODELS.items():
            print("%s = %s" % (op, OPS[op][2]))
            for name, text, _, transcendental in models:
                print("  %-16s %s%s" % (name, text, "  [~%s, %s]" % (name, ", ".join(
                    "%s@%s" % (name, lib) for lib in LIBRARIES)) if transcendental else ""))
        print("16-bit formats: NAME = the f32 model rounded once (opmath), NAME/perop = "
              "every operation rounded to the format")
        return 0
    fmt = FORMATS[args.dtype]
    g = _parse_value(fmt, args.grad)
    v = _parse_value(fmt, args.v)
    x, s = exact(args.op, g, v)
    print("%s(%s, %s = %s) in %s" % (args.op, float(g).hex(), OPS[args.op][0], float(v).hex(),
                                      fmt))
    if isinstance(x, float):
        print("  exact      %r" % x)
    else:
        print("  exact      %s" % mp.nstr(mp.mpf(x.numerator) / x.denominator, 30))
        print("  RN         %s (%r)" % (float(round_fraction(fmt, x)).hex(),
                                         round_fraction(fmt, x)))
        print("  S          %s" % mp.nstr(mp.mpf(s.numerator) / s.denominator, 12))
        print("  B          %s" % mp.nstr(mp.mpf(bound(fmt, g, s).numerator)
                                         / bound(fmt, g, s).denominator, 12))
    outs = model_outputs(args.op, fmt, np.array([g], np.float32), np.array([v], np.float32))
    for name, y in outs.items():
        yv = float(y[0])
        e, special = ulp_error(fmt, x, yv)
        f = bound_fraction(fmt, g, x, s, yv)
        print("  %-20s %-16s ulp %s  bound fraction %s" % (
            name, yv.hex() if math.isfinite(yv) else repr(yv),
            "special" if special else "%.6g" % e, "%.6g" % f))
    return 0


if __name__ == "__main__":
    sys.exit(main())
