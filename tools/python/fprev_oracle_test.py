#!/usr/bin/python3
"""fprev_oracle.py against synthetic kernels whose summation is written out by hand here:
a sequential chain, a recursive pairwise sum, 16 strided lanes with fused multiply-adds and
a halving reduction, a split K, a 4-term adder that aligns and truncates (a multiway node),
a float64 accumulator, a truncating 20-bit accumulator, a kernel that changes its order at
4 rows, and bf16 and f16 inputs. Each expected tree is built here from its definition
(nested tuples), not by the oracle's generators; the kernels round with struct and
Fraction, not with the oracle's rounding. Standard library only (ctest fprev_oracle,
label smoke)."""

import os
import random
import struct
import sys
import unittest
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fprev_oracle as fo  # noqa: E402


def f32(x):
    """x (a float, or a Fraction) rounded to binary32, nearest even."""
    if isinstance(x, Fraction):
        return round_bits(x, 24, -126)
    return struct.unpack('<f', struct.pack('<f', x))[0]


def fma32(a, b, c):
    return f32(Fraction(a) * Fraction(b) + Fraction(c))


def round_bits(x, p, emin):
    """x rounded to p bits (nearest even), exponent at least emin: by Fraction."""
    q = Fraction(x)
    if q == 0:
        return 0.0
    e = 0
    a = abs(q)
    while a >= 2:
        a /= 2
        e += 1
    while a < 1:
        a *= 2
        e -= 1
    e = max(e, emin)
    scale = Fraction(2) ** (e - (p - 1))
    n = q / scale
    r = round(n)  # Fraction rounds half to even
    return float(r * scale)


def bf16(x):
    return round_bits(x, 8, -126)


def f16(x):
    return round_bits(x, 11, -14)


def matmul_by(dot):
    def fn(a, b):
        return [[dot(ar, br) for br in b] for ar in a]
    return fn


def seq_dot(ar, br):
    acc = 0.0
    for x, y in zip(ar, br):
        acc = f32(acc + f32(x * y))
    return acc


def reverse_fma_dot(ar, br):
    # From the last k down to the first, each product fused into the sum.
    acc = f32(ar[-1] * br[-1])
    for x, y in zip(reversed(ar[:-1]), reversed(br[:-1])):
        acc = fma32(x, y, acc)
    return acc


def pairwise_dot(ar, br):
    def s(lo, hi):
        if hi - lo == 1:
            return f32(ar[lo] * br[lo])
        mid = (lo + hi) // 2
        return f32(s(lo, mid) + s(mid, hi))
    return s(0, len(ar))


def lanes16_fma_dot(ar, br):
    acc = [None] * 16
    for k, (x, y) in enumerate(zip(ar, br)):
        lane = k % 16
        acc[lane] = f32(x * y) if acc[lane] is None else fma32(x, y, acc[lane])
    while len(acc) > 1:
        h = len(acc) // 2
        acc = [f32(acc[i] + acc[i + h]) for i in range(h)]
    return acc[0]


def split_k64_dot(ar, br):
    parts = [seq_dot(ar[s:s + 64], br[s:s + 64]) for s in range(0, len(ar), 64)]
    total = parts[0]
    for p in parts[1:]:
        total = f32(total + p)
    return total


def truncating_add4(terms):
    """An aligned multi-term adder: every term cut to the grid of the largest one's last
    place (24 bits), toward zero, then added exactly and rounded to binary32."""
    big = max(abs(Fraction(t)) for t in terms)
    if big == 0:
        return 0.0
    e = 0
    a = big
    while a >= 2:
        a /= 2
        e += 1
    while a < 1:
        a *= 2
        e -= 1
    grid = Fraction(2) ** (e - 23)
    total = sum(int(Fraction(t) / grid) * grid for t in terms)  # int() truncates
    return f32(total)


def add4_dot(ar, br):
    acc = None
    for s in range(0, len(ar), 4):
        prods = [Fraction(x) * Fraction(y) for x, y in zip(ar[s:s + 4], br[s:s + 4])]
        acc = truncating_add4(prods if acc is None else [acc] + prods)
    return acc


def f64acc_dot(ar, br):
    acc = 0.0
    for x, y in zip(ar, br):
        acc = acc + x * y  # binary64; products of binary32 values are exact in it
    return f32(acc)


def trunc20_dot(ar, br):
    """A 20-bit accumulator that truncates: sum exact, then cut to 20 bits toward zero."""
    acc = Fraction(0)
    for x, y in zip(ar, br):
        acc = _trunc(acc + Fraction(x) * Fraction(y), 20)
    return f32(acc)


def _trunc(q, p):
    if q == 0:
        return q
    a, e = abs(q), 0
    while a >= 2:
        a /= 2
        e += 1
    while a < 1:
        a *= 2
        e -= 1
    grid = Fraction(2) ** (e - (p - 1))
    return int(q / grid) * grid


def bf16_seq_dot(ar, br):
    acc = 0.0
    for x, y in zip(ar, br):
        acc = f32(acc + x * y)  # bf16 products are exact in binary32
    return bf16(acc)


def f16_pairwise_dot(ar, br):
    def s(lo, hi):
        if hi - lo == 1:
            return ar[lo] * br[lo]  # exact
        mid = (lo + hi) // 2
        return f32(s(lo, mid) + s(mid, hi))
    return f16(s(0, len(ar)))


def edge_rows_differ(a, b):
    # Rows past the first 2 (a full tile) go through the lane kernel; the first 2 do not.
    return [[(seq_dot if r < 2 else lanes16_fma_dot)(ar, br) for br in b]
            for r, ar in enumerate(a)]


def batch_variant(a, b):
    # Order changes with the batch: 4 rows and more go through the lane kernel.
    dot = lanes16_fma_dot if len(a) >= 4 else seq_dot
    return [[dot(ar, br) for br in b] for ar in a]


# ---- expected trees, built from their definitions

def seq_tree(idx):
    t = idx[0]
    for i in idx[1:]:
        t = (t, i)
    return t


def halves_tree(lo, hi):
    if hi - lo == 1:
        return lo
    mid = (lo + hi) // 2
    return (halves_tree(lo, mid), halves_tree(mid, hi))


def lanes16_tree(k):
    acc = [seq_tree(list(range(lane, k, 16))) for lane in range(16)]
    while len(acc) > 1:
        h = len(acc) // 2
        acc = [(acc[i], acc[i + h]) for i in range(h)]
    return acc[0]


def split64_tree(k):
    t = seq_tree(list(range(0, 64)))
    for s in range(64, k, 64):
        t = (t, seq_tree(list(range(s, s + 64))))
    return t


def add4_tree(k):
    t = (0, 1, 2, 3)
    for s in range(4, k, 4):
        t = (t, s, s + 1, s + 2, s + 3)
    return t


def relabel(t, swap):
    if isinstance(t, int):
        return swap.get(t, t)
    return tuple(relabel(c, swap) for c in t)


def same_tree(x, y):
    return fo.key(x) == fo.key(y)


class Trees(unittest.TestCase):
    def check(self, fn, k, want, fmt_in='f32', fmt_out=None, shape=(3, 2), desc=None):
        kernel = fo.Kernel(fn, fmt_in, fmt_out)
        got, prober = fo.reveal_tree(kernel, k, shape, pack=True)
        got2, _ = fo.reveal_tree(kernel, k, (1, 1))
        self.assertEqual(got2, got)
        self.assertEqual(prober.disagree, [])
        probes = prober.count
        self.assertTrue(same_tree(got, want), f'{got} != {want}')
        if desc is not None:
            self.assertEqual(fo.describe(got), desc)
        return got, probes, kernel

    def test_sequential(self):
        _, probes, _ = self.check(matmul_by(seq_dot), 32, seq_tree(list(range(32))),
                                  desc='sequential')
        self.assertEqual(probes, 31)  # one probe from leaf 0 to each other leaf

    def test_pairwise(self):
        self.check(matmul_by(pairwise_dot), 32, halves_tree(0, 32), desc='recursive halves')

    def test_pairwise_odd_k(self):
        self.check(matmul_by(pairwise_dot), 13, halves_tree(0, 13))

    def test_strided_lanes(self):
        self.check(matmul_by(lanes16_fma_dot), 64, lanes16_tree(64),
                   desc='16 strided lanes + halving')

    def test_split_k(self):
        self.check(matmul_by(split_k64_dot), 192, split64_tree(192),
                   desc='blocks of 64: sequential in each, blocks sequential')

    def test_multiway(self):
        got, _, _ = self.check(matmul_by(add4_dot), 16, add4_tree(16))
        self.assertEqual(sorted({len(n) for n in fo._nodes(got)}), [4, 5])

    def test_bf16_output(self):
        self.check(matmul_by(bf16_seq_dot), 64, seq_tree(list(range(64))), 'bf16', 'bf16')

    def test_f16(self):
        self.check(matmul_by(f16_pairwise_dot), 64, halves_tree(0, 64), 'f16', 'f16')

    def test_counts_beyond_the_output(self):
        kernel = fo.Kernel(matmul_by(bf16_seq_dot), 'bf16', 'bf16')
        with self.assertRaises(fo.OracleError):
            fo.reveal_tree(kernel, 1024)

    def test_rows_that_add_differently(self):
        kernel = fo.Kernel(edge_rows_differ)
        got, prober = fo.reveal_tree(kernel, 32, (4, 2))
        self.assertTrue(same_tree(got, seq_tree(list(range(32)))))
        self.assertEqual(prober.disagree[0]['at'], (2, 0))
        got, prober = fo.reveal_tree(kernel, 32, (4, 2), at=(3, 1))
        self.assertTrue(same_tree(got, lanes16_tree(32)))
        # Packed, rows 2 and 3 answer for the lanes: the probes are no tree's.
        with self.assertRaises(fo.OracleError):
            fo.reveal_tree(kernel, 32, (4, 2), pack=True)

    def test_uneven_blocks_named(self):
        # A BLAS's K partition: 320, 320, then the last 384 halved (192, 192), each block a
        # chain from zero, the blocks added in sequence.
        t, lo = None, 0
        for b in (320, 320, 192, 192):
            block = seq_tree(list(range(lo, lo + b)))
            t = block if t is None else (t, block)
            lo += b
        self.assertEqual(fo.describe(t), 'K in blocks added in sequence: 2 x 320 + 2 x 192: '
                         'sequential')

    def test_not_a_tree(self):
        # Adds the ones exactly whatever M: no term is ever lost, every probe reads k - 2.
        def exact(a, b):
            return [[f32(sum(Fraction(x) * Fraction(y) for x, y in zip(ar, br))) for br in b]
                    for ar in a]
        with self.assertRaises(fo.OracleError):
            fo.reveal_tree(fo.Kernel(exact), 8)


FUSED = 'acc f32, products fused (exact), two products: '


class Models(unittest.TestCase):
    rng = None

    def fits(self, fn, tree, fmt_in='f32', fmt_out=None, shape=(3, 2), trials=2):
        kernel = fo.Kernel(fn, fmt_in, fmt_out)
        return [m.name() for m in fo.fit_models(kernel, tree, shape, seed=3, trials=trials)]

    def test_sequential_rounded(self):
        self.assertEqual(self.fits(matmul_by(seq_dot), seq_tree(list(range(48)))),
                         ['acc f32, products rounded'])

    def test_lanes_fused(self):
        self.assertEqual(self.fits(matmul_by(lanes16_fma_dot), lanes16_tree(64)),
                         [FUSED + 'the low k rounded first'])

    def test_reverse_fused(self):
        # The tree as the probes give it: leaf 0 joins last, beside the rest.
        kernel = fo.Kernel(matmul_by(reverse_fma_dot))
        tree, _ = fo.reveal_tree(kernel, 12, (2, 2))
        self.assertTrue(same_tree(tree, seq_tree(list(range(11, -1, -1)))))
        self.assertEqual([m.name() for m in fo.fit_models(kernel, tree, (2, 2), seed=3)],
                         [FUSED + 'the high k rounded first'])

    def test_wrong_tree_reproduces_nothing(self):
        # The self-check is not vacuous: the right kernel under a wrong order fails.
        self.assertEqual(self.fits(matmul_by(seq_dot), halves_tree(0, 48)), [])
        self.assertEqual(self.fits(matmul_by(lanes16_fma_dot), seq_tree(list(range(64)))), [])
        # A tree one swap away from the lanes' (leaves 17 and 33 exchanged: lane 1 adds
        # 33 before 17).
        t = lanes16_tree(64)
        swapped = relabel(t, {17: 33, 33: 17})
        self.assertNotEqual(fo.key(swapped), fo.key(t))
        # Only about 3% of random outputs tell these two apart: 40 calls of 6 outputs.
        self.assertEqual(self.fits(matmul_by(lanes16_fma_dot), swapped, trials=40), [])

    def test_f64_accumulator(self):
        self.assertEqual(self.fits(matmul_by(f64acc_dot), seq_tree(list(range(32)))),
                         ['acc f64, products rounded, output f32',
                          FUSED.replace('f32', 'f64') + 'the low k rounded first, output f32',
                          FUSED.replace('f32', 'f64') + 'the high k rounded first, output f32'])

    def test_bf16(self):
        self.assertIn('acc f32, products rounded, output bf16',
                      self.fits(matmul_by(bf16_seq_dot), seq_tree(list(range(32))), 'bf16', 'bf16'))

    def test_multiway(self):
        # The oracle's multi-term node adds exactly and rounds once; the truncating adder
        # differs from that on random inputs, and the check says so.
        self.assertEqual(self.fits(matmul_by(add4_dot), add4_tree(16)), [])


class Accumulator(unittest.TestCase):
    def acc(self, fn, tree, fmt_in='f32', fmt_out=None):
        return fo.accumulator(fo.Kernel(fn, fmt_in, fmt_out), tree, (2, 2))

    def test_sequential(self):
        r = self.acc(matmul_by(seq_dot), seq_tree(list(range(16))))
        self.assertEqual((r['bits'], r['rounding'], r['fused']), (24, 'nearest even', False))

    def test_lanes_fused(self):
        r = self.acc(matmul_by(lanes16_fma_dot), lanes16_tree(64))
        self.assertEqual((r['bits'], r['rounding'], r['fused']), (24, 'nearest even', True))

    def test_f64(self):
        r = self.acc(matmul_by(f64acc_dot), seq_tree(list(range(16))))
        self.assertEqual((r['bits'], r['rounding'], r['fused']), (53, 'nearest even', True))

    def test_truncation(self):
        r = self.acc(matmul_by(trunc20_dot), seq_tree(list(range(16))))
        self.assertEqual((r['bits'], r['rounding']), (20, 'truncation (toward zero)'))

    def test_bf16_products_exact(self):
        r = self.acc(matmul_by(bf16_seq_dot), seq_tree(list(range(16))), 'bf16', 'bf16')
        # 2^-j in bf16 output: the accumulator's 24 bits show through (2^-23 is a bf16).
        self.assertEqual((r['bits'], r['fused']), (24, None))


class Batch(unittest.TestCase):
    def test_variant(self):
        self.assertEqual(fo.batch_invariance(fo.Kernel(batch_variant), 64, max_rows=6, n=2), 4)

    def test_invariant(self):
        self.assertIsNone(fo.batch_invariance(fo.Kernel(matmul_by(lanes16_fma_dot)), 64,
                                              max_rows=6, n=2))


class Rounding(unittest.TestCase):
    def test_round_to_against_struct(self):
        rng = random.Random(5)
        for _ in range(20000):
            x = rng.uniform(-4, 4) * 2.0 ** rng.randint(-140, 130)
            want = struct.unpack('<f', struct.pack('<f', x))[0] if abs(x) < 3.4e38 else None
            if want is not None:
                self.assertEqual(fo.round_to(x, 'f32'), want, x.hex())

    def test_round_sum_ties(self):
        # 1 + 2^-24 is a binary32 tie: alone it goes to 1 (even); a hair above, up.
        self.assertEqual(fo.round_sum([1.0, 2.0 ** -24], 'f32'), 1.0)
        self.assertEqual(fo.round_sum([1.0, 2.0 ** -24, 2.0 ** -80], 'f32'), 1.0 + 2.0 ** -23)
        self.assertEqual(fo.round_sum([1.0, 2.0 ** -24, -2.0 ** -80], 'f32'), 1.0)
        self.assertEqual(fo.round_sum([1.0 + 2.0 ** -23, 2.0 ** -24], 'f32'), 1.0 + 2.0 ** -22)
        # bf16: 1 + 2^-8 a tie, 1 + 3 * 2^-8 a tie above an odd place.
        self.assertEqual(fo.round_to(1.0 + 2.0 ** -8, 'bf16'), 1.0)
        self.assertEqual(fo.round_to(1.0 + 3 * 2.0 ** -8, 'bf16'), 1.0 + 2.0 ** -6)
        # f16 subnormals: the grid is 2^-24.
        self.assertEqual(fo.round_to(3 * 2.0 ** -26, 'f16'), 2.0 ** -24)
        self.assertEqual(fo.round_to(2.0 ** -25, 'f16'), 0.0)


if __name__ == '__main__':
    unittest.main(verbosity=1)
