#!/usr/bin/python3
"""PyTorch's eager `grad - grad*t*t`, checked by ulpgate: a test of the ctest label `peer`.

Bug reports and user code write tanh's backward as the literal formula grad - grad*t*t,
which Python (like C) evaluates left to right: grad - (grad*t)*t. In eager PyTorch that is
three kernels (mul, mul, sub), each rounding its result to the tensors' dtype. ulpgate has
built-in models of that sequence (tanh_bwd's model sequence mac_left), and this test holds
that `check` names them:

  - f32: under every ATEN_CPU_CAPABILITY this CPU has, the outputs follow `mac_left_unfused`
    (p = grad*t; q = p*t; out = grad - q) and none of the variants' models (mac_fused,
    mac_unfused, mulsub, mulsub_fused) nor `mac_left_fused`;
  - bf16: every step rounded to bf16, so `mac_left_unfused_per_op`.

Inputs: `ulpgate suite export` of tanh_bwd's domain suite. Each capability runs in its own
process, since PyTorch reads ATEN_CPU_CAPABILITY once, when it is imported.

    /usr/bin/python3 tools/python/peer_literal_test.py --ulpgate build/bin/ulpgate [--work DIR]

Exit status: 0 when every check holds, 1 when one fails, 77 when numpy or torch is missing
(python3-numpy, python3-torch; Debian's /usr/bin/python3: a python3 first on PATH may not
see them).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import npz_values  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

N = 4096
# The models the literal formula must not follow: the variants' sequences, grad*(t*t)
# and grad*(1 - t*t) in every rounding, and the left form with its subtraction fused.
OTHERS = {"f32": ["mac_fused", "mac_unfused", "mulsub", "mulsub_fused", "mac_left_fused"],
          "bf16": ["mac_per_op", "mulsub_per_op", "mac_left_fused_per_op",
                   "mac_left_unfused_opmath"]}
WANT = {"f32": "mac_left_unfused", "bf16": "mac_left_unfused_per_op"}


def child(inputs, out):
    """In a process started with ATEN_CPU_CAPABILITY set: the formula as written."""
    import numpy as np
    import torch
    import torch_elementwise_peer as peer
    cap = os.environ["ATEN_CPU_CAPABILITY"]
    shown = torch.__config__.show()
    if "CPU capability usage: %s\n" % peer.REPORTED[cap] not in shown + "\n":
        print("peer_literal_test.py: asked for %s, torch reports otherwise" % cap,
              file=sys.stderr)
        return 3
    torch.set_num_threads(1)
    results = {}
    for dtype, torch_dtype in (("f32", torch.float32), ("bf16", torch.bfloat16)):
        arrays = npz_values.load_float32(inputs[dtype])
        grad = torch.from_numpy(arrays["grad"]).to(torch_dtype)
        t = torch.from_numpy(arrays["t"]).to(torch_dtype)
        results["%s_%s" % (dtype, cap)] = (grad - grad * t * t).float().numpy()
    np.savez(out, **results)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ulpgate", default="build/bin/ulpgate")
    parser.add_argument("--work", default=None, help="keep the files here (default: a temp dir)")
    parser.add_argument("--child", nargs=3, metavar=("F32_INPUTS", "BF16_INPUTS", "OUT"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child({"f32": args.child[0], "bf16": args.child[1]}, args.child[2])
    try:
        import numpy as np
        import torch
    except ImportError as e:
        print("SKIP: %s (install python3-numpy and python3-torch; run with /usr/bin/python3)" % e)
        return 77
    import torch_elementwise_peer as peer

    work = args.work or tempfile.mkdtemp(prefix="peer_literal_test.")
    os.makedirs(work, exist_ok=True)
    caps = peer.cpu_capabilities()
    print("capabilities of this CPU: %s (PyTorch %s)" % (", ".join(caps), torch.__version__))
    inputs = {}
    for dtype in ("f32", "bf16"):
        inputs[dtype] = os.path.join(work, "tanh_bwd_%s_in.npz" % dtype)
        # bf16 as float32 arrays: torch.from_numpy takes no bfloat16 (suite export writes
        # it as a 2-byte void otherwise).
        as_float32 = [] if dtype == "f32" else ["--float32"]
        subprocess.run([args.ulpgate, "suite", "export", "--op", "tanh_bwd", "--dtype", dtype,
                        "--suite", "domain", "--n", str(N), "--seed", "1", "--out",
                        inputs[dtype]] + as_float32, check=True, stdout=subprocess.DEVNULL)
    outputs = os.path.join(work, "literal_out.npz")
    paths = {}
    for cap in caps:
        part = os.path.join(work, "literal_%s.npz" % cap)
        env = dict(os.environ, ATEN_CPU_CAPABILITY=cap)
        status = subprocess.run([sys.executable, os.path.abspath(__file__), "--child",
                                 inputs["f32"], inputs["bf16"], part], env=env).returncode
        if status != 0:
            print("FAIL: the %s child exited with %d" % (cap, status))
            return 1
        paths.update(npz_values.load_float32(part))
    np.savez(outputs, **paths)

    failures = []
    for dtype in ("f32", "bf16"):
        for cap in caps:
            path = "%s_%s" % (dtype, cap)
            report = os.path.join(work, "%s.json" % path)
            cmd = [args.ulpgate, "check", "--op", "tanh_bwd", "--dtype", dtype, "--inputs",
                   inputs[dtype], "--outputs", "%s:%s" % (outputs, path), "--json", report,
                   "--quiet"]
            done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if done.returncode != 0:
                failures.append("%s failed (%d):\n%s" % (" ".join(cmd), done.returncode,
                                                          done.stdout))
                continue
            with open(report) as f:
                matching = json.load(f)["results"][0]["conformance"]["matching"]
            wrong = [m for m in OTHERS[dtype] if m in matching]
            ok = WANT[dtype] in matching and not wrong
            print("  %s %s: grad - grad*t*t follows %s (want %s, and none of %s)"
                  % ("ok  " if ok else "FAIL", path, matching or "no model", WANT[dtype],
                     ", ".join(OTHERS[dtype])))
            if not ok:
                failures.append("%s follows %s" % (path, matching))
    for f in failures:
        print("peer_literal_test.py: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
