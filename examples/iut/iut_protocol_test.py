#!/usr/bin/env python3
"""ctest driver: the IUT protocol of docs/iut.md, spoken by hand to two IUTs
that share no code: the one-page C example (minimal_iut.c) and ulpgate-iut
serving sigmoid_bwd_plugin.c. Both must greet, answer `ok N` with sigmoid_bwd's
outputs computed as p - p*s (p = grad*s, each operation rounded to binary32:
checked here in exact rational arithmetic), refuse an unknown kernel with
`error` and stay in step, and end on `quit`. ulpgate-iut (version 2) also
casts: f32 and bf16 sources to float8_e4m3fn, float4_e2m1fn and
float8_e8m0fnu, one code a byte on the pipes and, with --packed4, the 4-bit
codes two a byte; the codes here are the formats' own, written out by hand.

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
    if greeting not in ("ulpgate-iut 1", "ulpgate-iut 2", "ulpgate-iut 3"):
        failures.append("%s: greeting %r" % (name, greeting))
        p.kill()
        return
    offered = []
    while True:
        l = line()
        if l == "ready":
            break
        if not l.startswith("kernel ") and l != "data packed4":
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


# Sources and the codes rne_sat gives them, from the formats' definitions:
# E4M3FN bias 7 (1.0 = 0x38), largest 448 (0x7e), NaN 0x7f/0xff; E2M1 values
# 0, 0.5, 1, 1.5, 2, 3, 4, 6 at codes 0..7, sign bit 8; E8M0 2^(e-127).
CAST_X = [1.0, 0.5, -2.0, 448.0, 1000.0, float("nan"), 0.0, 1.25, 3.5, -6.0, 0.25, 5.0, 2.0 ** -9]
CAST_WANT = {
    "float8_e4m3fn": [0x38, 0x30, 0xc0, 0x7e, 0x7e, 0x7f, 0x00, 0x3a, 0x46, 0xcc, 0x28, 0x4a, 0x01],
    # 1.25 ties to 1 (even), 3.5 to 4, 0.25 to 0 (even), 5 to 4 (even), 2^-9 to 0.
    "float4_e2m1fn": [0x2, 0x1, 0xc, 0x7, 0x7, 0x8, 0x0, 0x2, 0x6, 0xf, 0x0, 0x6, 0x0],
    # NaN and 0 and negatives: 0xff; 1.25 -> 1 (127), 3.5 -> 4 (129), 448 -> 512 (136).
    "float8_e8m0fnu": [127, 126, 0xff, 136, 137, 0xff, 0xff, 127, 129, 0xff, 125, 129, 118],
}


def bf16_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0] >> 16  # exact here: short values


def cast_session(packed):
    argv = [ulpgate_iut, "--builtin", "--targets", "SCALAR"] + (["--packed4"] if packed else [])
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    name = "ulpgate-iut casts" + (" --packed4" if packed else "")

    def line():
        return p.stdout.readline().decode().rstrip("\n")

    if line() != "ulpgate-iut 3":
        failures.append("%s: not version 3" % name)
    offered, said = [], []
    while True:
        l = line()
        if l == "ready":
            break
        (offered if l.startswith("kernel ") else said).append(l)
    if ("data packed4" in said) != packed:
        failures.append("%s: data packed4 said: %r" % (name, said))
    for l in ("kernel SCALAR cast_f32 float8_e4m3fn rne_sat nearest_even.saturate",
              "kernel SCALAR cast_f32 float8_e4m3fn via_bf16 nearest_even.saturate.via_bf16",
              "kernel SCALAR cast_bf16 float4_e2m1fn trunc toward_zero.saturate"):
        if l not in offered:
            failures.append("%s: does not offer %r" % (name, l))
    n = len(CAST_X)
    for source, payload in (("f32", struct.pack("<%df" % n, *CAST_X)),
                            ("bf16", struct.pack("<%dH" % n, *[bf16_bits(x) for x in CAST_X]))):
        for dest, want in CAST_WANT.items():
            p.stdin.write(("call cast_%s %s SCALAR rne_sat 1 %d\n" % (source, dest, n)).encode() + payload)
            p.stdin.flush()
            answer = line()
            if answer != "ok %d" % n:
                failures.append("%s: cast_%s %s answered %r" % (name, source, dest, answer))
                p.kill()
                return
            if packed and dest == "float4_e2m1fn":
                data = p.stdout.read((n + 1) // 2)
                got = [(data[i // 2] >> (4 * (i % 2))) & 0xf for i in range(n)]
                if data[-1] >> 4 != 0:
                    failures.append("%s: the odd last byte's high nibble is not zero" % name)
            else:
                got = list(p.stdout.read(n))
            if got != want:
                failures.append("%s: cast_%s to %s gave %s, not %s"
                                % (name, source, dest, [hex(c) for c in got], [hex(c) for c in want]))
    # A cast with two operands is refused, in step.
    p.stdin.write(("call cast_f32 float8_e5m2 SCALAR rne_sat 2 %d\n" % n).encode() + b"\0" * (8 * n))
    p.stdin.flush()
    if not line().startswith("error "):
        failures.append("%s: a two-operand cast was not refused" % name)
    p.stdin.write(b"quit\n")
    p.stdin.flush()
    if p.wait(timeout=30) != 0:
        failures.append("%s: exit status %d after quit" % (name, p.returncode))


session("minimal_iut", [minimal], "mine", "fms")
cast_session(packed=False)
cast_session(packed=True)
session("ulpgate-iut", [ulpgate_iut, "--plugin", plugin], "sigmoid_off", "fms_c")

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("iut protocol: both IUTs greet, compute p - p*s bit for bit on %d inputs twice, refuse an "
      "unknown kernel and quit; ulpgate-iut casts to 8- and 4-bit codes, packed and not" % N)
