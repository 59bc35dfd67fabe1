#!/usr/bin/python3
"""ctest: PyTorch's own kernels measured through the Python IUT (torch_iut.py, --iut).

At every ATen CPU capability this CPU has (torch_elementwise_peer.cpu_capabilities):
- a bf16 sweep of tanh_backward over 2^21 (grad, t) pairs follows mulsub_opmath (the
  float sequence grad*(1 - t*t) rounded once; the bf16 products are exact in float, so
  the fused form gives the same bits), with the same digest at every capability;
- f32 tanh_backward on 20,000 random inputs: `default` follows mulsub and `avx2`
  mulsub_fused, as an independent mpmath measurement of this PyTorch found (1,430 ULP
  against 1.43 ULP at worst);
- the same op called directly in torch gives the outputs the run measured (its --dump),
  so the IUT adds nothing of its own.
Skips (77) where /usr/bin/python3 has no torch.

    torch_iut_test.py --ulpgate build/bin/ulpgate --work DIR
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def iut(capability, *extra):
    return (f"env ATEN_CPU_CAPABILITY={capability} {sys.executable} "
            f"{os.path.join(HERE, 'torch_iut.py')} " + " ".join(extra))


def run(ulpgate, *args, expect=(0,)):
    p = subprocess.run([ulpgate, *args], capture_output=True, text=True, timeout=600)
    if p.returncode not in expect:
        raise AssertionError(f"ulpgate {' '.join(args)}: exit {p.returncode}\n{p.stdout}{p.stderr}")
    return p


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ulpgate", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    try:
        import torch  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as e:
        print(f"skipped: {e} (python3-torch and python3-numpy)")
        return 77
    from torch_elementwise_peer import cpu_capabilities

    os.makedirs(args.work, exist_ok=True)
    caps = cpu_capabilities()
    failures = []
    digests = {}
    for cap in caps:
        out = os.path.join(args.work, f"sweep_{cap}.json")
        run(args.ulpgate, "sweep", "--kernel", "tanh_bwd", "--dtype", "bf16", "--variant", "none",
            "--iut", iut(cap, "--ops tanh_bwd --dtypes bf16"), "--range", "0:0x200000", "--quiet",
            "--json", out)
        case = json.load(open(out))["cases"][0]
        k = case["conformance"]
        print(f"{cap}: bf16 sweep of {case['n']} pairs: target {case['target']}, follows {k['matching']}")
        if case["target"] != f"torch-{cap}":
            failures.append(f"{cap}: target {case['target']}, expected torch-{cap}")
        if "mulsub_opmath" not in k["matching"] or k["expected"] != "":
            failures.append(f"{cap}: bf16 conformance {k}, expected mulsub_opmath among the matching, none claimed")
        digests[cap] = case["outputs_digest"]

        run_json = os.path.join(args.work, f"run_{cap}.json")
        dump = os.path.join(args.work, f"run_{cap}.jsonl")
        run(args.ulpgate, "run", "--kernel", "tanh_bwd", "--variant", "none", "--iut",
            iut(cap, "--ops tanh_bwd --dtypes f32"), "--suite", "random", "--n", "20000", "--quiet",
            "--json", run_json, "--dump", dump)
        r = json.load(open(run_json))["results"][0]
        model = r["conformance"]["model"]
        print(f"{cap}: f32 run: follows {model} (max {r['max_ulp']} ULP)")
        want = {"default": "mulsub", "avx2": "mulsub_fused"}.get(cap)
        if want is not None and model != want:
            failures.append(f"{cap}: f32 tanh_backward follows {model}, expected {want}")

        # The same op called here, on the dumped inputs: the outputs the IUT sent back.
        grads, ts, outputs = [], [], []
        with open(dump) as f:
            for line in f:
                record = json.loads(line)
                grads += record["inputs"]["grad"]
                ts += record["inputs"]["t"]
                outputs += record["results"][0]["outputs"]
        code = ("import json, sys, torch; torch.set_num_threads(1); g, t = json.load(sys.stdin); "
                "h = lambda v: torch.tensor([float.fromhex(x) for x in v], dtype=torch.float32); "
                "y = torch.ops.aten.tanh_backward(h(g), h(t)); print(json.dumps([v.hex() for v in y.tolist()]))")
        p = subprocess.run([sys.executable, "-c", code], input=json.dumps([grads, ts]), text=True,
                           capture_output=True, check=True, env=dict(os.environ, ATEN_CPU_CAPABILITY=cap))
        direct = json.loads(p.stdout)
        same = lambda a, b: a == b or (a != a and b != b)  # noqa: E731  NaN equals NaN here
        differ = sum(1 for a, b in zip(direct, outputs)
                     if not same(float.fromhex(a), float.fromhex(b)))
        if len(direct) != len(outputs) or differ:
            failures.append(f"{cap}: {differ} of {len(outputs)} outputs of the IUT differ from "
                            "torch's called directly")
    if len(set(digests.values())) != 1:
        failures.append(f"bf16 digests differ across capabilities: {digests}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
