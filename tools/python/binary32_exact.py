"""Exact binary32 (and bf16, f16) arithmetic in pure Python, independent of MPFR and of
ulpgate's C++.

Values are exact rationals (fractions.Fraction) with a separate sign for zeros,
or the strings 'nan', 'inf', '-inf'. Rounding is IEEE 754 round-to-nearest-even
(or toward zero) to a binary format with gradual underflow and overflow to
infinity, written from the standard's definition. The format is a parameter
(Format); binary32 is the default. Used by the recheck scripts to verify
ulpgate's reports.
"""
from fractions import Fraction
import math
import struct

class Format:
    """A binary format: precision p (with the implicit bit), exponent range."""

    def __init__(self, name, p, emin, emax):
        self.name, self.p, self.emin, self.emax = name, p, emin, emax
        self.max_finite = Fraction((1 << p) - 1) * Fraction(2) ** (emax - p + 1)


F32 = Format("f32", 24, -126, 127)
BF16 = Format("bf16", 8, -126, 127)
F16 = Format("f16", 11, -14, 15)
FORMATS = {f.name: f for f in (F32, BF16, F16)}

P = F32.p         # precision
EMIN = F32.emin   # exponent of the smallest normal
EMAX = F32.emax   # exponent of the largest finite
MAX_FINITE = F32.max_finite


class Value:
    """A binary32 datum or an exact real: kind is 'num', 'nan' or 'inf'."""

    __slots__ = ("kind", "q", "neg")

    def __init__(self, kind, q=Fraction(0), neg=False):
        self.kind, self.q, self.neg = kind, Fraction(q), neg

    @staticmethod
    def num(q, neg_zero=False):
        q = Fraction(q)
        return Value("num", q, q < 0 or (q == 0 and neg_zero))

    def is_zero(self):
        return self.kind == "num" and self.q == 0

    def __repr__(self):
        if self.kind == "nan":
            return "nan"
        if self.kind == "inf":
            return "-inf" if self.neg else "inf"
        return ("-" if self.neg and self.q == 0 else "") + str(self.q)


NAN = Value("nan")


def inf(neg):
    return Value("inf", 0, neg)


def from_bits(bits):
    return from_float(struct.unpack("<f", struct.pack("<I", bits))[0])


def from_float(x):
    """A Python float holding a binary32 value -> exact Value."""
    if math.isnan(x):
        return NAN
    if math.isinf(x):
        return inf(x < 0)
    return Value.num(Fraction(x), neg_zero=math.copysign(1.0, x) < 0)


def parse(text):
    """C99 hex float, decimal (rounded once to binary32), inf or nan."""
    t = text.strip().lower()
    if t in ("nan", "+nan", "-nan"):
        return NAN
    if t in ("inf", "+inf", "infinity", "+infinity"):
        return inf(False)
    if t in ("-inf", "-infinity"):
        return inf(True)
    if t.startswith("bits:"):
        return from_bits(int(t[5:], 16))
    neg = t.startswith("-")
    body = t.lstrip("+-")
    if body.startswith("0x"):
        q = Fraction(float.fromhex(body))  # exact for binary32 inputs
    else:
        q = round_binary32(Value.num(Fraction(body))).q
    return Value.num(-q if neg else q, neg_zero=neg)


def floor_log2(q):
    """floor(log2 q) for a positive rational, exactly."""
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    elif Fraction(2) ** (e + 1) <= q:
        e += 1
    return e


def round_to(v, fmt, toward_zero=False):
    """Round an exact Value to fmt, nearest-even (or toward zero), gradual underflow."""
    if v.kind != "num":
        return v
    if v.q == 0:
        return v
    a = abs(v.q)
    e = max(floor_log2(a), fmt.emin)
    scale = Fraction(2) ** (e - fmt.p + 1)       # ulp at this exponent
    m = a / scale                                 # significand, < 2^p
    n = math.floor(m)
    rest = m - n
    if not toward_zero and (rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1)):
        n += 1
    r = n * scale
    if r > fmt.max_finite:
        if toward_zero:
            r = fmt.max_finite
        else:
            return inf(v.neg)
    return Value.num(-r if v.neg else r, neg_zero=v.neg)


def round_binary32(v):
    """Round an exact Value to binary32, nearest-even, gradual underflow."""
    return round_to(v, F32)


def to_float(v):
    if v.kind == "nan":
        return float("nan")
    if v.kind == "inf":
        return -math.inf if v.neg else math.inf
    if v.q == 0:
        return -0.0 if v.neg else 0.0
    return float(v.q)


def bits(v):
    """The binary32 encoding of a rounded Value (NaN: the default quiet NaN)."""
    if v.kind == "nan":
        return 0x7FC00000
    return struct.unpack("<I", struct.pack("<f", to_float(v)))[0]


# Exact operations in extended-real arithmetic with IEEE 754's special-value and
# zero-sign rules for round-to-nearest.

def mul(a, b):
    if a.kind == "nan" or b.kind == "nan":
        return NAN
    neg = a.neg != b.neg
    if a.kind == "inf" or b.kind == "inf":
        if a.is_zero() or b.is_zero():
            return NAN
        return inf(neg)
    return Value.num(a.q * b.q, neg_zero=neg)


def add(a, b):
    if a.kind == "nan" or b.kind == "nan":
        return NAN
    if a.kind == "inf" and b.kind == "inf":
        return a if a.neg == b.neg else NAN
    if a.kind == "inf":
        return a
    if b.kind == "inf":
        return b
    s = a.q + b.q
    if s == 0:
        # Exact zero sum: -0 only when both addends are -0 (round to nearest).
        return Value.num(0, neg_zero=a.is_zero() and b.is_zero() and a.neg and b.neg)
    return Value.num(s)


def neg(a):
    if a.kind == "nan":
        return a
    if a.kind == "inf":
        return inf(not a.neg)
    return Value.num(-a.q, neg_zero=not a.neg)


def sub(a, b):
    return add(a, neg(b))


def fma(a, b, c):
    """a*b + c exactly (one rounding is applied by the caller)."""
    return add(mul(a, b), c)


# ULP metric of docs/design.md "Numerics".

def ulp_exponent(x, fmt=F32):
    if x.q == 0:
        return fmt.emin - fmt.p + 1
    e = min(floor_log2(abs(x.q)), fmt.emax)
    return max(e, fmt.emin) - fmt.p + 1


def histogram_bounds(fmt=F32):
    return [Fraction(0), Fraction(1, 2)] + [Fraction(2) ** k for k in range(0, fmt.p + 1)]


def ulp_error(exact, y, fmt=F32):
    """(e as Fraction or None for a special mismatch, correctly_rounded, signed_zero_mismatch)."""
    if exact.kind == "nan":
        return (Fraction(0), True, False) if y.kind == "nan" else (None, False, False)
    if exact.kind == "inf":
        ok = y.kind == "inf" and y.neg == exact.neg
        return (Fraction(0), True, False) if ok else (None, False, False)
    rounded = round_to(exact, fmt)
    if y.kind == "nan":
        return None, False, False
    if y.kind == "inf":
        if rounded.kind == "inf" and rounded.neg == y.neg:
            return Fraction(1, 2), True, False
        return None, False, False
    cr = (y.q == 0 and rounded.kind == "num" and rounded.q == 0) or (
        rounded.kind == "num" and rounded.q == y.q and rounded.neg == y.neg)
    szm = y.q == 0 and rounded.kind == "num" and rounded.q == 0 and y.neg != rounded.neg
    e = abs(y.q - exact.q) / Fraction(2) ** ulp_exponent(exact, fmt)
    return e, cr, szm


def histogram_bin(e, fmt=F32):
    bounds = histogram_bounds(fmt)
    if e == 0:
        return 0
    for i in range(1, len(bounds)):
        if e <= bounds[i]:
            return i
    return len(bounds)
