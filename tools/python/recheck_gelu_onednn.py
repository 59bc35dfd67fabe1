#!/usr/bin/env python3
"""Rechecks, without ulpgate's code, the model of oneDNN's gelu_erf backward that PyTorch's
eager CPU gelu_backward(approximate='none') follows.

PyTorch 2.15's gelu_backward_out_cpu sends a dense float32, bfloat16 or float16 tensor to
oneDNN (ideep::eltwise_backward, algorithm eltwise_gelu_erf; ONEDNN_VERBOSE shows
`jit:avx10_1_512_amx,backward_data,...,alg:eltwise_gelu_erf` for all three), not to
ATen's GeluKernel.cpp. oneDNN's jit_uni_eltwise_injector gelu_erf_compute_vector_bwd
computes in binary32, with its own constants and Abramowitz-Stegun 7.1.26 erf:

    R = x*c;  Q = exp(-(R*R));  T = (R*s)*Q
    W = 1/fma(p, |R|, 1);  r = fma(fma(fma(fma(p5, W, p4), W, p3), W, p2), W, p1)
    erf = copysign(fma(-(Q*W), r, 1), R);  d = fma(erf, 0.5, T + 0.5);  out = d*grad

c = 0x3f3504f3 (1/sqrt 2), s = 0x3f106eba (1/sqrt pi), p = 0x3ea7ba05, p1..p5 =
0x3e827906, 0xbe91a98e, 0x3fb5f0e3, 0xbfba00e3, 0x3f87dc22; bf16 and f16 round `out`
once (to nearest even). exp is oneDNN's own: any binary32 within K ULPs of the
nearest one (mpmath). `T + 0.5` rounds with an absolute quantum of 2^-25..2^-24 before
`0.5*erf` cancels it, which is why x below about -6.15 gives exactly 0.

    recheck_gelu_onednn.py --dir suites/peer/torch-2.15-cpu-compiled [--ulps 4]

Exits 0 when every eager_aten output of gelu_bwd_{f32,bf16,f16}.npz is the model's for
some exp value, 1 otherwise, 77 when numpy or mpmath is missing.
"""

import argparse
import os
import sys

try:
    import mpmath
    import numpy as np
    MISSING = None
except ImportError as e:  # told after the arguments are read: --help works without them
    np = mpmath = None
    MISSING = e


def to_bf16(v):
    """binary32 values rounded to bfloat16 (to nearest, ties to even; finite values)."""
    b = np.asarray(v, F32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.astype(np.uint32).view(F32)


def c(bits):
    return np.uint32(bits).view(F32)


def constants():
    """oneDNN's constants as binary32 (numpy needed)."""
    global F32, C_SQRT1_2, C_1_SQRTPI, P, POL, ONE, HALF
    F32 = np.float32
    C_SQRT1_2, C_1_SQRTPI, P = c(0x3f3504f3), c(0x3f106eba), c(0x3ea7ba05)
    POL = [c(b) for b in (0x3e827906, 0xbe91a98e, 0x3fb5f0e3, 0xbfba00e3, 0x3f87dc22)]
    ONE, HALF = F32(1), F32(0.5)


def fma(a, b, c_):
    """a*b + c rounded once to binary32. a*b is exact in a double; the double sum s and
    its error e (TwoSum) decide the rounding: s rounds like s + e unless s is a binary32
    midpoint, and then e breaks the tie."""
    a, b, c_ = (np.asarray(v, F32).astype(np.float64) for v in (a, b, c_))
    p = a * b
    s = p + c_
    bb = s - p
    e = (p - (s - bb)) + (c_ - bb)
    f = s.astype(F32)
    up = np.nextafter(f, F32(np.inf))
    dn = np.nextafter(f, F32(-np.inf))
    fd = f.astype(np.float64)
    f = np.where((s == (fd + up.astype(np.float64)) / 2) & (e > 0), up, f)
    f = np.where((s == (fd + dn.astype(np.float64)) / 2) & (e < 0), dn, f)
    return f.astype(F32)


def nearest_exp(a):
    mpmath.mp.prec = 113
    return np.array([F32(float(mpmath.exp(mpmath.mpf(float(v))))) for v in a], F32)


def step(v, k):
    for _ in range(abs(k)):
        v = np.nextafter(v, F32(np.inf) if k > 0 else F32(-np.inf))
    return v


def model(grad, x, exp0, k):
    R = x * C_SQRT1_2
    Q = step(exp0, k)
    T = (R * C_1_SQRTPI) * Q
    W = ONE / fma(P, np.abs(R), ONE)
    r = fma(POL[4], W, POL[3])
    for p in (POL[2], POL[1], POL[0]):
        r = fma(r, W, p)
    erf = np.copysign(fma(-(Q * W), r, ONE), R)
    return fma(erf, HALF, T + HALF) * grad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True,
                    help="the saved archives: suites/peer/torch-2.15-cpu-compiled")
    ap.add_argument("--ulps", type=int, default=4)
    args = ap.parse_args()
    if MISSING is not None:
        print(f"SKIP: {MISSING}")
        return 77
    constants()
    store = {"f32": lambda o: o,
             "bf16": to_bf16,
             "f16": lambda o: o.astype(np.float16).astype(F32)}
    failed = False
    for dtype, rnd in store.items():
        z = np.load(os.path.join(args.dir, f"gelu_bwd_{dtype}.npz"))
        grad, x, want = z["grad"], z["x"], z["eager_aten"].view(np.uint32)
        R = x * C_SQRT1_2
        exp0 = nearest_exp(-(R * R))
        need = np.full(x.shape, -1)
        for k in sorted(range(-args.ulps, args.ulps + 1), key=abs):
            hit = rnd(model(grad, x, exp0, k)).view(np.uint32) == want
            need[hit & (need < 0)] = abs(k)
        fit = need >= 0
        print(f"{dtype}: {fit.sum()} of {fit.size} outputs are the model's "
              f"(exp within {args.ulps} ULPs); exp's ULPs needed: "
              f"{ {int(k): int(n) for k, n in zip(*np.unique(need[fit], return_counts=True))} }")
        for i in np.nonzero(~fit)[0][:5]:
            print(f"  unfit #{i}: grad = {float(grad[i]).hex()}, x = {float(x[i]).hex()}, "
                  f"output {float(z['eager_aten'][i]).hex()}")
        failed |= not fit.all()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
