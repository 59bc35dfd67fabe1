"""Rechecks the MPFR oracle of the row reductions: reads the lines of
row_oracle_dump (one row per line: op, operands, eps, exact values) on stdin
and recomputes every value from tools/python/row_exact.py's definitions in
mpmath at 1600 bits. They must agree to 2^-280 relative, or both lie below
2^-2900 (where the oracle holds an exponential's underflow beyond MPFR's range
as 2^-3000: every format and error measure treats the two alike). Exits 1 on
the first disagreement, naming the row; prints how many values agreed.
"""

import json
import sys

from mpmath import mp, mpf

import row_exact

mp.prec = 1600
TOLERANCE = mpf(2) ** -280
TINY = mpf(2) ** -2900


def main():
    checked = 0
    ops = set()
    for line in sys.stdin:
        row = json.loads(line)
        operands = {k: [float.fromhex(v) for v in vs] for k, vs in row["operands"].items()}
        eps = float.fromhex(row["eps"])
        ours = row_exact.DEFINITIONS[row["op"]](operands, eps)
        for i, (text, value) in enumerate(zip(row["exact"], ours)):
            theirs = mpf(text)
            if abs(value) < TINY and abs(theirs) < TINY:
                agree = (value >= 0) == (theirs >= 0) or value == 0
            elif value == 0:
                agree = theirs == 0
            else:
                agree = abs(theirs - value) <= TOLERANCE * abs(value)
            if not agree:
                print(f"{row['op']} ({row['suite']}) element {i}: oracle {text}, "
                      f"mpmath {mp.nstr(value, 40)}; operands {row['operands']}")
                return 1
            checked += 1
        ops.add(row["op"])
    missing = set(row_exact.DEFINITIONS) - ops
    if missing:
        print("no rows of " + ", ".join(sorted(missing)))
        return 1
    print(f"{checked} exact values of {len(ops)} ops agree with mpmath's definitions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
