#!/usr/bin/python3
"""PyTorch's CPU kernels of the elementwise backward ops, under every CPU capability.

Runs torch.ops.aten.tanh_backward, sigmoid_backward, silu_backward and gelu_backward
(approximate 'none' and 'tanh') on given inputs in float32 or bfloat16, once per
ATEN_CPU_CAPABILITY this CPU has (default; avx2 with avx2+fma; avx512 with
avx512f/bw/vl/dq), and writes an .npz of float32 arrays: the inputs (`grad` and the
op's second operand `t`, `s` or `x`) and one array per path. Written for the Debian build
of PyTorch 1.13 (python3-torch): run it with /usr/bin/python3, whose modules those are.

    /usr/bin/python3 tools/python/torch_elementwise_peer.py generate --op gelu_bwd \\
        --dtype bf16 --n 65536 --seed 1 --out gelu_bf16_in.npz
    /usr/bin/python3 tools/python/torch_elementwise_peer.py run --op gelu_bwd --dtype bf16 \\
        --inputs gelu_bf16_in.npz --out gelu_bf16.npz
    /usr/bin/python3 tools/python/torch_elementwise_peer.py capabilities

Paths (CAP is default, avx2 or avx512):
  aten_CAP           contiguous tensors: the kernel's Vectorized lambda (the last
                     n mod 2*Vec::size() elements take its scalar lambda)
  aten_CAP_scalar    the same values as strided views (every other element of a buffer):
                     TensorIterator cannot vectorize them, so every element takes the
                     kernel's scalar lambda
  aten_CAP_nomkldnn  gelu_bwd only, with torch.backends.mkldnn disabled: PyTorch 1.13 sends
                     contiguous float32 gelu_backward(approximate='none') to oneDNN
                     (eltwise_gelu_erf, its own JIT code for this CPU, whatever
                     ATEN_CPU_CAPABILITY says), and bfloat16 too on a CPU with AVX-512;
                     this is the ATen kernel instead
  aten_CAP_f32       bf16 inputs only: the same op in float32 on the same values (ATen's
                     kernel, oneDNN off), which tells whether the bf16 kernel is the float
                     kernel rounded once

Each capability runs in its own Python process, since PyTorch reads ATEN_CPU_CAPABILITY once,
when it is imported; the child checks that torch reports the capability asked for (PyTorch
trusts the variable, and an avx512 kernel on a CPU without it would fault, hence
/proc/cpuinfo decides which are run). One thread: an elementwise result does not depend on
how the range is split, but one thread keeps the vector/scalar boundary at the array's end.

`generate` draws inputs (numpy, seeded): for each op a mix of uniform and log-uniform values
over its range, values near its landmarks (|t| near 1, s near 0 and 1, the zero of the
derivative of silu/gelu, x < -4 where gelu_bwd's 1 + erf cancels, x < -88 where silu's
exp(-x) overflows) and random finite bit patterns of the dtype; every value is of the dtype.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import elementwise_exact as ex  # noqa: E402  (standard library at import time)

import npz_values  # noqa: E402

OPERAND = {op: info[0] for op, info in ex.OPS.items()}
CAPABILITIES = ("default", "avx2", "avx512")
# What torch.__config__.show() prints for each capability ("CPU capability usage: ...").
REPORTED = {"default": "NO AVX", "avx2": "AVX2", "avx512": "AVX512"}
DTYPES = ("f32", "bf16", "f16")


def cpu_capabilities(cpuinfo="/proc/cpuinfo"):
    """The capabilities this CPU can run: default always; avx2 needs avx2 and fma (PyTorch's
    AVX2 kernels are compiled with -mavx2 -mfma); avx512 needs avx512f, bw, vl and dq."""
    flags = set()
    try:
        with open(cpuinfo) as f:
            for line in f:
                if line.startswith("flags"):
                    flags.update(line.split(":", 1)[1].split())
    except OSError:
        pass
    caps = ["default"]
    if {"avx2", "fma"} <= flags:
        caps.append("avx2")
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        caps.append("avx512")
    return caps


# ----------------------------------------------------------------------------- inputs

def _derivative_zero(op):
    """The x < 0 where the op's derivative factor vanishes (its sum cancels completely)."""
    mp = ex._imports()[1]
    with mp.workprec(64):
        k = mp.sqrt(2 / mp.pi)
        c = mp.mpf(44715) / 10 ** 6

        def silu(x):
            sig = 1 / (1 + mp.exp(-x))
            return sig * (1 + x * (1 - sig))

        def gelu(x):
            return mp.ncdf(x) + x * mp.npdf(x)

        def gelu_tanh(x):
            th = mp.tanh(k * (x + c * x ** 3))
            return (1 + th) / 2 + x * (1 - th * th) * k * (1 + 3 * c * x * x) / 2
        f = {"silu_bwd": silu, "gelu_bwd": gelu, "gelu_tanh_bwd": gelu_tanh}[op]
        return float(mp.findroot(f, -1.0))


def random_patterns(np, rng, fmt, n):
    """n random finite values of fmt, uniform over its bit patterns (so every binade,
    subnormals and both signs), widened to float32."""
    out = np.empty(0, dtype=np.float32)
    while len(out) < n:
        if fmt is ex.F32:
            v = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
        elif fmt is ex.BF16:
            v = (rng.integers(0, 1 << 16, n, dtype=np.uint64).astype(np.uint32)
                 << np.uint32(16)).view(np.float32)
        else:
            v = rng.integers(0, 1 << 16, n, dtype=np.uint64).astype(np.uint16).view(
                np.float16).astype(np.float32)
        out = np.concatenate([out, v[np.isfinite(v)]])
    return out[:n]


def generate_inputs(op, dtype, n, seed):
    """{'grad': ..., operand: ...}: float32 arrays of n values of the dtype (see the doc)."""
    np = ex._imports()[0]
    fmt = ex.FORMATS[dtype]
    # One stream per (seed, op, dtype), so that an op's inputs do not depend on which other
    # ops are drawn.
    rng = np.random.default_rng([seed, sorted(ex.OPS).index(op), DTYPES.index(dtype)])

    def mix(parts):
        counts = [int(n * w) for w, _ in parts]
        counts[0] += n - sum(counts)
        v = np.concatenate([draw(m) for m, (_, draw) in zip(counts, parts)])
        return v[rng.permutation(n)]

    def sign(m):
        return np.where(rng.random(m) < 0.5, -1.0, 1.0)

    def loguniform(lo, hi):
        return lambda m: sign(m) * np.exp2(rng.uniform(lo, hi, m))

    def patterns(m):
        return random_patterns(np, rng, fmt, m).astype(np.float64)

    def pick(values):
        return lambda m: rng.choice(np.array(values, dtype=np.float64), m)

    grad = mix([(0.5, lambda m: rng.uniform(-2, 2, m)),
                (0.3, loguniform(-20, 20)),
                (0.1, pick([1.0, -1.0])),
                (0.1, patterns)])
    name = OPERAND[op]
    if op == "tanh_bwd":
        v = mix([(0.35, lambda m: rng.uniform(-1, 1, m)),
                 (0.25, lambda m: sign(m) * (1 - np.exp2(rng.uniform(-26, -1, m)))),
                 (0.15, loguniform(-40, -1)),
                 (0.10, pick([0.0, 1.0, -1.0, 0.5, -0.5, 2 ** -0.5, -2 ** -0.5])),
                 (0.15, patterns)])
    elif op == "sigmoid_bwd":
        v = mix([(0.35, lambda m: rng.uniform(0, 1, m)),
                 (0.25, lambda m: 1 - np.exp2(rng.uniform(-26, -1, m))),
                 (0.15, lambda m: np.exp2(rng.uniform(-40, -1, m))),
                 (0.10, pick([0.0, 1.0, 0.5, 0.25, 0.75])),
                 (0.15, patterns)])
    else:
        x0 = _derivative_zero(op)
        if op == "silu_bwd":
            tail = lambda m: rng.uniform(-110, -20, m)   # exp(-x) overflows below -88.72
        else:
            tail = lambda m: rng.uniform(-14, -4, m)     # 1 + erf / 1 + tanh cancel
        v = mix([(0.35, lambda m: rng.uniform(-10, 10, m)),
                 (0.15, loguniform(-30, 4)),
                 (0.15, lambda m: x0 * (1 + rng.uniform(-2 ** -8, 2 ** -8, m))),
                 (0.15, tail),
                 (0.10, lambda m: rng.uniform(4, 12, m)),
                 (0.10, patterns)])
    with np.errstate(over="ignore"):
        grad = ex.to_format(fmt, grad.astype(np.float32))
        v = ex.to_format(fmt, v.astype(np.float32))
    return {"grad": grad, name: v}


# ----------------------------------------------------------------------------- running

def _child(jobs_path):
    """Runs in a process started with ATEN_CPU_CAPABILITY set: every job's paths."""
    import numpy as np
    import torch
    cap = os.environ["ATEN_CPU_CAPABILITY"]
    shown = torch.__config__.show()
    if "CPU capability usage: %s\n" % REPORTED[cap] not in shown + "\n":
        print("torch_elementwise_peer.py: asked for %s, torch reports: %s" % (
            cap, [l for l in shown.splitlines() if "capability" in l]), file=sys.stderr)
        return 3
    torch.set_num_threads(1)
    aten = torch.ops.aten
    call = {
        "tanh_bwd": aten.tanh_backward,
        "sigmoid_bwd": aten.sigmoid_backward,
        "silu_bwd": aten.silu_backward,
        "gelu_bwd": lambda g, x: aten.gelu_backward(g, x, approximate="none"),
        "gelu_tanh_bwd": lambda g, x: aten.gelu_backward(g, x, approximate="tanh"),
    }
    types = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
    with open(jobs_path) as f:
        jobs = json.load(f)
    for job in jobs:
        op, dtype = job["op"], job["dtype"]
        arrays = npz_values.load_float32(job["inputs"])
        g_np, v_np = arrays["grad"], arrays[OPERAND[op]]
        fn = call[op]
        out = {}

        def tensors(dt):
            return (torch.from_numpy(g_np).to(dt), torch.from_numpy(v_np).to(dt))

        def strided(t):
            buf = torch.zeros(2 * t.numel(), dtype=t.dtype)
            buf[::2] = t
            return buf[::2]

        def run(name, f):
            try:
                out[name] = f().float().numpy()
            except RuntimeError as e:     # a dtype the kernel lacks (f16 in 1.13)
                print("torch_elementwise_peer.py: %s %s %s: %s" % (op, dtype, name,
                                                                   str(e).splitlines()[0]),
                      file=sys.stderr)

        g, v = tensors(types[dtype])
        run("aten_%s" % cap, lambda: fn(g, v))
        run("aten_%s_scalar" % cap, lambda: fn(strided(g), strided(v)))
        if op == "gelu_bwd":
            def nomkldnn():
                with torch.backends.mkldnn.flags(enabled=False):
                    return fn(g, v)
            run("aten_%s_nomkldnn" % cap, nomkldnn)
        if dtype != "f32":
            g32, v32 = tensors(torch.float32)

            def in_f32():
                with torch.backends.mkldnn.flags(enabled=False):
                    return fn(g32, v32)
            run("aten_%s_f32" % cap, in_f32)
        np.savez(job["out"], **out)
    return 0


def run_paths(jobs, capabilities=None, python=None):
    """jobs: [{'op', 'dtype', 'inputs': {name: array}}]. Runs every capability (one process
    each, all jobs in it) and returns, per job, {path name: float32 array}."""
    np = ex._imports()[0]
    capabilities = capabilities or cpu_capabilities()
    python = python or sys.executable
    results = [dict() for _ in jobs]
    with tempfile.TemporaryDirectory(prefix="torch_elementwise_peer.") as tmp:
        spec = []
        for i, job in enumerate(jobs):
            path = os.path.join(tmp, "in%d.npz" % i)
            np.savez(path, **job["inputs"])
            spec.append({"op": job["op"], "dtype": job["dtype"], "inputs": path})
        for cap in capabilities:
            for i, s in enumerate(spec):
                s["out"] = os.path.join(tmp, "out_%s_%d.npz" % (cap, i))
            jobs_path = os.path.join(tmp, "jobs_%s.json" % cap)
            with open(jobs_path, "w") as f:
                json.dump(spec, f)
            env = dict(os.environ, ATEN_CPU_CAPABILITY=cap)
            status = subprocess.run([python, os.path.abspath(__file__), "_child", jobs_path],
                                    env=env).returncode
            if status != 0:
                raise RuntimeError("the %s child exited with %d" % (cap, status))
            for i, s in enumerate(spec):
                results[i].update(npz_values.load_float32(s["out"]))
    return results


# ----------------------------------------------------------------------------- command line

def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="torch_elementwise_peer.py",
        description="PyTorch 1.13's CPU elementwise backward kernels under every CPU "
                    "capability (run with /usr/bin/python3: Debian's torch and numpy).",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="draw inputs of an op (seeded) into an .npz")
    g.add_argument("--op", required=True, choices=sorted(ex.OPS))
    g.add_argument("--dtype", required=True, choices=DTYPES)
    g.add_argument("--n", type=int, default=65536)
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--out", required=True)
    r = sub.add_parser("run", help="run PyTorch's paths on inputs, write inputs + paths")
    r.add_argument("--op", required=True, choices=sorted(ex.OPS))
    r.add_argument("--dtype", required=True, choices=DTYPES)
    r.add_argument("--inputs", required=True, help=".npz with grad and t, s or x (float32)")
    r.add_argument("--out", required=True)
    r.add_argument("--capabilities", help="comma-separated (default: all this CPU has)")
    sub.add_parser("capabilities", help="print the ATEN_CPU_CAPABILITY values this CPU runs")
    c = sub.add_parser("_child")
    c.add_argument("jobs")
    args = parser.parse_args(argv)
    if args.command == "_child":
        return _child(args.jobs)
    if args.command == "capabilities":
        print(" ".join(cpu_capabilities()))
        return 0
    try:
        np = ex._imports()[0]
        if args.command == "run":
            import torch  # noqa: F401  (checked here so that the error is one line)
    except ImportError as e:
        print("torch_elementwise_peer.py: needs numpy, mpmath and torch (Debian: "
              "python3-numpy python3-mpmath python3-torch; run /usr/bin/python3): %s" % e,
              file=sys.stderr)
        return 2
    if args.command == "generate":
        np.savez(args.out, **generate_inputs(args.op, args.dtype, args.n, args.seed))
        return 0
    inputs = npz_values.load_float32(args.inputs)
    name = OPERAND[args.op]
    for k in ("grad", name):
        if k not in inputs or inputs[k].dtype != np.float32:
            print("torch_elementwise_peer.py: %s needs a float32 array %s" % (args.inputs, k),
                  file=sys.stderr)
            return 2
    fmt = ex.FORMATS[args.dtype]
    for k in ("grad", name):
        if not ex.same_bits(ex.to_format(fmt, inputs[k]), inputs[k]).all():
            print("torch_elementwise_peer.py: %s holds values that are not %s" % (k, fmt),
                  file=sys.stderr)
            return 2
    caps = args.capabilities.split(",") if args.capabilities else cpu_capabilities()
    unknown = [c for c in caps if c not in CAPABILITIES]
    lacking = [c for c in caps if c not in cpu_capabilities()]
    if unknown or lacking:
        print("torch_elementwise_peer.py: %s: this CPU runs %s" % (
            ",".join(unknown + lacking), ",".join(cpu_capabilities())), file=sys.stderr)
        return 2
    job = {"op": args.op, "dtype": args.dtype, "inputs": {"grad": inputs["grad"],
                                                          name: inputs[name]}}
    paths = run_paths([job], caps)[0]
    np.savez(args.out, **job["inputs"], **paths)
    print("%s: %s" % (args.out, " ".join(sorted(paths))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
