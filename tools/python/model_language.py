"""The model language of `ulpgate check --model` (docs/models.md), read and evaluated
apart from ulpgate's C++: exact rationals (binary32_exact.py) rounded once per operation to
the working format, and the free functions exp, erf, tanh and log by mpmath at 200 bits,
each standing for any binary32 within `ulps` ULPs of the function's value, rounded to the
working format. Used by recheck_compare.py to recheck the models a comparison's cause rests
on.

    program = parse("e = exp(-x); out = grad*e")
    choices = program.choices([grad, x], output, storage=bx.F32, ulps=4)
"""

import math
import re
import struct
from fractions import Fraction

import mpmath

import binary32_exact as bx

ROUNDINGS = {"f32": bx.F32, "bf16": bx.BF16, "f16": bx.F16}
FUNCTIONS = {"exp": mpmath.exp, "erf": mpmath.erf, "tanh": mpmath.tanh, "log": mpmath.log}
TOKEN = re.compile(r"\s*(?:(0[xX][0-9a-fA-F.]+[pP][+-]?\d+|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)"
                   r"|([A-Za-z_][A-Za-z_0-9]*)|(.))")


class NeedValue(Exception):
    """Evaluation reached a call whose value is not chosen yet."""

    def __init__(self, function, argument):
        super().__init__(function)
        self.function, self.argument = function, argument


class Program:
    """Straight-line statements as trees: ('num', Fraction), ('var', name), (op, args...)."""

    def __init__(self, working, statements, calls, implemented=0):
        self.working, self.statements, self.calls = working, statements, calls
        self.implemented = implemented  # `f(ARG) as EXPRESSION` calls

    def evaluate(self, operands, storage, values):
        """The output with the calls' binary32 values `values` (in call order), and the
        calls made, as (function, argument, value); NeedValue past the last value."""
        env = dict(operands)
        used, fixed = [], []
        for name, tree in self.statements:
            env[name] = self._eval(tree, env, values, used, fixed)
        return bx.round_to(env["out"], storage), used + fixed

    def _eval(self, t, env, values, used, fixed):
        kind = t[0]
        w = self.working
        if kind == "num":
            return bx.Value.num(t[1])
        if kind == "var":
            return env[t[1]]
        if kind == "as":
            # An implemented call: the expression's value, listed after the free calls.
            argument = self._eval(t[2], env, values, used, fixed)
            v = self._eval(t[3], env, values, used, fixed)
            fixed.append((t[1], argument, v))
            return v
        args = [self._eval(a, env, values, used, fixed) for a in t[1:]]
        if kind == "neg":
            return bx.neg(args[0])
        if kind == "+":
            return bx.round_to(bx.add(*args), w)
        if kind == "-":
            return bx.round_to(bx.sub(*args), w)
        if kind == "*":
            return bx.round_to(bx.mul(*args), w)
        if kind == "fma":
            return bx.round_to(bx.fma(*args), w)
        if kind == "/":
            return bx.round_to(divide(*args), w)
        if kind == "sqrt":
            return bx.round_to(square_root(args[0]), w)
        if kind == "scalb":
            return _scalb(*args, w)
        if kind in EXACT:
            return EXACT[kind](*args)
        if kind in FUNCTIONS:
            # A free function: the binary32 chosen, rounded to the working format.
            if len(used) == len(values):
                raise NeedValue(kind, args[0])
            v = values[len(used)]
            used.append((kind, args[0], v))
            return bx.round_to(v, w)
        rz = kind.endswith("_rz")
        return bx.round_to(args[0], ROUNDINGS[kind[:-3] if rz else kind], toward_zero=rz)

    def choices(self, operands, output, storage, ulps):
        """Every choice of the calls' binary32 values (each within `ulps` of the binary32
        nearest the function at its argument) that gives `output`: lists of (function,
        argument, binary32 value), in call order."""
        found = []

        def walk(prefix):
            try:
                out, used = self.evaluate(operands, storage, prefix)
            except NeedValue as need:
                for v in neighbours(nearest(need.function, need.argument), ulps):
                    walk(prefix + [v])
                return
            if same(out, output):
                found.append(used)
        walk([])
        return found


def _key(v):
    """v as an ordered number (infinities at the ends); v is not NaN."""
    if v.kind == "inf":
        return Fraction(-1 if v.neg else 1) * 10 ** 400
    return v.q


def _less(a, b):
    return a.kind != "nan" and b.kind != "nan" and _key(a) < _key(b)


def _magnitude(a, negative):
    if a.kind == "nan":
        return a
    if a.kind == "inf":
        return bx.inf(negative)
    return bx.Value.num(-abs(a.q) if negative else abs(a.q), neg_zero=negative)


def _min_max(largest, a, b):
    if a.kind == "nan" or b.kind == "nan":
        return bx.NAN
    if not _less(a, b) and not _less(b, a):  # equal: of two zeros, min -0 and max +0
        return a if a.neg != largest else b
    return a if _less(a, b) != largest else b


def _scalb(a, n, working):
    """IEEE 754's scaleB: a*2^n rounded once to the working format; NaN where n is no
    integer (an infinity or NaN included), as the C++ evaluator gives."""
    if n.kind != "num" or n.q.denominator != 1 or a.kind == "nan":
        return bx.NAN
    if a.kind == "inf" or a.q == 0:
        return a
    # Past 2000 the result is zero or infinite in any format either way, and 2^n is
    # not worth building.
    e = max(-2000, min(2000, int(n.q)))
    return bx.round_to(bx.Value.num(a.q * Fraction(2) ** e), working)


# The exact functions: a kernel's clamps, sign handling and branches, no rounding
# (but scalb's, which rounds to the working format; _eval passes it).
EXACT = {
    "abs": lambda a: _magnitude(a, False),
    "copysign": lambda a, b: _magnitude(a, b.neg),
    "min": lambda a, b: _min_max(False, a, b),
    "max": lambda a, b: _min_max(True, a, b),
    "if_less": lambda a, b, c, d: c if _less(a, b) else d,
    "scalb": _scalb,
}


def same(a, b):
    if a.kind == "nan" or b.kind == "nan":
        return a.kind == b.kind
    return a.kind == b.kind and a.q == b.q and a.neg == b.neg


def divide(a, b):
    """a / b exactly, with IEEE 754's special values and signs."""
    if a.kind == "nan" or b.kind == "nan":
        return bx.NAN
    neg = a.neg != b.neg
    if b.kind == "num" and b.q == 0:
        return bx.NAN if a.kind == "num" and a.q == 0 else bx.inf(neg)
    if a.kind == "inf":
        return bx.NAN if b.kind == "inf" else bx.inf(neg)
    if b.kind == "inf":
        return bx.Value.num(0, neg_zero=neg)
    return bx.Value.num(a.q / b.q, neg_zero=neg)


def square_root(a):
    if a.kind != "num" or a.q < 0:
        return bx.NAN if a.kind == "nan" or (a.kind == "num" and a.q < 0) else a
    if a.q == 0:
        return a
    # sqrt of a rational is rational only where exact; else irrational, never a
    # rounding breakpoint: 2^-300 of its size decides the rounding.
    k = 400
    n = a.q * Fraction(2) ** (2 * k)
    r = math.isqrt(n.numerator // n.denominator)
    if Fraction(r) ** 2 == n:
        return bx.Value.num(Fraction(r) / Fraction(2) ** k)
    return bx.Value.num((Fraction(r) + Fraction(1, 2)) / Fraction(2) ** k)


_NEAREST = {}


def nearest(function, argument):
    """The binary32 nearest function(argument), from mpmath at 200 bits (cached)."""
    key = (function, argument.kind, argument.q, argument.neg)
    if key not in _NEAREST:
        _NEAREST[key] = _nearest(function, argument)
    return _NEAREST[key]


def _nearest(function, argument):
    if argument.kind != "num":
        return bx.from_float(float(FUNCTIONS[function](bx.to_float(argument)))) if function != "log" else bx.NAN
    with mpmath.workprec(200):
        q = argument.q
        y = FUNCTIONS[function](mpmath.mpf(q.numerator) / q.denominator)
        if not mpmath.isfinite(y):
            return bx.from_float(float(y))
        # _mpf_ is (sign, mantissa, exponent, bits): man_exp drops the sign.
        sign, man, exp, _ = mpmath.mpf(y)._mpf_
        exact = Fraction(int(man)) * (Fraction(2) ** exp if exp >= 0 else Fraction(1, 2 ** -exp))
        if sign:
            exact = -exact
    return bx.round_to(bx.Value.num(exact), bx.F32)


def neighbours(v, ulps):
    """The binary32 values within `ulps` of v, v first, then 1 up, 1 down, 2 up ..."""
    if v.kind != "num":
        return [v]
    bits = bx.bits(v)
    out = [v]
    for k in range(1, ulps + 1):
        for step in (k, -k):
            out.append(step_bits(bits, step))
    return [x for x in out if x is not None]


def step_bits(bits, step):
    """The binary32 `step` values above (step > 0) or below the one of `bits`."""
    # Order the encodings as integers on the real line.
    key = bits if bits < 0x80000000 else -(bits - 0x80000000)
    key += step
    new = key if key >= 0 else 0x80000000 + (-key)
    if new > 0xFFFFFFFF or (new & 0x7F800000) == 0x7F800000 and (new & 0x7FFFFF):
        return None
    return bx.from_bits(new)


def parse(text):
    """A program from statements (no name); the operands' names are looked up when it is
    evaluated."""
    tokens = []
    for number, name, other in TOKEN.findall(text):
        if number:
            tokens.append(("num", Fraction(float.fromhex(number)) if number.lower().startswith("0x")
                           else Fraction(number)))
        elif name:
            tokens.append(("name", name))
        elif other.strip():
            tokens.append(("op", other))
    pos = [0]
    working = [bx.F32]
    calls = [0]
    implemented = [0]

    def peek():
        return tokens[pos[0]] if pos[0] < len(tokens) else ("end", None)

    def take(kind=None, value=None):
        t = peek()
        if (kind and t[0] != kind) or (value is not None and t[1] != value):
            raise ValueError("model %r: expected %s at token %d, found %r" % (text, value or kind, pos[0], t))
        pos[0] += 1
        return t

    def expression():
        left = term()
        while peek() in (("op", "+"), ("op", "-")):
            op = take()[1]
            left = (op, left, term())
        return left

    def term():
        left = unary()
        while peek() in (("op", "*"), ("op", "/")):
            op = take()[1]
            left = (op, left, unary())
        return left

    def unary():
        if peek() == ("op", "-"):
            take()
            return ("neg", unary())
        return primary()

    def primary():
        t = peek()
        if t == ("op", "("):
            take()
            e = expression()
            take("op", ")")
            return e
        if t[0] == "num":
            take()
            return ("num", t[1])
        name = take("name")[1]
        if peek() == ("op", "("):
            take()
            args = [expression()]
            while peek() == ("op", ","):
                take()
                args.append(expression())
            take("op", ")")
            if name == "neg":
                return ("neg", args[0])
            if name in FUNCTIONS and peek() == ("name", "as"):
                # An implementation written out: its value is the expression's, and the
                # call is listed with it (no value searched).
                take()
                implemented[0] += 1
                return ("as", name, args[0], expression())
            if name in FUNCTIONS:
                calls[0] += 1
            return (name,) + tuple(args)
        return ("var", name)

    statements = []
    while peek()[0] != "end":
        name = take("name")[1]
        if name == "working" and peek()[0] == "name":
            working[0] = ROUNDINGS[take("name")[1]]
        else:
            take("op", "=")
            statements.append((name, expression()))
        if peek()[0] != "end":
            take("op", ";")
    return Program(working[0], statements, calls[0], implemented[0])
