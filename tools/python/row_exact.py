"""The row reductions' definitions in mpmath, written from their mathematics
alone (no code shared with the C++ oracle, suites/engine/reductions/
row_oracle.cc): RMSNorm and softmax, log-softmax, forward and backward, along
one row. Each function takes the row's operands as Python floats (binary32
values, exact in a double) and returns the n outputs as mpmath numbers at the
working precision the caller set (mpmath.mp.prec).

At 1600 bits every sum, product and difference of these binary32 operands is
exact (their bits span below 2^(520 + log2 n) down to 2^-600), so the only
roundings are those of sqrt, exp and log, each within 2^-1600 relative; where
a backward pass cancels, 1600 bits leave the result far more than the 300 the
comparison needs.
"""

from mpmath import mp, mpf, exp, log, sqrt


def rmsnorm_fwd(x, g, eps):
    n = len(x)
    v = sum(mpf(xj) ** 2 for xj in x) / n + mpf(eps)
    return [mpf(gi) * mpf(xi) / sqrt(v) for xi, gi in zip(x, g)]


def rmsnorm_bwd(dy, x, g, eps):
    n = len(x)
    r = 1 / sqrt(sum(mpf(xj) ** 2 for xj in x) / n + mpf(eps))
    c = sum(mpf(gj) * mpf(dyj) * mpf(xj) for gj, dyj, xj in zip(g, dy, x)) / n
    return [r * mpf(gi) * mpf(dyi) - r ** 3 * mpf(xi) * c for dyi, xi, gi in zip(dy, x, g)]


def softmax_fwd(x):
    m = max(x)
    e = [exp(mpf(xj) - m) for xj in x]
    s = sum(e)
    return [ei / s for ei in e]


def softmax_bwd(dy, y):
    dot = sum(mpf(a) * mpf(b) for a, b in zip(dy, y))
    return [mpf(yi) * (mpf(dyi) - dot) for dyi, yi in zip(dy, y)]


def log_softmax_fwd(x):
    m = max(x)
    s = sum(exp(mpf(xj) - m) for xj in x)
    return [mpf(xi) - m - log(s) for xi in x]


def log_softmax_bwd(dy, y):
    g = sum(mpf(d) for d in dy)
    return [mpf(dyi) - exp(mpf(yi)) * g for dyi, yi in zip(dy, y)]


DEFINITIONS = {
    "rmsnorm_fwd": lambda o, eps: rmsnorm_fwd(o["x"], o["g"], eps),
    "rmsnorm_bwd": lambda o, eps: rmsnorm_bwd(o["dy"], o["x"], o["g"], eps),
    "softmax_fwd": lambda o, eps: softmax_fwd(o["x"]),
    "softmax_bwd": lambda o, eps: softmax_bwd(o["dy"], o["y"]),
    "log_softmax_fwd": lambda o, eps: log_softmax_fwd(o["x"]),
    "log_softmax_bwd": lambda o, eps: log_softmax_bwd(o["dy"], o["y"]),
}
