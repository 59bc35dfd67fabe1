#!/usr/bin/env python3
"""PyTorch's tanh_backward paths, checked by ulpgate.

Exports a tanh_bwd suite with `ulpgate suite export`, runs PyTorch's paths on it (eager
and torch.compile, CPU and CUDA when present) in f32, bf16 and f16, saves every path's
outputs beside the inputs in one .npz per format (float32 arrays holding values of the
format, the layout of suites/peer/), and calls `ulpgate check` on each path, which names the
models it follows bit for bit.

    python3 tools/python/torch_peer.py --ulpgate build/bin/ulpgate --out peer/ \\
        [--suite domain] [--n 65536] [--dtypes f32,bf16,f16] [--no-compile]

Needs torch and numpy (not in CI: run it where PyTorch is installed; the archives it
writes can be checked anywhere). Exit status: 0 when every check ran, 1 otherwise.
"""

import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import npz_values  # noqa: E402


def paths(torch, device, compile_ok):
    """name -> function(grad, t) of the paths run on `device`."""
    aten = torch.ops.aten.tanh_backward

    def mac(g, t):
        return g - g * (t * t)

    def mulsub(g, t):
        return g * (1 - t * t)

    def mac_left(g, t):
        return g - g * t * t  # Python's order: (g * t) * t

    out = {
        f"{device}_aten": lambda g, t: aten(g, t),
        f"{device}_eager_mac": mac,
        f"{device}_eager_mulsub": mulsub,
    }
    if device == "cpu":
        def chunks(g, t, k=37):
            return torch.cat([aten(g[i:i + k], t[i:i + k]) for i in range(0, len(g), k)])
        out["cpu_aten_chunks37"] = chunks
    if compile_ok:
        out[f"{device}_compiled_mulsub"] = torch.compile(mulsub)
        if device == "cuda":
            out["cuda_compiled_aten"] = torch.compile(lambda g, t: aten(g, t))
            out["cuda_compiled_mac"] = torch.compile(mac)
            out["cuda_compiled_mac_left"] = torch.compile(mac_left)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ulpgate", default="build/bin/ulpgate")
    parser.add_argument("--out", default="torch_peer")
    parser.add_argument("--suite", default="domain")
    parser.add_argument("--n", type=int, default=65536)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dtypes", default="f32,bf16,f16")
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile paths")
    args = parser.parse_args(argv)
    try:
        import numpy as np
        import torch
    except ImportError as e:
        print("torch_peer.py: needs torch and numpy: %s" % e, file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    types = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
    failed = 0
    for dtype in args.dtypes.split(","):
        inputs = os.path.join(args.out, "inputs_%s.npz" % dtype)
        # bf16 and f16 as float32 arrays: the archive's layout (suites/peer/), and arrays
        # torch.from_numpy takes (it takes no bfloat16).
        as_float32 = [] if dtype == "f32" else ["--float32"]
        subprocess.run([args.ulpgate, "suite", "export", "--suite", args.suite, "--dtype", dtype,
                        "--n", str(args.n), "--seed", str(args.seed), "--out", inputs]
                       + as_float32, check=True)
        arrays = dict(np.load(inputs))
        for device in devices:
            g = torch.from_numpy(arrays["grad"]).to(device=device, dtype=types[dtype])
            t = torch.from_numpy(arrays["t"]).to(device=device, dtype=types[dtype])
            for name, f in paths(torch, device, not args.no_compile).items():
                try:
                    y = f(g, t)
                except Exception as e:  # a path a build lacks (no compiler, say)
                    print("torch_peer.py: %s %s: %s" % (dtype, name, e), file=sys.stderr)
                    continue
                arrays[name] = y.float().cpu().numpy()
        archive = os.path.join(args.out, "tanh_%s.npz" % dtype)
        np.savez(archive, **arrays)
        for name in arrays:
            if name in ("grad", "t"):
                continue
            report = os.path.join(args.out, "check_%s_%s.json" % (dtype, name))
            status = subprocess.run(
                [args.ulpgate, "check", "--dtype", dtype, "--inputs", archive, "--outputs",
                 "%s:%s" % (archive, name), "--quiet", "--json", report,
                 "--model", "mac_left: p = grad*t; out = fma(-p, t, grad)"]).returncode
            failed += status != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
