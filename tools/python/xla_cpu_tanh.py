#!/usr/bin/python3
"""XLA's tanh on the CPU and jax.jit's gelu_tanh_bwd, bit for bit, in exact rationals
(binary32_exact.py; no ulpgate code), held to the outputs kept in
suites/peer/jax-0.10.2-cpu.

    xla_cpu_tanh.py [--suite suites/peer/jax-0.10.2-cpu]

jaxlib 0.10.2 compiles `jax.jit` of jax_peer.py's gelu_tanh_bwd formula into one loop
fusion; LLVM inlines XLA's `xla.tanh.f32` into it (the constants below are the optimized
IR's) and, XLA allowing FP contraction, the x86 back end fuses products and sums into FMAs
(the object code's vfmadd*ps; in f16 on a CPU with AVX512-FP16, vfmadd*ph: half-precision
FMAs rounded once to f16, the tanh alone in f32). XLA's tanh is not within 4 ULPs of tanh
everywhere (4.90 ULPs at z = 0x1.481106p+2), so the sequence keeps it, not a free call.

JAX eager (one XLA computation per primitive) calls the same tanh and contracts nothing:
the formula in Python's order, every step rounded to the format.

Exit 0 when every saved jit and eager output of gelu_tanh_bwd (f32 and f16, 4096 each) is
its sequence's, 1 otherwise; 77 (a ctest skip) without numpy.
"""

import argparse
import itertools
import os
import struct
from fractions import Fraction
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import binary32_exact as bx  # noqa: E402

SKIP = 77


def h32(bits):
    return bx.from_float(struct.unpack("<f", struct.pack("<I", bits))[0])


# xla.tanh.f32 as LLVM inlines it: |z| < 4e-4 gives z, |z| >= 20 gives copysign(1, z),
# else the clamped z times p(z^2) / q(z^2), each polynomial by Horner's rule in FMAs.
CLAMP = h32(0x40FFF644)      # 0x1.ffec88p+2
SMALL = h32(0x39D1B717)      # 0x1.a36e2ep-12, the binary32 nearest 4e-4
BIG = bx.Value.num(20)
NUMERATOR = [h32(b) for b in (0xA59F25C0, 0x2A61337E, 0xAEBD37FF, 0x335C0041, 0x3779434A,
                              0x3A270DED, 0x3BA059DC)]   # z^13 ... z^1
DENOMINATOR = [h32(b) for b in (0x35A0D3D8, 0x38F895D6, 0x3B14AA05, 0x3BA059DD)]  # z^6 ... 1
ONE = bx.Value.num(1)
HALF = bx.Value.num(Fraction(1, 2))


def _fma(a, b, c, fmt):
    return bx.round_to(bx.fma(a, b, c), fmt)


def _mul(a, b, fmt):
    return bx.round_to(bx.mul(a, b), fmt)


def _add(a, b, fmt):
    return bx.round_to(bx.add(a, b), fmt)


def tanh_f32(z):
    """XLA's binary32 tanh of the binary32 z (finite)."""
    f = bx.F32
    c = z
    if c.q < -CLAMP.q:
        c = bx.neg(CLAMP)
    if c.q > CLAMP.q:
        c = CLAMP
    w = _mul(c, c, f)
    p = NUMERATOR[0]
    for k in NUMERATOR[1:]:
        p = _fma(w, p, k, f)
    q = DENOMINATOR[0]
    for k in DENOMINATOR[1:]:
        q = _fma(w, q, k, f)
    r = bx.round_to(bx.Value.num(_mul(c, p, f).q / q.q), f)
    if abs(z.q) < SMALL.q:
        r = z
    if abs(z.q) >= BIG.q:
        r = bx.Value.num(-1 if z.q < 0 else 1)
    return r


def constants(fmt):
    """jax_peer.py's 0.044715, sqrt(2/pi) and 3*0.044715, rounded to the format (JAX's weak
    Python scalars take the array's type)."""
    return [bx.round_to(bx.Value.num(Fraction(v)), fmt)
            for v in (0.044715, 0.7978845608028654, 3 * 0.044715)]


def jit_gelu_tanh_bwd(grad, x, fmt):
    """jax.jit's gelu_tanh_bwd in fmt (F32 or F16), the object code's order:
    a = x*K*x; u = fma(a, x, x); t = tanh(u*S); omt = fma(-t, t, 1); m = x*0.5*omt;
    e = fma(x, x*C3, 1); n = m*(e*S); out = grad*fma(0.5, t + 1, n)."""
    k, s, c3 = constants(fmt)
    a = _mul(_mul(x, k, fmt), x, fmt)
    u = _fma(a, x, x, fmt)
    z = _mul(u, s, fmt)
    t = bx.round_to(tanh_f32(z), fmt)
    omt = _fma(bx.neg(t), t, ONE, fmt)
    m = _mul(_mul(x, HALF, fmt), omt, fmt)
    e = _fma(x, _mul(x, c3, fmt), ONE, fmt)
    n = _mul(m, _mul(e, s, fmt), fmt)
    return _mul(grad, _fma(HALF, _add(t, ONE, fmt), n, fmt), fmt)


def eager_gelu_tanh_bwd(grad, x, fmt):
    """JAX eager's gelu_tanh_bwd (one XLA computation per primitive): Python's order, each
    step rounded to fmt, nothing contracted, the same tanh."""
    k, s, c3 = constants(fmt)
    z = _mul(s, _add(x, _mul(_mul(_mul(k, x, fmt), x, fmt), x, fmt), fmt), fmt)
    t = bx.round_to(tanh_f32(z), fmt)
    d = _mul(s, _add(ONE, _mul(_mul(c3, x, fmt), x, fmt), fmt), fmt)
    left = _mul(HALF, _add(ONE, t, fmt), fmt)
    omt = _add(ONE, bx.neg(_mul(t, t, fmt)), fmt)
    right = _mul(_mul(_mul(HALF, x, fmt), omt, fmt), d, fmt)
    return _mul(grad, _add(left, right, fmt), fmt)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default=os.path.join(HERE, "..", "..", "suites", "peer",
                                                    "jax-0.10.2-cpu"))
    args = ap.parse_args()
    try:
        import numpy as np
    except ImportError:
        print("SKIP: numpy is not installed")
        return SKIP
    failed = 0
    for (name, fmt), (path, sequence) in itertools.product(
            (("f32", bx.F32), ("f16", bx.F16)),
            (("jit", jit_gelu_tanh_bwd), ("eager", eager_gelu_tanh_bwd))):
        data = np.load(os.path.join(args.suite, f"gelu_tanh_bwd_{name}.npz"))
        outputs = data[path].view(np.uint32)
        bad = []
        for i, (g, x) in enumerate(zip(data["grad"], data["x"])):
            y = sequence(bx.from_float(float(g)), bx.from_float(float(x)), fmt)
            if bx.bits(y) != int(outputs[i]):
                bad.append(i)
        print(f"gelu_tanh_bwd {name}: {len(outputs) - len(bad)} of {len(outputs)} {path} outputs "
              f"are XLA's sequence" + (f"; not #{bad[:8]}" if bad else ""))
        failed += len(bad)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
