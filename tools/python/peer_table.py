#!/usr/bin/python3
"""Which models PyTorch's CPU elementwise backward kernels follow, and how accurate they are.

For every op and dtype it draws inputs (torch_elementwise_peer.py generate), runs PyTorch's
paths under every CPU capability this machine has (torch_elementwise_peer.py), computes the
exact values and the models (elementwise_exact.py, mpmath) and prints a Markdown table: per
path, the models it follows bit for bit, its largest ULP error and bound fraction, its
special mismatches and how many outputs differ from other paths. Run it with Debian's
/usr/bin/python3 (python3-numpy, python3-mpmath, python3-torch).

    /usr/bin/python3 tools/python/peer_table.py --n 65536 --seed 1 [--ops all]
        [--dtypes f32,bf16] [--keep DIR] [--out TABLE.md]

Columns:
  follows     the exact models whose output equals the path's on every input (NaNs equal,
              zeros by sign); "none" then names the nearest one and on how many inputs it
              differs. For silu/gelu/gelu_tanh the exact models are NAME@glibc and NAME@sleef,
              PyTorch's sequences over this machine's exp/erf/tanh; where none is followed,
              the approximate model (~NAME, correctly rounded exp/erf/tanh) that agrees most
              often, as a share of inputs.
  max ulp     largest ULP error over the inputs (special mismatches aside)
  max bf      largest bound fraction |y - x| / (2^-p |grad| S + half the smallest subnormal)
  special     special mismatches: NaN or an infinity where the exact value is finite and
              does not round to that infinity
  != default  outputs that differ (bits; NaNs equal) from aten_default's
  != vector   outputs that differ from the contiguous path of the same capability
A second table gives the same measures for the models themselves.
"""

import argparse
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import elementwise_exact as ex  # noqa: E402
import torch_elementwise_peer as peer  # noqa: E402


def machine():
    """The CPU's model name (lscpu) and whether it has AVX-512."""
    name = platform.processor() or "unknown"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                name = line.split(":", 1)[1].strip()
    except OSError:
        pass
    caps = peer.cpu_capabilities()
    return "%s; AVX-512 %s; capabilities run: %s" % (
        name, "yes" if "avx512" in caps else "no", ", ".join(caps))


def stats(np, fmt, grad, exacts, y):
    e, f, special = ex.measure(fmt, grad, exacts, y)
    max_e = np.nanmax(e) if np.isfinite(e).any() else float("nan")
    max_f = np.nanmax(f) if np.isfinite(f).any() else float("nan")
    arg_f = int(np.nanargmax(f)) if np.isfinite(f).any() else -1
    return {"e": e, "f": f, "max_e": max_e, "max_f": max_f, "special": int(special.sum()),
            "arg_f": arg_f}


def fmt_num(v):
    if v != v:
        return "-"
    if v == 0:
        return "0"
    if v < 1e-3 or v >= 1e6:
        return "%.3g" % v
    return "%.4g" % v


def follows(np, y, models, n):
    """The exact models (library ones included) equal to y on every input, or the nearest
    one; for ops with approximate models also the one that agrees most often."""
    exact_names = [m for m in models if ex.model_is_exact(m)]
    approx = [m for m in models if not ex.model_is_exact(m)]
    diffs = {m: int((~ex.same_bits(y, models[m])).sum()) for m in exact_names}
    equal = [m for m, d in diffs.items() if d == 0]
    if equal:
        return ", ".join(equal)
    text = "none"
    if diffs:
        best = min(diffs, key=diffs.get)
        text += " (nearest %s: %d differ)" % (best, diffs[best])
    if approx:
        agree = {m: int(ex.same_bits(y, models[m]).sum()) for m in approx}
        best = max(agree, key=agree.get)
        text += "; %s agrees on %.2f%%" % (best, 100.0 * agree[best] / n)
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="peer_table.py",
        description="PyTorch's CPU elementwise backward kernels against exact values and "
                    "models, as a Markdown table (run with /usr/bin/python3).",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--n", type=int, default=65536, help="inputs per op and dtype")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ops", default="all", help="comma-separated, or all")
    parser.add_argument("--dtypes", default="f32,bf16")
    parser.add_argument("--capabilities", help="comma-separated (default: all this CPU has)")
    parser.add_argument("--keep", help="directory for each op's and dtype's .npz (inputs, "
                                       "paths, models, exact rounding)")
    parser.add_argument("--out", help="also write the tables here")
    args = parser.parse_args(argv)
    try:
        np = ex._imports()[0]
        import torch  # noqa: F401
    except ImportError as e:
        print("peer_table.py: needs numpy, mpmath and torch (Debian: python3-numpy "
              "python3-mpmath python3-torch; run /usr/bin/python3): %s" % e, file=sys.stderr)
        return 2
    ops = sorted(ex.OPS) if args.ops == "all" else args.ops.split(",")
    ops = [op for op in ex.OPS if op in ops]            # the order of ex.OPS
    dtypes = args.dtypes.split(",")
    caps = args.capabilities.split(",") if args.capabilities else peer.cpu_capabilities()
    started = time.time()
    jobs = [{"op": op, "dtype": dt, "inputs": peer.generate_inputs(op, dt, args.n, args.seed)}
            for op in ops for dt in dtypes]
    results = peer.run_paths(jobs, caps)
    print("peer_table.py: PyTorch ran in %.0f s" % (time.time() - started), file=sys.stderr)

    rows, model_rows, notes = [], [], {}
    for job, paths in zip(jobs, results):
        op, dt = job["op"], job["dtype"]
        fmt = ex.FORMATS[dt]
        grad, v = job["inputs"]["grad"], job["inputs"][peer.OPERAND[op]]
        t0 = time.time()
        exacts = ex.oracle(op, grad, v)
        models = ex.model_outputs(op, fmt, grad, v)
        print("peer_table.py: %s %s: oracle and models in %.0f s" % (op, dt, time.time() - t0),
              file=sys.stderr)
        rn = ex.correctly_rounded(fmt, exacts)
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            np.savez(os.path.join(args.keep, "%s_%s.npz" % (op, dt)), **job["inputs"],
                     **paths, **{"model_" + k.replace("~", "approx_").replace("/", "_"): y
                                 for k, y in models.items()}, exact_rounded=rn)
        default = paths.get("aten_default")
        for name in sorted(paths, key=lambda p: (caps.index(p.split("_")[1]), p)):
            if name.endswith("_f32"):
                continue                       # float32 outputs: a note below, not a row
            y = paths[name]
            st = stats(np, fmt, grad, exacts, y)
            cap = name.split("_")[1]
            vector = paths["aten_%s" % cap]
            what = follows(np, y, models, len(y))
            f32 = paths.get("aten_%s_f32" % cap)
            if f32 is not None and name == "aten_%s" % cap:
                same = int(ex.same_bits(y, ex.to_format(fmt, f32)).sum())
                what += "; = RN(aten_%s_f32) on %.2f%%" % (cap, 100.0 * same / len(y))
            rows.append([op, dt, name, what, fmt_num(st["max_e"]), fmt_num(st["max_f"]),
                         str(st["special"]),
                         str(int((~ex.same_bits(y, default)).sum())) if default is not None
                         else "-",
                         "-" if y is vector else str(int((~ex.same_bits(y, vector)).sum()))])
            if st["arg_f"] >= 0:
                i = st["arg_f"]
                where = "%s %s at grad = %s, %s = %s (ULP error %s)" % (
                    op, dt, float(grad[i]).hex(), peer.OPERAND[op], float(v[i]).hex(),
                    fmt_num(st["e"][i]))
                notes.setdefault(where, []).append(name)
        st = stats(np, fmt, grad, exacts, rn)
        model_rows.append([op, dt, "RN (correctly rounded)", fmt_num(st["max_e"]),
                           fmt_num(st["max_f"]), str(st["special"])])
        for name, y in models.items():
            st = stats(np, fmt, grad, exacts, y)
            model_rows.append([op, dt, name, fmt_num(st["max_e"]), fmt_num(st["max_f"]),
                               str(st["special"])])

    lines = ["Machine: %s. PyTorch %s (Debian), n = %d per op and dtype, seed %d." % (
                 machine(), __import__("torch").__version__, args.n, args.seed), "",
             "| op | dtype | path | follows | max ulp | max bf | special | != default "
             "| != vector |",
             "|---|---|---|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    lines += ["", "Models on the same inputs:", "",
              "| op | dtype | model | max ulp | max bf | special |", "|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(r) + " |" for r in model_rows]
    lines += ["", "Where each path's bound fraction peaks:", ""]
    lines += ["- %s: %s" % (where, ", ".join(names)) for where, names in notes.items()]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    print("peer_table.py: %.0f s in all" % (time.time() - started), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
