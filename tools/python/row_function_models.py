"""Two binary32 exp implementations written in the model language (docs/models.md), the
operand `z`, the result `out`, working f32: the exps behind the row reductions of
suites/peer/jax-0.10.2-cpu, as tools/python/row_models.py computes them with numpy.

NUMPY_EXPF_AVX512F: NumPy's AVX512F float32 exp (`simd_exp_FLOAT`, the SIMD path of
`np.exp` on a float32 array on an AVX512F CPU), as
row_models.py's numpy_expf_avx512f computes it. The nearest integer q to z*log2(e) by the
magic-number trick (z*log2e + 1.5*2^23) - 1.5*2^23; Cody-Waite reduction r = z - q*ln2 in
three FMAs (the third's constant is 0, as NumPy writes it); a rational approximation
num(r)/den(r) of degree 5 over 2, the quotient rounded once; the result scaled by 2^q
(scalef: scalb, one rounding, exact but among the subnormals); then z >= 0x1.62e43p+6
(88.72283935546875) gives infinity and z <= -0x1.9fe36ap+6 (-103.97208404541015625) +0.
The clamps' `max(infinity, z)` and `min(0, abs(z))` keep a NaN z NaN, as row_models.py's
np.where leaves the computed NaN.

YNNPACK_EXPF: YNNPACK's expf (`exp_taylor2`), the one XLA's CPU back end hands jax.jit's
softmax and log_softmax to (row_models.py's ynn_expf): z clamped to [-0x1.601e68p+6, 0x1.62e43p+6] with
max and min, b = nearest integer to z*log2e by the magic number, Cody-Waite r = z - b*ln2
in two FMAs, e^r - 1 = r + r^2*p(r) with p's 7 coefficients evaluated as two polynomials
in r^2 (even and odd coefficients) joined by an FMA, then e^z = 2^b + 2^b*(e^r - 1), 2^b as
scalb(1, b) (b lies in [-127, 128]: 2^-127 is a subnormal, exact, and 2^128 overflows to
infinity as row_models.py's ldexp does; above z of about 88.38, where b is 128, the
result is then infinity, or NaN where e^r - 1 < 0, and row_models.py's fma32, which takes
no infinity, cannot evaluate it: check() lists those z apart).

Every constant is the binary32 value row_models.py writes as np.float32(...), in C99 hex.

    build/peers-venv/bin/python tools/python/row_function_models.py   # check(), printed
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

NUMPY_EXPF_AVX512F = "; ".join([
    "q = z*0x1.715476p+0 + 0x1.8p+23",
    "q = q - 0x1.8p+23",
    "r = fma(q, -0x1.62e4p-1, z)",
    "r = fma(q, -0x1.7f7d1cp-20, r)",
    "r = fma(q, 0, r)",
    "num = fma(0x1.0a7bbp-11, r, 0x1.bae2b2p-8)",
    "num = fma(num, r, 0x1.a2fb18p-5)",
    "num = fma(num, r, 0x1.fa98bp-3)",
    "num = fma(num, r, 0x1.7397aap-1)",
    "num = fma(num, r, 1)",
    "den = fma(fma(0x1.61d064p-6, r, -0x1.18d0aep-2), r, 1)",
    "e = scalb(num/den, q)",
    "infinity = 0x1p+127*2",
    "e = if_less(z, 0x1.62e43p+6, e, max(infinity, z))",
    "out = if_less(-0x1.9fe36ap+6, z, e, min(0, abs(z)))",
])

YNNPACK_EXPF = "; ".join([
    "xc = min(max(z, -0x1.601e68p+6), 0x1.62e43p+6)",
    "t = xc*0x1.715476p+0",
    "b = (0x1.8p+23 + t) - 0x1.8p+23",
    "r = fma(b, -0x1.62e4p-1, xc)",
    "r = fma(b, -0x1.7f7d1cp-20, r)",
    "e2b = scalb(1, b)",
    "r2 = r*r",
    "y0 = fma(r2, -0x1.a24fcp-15, 0x1.727958p-10)",
    "y1 = fma(r2, 0x1.dd99d2p-13, 0x1.10c53cp-7)",
    "y0 = fma(r2, y0, 0x1.555328p-5)",
    "y1 = fma(r2, y1, 0x1.5555a4p-3)",
    "y0 = fma(r2, y0, 0x1.fffffcp-2)",
    "p = fma(r, y1, y0)",
    "e2r = fma(r2, p, r)",
    "out = fma(e2b, e2r, e2b)",
])

# The clamp edges and where the results turn subnormal or zero, each with 4 binary32
# neighbours either side.
EDGES = (88.72283935546875, -103.97208404541015625, -88.02969360351562, -87.33654475,
         -103.278929903, 0.0, -0.0, 88.0, -110.0, 90.0)


def z_values(np):
    """(label, z array): z = RN(x - max(row)) of the saved softmax and log_softmax inputs,
    and a sweep of [-110, 90] with the edges."""
    f32 = np.float32
    sets = []
    for name in ("softmax_fwd_f32", "log_softmax_fwd_f32"):
        x = np.load(os.path.join(ROOT, "suites", "peer", "jax-0.10.2-cpu", name + ".npz"))["x"]
        x = x.reshape(16, 256)
        sets.append((name, (x - x.max(-1, keepdims=True)).astype(f32).ravel()))
    sweep = list(np.linspace(-110, 90, 3001, dtype=np.float64).astype(f32))
    for e in EDGES:
        v = f32(e)
        for _ in range(5):
            sweep.append(v)
            v = np.nextafter(v, f32(np.inf))
        v = f32(e)
        for _ in range(4):
            v = np.nextafter(v, f32(-np.inf))
            sweep.append(v)
    rng = np.random.default_rng(20261203)
    sweep.extend(rng.uniform(-110, 90, 1000).astype(f32))
    sets.append(("sweep [-110, 90]", np.array(sweep, f32)))
    return sets


def evaluate(text, zs):
    """The model's binary32 encodings on zs (exact, model_language.py)."""
    import binary32_exact as bx
    import model_language
    program = model_language.parse(text)
    out = []
    for z in zs:
        y, _ = program.evaluate({"z": bx.from_float(float(z))}, bx.F32, [])
        out.append(bx.bits(y))
    return out


def reference_bits(np, reference, zs):
    """row_models.py's function on zs as binary32 encodings, None where it cannot say:
    its fma32 takes no infinity, which ynn_expf's 2^b is for b = 128 (z >= about
    88.38), so those z are evaluated one by one and the ones that raise left out."""
    with np.errstate(all="ignore"):
        try:
            return list(np.asarray(reference(zs), np.float32).view(np.uint32))
        except (OverflowError, ValueError):
            pass
        out = []
        for z in zs:
            try:
                out.append(np.asarray(reference(np.array([z], np.float32)), np.float32).view(np.uint32)[0])
            except (OverflowError, ValueError):
                out.append(None)
        return out


def check(verbose=True):
    """Each program against row_models.py's function, bit for bit, on every z of
    z_values(): (the list of (program, label, z bits, model bits, row_models bits) that
    differ, the list of (program, z bits, model bits) row_models.py cannot evaluate)."""
    import numpy as np
    sys.path.insert(0, HERE)
    import row_models
    differ, unevaluated = [], []
    for name, text, reference in (("NUMPY_EXPF_AVX512F", NUMPY_EXPF_AVX512F, row_models.numpy_expf_avx512f),
                                  ("YNNPACK_EXPF", YNNPACK_EXPF, row_models.ynn_expf)):
        for label, zs in z_values(np):
            want = reference_bits(np, reference, zs)
            got = evaluate(text, zs)
            bad, skipped = [], []
            for z, g, w in zip(zs.view(np.uint32), got, want):
                if w is None:
                    skipped.append((name, int(z), int(g)))
                elif g != int(w):
                    bad.append((name, label, int(z), int(g), int(w)))
            differ.extend(bad)
            unevaluated.extend(skipped)
            if verbose:
                print("%-19s %-20s %5d z, %d differ, %d not evaluable by row_models.py"
                      % (name, label, len(zs), len(bad), len(skipped)))
    return differ, unevaluated


if __name__ == "__main__":
    bad, unevaluated = check()
    for b in bad[:20]:
        print("%s %s: z bits 0x%08x, model 0x%08x, row_models 0x%08x" % b)
    if unevaluated:
        import struct
        zs = sorted(struct.unpack("<f", struct.pack("<I", u[1]))[0] for u in unevaluated)
        print("not evaluable by row_models.py: %d z in [%r, %r], the model's outputs %s"
              % (len(zs), zs[0], zs[-1], sorted({"0x%08x" % u[2] for u in unevaluated})))
    sys.exit(1 if bad else 0)
