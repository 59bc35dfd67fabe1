#!/usr/bin/python3
"""ulpgate's C++ cast model (oracles/cast_policy.cc, through the ulpgate_cast_codes program)
against exact_casts.py, written apart: for every target format, source format (f32, f64,
bf16, f16) and policy CastPolicies lists, the same policy names in the same order and the
same code, bit for bit (NaN signs included), on every midpoint between the target's adjacent
codes with its source neighbours one ULP each side, the edges, signed zeros, NaNs,
infinities and seeded random bit patterns. Standard library only (ctest
exact_casts_cross_check, label sampled)."""

import argparse
import os
import random
import subprocess
import sys
import time
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exact_casts as ec  # noqa: E402


def source_bits(source, value):
    """A positive Fraction rounded to nearest even into the source format: its bits."""
    m, e = value.numerator, 0
    d = value.denominator
    assert d & (d - 1) == 0
    e = -(d.bit_length() - 1)
    return ec._ieee_round(source, ('num', False, m, e))


def inputs(source, target, n_random):
    s, t = ec.FORMATS[source], ec.TARGETS[target]
    values = set()
    for c in range(1 << t.bits):
        d = t.decode(c)
        if d[0] == 'num' and not d[1]:
            values.add(Fraction(d[2]) * Fraction(2)**d[3])
    lm, le = t.largest
    values.add(Fraction(lm) * Fraction(2)**le + Fraction(2)**(t.emax - t.mb))
    values = sorted(values)
    out = []
    top = ((1 << (s.eb)) - 1) << s.mb  # +inf
    for a, b in zip(values, values[1:]):
        for v in (a, (a + b) / 2):
            bits = source_bits(source, v)
            if 0 < bits < top:
                out += [bits, bits + 1, bits - 1]
    rng = random.Random(f'{source}{target}')
    out += [rng.getrandbits(s.bits) for _ in range(n_random)]
    out += [0, top, top | 1, top | (1 << (s.mb - 1)), 1, (1 << s.mb) - 1, 1 << s.mb]
    return out + [b | s.sign_bit for b in out]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--cast-codes', required=True, help='the ulpgate_cast_codes program')
    args = ap.parse_args()
    start = time.time()
    checked, total_bad, failures = 0, 0, []
    for target in ec.TARGETS:
        for source, n_random in (('f32', 400), ('f64', 400), ('bf16', 300), ('f16', 300)):
            ins = inputs(source, target, n_random)
            text = subprocess.run([args.cast_codes, source, target], check=True,
                                  capture_output=True, text=True,
                                  input=''.join(f'{b:x}\n' for b in ins)).stdout.split('\n')
            names = text[0].split()
            want = [p.name for p in ec.policies(source, target)]
            if names != want:
                failures.append(f'{source} -> {target}: C++ lists {names}, exact_casts.py {want}')
                total_bad += 1
                continue
            pols = ec.policies(source, target)
            bad = 0
            for b, line in zip(ins, text[1:]):
                v = ec.decode_source(source, b)
                for p, got in zip(pols, line.split()):
                    mine = ec.cast(source, target, v, p)
                    checked += 1
                    if int(got, 16) != mine:
                        bad += 1
                        if bad <= 3:
                            failures.append(
                                f'{source} -> {target} {p.name}: input 0x{b:x} '
                                f'({ec.value_text(source, b)}): C++ 0x{int(got, 16):02x}, '
                                f'exact_casts.py 0x{mine:02x}')
            total_bad += bad
            print(f'{source} -> {target}: {len(pols)} policies x {len(ins)} inputs, '
                  f'{bad} differ')
    for f in failures:
        print('FAIL: ' + f)
    print(f'{checked} codes compared in {time.time() - start:.1f} s')
    print(f'{checked - total_bad} passed, {total_bad} failed')
    return 1 if total_bad else 0


if __name__ == '__main__':
    sys.exit(main())
