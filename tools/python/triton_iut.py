#!/usr/bin/env python3
"""An implementation under test (docs/iut.md, protocol version 3) whose linear_fwd is a
Triton kernel built on tl.dot, so that `ulpgate reveal --iut` finds tl.dot's summation
tree with nothing but the CLI (no Python module of ulpgate's for this Python):

    build/bin/ulpgate reveal --iut "python3 tools/python/triton_iut.py" --door tl_dot_ieee --k 32

Target `triton`; variants tl_dot_ieee and tl_dot_tf32 (f32 operands,
input_precision "ieee" and "tf32") and tl_dot_bf16 (bf16 operands); f32 accumulation, the
bias added in f32 after the dot (one more rounding), the output rounded once to the
operands' format. k is loaded in one tile, padded with zeros to a power of 2 (>= 16, as
tl.arange needs). They claim no model. Needs torch with CUDA and triton.
"""

import mmap
import os
import sys


def main():
    import numpy as np
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def linear_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, KP: tl.constexpr, BLOCK_M: tl.constexpr,
                      BLOCK_N: tl.constexpr, PRECISION: tl.constexpr):
        rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, KP)
        x = tl.load(x_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        w = tl.load(w_ptr + rn[:, None] * K + rk[None, :], mask=(rn[:, None] < N) & (rk[None, :] < K), other=0.0)
        c = tl.dot(x, tl.trans(w), input_precision=PRECISION, out_dtype=tl.float32)
        b = tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)
        y = c + b[None, :]
        tl.store(y_ptr + rm[:, None] * N + rn[None, :], y.to(y_ptr.dtype.element_ty),
                 mask=(rm[:, None] < M) & (rn[None, :] < N))

    kernels = {("f32", "tl_dot_ieee"): "ieee", ("f32", "tl_dot_tf32"): "tf32", ("bf16", "tl_dot_bf16"): "ieee"}
    torch_dtype = {"f32": torch.float32, "bf16": torch.bfloat16}
    np_storage = {"f32": np.float32, "bf16": np.int16}
    size = {"f32": 4, "bf16": 2}
    shared = None
    fd, nbytes = os.environ.get("ULPGATE_IUT_SHM_FD"), os.environ.get("ULPGATE_IUT_SHM_BYTES")
    if fd is not None and nbytes is not None:
        try:
            shared = mmap.mmap(int(fd), int(nbytes))
        except (OSError, ValueError):
            shared = None
    out = sys.stdout.buffer
    out.write(b"ulpgate-iut 3\n")
    if shared is not None:
        out.write(b"data shm\n")
    for (dtype, variant) in kernels:
        out.write(f"kernel triton linear_fwd {dtype} {variant}\n".encode())
    out.write(b"ready\n")
    out.flush()
    stdin = sys.stdin.buffer
    while True:
        line = stdin.readline()
        if not line or line.strip() == b"quit":
            return 0
        w = line.decode(errors="replace").split()
        if len(w) < 7 or w[0] != "reduce" or w[2] not in ("f32", "bf16", "f16"):
            out.write(b"error malformed request (triton serves reduce linear_fwd only)\n")
            out.flush()
            return 2
        op, dtype, target, variant, rank = w[1], w[2], w[3], w[4], int(w[5])
        extents = [int(v) for v in w[6:6 + rank]]
        arity = int(w[6 + rank])
        counts = [int(v) for v in w[7 + rank:7 + rank + arity]]
        m_out = int(w[7 + rank + arity])
        e = 4 if dtype == "f32" else 2
        operands, offset = [], 0
        for c in counts:
            if shared is not None:
                operands.append(bytes(shared[offset:offset + c * e]))
            else:
                operands.append(stdin.read(c * e))
            offset += c * e
        if op != "linear_fwd" or target != "triton" or (dtype, variant) not in kernels or rank != 3 or arity != 3:
            out.write(f"error no {op} {dtype} kernel {variant} on {target}\n".encode())
            out.flush()
            continue
        batch, k, n = extents
        tensors = []
        for data, shape in zip(operands, [(batch, k), (n, k), (n,)]):
            t = torch.from_numpy(np.frombuffer(bytearray(data), np_storage[dtype]).reshape(shape).copy())
            if dtype == "bf16":
                t = t.view(torch.bfloat16)
            tensors.append(t.cuda())
        y = torch.empty((batch, n), dtype=torch_dtype[dtype], device="cuda")
        kp = max(16, 1 << (k - 1).bit_length())
        grid = (triton.cdiv(batch, 16), triton.cdiv(n, 16))
        linear_kernel[grid](tensors[0], tensors[1], tensors[2], y, batch, n, k, KP=kp, BLOCK_M=16,
                            BLOCK_N=16, PRECISION=kernels[(dtype, variant)])
        y = y.cpu()
        if dtype == "bf16":
            y = y.view(torch.int16)
        data = y.contiguous().numpy().tobytes()
        assert len(data) == m_out * e
        if shared is not None:
            shared[offset:offset + len(data)] = data
            out.write(f"ok {m_out}\n".encode())
        else:
            out.write(f"ok {m_out}\n".encode())
            out.write(data)
        out.flush()


if __name__ == "__main__":
    sys.exit(main())
