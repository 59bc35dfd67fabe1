#!/usr/bin/env python3
"""`ulpgate compare` on the peers' saved outputs names the causes docs/peers.md gives.

suites/peer/torch-2.15-cpu-compiled (PyTorch 2.15 eager against Inductor) and
suites/peer/jax-0.10.2-cpu (NumPy against jax.jit) keep each path's outputs beside their
inputs; docs/peers.md's tables name, per difference, the cause found by trying Inductor's
and XLA's settings. Each row below is one such difference (or an identity the table
states) and the cause `compare` must name for it from the models alone; every report is
then rechecked by tools/python/recheck_compare.py (fractions only, no code shared with
ulpgate): the differing count, the ULP distances and, for tanh_bwd, the models.

Where neither side follows a built-in model because their exp, erf or tanh are not
Highway's, compare tries the op's sequences (and the formula given as a model) with their
functions free (any binary32 within 4 ULPs); where a row reduction's eager order is none of
ulpgate's schedules, it sets the rows' statistics free; where that cannot part the sides
(JAX's f32 softmax, log_softmax and RMSNorm), it fits each side to an exp written out
(row_function_models.py), an order of the row's terms and an epilogue. UNKNOWN lists what
must stay `unknown` with its evidence, never a guessed cause: JAX's f32 log_softmax compared
without its exps written out. A row reduction named from its row statistics is rechecked by
tools/python/recheck_row_statistics.py too (its epilogues written again in exact
rationals), one named from row models by tools/python/recheck_row_models.py (the exps
evaluated by model_language.py, the orders summed again). Needs no PyTorch or JAX (mpmath
for the row models' recheck).

    python3 tools/python/compare_peer_causes_test.py --ulpgate build/bin/ulpgate --work DIR
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TORCH = "suites/peer/torch-2.15-cpu-compiled"
JAX = "suites/peer/jax-0.10.2-cpu"

sys.path.insert(0, HERE)
import row_function_models  # noqa: E402

# The two exps behind JAX's f32 row reductions, written out (row_function_models.py).
ROW_EXPS = ["--model", "numpy_exp: " + row_function_models.NUMPY_EXPF_AVX512F,
            "--model", "ynnpack_exp: " + row_function_models.YNNPACK_EXPF]

# Inductor writes sigmoid_backward as grad * (s * (1 - s)) (its decomposition, codes.txt).
SIGMOID_DECOMPOSED = "sigmoid_decomposed: a = 1 - s; b = s*a; out = grad*b"

# The user formulas of compiled_peer.py as PyTorch runs them eagerly in 16 bits: each
# operator one ATen op, computed in binary32 and rounded to the format (torch.sigmoid one op;
# a Python float operand is a binary32 constant). -0.5*x*x is written (x*x)*-0.5, the same
# value (a product by -0.5 is exact), as the op's own sequences write it.
def silu_formula_per_op(r):
    return (f"silu_formula_per_op: s = {r}(1/(1 + exp(-x))); p = {r}(grad*s); q = {r}(1 - s); "
            f"w = {r}(1 + {r}(x*q)); out = {r}(p*w)")


def gelu_formula_per_op(r):
    return (f"gelu_formula_per_op: a = {r}(x*0x1.6a09e6p-1); cdf = {r}(0.5*{r}(1 + {r}(erf(a)))); "
            f"m = {r}({r}(x*x)*-0.5); pdf = {r}({r}(exp(m))*0x1.988454p-2); out = {r}(grad*{r}(cdf + {r}(x*pdf)))")


# The gelu_tanh formula as PyTorch writes it in f32 (compiled_peer.py): c*x*x*x from the
# left, 3*c a binary32 constant rounded from Python's double product, k twice. Eager and
# Inductor both follow it, tanh free; their outputs differ only by their tanh.
GELU_TANH_FORMULA = ("torchformula: a = 0x1.6e4e26p-5*x*x*x; u = 0x1.988454p-1*(x + a); t = tanh(u); "
                     "d = 1 + 0x1.12ba9ep-3*x*x; out = grad*(0.5*(1 + t) + 0.5*x*(1 - t*t)*0x1.988454p-1*d)")


# ATen's gelu_backward(approximate="tanh") kernel in f32 as GCC compiled it (-mfma, contraction
# on): `kKappa * x_cube + x` and `kThree * kKappa * x_sq + 1` fused, 3*kKappa a binary32
# product (0x1.12ba9cp-3), `1 - t*t` fused, and the last sum as fma(0.5, 1 + t, right).
GELU_TANH_EAGER_ATEN = ("aten_kernel: u = 0x1.988454p-1*fma(0x1.6e4e26p-5, x*x*x, x); t = tanh(u); l = 0.5*x; "
                        "d = 0x1.988454p-1*fma(0x1.12ba9cp-3, x*x, 1); out = grad*fma(0.5, 1 + t, (l*fma(-t, t, 1))*d)")
# Inductor's decomposition of the same (codes.txt), contraction off: 0.134145 a binary32 constant.
GELU_TANH_INDUCTOR_ATEN = ("inductor_decomposition: x2 = x*x; a = x2*x*0x1.6e4e26p-5; u = (x + a)*0x1.988454p-1; "
                           "t = tanh(u); h = (t + 1)*0.5; d = (x2*0x1.12ba9ep-3 + 1)*0x1.988454p-1; "
                           "out = grad*(h + x*0.5*(1 - t*t)*d)")


# The gelu_tanh formula as PyTorch runs it eagerly in 16 bits, one ATen op per operator from the
# left (`c * x * x * x`; 3*c a Python double, a binary32 constant), and Inductor's code of it
# (codes.txt: computed in binary32, rounded once).
def gelu_tanh_formula_per_op(r):
    return (f"gelu_tanh_formula_per_op: a = {r}({r}({r}(x*0x1.6e4e26p-5)*x)*x); u = {r}({r}(x + a)*0x1.988454p-1); "
            f"t = {r}(tanh(u)); h = {r}(0.5*{r}(1 + t)); p = {r}({r}({r}(0.5*x)*{r}(1 - {r}(t*t)))*0x1.988454p-1); "
            f"d = {r}(1 + {r}({r}(x*0x1.12ba9ep-3)*x)); out = {r}(grad*{r}(h + {r}(p*d)))")


GELU_TANH_INDUCTOR_FORMULA = ("inductor_formula: a = x*0x1.6e4e26p-5*x*x; u = (x + a)*0x1.988454p-1; t = tanh(u); "
                              "h = (t + 1)*0.5; p = x*0.5*(1 - t*t)*0x1.988454p-1; d = x*0x1.12ba9ep-3*x + 1; "
                              "out = grad*(h + p*d)")

# ATen's Vectorized<float>::erf (Inductor's vector code calls it), Abramowitz and Stegun 7.1.26
# with fused multiply-adds, written out for erf(a) with exp(-(a*a)) already in `q`: `erf(a) as`
# makes it the model's erf for compare's structure, its value the expression's.
def erf_abramowitz_stegun(a, q, name):
    return (f"w_{name} = 1/fma(0x1.4f740ap-2, abs({a}), 1); "
            f"r_{name} = fma(fma(fma(fma(0x1.0fb844p+0, w_{name}, -0x1.7401c6p+0), w_{name}, 0x1.6be1c6p+0), "
            f"w_{name}, -0x1.23531cp-2), w_{name}, 0x1.04f20cp-2); "
            f"{name} = erf({a}) as copysign(fma(-({q}*w_{name}), r_{name}, 1), {a})")


# Inductor's gelu_backward (codes.txt): (erf + 1)*0.5 + x*pdf, rounded in binary32 (and once to
# the format in 16 bits); the formula path writes -0.5*x*x from the left.
def gelu_inductor(square):
    return (f"a = x*0x1.6a09e6p-1; q = exp(-(a*a)); {erf_abramowitz_stegun('a', 'q', 'e')}; cdf = (e + 1)*0.5; "
            f"pdf = exp({square})*0x1.988454p-2; out = grad*(cdf + x*pdf)")


# Eager aten.gelu_backward on this CPU is oneDNN's eltwise_gelu_erf backward (ONEDNN_VERBOSE
# names it; the mkldnn flag off gives ATen's own kernel instead): T = R/sqrt(pi) exp(-R^2),
# erf by the same Abramowitz and Stegun form, and fma(erf, 0.5, T + 0.5), whose T + 0.5 rounds
# before 0.5 erf cancels it.
GELU_ONEDNN = ("R = x*0x1.6a09e6p-1; Q = exp(-(R*R)); T = R*0x1.20dd74p-1*Q; "
               f"{erf_abramowitz_stegun('R', 'Q', 'e')}; out = grad*fma(e, 0.5, T + 0.5)")
GELU_EAGER_FORMULA = ("eager_formula: cdf = 0.5*(1 + erf(x*0x1.6a09e6p-1)); pdf = exp(-0.5*x*x)*0x1.988454p-2; "
                      "out = grad*(cdf + x*pdf)")

# XLA's tanh as jax.jit 0.10.2 compiles it on the CPU (its LLVM IR and object code): a clamp to
# +-0x1.ffec88p+2, a rational function of the clamped value's square with fused multiply-adds,
# the argument itself below 0x1.a36e2ep-12 and +-1 from 20; jit contracts the formula's
# products too (u, 1 - t*t, 1 + C3 x^2, the last sum).
XLA_TANH = ("c = min(max(z, -0x1.ffec88p+2), 0x1.ffec88p+2); w = c*c; p1 = fma(w, -0x1.3e4b8p-52, 0x1.c266fcp-43); "
            "p2 = fma(w, p1, -0x1.7a6ffep-34); p3 = fma(w, p2, 0x1.b80082p-25); p4 = fma(w, p3, 0x1.f28694p-17); "
            "p5 = fma(w, p4, 0x1.4e1bdap-11); p6 = fma(w, p5, 0x1.40b3b8p-8); q1 = fma(w, 0x1.41a7bp-20, 0x1.f12bacp-14); "
            "q2 = fma(w, q1, 0x1.29540ap-9); q3 = fma(w, q2, 0x1.40b3bap-8); r = c*p6/q3; "
            "t = tanh(z) as if_less(abs(z), 0x1.a36e2ep-12, z, if_less(abs(z), 20, r, copysign(1, z)))")
GELU_TANH_JIT_F32 = ("jit: a = x*0x1.6e4e26p-5*x; u = fma(a, x, x); z = u*0x1.988454p-1; " + XLA_TANH +
                     "; omt = fma(-t, t, 1); m = x*0.5*omt; e = fma(x, x*0x1.12ba9ep-3, 1); n = m*(e*0x1.988454p-1); "
                     "out = grad*fma(0.5, t + 1, n)")
# jit's f16: each operation in native f16 (AVX512-FP16), contracted as in f32, the constants
# f16 values; tanh in binary32, rounded (free here: XLA's tanh of every f16 argument lies
# within the search).
GELU_TANH_JIT_F16 = ("jit: working f16; a = x*0x1.6e4p-5*x; u = fma(a, x, x); t = tanh(u*0x1.988p-1); "
                     "omt = fma(-t, t, 1); m = x*0.5*omt; e = fma(x, x*0x1.12cp-3, 1); n = m*(e*0x1.988p-1); "
                     "out = grad*fma(0.5, t + 1, n)")
# NumPy's: jax_peer.py's formula, one ufunc per operator (f16 values in f16).
GELU_TANH_NUMPY_F32 = ("numpy: t = tanh(0x1.988454p-1*(x + 0x1.6e4e26p-5*x*x*x)); d = 0x1.988454p-1*(1 + 0x1.12ba9ep-3*x*x); "
                       "out = grad*(0.5*(1 + t) + 0.5*x*(1 - t*t)*d)")
GELU_TANH_NUMPY_F16 = ("numpy: working f16; t = tanh(0x1.988p-1*(x + 0x1.6e4p-5*x*x*x)); d = 0x1.988p-1*(1 + 0x1.12cp-3*x*x); "
                       "out = grad*(0.5*(1 + t) + 0.5*x*(1 - t*t)*d)")

# (folder, archive, op, dtype, side a, side b, cause, extra arguments)
ROWS = [
    (TORCH, "tanh_bwd_f32", "tanh_bwd", "f32", "eager_aten", "compiled_aten", "fusion", []),
    (TORCH, "tanh_bwd_f32", "tanh_bwd", "f32", "eager_mulsub", "compiled_mulsub", "none", []),
    (TORCH, "sigmoid_bwd_f32", "sigmoid_bwd", "f32", "eager_aten", "compiled_aten", "formula",
     ["--model", SIGMOID_DECOMPOSED]),
    (TORCH, "tanh_bwd_bf16", "tanh_bwd", "bf16", "eager_mulsub", "compiled_mulsub", "rounding format", []),
    (TORCH, "tanh_bwd_bf16", "tanh_bwd", "bf16", "eager_mac_left", "compiled_mac_left", "rounding format", []),
    (TORCH, "tanh_bwd_f16", "tanh_bwd", "f16", "eager_mulsub", "compiled_mulsub", "rounding format", []),
    (TORCH, "tanh_bwd_f16", "tanh_bwd", "f16", "eager_mac_left", "compiled_mac_left", "rounding format", []),
    (TORCH, "sigmoid_bwd_f16", "sigmoid_bwd", "f16", "eager_formula", "compiled_formula", "rounding format", []),
    (TORCH, "sigmoid_bwd_bf16", "sigmoid_bwd", "bf16", "eager_formula", "compiled_formula",
     "rounding format", []),
    (TORCH, "sigmoid_bwd_f16", "sigmoid_bwd", "f16", "eager_aten", "compiled_aten", "rounding format", []),
    (TORCH, "silu_bwd_f16", "silu_bwd", "f16", "eager_aten", "compiled_aten", "fusion", []),
    (TORCH, "gelu_tanh_bwd_bf16", "gelu_tanh_bwd", "bf16", "eager_aten", "compiled_aten", "fusion", []),
    (TORCH, "gelu_tanh_bwd_f16", "gelu_tanh_bwd", "f16", "eager_aten", "compiled_aten", "fusion", []),
    (TORCH, "linear_f32", "linear_fwd", "f32", "eager_fwd", "compiled_fwd", "none", []),
    (JAX, "tanh_bwd_f32", "tanh_bwd", "f32", "numpy_mulsub", "jit_mulsub", "fusion", []),
    (JAX, "tanh_bwd_f32", "tanh_bwd", "f32", "numpy_mac_left", "jit_mac_left", "fusion", []),
    (JAX, "tanh_bwd_f16", "tanh_bwd", "f16", "numpy_mulsub", "jit_mulsub", "fusion", []),
    (JAX, "tanh_bwd_f16", "tanh_bwd", "f16", "numpy_mac_left", "jit_mac_left", "fusion", []),
    (JAX, "tanh_bwd_bf16", "tanh_bwd", "bf16", "numpy_mulsub", "jit_mulsub", "none", []),
    (JAX, "sigmoid_bwd_f32", "sigmoid_bwd", "f32", "numpy", "jit", "none", []),
    # Neither side follows a built-in model (their exp, erf, tanh are not Highway's): the
    # op's sequences with their functions free name the cause.
    (TORCH, "silu_bwd_f32", "silu_bwd", "f32", "eager_aten", "compiled_aten", "fusion", []),
    (JAX, "silu_bwd_f32", "silu_bwd", "f32", "numpy", "jit", "fusion + function implementation", []),
    (JAX, "gelu_bwd_f32", "gelu_bwd", "f32", "numpy", "jit", "fusion + function implementation", []),
    (TORCH, "gelu_tanh_bwd_f32", "gelu_tanh_bwd", "f32", "eager_formula", "compiled_formula",
     "function implementation", ["--model", GELU_TANH_FORMULA]),
    # ATen's kernel and Inductor's decomposition, each given as a model (tanh free): they part
    # first at 3*kappa (ATen's binary32 product against Inductor's constant 0.134145), then at
    # GCC's contractions; one tanh value serves both wherever both call it at one argument.
    (TORCH, "gelu_tanh_bwd_f32", "gelu_tanh_bwd", "f32", "eager_aten", "compiled_aten", "formula",
     ["--model", GELU_TANH_EAGER_ATEN, "--model", GELU_TANH_INDUCTOR_ATEN]),
    (TORCH, "gelu_tanh_bwd_bf16", "gelu_tanh_bwd", "bf16", "eager_formula", "compiled_formula", "rounding format",
     ["--model", gelu_tanh_formula_per_op("bf16"), "--model", GELU_TANH_INDUCTOR_FORMULA]),
    (TORCH, "gelu_tanh_bwd_f16", "gelu_tanh_bwd", "f16", "eager_formula", "compiled_formula", "rounding format",
     ["--model", gelu_tanh_formula_per_op("f16"), "--model", GELU_TANH_INDUCTOR_FORMULA]),
    # gelu_backward: eager is oneDNN's kernel, compiled Inductor's decomposition; both write erf
    # as ATen's and oneDNN's Abramowitz-Stegun form (exp free). In 16 bits both compute in
    # binary32 and round once; the formula path differs only by its erf (torch.erf against the
    # written-out form) and its exps.
    (TORCH, "gelu_bwd_f32", "gelu_bwd", "f32", "eager_aten", "compiled_aten", "formula + function implementation",
     ["--model", "onednn: " + GELU_ONEDNN, "--model", "inductor: " + gelu_inductor("x*x*-0.5")]),
    (TORCH, "gelu_bwd_bf16", "gelu_bwd", "bf16", "eager_aten", "compiled_aten", "formula",
     ["--model", "onednn: working f32; " + GELU_ONEDNN, "--model", "inductor: working f32; " + gelu_inductor("x*x*-0.5")]),
    (TORCH, "gelu_bwd_f16", "gelu_bwd", "f16", "eager_aten", "compiled_aten", "formula",
     ["--model", "onednn: working f32; " + GELU_ONEDNN, "--model", "inductor: working f32; " + gelu_inductor("x*x*-0.5")]),
    (TORCH, "gelu_bwd_f32", "gelu_bwd", "f32", "eager_formula", "compiled_formula", "function implementation",
     ["--model", GELU_EAGER_FORMULA, "--model", "inductor_formula: " + gelu_inductor("x*-0.5*x")]),
    # JAX's gelu_tanh: jit contracts and calls XLA's tanh (written out in f32), NumPy neither.
    (JAX, "gelu_tanh_bwd_f32", "gelu_tanh_bwd", "f32", "numpy", "jit", "fusion + function implementation",
     ["--model", GELU_TANH_NUMPY_F32, "--model", GELU_TANH_JIT_F32]),
    (JAX, "gelu_tanh_bwd_f16", "gelu_tanh_bwd", "f16", "numpy", "jit", "fusion",
     ["--model", GELU_TANH_NUMPY_F16, "--model", GELU_TANH_JIT_F16]),
    # jit's f16: each step's f32 code contracted, then rounded to f16.
    (JAX, "silu_bwd_f16", "silu_bwd", "f16", "numpy", "jit", "fusion", []),
    (TORCH, "silu_bwd_bf16", "silu_bwd", "bf16", "eager_formula", "compiled_formula", "rounding format",
     ["--model", silu_formula_per_op("bf16")]),
    (TORCH, "silu_bwd_f16", "silu_bwd", "f16", "eager_formula", "compiled_formula", "rounding format",
     ["--model", silu_formula_per_op("f16")]),
    (TORCH, "gelu_bwd_bf16", "gelu_bwd", "bf16", "eager_formula", "compiled_formula", "rounding format",
     ["--model", gelu_formula_per_op("bf16")]),
    (TORCH, "gelu_bwd_f16", "gelu_bwd", "f16", "eager_formula", "compiled_formula", "rounding format",
     ["--model", gelu_formula_per_op("f16")]),
    # Row reductions named from their outputs with the row statistics set free (eager
    # follows none of ulpgate's schedules): RMSNorm's one epilogue with other row sums,
    # softmax backward's epilogue multiplied out by Inductor with the same row sums.
    # recheck_row_statistics.py writes the epilogues apart and rechecks each.
    (TORCH, "rmsnorm_f32", "rmsnorm_fwd", "f32", "eager_fwd", "compiled_fwd", "tree", []),
    (TORCH, "rmsnorm_f32", "rmsnorm_bwd", "f32", "eager_dx", "compiled_dx", "tree", []),
    (TORCH, "softmax_f32", "softmax_bwd", "f32", "eager_bwd", "compiled_bwd", "formula", []),
    # Both call Sleef's exp (not Highway's) and sum in one order: with exp(RN(x - max)) set
    # free per element, one value shared by both sides, eager multiplies by RN(1/S) and
    # Inductor divides by S.
    (TORCH, "softmax_f32", "softmax_fwd", "f32", "eager_fwd", "compiled_fwd", "formula", []),
    # Both round every operation to bf16; NumPy's mean accumulates in bf16 too, its row
    # values farther from jit's than a binary32 sum can err.
    (JAX, "rmsnorm_fwd_bf16", "rmsnorm_fwd", "bf16", "numpy", "jit", "rounding format", []),
    # Softmax in 16 bits, every operation (exp too) rounded to the format: in f16 the same
    # exponentials and row sums (both sum in binary32 and round once), NumPy dividing and
    # XLA multiplying by RN(1/s); in bf16 one division, NumPy's sums rounded per addition.
    (JAX, "softmax_fwd_f16", "softmax_fwd", "f16", "numpy", "jit", "formula", []),
    (JAX, "softmax_fwd_bf16", "softmax_fwd", "bf16", "numpy", "jit", "rounding format", []),
    # RMSNorm in f16, one mean: NumPy's x / RN16(sqrt v) against XLA's x * RN16(rsqrt v),
    # the reciprocal square root one operation rounded once.
    (JAX, "rmsnorm_fwd_f16", "rmsnorm_fwd", "f16", "numpy", "jit", "formula", []),
    # log_softmax in bf16: its statistic takes exp and log whole, but the rows' sums part
    # farther than exps and logs within 4 ULPs, rounded to bf16, could move them.
    (JAX, "log_softmax_fwd_bf16", "log_softmax_fwd", "bf16", "numpy", "jit", "rounding format", []),
    # log_softmax in bf16 and f16: ATen keeps the row's sum and its log in the tensor's type
    # and computes each element in binary32; Inductor keeps both in binary32. One sum serves
    # both sides on every row once Inductor's is rounded as ATen's is.
    (TORCH, "log_softmax_bf16", "log_softmax_fwd", "bf16", "eager_fwd", "compiled_fwd", "rounding format", []),
    (TORCH, "log_softmax_f16", "log_softmax_fwd", "f16", "eager_fwd", "compiled_fwd", "rounding format", []),
    # JAX's f32 row reductions: each side's exp its own (NumPy's AVX512F exp, YNNPACK's
    # exp_taylor2, written out in row_function_models.py) and its own order of the row's
    # terms (NumPy's pairwise sum, YNNPACK's 16 lanes in groups of 4). With the exps
    # written out, softmax parts on all three: order, epilogue (NumPy divides, XLA
    # multiplies by RN(1/S)) and exp. log_softmax's log of the sum, correctly rounded on
    # both sides, leaves room for either exp: the orders alone are shown. RMSNorm's terms
    # are x^2 on both sides; jit's rsqrt is its own on 4 rows and, set free, absorbs its
    # sums, so only the epilogue (x / sqrt(v) against x * rsqrt(v)) is shown.
    (JAX, "softmax_fwd_f32", "softmax_fwd", "f32", "numpy", "jit", "tree + formula + function implementation",
     ROW_EXPS),
    (JAX, "log_softmax_fwd_f32", "log_softmax_fwd", "f32", "numpy", "jit", "tree", ROW_EXPS),
    (JAX, "rmsnorm_fwd_f32", "rmsnorm_fwd", "f32", "numpy", "jit", "formula", []),
    # x @ w.T + b in bf16: NumPy's matmul answers in binary32 and the bias joins before the
    # one rounding; every jit output is RN(RN(dot) + b).
    (JAX, "linear_fwd_bf16", "linear_fwd", "bf16", "numpy", "jit", "rounding format", []),
    # Both sides call ATen's exp (not Highway's): with exp(y) set free per element, one
    # value shared by both, eager contracts dy - exp(y) G and compiled does not.
    (TORCH, "log_softmax_f32", "log_softmax_bwd", "f32", "eager_bwd", "compiled_bwd", "fusion", []),
    # A plain sum: eager ATen's 16 bias gradients are each 4 strided accumulators added in
    # turn, compiled's a sequential loop, and neither the binary64 sum rounded once.
    (TORCH, "linear_f32", "linear_bwd_bias", "f32", "eager_db", "compiled_db", "tree", []),
]

# The table's causes that need evidence beyond the models (settings tried, a tree
# revealed, a function's code): compare must say `unknown` there, with what each side
# follows, rather than name a cause it cannot show.
UNKNOWN = [
    # Without the sides' exps written out, a log-sum-exp whose difference a tree and exp or
    # log give alike.
    (JAX, "log_softmax_fwd_f32", "log_softmax_fwd", "f32", "numpy", "jit"),
]


def run_compare(ulpgate, folder, archive, op, dtype, a, b, extra, report):
    path = os.path.join(ROOT, folder, archive + ".npz")
    cmd = [ulpgate, "compare", "--op", op, "--dtype", dtype, "--a", f"{path}:{a}",
           "--b", f"{path}:{b}", "--quiet", "--json", report] + extra
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"FAIL {' '.join(cmd)}: status {proc.returncode}\n{proc.stderr}")
    with open(report) as f:
        result = json.load(f)["result"]
    if (proc.returncode == 0) != (result["differing"] == 0):
        raise SystemExit(f"FAIL {archive} {a} {b}: status {proc.returncode} with "
                         f"{result['differing']} differing outputs")
    return result, cmd


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ulpgate", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    failures, reports = [], []
    for i, (folder, archive, op, dtype, a, b, cause, extra) in enumerate(ROWS):
        report = os.path.join(args.work, f"{i:02d}_{archive}.json")
        result, cmd = run_compare(args.ulpgate, folder, archive, op, dtype, a, b, extra, report)
        got = result["cause"]["cause"]
        line = f"{os.path.basename(folder)} {archive} {a} vs {b}: {result['differing']} differ, cause {got}"
        print(("ok   " if got == cause else "FAIL ") + line + ("" if got == cause else f" (the table: {cause})"))
        if got != cause:
            failures.append(line + "\n  " + " ".join(cmd))
        if "values" in result:
            reports.append(report)
    for i, (folder, archive, op, dtype, a, b) in enumerate(UNKNOWN):
        report = os.path.join(args.work, f"unknown_{i:02d}_{archive}.json")
        result, cmd = run_compare(args.ulpgate, folder, archive, op, dtype, a, b, [], report)
        c = result["cause"]
        ok = c["cause"] == "unknown" and "follows" in (c.get("detail") or "") and result["differing"] > 0
        print(("ok   " if ok else "FAIL ") + f"{archive} {a} vs {b}: cause {c['cause']}: {c.get('detail')}")
        if not ok:
            failures.append(f"{archive}: expected unknown with the evidence, got {c}")
    def recheck(script, chosen):
        """Runs an independent recheck over the chosen reports; a failure is listed."""
        if not chosen:
            return
        proc = subprocess.run([sys.executable, os.path.join(HERE, script)] + chosen, capture_output=True, text=True)
        print(proc.stdout[-2000:], end="")
        if proc.returncode != 0:
            failures.append(f"{script}: status {proc.returncode}\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")

    def basis(report):
        with open(report) as f:
            return json.load(f)["result"]["cause"].get("basis")

    # Every report's counts and distances (and a plain sum's orders summed again); the row
    # reductions' evidence (the statistics' values per row) written apart again; the row
    # models' (each side's exp, order and epilogue) summed and finished again.
    recheck("recheck_compare.py", reports)
    recheck("recheck_row_statistics.py", [r for r in reports if basis(r) == "row statistics set free"])
    recheck("recheck_row_models.py", [r for r in reports if basis(r) == "row models"])
    if failures:
        print("\n".join(failures))
        return 1
    print(f"compare named the table's cause for {len(ROWS)} differences and identities; "
          f"{len(UNKNOWN)} stay unknown with their evidence; {len(reports)} reports rechecked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
