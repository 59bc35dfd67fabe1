#!/usr/bin/env python3
"""ctest driver: the IUT protocol of docs/iut.md, spoken by hand to two IUTs
that share no code: the one-page C example (minimal_iut.c) and ulpgate-iut
serving sigmoid_bwd_plugin.c. Both must greet, answer `ok N` with sigmoid_bwd's
outputs computed as p - p*s (p = grad*s, each operation rounded to binary32:
checked here in exact rational arithmetic), refuse an unknown kernel with
`error` and stay in step, and end on `quit`.

usage: iut_protocol_test.py MINIMAL_IUT ULPGATE_IUT LIBSIGMOID_OFF"""
import random
import struct
import subprocess
import sys
from fractions import Fraction

minimal, ulpgate_iut, plugin = sys.argv[1:4]
failures = []


def f32(x):
    """x (a Fraction) rounded to nearest binary32, ties to even (no overflow here)."""
    if x == 0:
        return 0.0
    sign = -1 if x < 0 else 1
    a = abs(x)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    q = max(e, -126) - 23  # the quantum: 2^q
    scaled = a / Fraction(2) ** q
    n, rest = divmod(scaled.numerator, scaled.denominator)
    twice = 2 * rest
    if twice > scaled.denominator or (twice == scaled.denominator and n % 2 == 1):
        n += 1
    return sign * float(Fraction(n) * Fraction(2) ** q)


def expected(g, s):
    p = f32(Fraction(g) * Fraction(s))
    q = f32(Fraction(p) * Fraction(s))
    return f32(Fraction(p) - Fraction(q))


def as_f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


rng = random.Random(7)
N = 1000
grads = [as_f32(rng.uniform(-8, 8) * 2.0 ** rng.randint(-20, 20)) for _ in range(N)]
ss = [as_f32(rng.random()) for _ in range(N)]
want = [expected(g, s) for g, s in zip(grads, ss)]
payload = struct.pack("<%df" % N, *grads) + struct.pack("<%df" % N, *ss)


def session(name, argv, target, variant):
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def line():
        return p.stdout.readline().decode().rstrip("\n")

    greeting = line()
    if greeting != "ulpgate-iut 1":
        failures.append("%s: greeting %r" % (name, greeting))
        p.kill()
        return
    offered = []
    while True:
        l = line()
        if l == "ready":
            break
        if not l.startswith("kernel "):
            failures.append("%s: %r before ready" % (name, l))
            p.kill()
            return
        offered.append(l)
    if "kernel %s sigmoid_bwd f32 %s" % (target, variant) not in offered:
        failures.append("%s: does not offer its kernel: %s" % (name, offered))
    # An unknown kernel: refused, and the stream stays in step.
    p.stdin.write(("call sigmoid_bwd f32 %s no_such_variant 2 %d\n" % (target, N)).encode() + payload)
    p.stdin.flush()
    answer = line()
    if not answer.startswith("error "):
        failures.append("%s: an unknown kernel answered %r" % (name, answer))
    for _ in range(2):  # twice: the same process serves call after call
        p.stdin.write(("call sigmoid_bwd f32 %s %s 2 %d\n" % (target, variant, N)).encode() + payload)
        p.stdin.flush()
        answer = line()
        if answer != "ok %d" % N:
            failures.append("%s: answered %r" % (name, answer))
            p.kill()
            return
        got = struct.unpack("<%df" % N, p.stdout.read(4 * N))
        bad = [i for i in range(N) if struct.pack("<f", got[i]) != struct.pack("<f", want[i])]
        if bad:
            i = bad[0]
            failures.append("%s: %d outputs differ from p - p*s, the first at grad %r s %r: %r, not %r"
                            % (name, len(bad), grads[i], ss[i], got[i], want[i]))
    p.stdin.write(b"quit\n")
    p.stdin.flush()
    if p.wait(timeout=30) != 0:
        failures.append("%s: exit status %d after quit" % (name, p.returncode))


session("minimal_iut", [minimal], "mine", "fms")
session("ulpgate-iut", [ulpgate_iut, "--plugin", plugin], "sigmoid_off", "fms_c")

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("iut protocol: both IUTs greet, compute p - p*s bit for bit on %d inputs twice, refuse an "
      "unknown kernel and quit" % N)
