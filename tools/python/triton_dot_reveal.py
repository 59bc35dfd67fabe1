#!/usr/bin/env python3
"""How Triton's tl.dot adds up a dot product on a GPU: ulpgate.reveal of a small Triton
kernel through the Python door (docs/python.md, "Matrix products").

    PYTHONPATH=build/python python3 tools/python/triton_dot_reveal.py --json out.json \\
        [--precision ieee,tf32,bf16] [--k 32]

One kernel: a [m, k] and b [n, k] loaded whole (one block of BLOCK_M x BLOCK_N outputs
per program, k in one tile), c = tl.dot(a, tl.trans(b)) with an f32 accumulator, stored as
f32. Per precision: `ieee` (f32 operands, input_precision="ieee"), `tf32` (f32 operands,
input_precision="tf32"), `bf16` (bf16 operands). Writes one JSON object: per precision the
revealed tree, its known shape, the fingerprint's model, whether it follows the tree bit
for bit, or the error that stopped it. Needs torch with CUDA, triton and ulpgate's Python
module (built for this Python); exits 77 naming what is missing, 1 when a precision
failed, else 0.
"""

import argparse
import json
import sys


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", required=True)
    p.add_argument("--precision", default="ieee,tf32,bf16")
    p.add_argument("--k", type=int, default=32, help="terms per dot product (a power of 2, >= 16)")
    a = p.parse_args(argv)
    try:
        import torch
        import triton
        import triton.language as tl
        import ulpgate
    except ImportError as e:
        print(f"skipped: {e} (needs torch, triton and ulpgate's Python module for this Python)")
        return 77
    if not torch.cuda.is_available():
        print("skipped: torch sees no CUDA device")
        return 77

    @triton.jit
    def dot_kernel(a_ptr, b_ptr, c_ptr, M, N, K: tl.constexpr, BLOCK_M: tl.constexpr,
                   BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
        rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, K)
        x = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=rm[:, None] < M, other=0.0)
        w = tl.load(b_ptr + rn[:, None] * K + rk[None, :], mask=rn[:, None] < N, other=0.0)
        c = tl.dot(x, tl.trans(w), input_precision=PRECISION, out_dtype=tl.float32)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N))

    def make(precision):
        def fn(x, w):
            x, w = x.cuda().contiguous(), w.cuda().contiguous()
            m, k = x.shape
            n = w.shape[0]
            c = torch.empty((m, n), dtype=torch.float32, device="cuda")
            grid = (triton.cdiv(m, 16), triton.cdiv(n, 16))
            dot_kernel[grid](x, w, c, m, n, K=k, BLOCK_M=16, BLOCK_N=16, PRECISION=precision)
            return c
        return fn

    results = {"triton": triton.__version__, "torch": torch.__version__,
               "device": torch.cuda.get_device_name(0), "k": a.k, "precisions": {}}
    failed = False
    for precision in [q for q in a.precision.split(",") if q]:
        dtype = "bf16" if precision == "bf16" else "f32"
        try:
            r = ulpgate.reveal(make("ieee" if precision == "bf16" else precision), k=a.k, dtype=dtype,
                               out_dtype="f32", tensors="torch", name=f"triton_tl_dot_{precision}")
            results["precisions"][precision] = {
                "tree": r.tree, "known_shape": r.known_shape, "model": r.model,
                "follows_tree": r.follows_tree, "model_mismatches": r.model_mismatches,
                "description": r.description}
            print(f"tl.dot {precision}: {r.known_shape or r.tree} "
                  f"(model {'followed' if r.follows_tree else 'NOT followed'})")
        except Exception as e:  # noqa: BLE001 (a failure of one precision is its result)
            failed = True
            results["precisions"][precision] = {"error": f"{type(e).__name__}: {e}"}
            print(f"tl.dot {precision}: FAILED: {type(e).__name__}: {e}")
    with open(a.json, "w") as f:
        json.dump(results, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
