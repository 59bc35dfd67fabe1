#!/usr/bin/env python3
"""Budget rules for elementwise ops, from what every target's model measures.

For each op and format given, runs `ulpgate run` on the ledger's suites (seed 1, n
100000) on every compiled target, those this CPU cannot run on their models
(--emulate-unsupported), and prints the runs and rules to add to golden/budgets.json:
per (op, dtype) conformance to the target's model; per (op, dtype, suite) the largest
ULP error, special-mismatch count and bound fraction any case measured, each limit
rounded up to two significant digits (counts exact), with a `why` that gives the
measured values and where. The limits bind the kernels to what their models give on
every CPU; a kernel that leaves its model fails the conformance rule first.

    python3 tools/python/elementwise_budgets.py --ulpgate build/bin/ulpgate \\
        --ops sigmoid_bwd,silu_bwd --dtypes f32,bf16,f16 > new.json
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

SUITES = {"default": ["random", "domain", "adversarial"]}


def round_up(x):
    """x rounded up to two significant digits (0 stays 0)."""
    if x <= 0:
        return 0.0
    e = math.floor(math.log10(x)) - 1
    return float("%.15g" % (math.ceil(x / 10 ** e - 1e-9) * 10 ** e))


def measure(ulpgate, op, dtype, suite, n):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "run.json")
        subprocess.run([ulpgate, "run", "--kernel", op, "--dtype", dtype, "--suite", suite,
                        "--n", str(n), "--seed", "1", "--target", "all", "--emulate-unsupported",
                        "--quiet", "--json", path], check=True, stdout=subprocess.DEVNULL)
        with open(path) as f:
            return json.load(f)["results"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ulpgate", default="build/bin/ulpgate")
    parser.add_argument("--ops", required=True)
    parser.add_argument("--dtypes", default="f32,bf16,f16")
    parser.add_argument("--n", type=int, default=100000)
    args = parser.parse_args(argv)
    runs, rules = [], []
    for op in args.ops.split(","):
        for dtype in args.dtypes.split(","):
            suites = SUITES["default"]
            run = {"op": op}
            if dtype != "f32":
                run["dtype"] = dtype
            run.update({"suites": suites, "seed": 1, "n": args.n})
            runs.append(run)
            match = {"op": op}
            if dtype != "f32":
                match["dtype"] = dtype
            rules.append({
                "id": "%s.%s.conformance" % (op, dtype),
                "match": dict(match),
                "limits": {"conformance_required": True},
                "why": "Every %s kernel of %s equals, bit for bit, the model `ulpgate list` names "
                       "for its target (its sequence with the target's multiply-adds, Highway's "
                       "functions included, fused or not)." % (dtype, op)})
            for suite in suites:
                cases = measure(args.ulpgate, op, dtype, suite, args.n)
                worst = max(cases, key=lambda c: c["max_ulp"])
                specials = max(c["special_mismatch"] for c in cases)
                fractions = [c["bound_fraction"]["max"] for c in cases]
                limits = {"max_ulp": round_up(worst["max_ulp"]),
                          "max_special_mismatches": specials}
                finite = [f for f in fractions if not isinstance(f, str)]
                if len(finite) == len(fractions):
                    limits["max_bound_fraction"] = round_up(max(finite))
                why = ("%s in %s, suite %s, measured over every target's model (SCALAR..AVX3_DL, "
                       "the same on every CPU) at seed 1, n=%d: max_ulp %.6g (%s@%s), special "
                       "mismatches %d" % (op, dtype, suite, args.n, worst["max_ulp"],
                                          worst["variant"], worst["target"], specials))
                if "max_bound_fraction" in limits:
                    why += ", bound fraction %.4g" % max(finite)
                else:
                    why += "; bound fraction not budgeted: outputs that are not finite where the " \
                           "exact value is have none"
                why += " (limits rounded up to 2 digits)."
                rules.append({"id": "%s.%s.%s" % (op, dtype, suite),
                              "match": dict(match, suite=suite), "limits": limits, "why": why})
                print("measured %s %s %s" % (op, dtype, suite), file=sys.stderr)
    json.dump({"runs": runs, "rules": rules}, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
