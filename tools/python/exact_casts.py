#!/usr/bin/python3
"""Exact casts to the 8-, 6- and 4-bit formats and the MX block scales, written from the
formats' specifications (OCP OFP8, OCP Microscaling v1.0, the FNUZ variants of LLVM's
APFloat and ml_dtypes) with Python integers only, sharing no code with ulpgate's C++
(oracles/cast_policy.cc): the independent recheck of its cast models and the judge of the
cast peers (peer_casts_test.py).

    /usr/bin/python3 tools/python/exact_casts.py cast --from f32 --to float8_e4m3fn X...
    /usr/bin/python3 tools/python/exact_casts.py match --from f32 --to float8_e4m3fn IN.npy OUT.npy
    /usr/bin/python3 tools/python/exact_casts.py mx-match --elem float8_e4m3fn BLOCKS.npy SCALES.npy

`cast` prints every policy's code for each X (decimal or C99 hex float, rounded to the source
format first). `match` reads a peer's inputs (float32, float64, or uint16 bit patterns for
--from bf16/f16) and its output codes (uint8, one code a byte, FP4 in the low nibble) and
prints the policies they follow bit for bit, else the nearest one and the first inputs
where it differs. `mx-match` does the same for the E8M0 scales (uint8) of float32 blocks
(one block a row) against the scale rules. Exit status: 0 when something matches, 1 not.

Policies are named as ulpgate's CastPolicy::Name(): ROUNDING.OVERFLOW[.SUBNORMALS][.via_ROUTE]
  ROUNDING    nearest_even | nearest_away | toward_zero | up | down
  OVERFLOW    saturate (largest finite) | nan | infinity (where the format has them); a
              magnitude that rounds, with the exponent unbounded, past the largest finite
              value overflows, as does an infinite source; `infinity` follows IEEE: a
              rounding that never rounds the magnitude up stops at the largest finite value
  SUBNORMALS  omitted when kept | flush_input (a subnormal source is a zero of its sign)
              | flush_output (a subnormal result is a zero of its sign)
  ROUTE       omitted when direct | via_bf16 | via_f16 | via_f32: rounded to nearest even
              with IEEE overflow to that format first (a double rounding); a route must be
              wider than the target and narrower than the source
What no policy varies: a NaN is the format's NaN (a format without NaN takes the sign bit
alone, -0); a zero result is +0 where the format has no -0; E8M0 (unsigned, no zero) takes a
negative source, a zero and -0 as NaN and a positive one below 2^-127 as 2^-127.
NaN codes are matched as one class (0x7f and 0xff are both E4M3's NaN): which NaN a peer
writes is not a rounding question.

MX scale rules for a block's amax = max |x| (E8M0 biased byte, the exponent clamped to
[-127, 127], NaN amax -> 0xff, a zero amax -> 0x00), emax and P the element format's largest
exponent and precision, MAX its largest finite value:
  floor               floor(log2 amax) - emax                 (OCP MX v1.0, 6.3)
  ceil                ceil(log2 amax) - emax
  even                floor(log2 r) - emax, r = amax rounded to P bits, ties away from zero
  rceil               ceil(log2(amax / MAX))                  (cuBLAS's MX recipe)
The recipe divides in float32 first; for a float32 amax and these MAX (significand 1.5, 1.75
or 1.875) that rounding never moves the quotient across a power of two, so the exact
quotient gives the same bytes.
"""

import argparse
import math
import struct
import sys
from fractions import Fraction


class Format:
    """A binary floating-point format from its bit layout. kind: 'ieee' (infinities, NaNs with
    the exponent all ones), 'fn' (no infinity, NaN = every bit of the magnitude set), 'fnuz'
    (no infinity, no -0, NaN = the sign bit alone), 'finite' (no infinity, no NaN), 'e8m0'
    (unsigned, no zero, no subnormals, NaN = 0xff)."""

    def __init__(self, name, exponent_bits, mantissa_bits, bias, kind):
        self.name = name
        self.eb = exponent_bits
        self.mb = mantissa_bits
        self.bias = bias
        self.kind = kind
        self.signed = kind != 'e8m0'
        self.bits = exponent_bits + mantissa_bits + (1 if self.signed else 0)
        self.precision = mantissa_bits + 1
        self.subnormals = kind != 'e8m0'
        self.emin = (1 if self.subnormals else 0) - bias
        top = (1 << exponent_bits) - 1  # the largest exponent field
        if kind == 'ieee':
            largest_field, largest_mant = top - 1, (1 << mantissa_bits) - 1
        elif kind == 'fn':  # the all-ones magnitude is NaN
            largest_field, largest_mant = top, (1 << mantissa_bits) - 2
        elif kind == 'e8m0':  # 0xff is NaN
            largest_field, largest_mant = top - 1, 0
        else:  # fnuz, finite: every exponent field holds numbers
            largest_field, largest_mant = top, (1 << mantissa_bits) - 1
        self.emax = largest_field - bias
        # The largest finite value as an integer times a power of two.
        self.largest = ((1 << mantissa_bits) + largest_mant, self.emax - mantissa_bits)
        self.has_nan = kind != 'finite'
        self.has_inf = kind == 'ieee'
        self.has_neg_zero = kind in ('ieee', 'fn', 'finite')
        self.sign_bit = (1 << (self.bits - 1)) if self.signed else 0

    # -- decoding a code (the peer's outputs, the sources' bit patterns) --
    def is_nan(self, code):
        mag = code & ~self.sign_bit
        if self.kind == 'ieee':
            return (mag >> self.mb) == (1 << self.eb) - 1 and (mag & ((1 << self.mb) - 1)) != 0
        if self.kind == 'fn':
            return mag == (1 << (self.bits - 1)) - 1
        if self.kind == 'fnuz':
            return code == self.sign_bit
        if self.kind == 'e8m0':
            return code == 0xff
        return False

    def decode(self, code):
        """('nan',), ('inf', negative) or ('num', negative, m, e): the value (-1)^s m 2^e."""
        if self.is_nan(code):
            return ('nan',)
        negative = self.signed and bool(code & self.sign_bit)
        mag = code & ~self.sign_bit if self.signed else code
        field, mant = mag >> self.mb, mag & ((1 << self.mb) - 1)
        if self.kind == 'ieee' and field == (1 << self.eb) - 1:
            return ('inf', negative)
        if self.kind == 'e8m0':
            return ('num', False, 1, field - self.bias)
        if field == 0:
            return ('num', negative, mant, self.emin - self.mb)
        return ('num', negative, (1 << self.mb) | mant, field - self.bias - self.mb)

    # -- encoding --
    def nan_code(self, negative=False):
        if self.kind == 'ieee':
            return (self.sign_bit if negative else 0) | (((1 << self.eb) - 1) << self.mb) | (
                1 << (self.mb - 1))
        if self.kind == 'fn':
            return (self.sign_bit if negative else 0) | ((1 << (self.bits - 1)) - 1)
        if self.kind == 'fnuz':
            return self.sign_bit
        if self.kind == 'e8m0':
            return 0xff
        return self.sign_bit  # no NaN: -0

    def encode(self, negative, m, e):
        """The code of (-1)^s m 2^e, a value of this format (m >= 0)."""
        sign = self.sign_bit if negative else 0
        if m == 0:
            return sign if self.has_neg_zero else 0
        top = m.bit_length() - 1 + e  # floor(log2 value)
        if top < self.emin:  # subnormal: the mantissa counts quanta of 2^(emin - mb)
            return sign | _exact_shift(m, e - (self.emin - self.mb))
        significand = _exact_shift(m, e - (top - self.mb))
        return sign | ((top + self.bias) << self.mb) | (significand - (1 << self.mb))

    def inf_code(self, negative):
        return (self.sign_bit if negative else 0) | (((1 << self.eb) - 1) << self.mb)


def _exact_shift(m, k):
    """m 2^k, known to be an integer."""
    if k >= 0:
        return m << k
    assert m & ((1 << -k) - 1) == 0, 'not a value of the format'
    return m >> -k


SOURCES = {
    'f64': Format('f64', 11, 52, 1023, 'ieee'),
    'f32': Format('f32', 8, 23, 127, 'ieee'),
    'bf16': Format('bf16', 8, 7, 127, 'ieee'),
    'f16': Format('f16', 5, 10, 15, 'ieee'),
}
TARGETS = {
    'float8_e4m3fn': Format('float8_e4m3fn', 4, 3, 7, 'fn'),
    'float8_e4m3fnuz': Format('float8_e4m3fnuz', 4, 3, 8, 'fnuz'),
    'float8_e5m2': Format('float8_e5m2', 5, 2, 15, 'ieee'),
    'float8_e5m2fnuz': Format('float8_e5m2fnuz', 5, 2, 16, 'fnuz'),
    'float6_e2m3fn': Format('float6_e2m3fn', 2, 3, 1, 'finite'),
    'float6_e3m2fn': Format('float6_e3m2fn', 3, 2, 3, 'finite'),
    'float4_e2m1fn': Format('float4_e2m1fn', 2, 1, 1, 'finite'),
    'float8_e8m0fnu': Format('float8_e8m0fnu', 8, 0, 127, 'e8m0'),
}
FORMATS = dict(SOURCES, **TARGETS)
ROUTES = ('bf16', 'f16', 'f32')
ROUNDINGS = ('nearest_even', 'nearest_away', 'toward_zero', 'up', 'down')
OVERFLOWS = ('saturate', 'nan', 'infinity')
SUBNORMALS = ('', 'flush_input', 'flush_output')


class Policy:
    def __init__(self, rounding, overflow, subnormals='', route=None):
        self.rounding, self.overflow, self.subnormals, self.route = (rounding, overflow,
                                                                     subnormals, route)

    @property
    def name(self):
        parts = [self.rounding, self.overflow]
        if self.subnormals:
            parts.append(self.subnormals)
        if self.route:
            parts.append('via_' + self.route)
        return '.'.join(parts)

    @staticmethod
    def parse(name):
        parts = name.split('.')
        if len(parts) < 2 or parts[0] not in ROUNDINGS or parts[1] not in OVERFLOWS:
            raise ValueError(f'not a cast policy: {name}')
        p = Policy(parts[0], parts[1])
        rest = parts[2:]
        if rest and rest[0] in SUBNORMALS[1:]:
            p.subnormals = rest.pop(0)
        if rest and rest[0].startswith('via_') and rest[0][4:] in ROUTES:
            p.route = rest.pop(0)[4:]
        if rest:
            raise ValueError(f'not a cast policy: {name}')
        return p


def _wider(a, b):
    """Every value of b is one of a."""
    return (a.precision >= b.precision and a.emax >= b.emax and a.emin <= b.emin and
            (a.signed or not b.signed))


def policies(source, target):
    """Every deterministic policy that makes sense from `source` to `target`, in ulpgate's
    order (nearest_even.saturate first)."""
    s, t = FORMATS[source], FORMATS[target]
    out = []
    for route in (None,) + ROUTES:
        if route is not None:
            r = FORMATS[route]
            if route in (source, target) or not _wider(r, t) or not _wider(s, r):
                continue
        for sub in SUBNORMALS:
            for rounding in ROUNDINGS:
                for overflow in OVERFLOWS:
                    if overflow == 'nan' and not t.has_nan:
                        continue
                    if overflow == 'infinity' and not t.has_inf:
                        continue
                    out.append(Policy(rounding, overflow, sub, route))
    return out


def _round(fmt, negative, m, e, rounding):
    """(-1)^s m 2^e (m > 0) rounded to fmt's precision and subnormal spacing with the exponent
    unbounded above: (M, q), the result M 2^q."""
    top = m.bit_length() - 1 + e
    q = max(top, fmt.emin) - (fmt.precision - 1)  # the quantum's exponent
    shift = q - e
    if shift <= 0:
        return m << -shift, q
    below = m >> shift
    rest = m & ((1 << shift) - 1)
    half = 1 << (shift - 1)
    if rounding == 'nearest_even':
        up = rest > half or (rest == half and below & 1)
    elif rounding == 'nearest_away':
        up = rest >= half
    elif rounding == 'toward_zero':
        up = False
    elif rounding == 'up':
        up = rest != 0 and not negative
    else:  # down
        up = rest != 0 and negative
    return below + (1 if up else 0), q


def _greater(a, b):
    """a > b for (m, e) pairs m 2^e, m >= 0."""
    (am, ae), (bm, be) = a, b
    k = min(ae, be)
    return am << (ae - k) > bm << (be - k)


def route_value(route, value):
    """value (a decoded tuple) rounded to nearest even into an IEEE route format, overflowing
    to infinity: a decoded tuple again."""
    if value[0] != 'num':
        return value
    _, negative, m, e = value
    if m == 0:
        return value
    fmt = FORMATS[route]
    rm, rq = _round(fmt, negative, m, e, 'nearest_even')
    if _greater((rm, rq), fmt.largest):
        return ('inf', negative)
    return ('num', negative, rm, rq)


def cast(source, target, value, policy):
    """The code of `value` (a decoded tuple of `source`) cast to `target` under `policy`."""
    s, t = FORMATS[source], FORMATS[target]
    if value[0] == 'nan':
        return t.nan_code(value_negative_nan(value))
    if (policy.subnormals == 'flush_input' and value[0] == 'num' and value[2] != 0 and
            s.subnormals and value[2].bit_length() - 1 + value[3] < s.emin):
        value = ('num', value[1], 0, 0)
    if policy.route:
        value = route_value(policy.route, value)
    negative = value[1]
    if not t.signed and (negative or (value[0] == 'num' and value[2] == 0)):
        return t.nan_code()
    inward = (policy.rounding == 'toward_zero' or (policy.rounding == 'up' and negative) or
              (policy.rounding == 'down' and not negative))
    if value[0] == 'inf':
        if policy.overflow == 'infinity':
            return t.inf_code(negative)
        return _overflowed(t, negative, policy, False)
    _, negative, m, e = value
    if m == 0:
        return t.encode(negative, 0, 0)
    rm, rq = _round(t, negative, m, e, policy.rounding)
    if _greater((rm, rq), t.largest):
        return _overflowed(t, negative, policy, inward)
    if rm == 0 and t.kind == 'e8m0':
        rm, rq = 1, t.emin
    if (policy.subnormals == 'flush_output' and rm != 0 and
            rm.bit_length() - 1 + rq < t.emin):
        rm = 0
    return t.encode(negative, rm, rq)


def value_negative_nan(value):
    return len(value) > 1 and value[1]


def _overflowed(t, negative, policy, inward):
    if policy.overflow == 'saturate' or (policy.overflow == 'infinity' and inward):
        return t.encode(negative, *t.largest)
    if policy.overflow == 'nan':
        return t.nan_code()
    return t.inf_code(negative)


def decode_source(source, code):
    """A source's bit pattern decoded, keeping a NaN's sign (ulpgate's model keeps it too)."""
    fmt = FORMATS[source]
    d = fmt.decode(code)
    if d[0] == 'nan':
        return ('nan', bool(code & fmt.sign_bit))
    return d


def same_code(target, a, b):
    t = FORMATS[target]
    return a == b or (t.is_nan(a) and t.is_nan(b))


def value_text(fmt_name, code):
    d = FORMATS[fmt_name].decode(code)
    if d[0] == 'nan':
        return 'nan'
    if d[0] == 'inf':
        return '-inf' if d[1] else 'inf'
    _, negative, m, e = d
    v = float(Fraction(m) * Fraction(2)**e) if m else 0.0
    return repr(-v if negative else v) if m or not negative else '-0.0'


# ---------------------------------------------------------------------------- matching

def match(source, target, in_codes, out_codes, names=None, show=5):
    """Which policies give out_codes for in_codes (source bit patterns): (matching names,
    report lines)."""
    values = [decode_source(source, c) for c in in_codes]
    candidates = [p for p in policies(source, target) if names is None or p.name in names]
    matched, mismatches = [], []
    for p in candidates:
        bad = 0
        for v, got in zip(values, out_codes):
            if not same_code(target, cast(source, target, v, p), got):
                bad += 1
                # Once it is worse than the best so far, the count is no use.
                if mismatches and bad > min(n for n, _ in mismatches):
                    break
        if bad == 0:
            matched.append(p.name)
        mismatches.append((bad, p))
    lines = []
    bits = FORMATS[source].bits
    if matched:
        lines.append(f'{source} -> {target}: {len(in_codes)} inputs follow bit for bit: ' +
                     ', '.join(matched))
    else:
        bad, best = min(mismatches, key=lambda x: x[0])
        lines.append(f'{source} -> {target}: no policy matches all {len(in_codes)} inputs; '
                     f'nearest {best.name} ({bad} differ), first:')
        n = 0
        for c, v, got in zip(in_codes, values, out_codes):
            want = cast(source, target, v, best)
            if not same_code(target, want, got):
                lines.append(f'  input 0x{c:0{bits // 4}x} ({value_text(source, c)}): peer '
                             f'0x{got:02x} ({value_text(target, got)}), {best.name} 0x{want:02x}'
                             f' ({value_text(target, want)})')
                n += 1
                if n == show:
                    break
    return matched, lines


# ---------------------------------------------------------------------------- MX scales

MX_RULES = ('floor', 'ceil', 'even', 'rceil')


def _floor_log2(x):
    """floor(log2 x) of a positive Fraction."""
    k = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2)**k > x:
        k -= 1
    return k


def _ceil_log2(x):
    k = _floor_log2(x)
    return k if Fraction(2)**k == x else k + 1


def mx_scale(amax, elem, rule):
    """The E8M0 biased byte of a block whose amax is `amax` (a Fraction >= 0, or None for a
    NaN in the block) with elements of format `elem` under `rule`."""
    if amax is None:
        return 0xff
    t = FORMATS[elem]
    if amax == 0:
        k = -127
    elif rule == 'floor':
        k = _floor_log2(amax) - t.emax
    elif rule == 'ceil':
        k = _ceil_log2(amax) - t.emax
    elif rule == 'even':
        # Rounded to P bits with the exponent unbounded: up into the next binade iff the
        # significand is at least 2 - 2^-P, the midpoint below 2.
        m, e = _binary_fraction(amax)
        shift = m.bit_length() - t.precision
        if shift > 0:
            up = (m & ((1 << shift) - 1)) >= 1 << (shift - 1)
            m, e = (m >> shift) + (1 if up else 0), e + shift
        k = m.bit_length() - 1 + e - t.emax
    elif rule == 'rceil':
        lm, le = t.largest
        k = _ceil_log2(amax / (Fraction(lm) * Fraction(2)**le))
    else:
        raise ValueError(f'not an MX scale rule: {rule}')
    return max(-127, min(127, k)) + 127


def _binary_fraction(x):
    """(m, e) with x = m 2^e, x a Fraction whose denominator is a power of two."""
    d = x.denominator
    assert d & (d - 1) == 0, 'not a binary fraction'
    return x.numerator, -(d.bit_length() - 1)


def block_amax(codes, source='f32'):
    """max |x| of a block of source bit patterns as a Fraction, None if one is NaN (an
    infinity is taken as 2^128)."""
    best = Fraction(0)
    for c in codes:
        d = FORMATS[source].decode(c)
        if d[0] == 'nan':
            return None
        v = Fraction(2)**128 if d[0] == 'inf' else Fraction(d[2]) * Fraction(2)**d[3]
        best = max(best, v)
    return best


def mx_match(elem, blocks, scales, rules=MX_RULES, show=5):
    amaxes = [block_amax(b) for b in blocks]
    matched, counts = [], []
    for rule in rules:
        bad = sum(1 for a, s in zip(amaxes, scales) if mx_scale(a, elem, rule) != s)
        counts.append((bad, rule))
        if bad == 0:
            matched.append(rule)
    lines = []
    if matched:
        lines.append(f'MX scales of {len(blocks)} blocks, {elem} elements, follow: ' +
                     ', '.join(matched))
    else:
        bad, rule = min(counts)
        lines.append(f'MX scales of {len(blocks)} blocks, {elem} elements: no rule matches; '
                     f'nearest {rule} ({bad} differ), first:')
        n = 0
        for i, (a, s) in enumerate(zip(amaxes, scales)):
            want = mx_scale(a, elem, rule)
            if want != s:
                lines.append(f'  block {i}, amax {float(a) if a is not None else "nan"!r}: '
                             f'peer {s}, {rule} {want}')
                n += 1
                if n == show:
                    break
    return matched, counts, lines


# ---------------------------------------------------------------------------- the command

def _source_bits(source, text):
    """A decimal or C99 hex float rounded to the source format: its bit pattern."""
    x = float.fromhex(text) if 'x' in text.lower() else float(text)
    f64 = struct.unpack('<Q', struct.pack('<d', x))[0]
    if source == 'f64':
        return f64
    return _ieee_round(source, FORMATS['f64'].decode(f64))


def _ieee_round(source, d):
    fmt = FORMATS[source]
    if d[0] == 'nan':
        return fmt.nan_code()
    if d[0] == 'inf':
        return fmt.inf_code(d[1])
    _, negative, m, e = d
    if m == 0:
        return fmt.encode(negative, 0, 0)
    rm, rq = _round(fmt, negative, m, e, 'nearest_even')
    if _greater((rm, rq), fmt.largest):
        return fmt.inf_code(negative)
    return fmt.encode(negative, rm, rq)


def _load_codes(path, source):
    import numpy as np  # only the command reads .npy files
    a = np.load(path)
    if a.dtype == np.float64:
        return [int(v) for v in a.reshape(-1).view(np.uint64)]
    if a.dtype == np.float32:
        return [int(v) for v in a.reshape(-1).view(np.uint32)]
    return [int(v) for v in a.reshape(-1)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    sub = ap.add_subparsers(dest='command', required=True)
    c = sub.add_parser('cast', help="every policy's code for each value")
    c.add_argument('--from', dest='source', choices=SOURCES, default='f32')
    c.add_argument('--to', dest='target', choices=TARGETS, required=True)
    c.add_argument('values', nargs='+')
    m = sub.add_parser('match', help='the policies a peer\'s output codes follow')
    m.add_argument('--from', dest='source', choices=SOURCES, default='f32')
    m.add_argument('--to', dest='target', choices=TARGETS, required=True)
    m.add_argument('inputs')
    m.add_argument('outputs')
    x = sub.add_parser('mx-match', help="the scale rule a peer's E8M0 block scales follow")
    x.add_argument('--elem', choices=[t for t in TARGETS if t != 'float8_e8m0fnu'],
                   required=True)
    x.add_argument('blocks', help='float32, one block a row')
    x.add_argument('scales', help='uint8, one a block')
    args = ap.parse_args(argv)
    if args.command == 'cast':
        for text in args.values:
            code = _source_bits(args.source, text)
            v = decode_source(args.source, code)
            print(f'{text} ({args.source} {value_text(args.source, code)}):')
            for p in policies(args.source, args.target):
                out = cast(args.source, args.target, v, p)
                print(f'  {p.name:40} 0x{out:02x} {value_text(args.target, out)}')
        return 0
    if args.command == 'match':
        ins = _load_codes(args.inputs, args.source)
        outs = _load_codes(args.outputs, args.target)
        if len(ins) != len(outs):
            print(f'{len(ins)} inputs but {len(outs)} outputs', file=sys.stderr)
            return 2
        matched, lines = match(args.source, args.target, ins, outs)
        print('\n'.join(lines))
        return 0 if matched else 1
    import numpy as np
    blocks = np.load(args.blocks).astype(np.float32)
    blocks = [[int(v) for v in row.view(np.uint32)] for row in blocks.reshape(len(blocks), -1)]
    scales = [int(v) for v in np.load(args.scales).reshape(-1)]
    matched, _, lines = mx_match(args.elem, blocks, scales)
    print('\n'.join(lines))
    return 0 if matched else 1


if __name__ == '__main__':
    sys.exit(main())
