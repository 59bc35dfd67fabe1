#!/usr/bin/env python3
"""The coefficients of the op sequences' erf (oracles/erf_polynomial.h), derived again.

Each polynomial is the least-squares fit in the Chebyshev basis at 800 Chebyshev nodes (close
to the minimax polynomial) of a function evaluated by mpmath at 120 bits, written in the power
basis of the variable the code evaluates and rounded to binary32:

  small: erf(sqrt(s)) / sqrt(s) - 1 on s = x^2 in [0, 1], degree 6 (erf(x) = x + x * P(x^2));
  near:  log(erfc(a)) on a in [1, 2], degree 8 in h = a - 1  (erf = 1 - exp(Q(a)));
  far:   log(erfc(a)) on a in [2, 4], degree 9 in h = a - 3.

Prints the three tables as C++ initializers and each fit's largest error (before the
rounding to binary32) on a grid of 1001 points. Needs Debian's python3-numpy and
python3-mpmath; it is not run by the build.

    python3 tools/python/erf_coefficients.py
"""

import mpmath as mp
import numpy as np

mp.mp.prec = 120


def fit(f, lo, hi, degree, center, nodes=800):
    """The power-basis coefficients in (a - center) of f's Chebyshev fit on [lo, hi]."""
    k = np.arange(nodes)
    u = np.cos(np.pi * (k + 0.5) / nodes)
    mid, half = (lo + hi) / 2, (hi - lo) / 2
    ys = np.array([float(f(mp.mpf(mid + half * float(v)))) for v in u])
    cheb = np.polynomial.chebyshev.chebfit(u, ys, degree)
    grid = np.linspace(-1, 1, 1001)
    error = max(abs(float(f(mp.mpf(mid + half * float(v)))) -
                    np.polynomial.chebyshev.chebval(v, cheb)) for v in grid)
    power = np.polynomial.chebyshev.cheb2poly(cheb)
    # u = (h + center - mid) / half
    shifted = np.polynomial.polynomial.Polynomial(power)(
        np.polynomial.polynomial.Polynomial([(center - mid) / half, 1 / half]))
    return shifted.coef, error


def small(s):
    if s == 0:
        return 2 / mp.sqrt(mp.pi) - 1
    r = mp.sqrt(s)
    return mp.erf(r) / r - 1


def log_erfc(a):
    return mp.log(mp.erfc(a))


def main():
    for name, (coef, error) in (("kErfSmall", fit(small, 0.0, 1.0, 6, 0.0)),
                                ("kErfNear", fit(log_erfc, 1.0, 2.0, 8, 1.0)),
                                ("kErfFar", fit(log_erfc, 2.0, 4.0, 9, 3.0))):
        words = ", ".join(float(np.float32(c)).hex().replace("0000000p", "p") + "f" for c in coef)
        print("// fit error 2^%.1f" % np.log2(error))
        print("inline constexpr float %s[] = {%s};" % (name, words))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
