#!/usr/bin/python3
"""PyTorch 1.13's CPU kernels, checked by ulpgate: the ctest label `peer`.

For every elementwise op (tanh_bwd, sigmoid_bwd, silu_bwd, gelu_bwd, gelu_tanh_bwd) in f32
and bf16: `ulpgate suite export` writes inputs, PyTorch's own backward kernel runs on them
under every ATEN_CPU_CAPABILITY this CPU has (tools/python/torch_elementwise_peer.py, one
process per capability), and `ulpgate check` measures each path's outputs. The test then
holds what was measured on Debian 12's python3-torch 1.13.1 (docs/peers.md has the table):

  - tanh_bwd f32: the default capability follows `mulsub` and not `mulsub_fused`, avx2
    follows `mulsub_fused`, and the two differ on some outputs;
  - sigmoid_bwd f32: every capability follows `torch` (grad * (1 - s) * s);
  - tanh_bwd and sigmoid_bwd bf16: opmath, the f32 model rounded once;
  - silu_bwd, gelu_bwd, gelu_tanh_bwd in f32: PyTorch calls glibc's or SLEEF's exp, erf and
    tanh, not Highway's, so no model of ulpgate's is expected; ulpgate measures them, and
    gelu_bwd's cancellation for x < -4 shows as a ULP error above 2^20 with a bound
    fraction below 1; in bf16 they round every step to bf16 and follow `torch_per_op`;
  - every ULP error ulpgate reports is recomputed by an independent oracle
    (tools/python/elementwise_exact.py: mpmath and rationals, no ulpgate code), and the
    largest agree.

    /usr/bin/python3 tools/python/peer_check_test.py --ulpgate build/bin/ulpgate [--work DIR]

Exit status: 0 when every check holds, 1 when one fails (each failure printed), 77 when
numpy, mpmath or torch is missing (python3-numpy, python3-mpmath, python3-torch; Debian's
/usr/bin/python3: a python3 first on PATH may not see them).
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import npz_values  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

OPS = ["tanh_bwd", "sigmoid_bwd", "silu_bwd", "gelu_bwd", "gelu_tanh_bwd"]
SECOND = {"tanh_bwd": "t", "sigmoid_bwd": "s", "silu_bwd": "x", "gelu_bwd": "x",
          "gelu_tanh_bwd": "x"}
N = 4096


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ulpgate", default="build/bin/ulpgate")
    parser.add_argument("--work", default=None, help="keep the files here (default: a temp dir)")
    args = parser.parse_args(argv)
    try:
        import numpy as np  # noqa: F401
        import mpmath  # noqa: F401
        import torch  # noqa: F401
    except ImportError as e:
        print("SKIP: %s (install python3-numpy, python3-mpmath, python3-torch; run with "
              "/usr/bin/python3)" % e)
        return 77
    import numpy as np
    import elementwise_exact as ex
    import torch_elementwise_peer as peer

    work = args.work or tempfile.mkdtemp(prefix="peer_check_test.")
    os.makedirs(work, exist_ok=True)
    caps = peer.cpu_capabilities()
    print("capabilities of this CPU: %s (PyTorch %s)" % (", ".join(caps), torch.__version__))
    failures = []
    passes = []

    def expect(ok, what):
        print(("  ok   " if ok else "  FAIL ") + what)
        (passes if ok else failures).append(what)

    def check(op, dtype, inputs, outputs, path):
        report = os.path.join(work, "%s_%s_%s.json" % (op, dtype, path))
        cmd = [args.ulpgate, "check", "--op", op, "--dtype", dtype, "--inputs", inputs,
               "--outputs", "%s:%s" % (outputs, path), "--json", report, "--quiet"]
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if done.returncode != 0:
            raise RuntimeError("%s failed (%d):\n%s" % (" ".join(cmd), done.returncode, done.stdout))
        with open(report) as f:
            return json.load(f)["results"][0]

    for dtype in ["f32", "bf16"]:
        fmt = ex.FORMATS[dtype]
        jobs = []
        for op in OPS:
            inputs = os.path.join(work, "%s_%s_in.npz" % (op, dtype))
            # bf16 as float32 arrays: torch.from_numpy takes no bfloat16 (suite export
            # writes it as a 2-byte void otherwise).
            as_float32 = [] if dtype == "f32" else ["--float32"]
            subprocess.run([args.ulpgate, "suite", "export", "--op", op, "--dtype", dtype,
                            "--suite", "domain", "--n", str(N), "--seed", "1", "--out", inputs]
                           + as_float32, check=True, stdout=subprocess.DEVNULL)
            arrays = dict(np.load(inputs))
            jobs.append({"op": op, "dtype": dtype, "inputs": arrays, "path": inputs})
        results = peer.run_paths(jobs, caps, python=sys.executable)
        for job, paths in zip(jobs, results):
            op, inputs = job["op"], job["path"]
            grad, v = job["inputs"]["grad"], job["inputs"][SECOND[op]]
            outputs = os.path.join(work, "%s_%s_out.npz" % (op, dtype))
            # gelu_bwd's ATen kernel with oneDNN off beside the contiguous path, which
            # oneDNN may take (below).
            kept = {k: v for k, v in paths.items()
                    if k.startswith("aten_") and k.count("_") == 1 or k.endswith("_nomkldnn")}
            np.savez(outputs, **kept)
            print("%s in %s:" % (op, dtype))
            exacts = ex.oracle(op, grad, v)
            records = {}
            for cap in caps:
                path = "aten_%s" % cap
                onednn = False
                if op == "gelu_bwd" and dtype == "bf16":
                    # On a CPU with AVX-512 PyTorch 1.13 sends contiguous bf16
                    # gelu_backward(approximate='none') to oneDNN (eltwise_gelu_erf, its
                    # own JIT code, whatever ATEN_CPU_CAPABILITY says), as it does float32
                    # everywhere: that path is measured, and the ATen kernel (oneDNN off)
                    # is the one held to a model. Without AVX-512 oneDNN leaves bf16 to ATen.
                    aten = paths["aten_%s_nomkldnn" % cap]
                    onednn = bool(np.any(paths[path].view(np.uint32) != aten.view(np.uint32)))
                    expect(not onednn or "avx512" in caps,
                           "gelu_bwd bf16 %s: the contiguous path is the ATen kernel%s"
                           % (cap, " (oneDNN took it: this CPU has AVX-512)" if onednn else ""))
                    if onednn:
                        ra = check(op, dtype, inputs, outputs, path + "_nomkldnn")
                        matching = ra["conformance"]["matching"]
                        print("    %s_nomkldnn (ATen's kernel): follows %s; max %.6g ULP"
                              % (cap, matching or "no model", ra["max_ulp"]))
                        expect("torch_per_op_nofma" in matching or "torch_per_op_fma" in matching,
                               "gelu_bwd bf16 %s_nomkldnn follows torch_per_op (every step "
                               "rounded to bf16)" % cap)
                r = check(op, dtype, inputs, outputs, path)
                records[cap] = r
                matching = r["conformance"]["matching"]
                # The independent oracle's errors of the same outputs.
                e, _, special = ex.measure(fmt, grad, exacts, paths[path])
                finite = e[~special]
                theirs = float(finite.max()) if finite.size else 0.0
                ours = r["max_ulp"]
                print("    %s%s: follows %s; max %.6g ULP (oracle %.6g), bound fraction max %s, "
                      "%d special" % (cap, " (oneDNN)" if onednn else "", matching or "no model",
                                      ours, theirs,
                                      r["bound_fraction"]["max"], r["special_mismatch"]))
                expect(math.isclose(ours, theirs, rel_tol=1e-9, abs_tol=1e-12),
                       "%s %s %s: ulpgate's max ULP error %r is the oracle's %r"
                       % (op, dtype, cap, ours, theirs))
                expect(r["special_mismatch"] == int(special.sum()),
                       "%s %s %s: %d special mismatches, as the oracle counts (%d)"
                       % (op, dtype, cap, r["special_mismatch"], int(special.sum())))
                if op == "tanh_bwd" and dtype == "f32":
                    want = "mulsub" if cap == "default" else "mulsub_fused"
                    expect(want in matching and
                           (cap == "default") == ("mulsub_fused" not in matching),
                           "tanh_bwd f32 %s follows %s (and only it of the two)" % (cap, want))
                if op == "sigmoid_bwd" and dtype == "f32":
                    expect("torch" in matching, "sigmoid_bwd f32 %s follows torch" % cap)
                if op in ("tanh_bwd", "sigmoid_bwd") and dtype == "bf16":
                    opmath = "mulsub_opmath" if op == "tanh_bwd" else "torch_opmath"
                    expect(opmath in matching or opmath.replace("_opmath", "_fused_opmath")
                           in matching, "%s bf16 %s follows %s (or its fused form)"
                           % (op, cap, opmath))
                if op in ("silu_bwd", "gelu_bwd", "gelu_tanh_bwd") and dtype == "bf16" and not onednn:
                    # Every step rounded to bf16, constants too: a function's f32 result
                    # rounded to bf16 is the same whether glibc, SLEEF or Highway made it,
                    # on these inputs.
                    expect("torch_per_op_nofma" in matching or "torch_per_op_fma" in matching,
                           "%s bf16 %s follows torch_per_op (every step rounded to bf16)"
                           % (op, cap))
                if op == "gelu_bwd" and dtype == "f32":
                    fraction = r["bound_fraction"]["max"]
                    expect(ours > 2 ** 20 and isinstance(fraction, float) and fraction < 1,
                           "gelu_bwd f32 %s: the cancellation for x < -4 is a ULP error above "
                           "2^20 (%.3g) within the bound of its formula (fraction %s)"
                           % (cap, ours, fraction))
            if op == "tanh_bwd" and dtype == "f32" and "avx2" in caps:
                differ = int(np.sum(paths["aten_default"].view(np.uint32) !=
                                    paths["aten_avx2"].view(np.uint32)))
                expect(differ > 0, "tanh_bwd f32: default and avx2 differ on %d of %d outputs"
                       % (differ, N))
    print("checks: %d passed, %d failed" % (len(passes), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
