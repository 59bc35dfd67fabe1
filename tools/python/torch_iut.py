#!/usr/bin/python3
"""An implementation under test (docs/iut.md) that answers with PyTorch's own kernels.

ulpgate starts it with --iut and sends it batches of inputs; it runs PyTorch's
backward op on them and sends the outputs back, so that every command that takes an
IUT (sweep, run, check, matrix, golden, gate) measures PyTorch the way it measures a
kernel of its own:

    build/bin/ulpgate sweep --kernel tanh_bwd --dtype bf16 --variant none \\
        --iut "env ATEN_CPU_CAPABILITY=avx2 /usr/bin/python3 tools/python/torch_iut.py"

Its target is named after where the kernels run: torch-default, torch-avx2, torch-avx512
(the ATen CPU capability PyTorch chose at import, which ATEN_CPU_CAPABILITY sets) or
torch-cuda (--device cuda); its kernels are one variant, `aten`, per op and dtype that
this PyTorch computes (tanh_bwd: aten.tanh_backward(grad, t); sigmoid_bwd:
sigmoid_backward(grad, s); silu_bwd: silu_backward(grad, x); gelu_bwd and gelu_tanh_bwd:
gelu_backward(grad, x, approximate='none' or 'tanh')). They claim no model: ulpgate
reports the models each follows bit for bit. `--claim MODEL` makes each claim one
(a model of every op and dtype offered: use it with --ops and --dtypes).

`--compile` answers with torch.compile of the same aten op instead (dynamic shapes, so
that one compilation serves every call length; compiled while it starts, before `ready`),
as target torch-cuda-compiled or torch-CAPABILITY-compiled: beside the eager IUT in one
`ulpgate run` it shows where Inductor's code and the eager kernel part (ci/device.sh).

One thread (torch.set_num_threads(1)): ATen's vectorized loops leave the last elements
of each thread's range to the scalar lambda, so the split would decide which elements
take which path; ulpgate starts one IUT process per thread of its own instead.

Written for the Debian build of PyTorch 1.13 (python3-torch; run it with /usr/bin/python3)
and newer PyTorch alike; numpy and torch are its only modules beyond the standard library.
"""

import argparse
import mmap
import os
import sys

GREETING = b"ulpgate-iut 1\n"
OPS = {
    "tanh_bwd": lambda aten, g, t: aten.tanh_backward(g, t),
    "sigmoid_bwd": lambda aten, g, s: aten.sigmoid_backward(g, s),
    "silu_bwd": lambda aten, g, x: aten.silu_backward(g, x),
    "gelu_bwd": lambda aten, g, x: aten.gelu_backward(g, x, approximate="none"),
    "gelu_tanh_bwd": lambda aten, g, x: aten.gelu_backward(g, x, approximate="tanh"),
}
DTYPES = ("f32", "bf16", "f16")
# What torch.__config__.show() says for each ATen CPU capability.
CAPABILITY = {"NO AVX": "default", "AVX2": "avx2", "AVX512": "avx512"}


def cpu_capability(torch):
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage:" in line:
            said = line.split(":", 1)[1].strip()
            return CAPABILITY.get(said, said.lower().replace(" ", "_"))
    return "cpu"


class Server:
    def __init__(self, args):
        import numpy as np
        import torch

        self.np, self.torch = np, torch
        self.aten = torch.ops.aten
        self.device = args.device
        torch.set_num_threads(1)
        if args.target:
            self.target = args.target
        elif args.device == "cuda":
            self.target = "torch-cuda"
        else:
            self.target = "torch-" + cpu_capability(torch)
        if args.compile and not args.target:
            self.target += "-compiled"
        self.functions = {}
        for op in OPS:
            if args.compile:
                # Bound now: each op compiled on its own.
                self.functions[op] = torch.compile(
                    lambda g, x, op=op: OPS[op](self.aten, g, x), dynamic=True)
            else:
                self.functions[op] = lambda g, x, op=op: OPS[op](self.aten, g, x)
        self.storage = {"f32": np.float32, "bf16": np.int16, "f16": np.float16}
        self.tensor_dtype = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
        self.bytes = {"f32": 4, "bf16": 2, "f16": 2}
        self.kernels = []
        for op in args.ops:
            for dtype in args.dtypes:
                if self.works(op, dtype):
                    self.kernels.append((op, dtype))
        self.claim = args.claim
        self.shared = None
        fd, size = os.environ.get("ULPGATE_IUT_SHM_FD"), os.environ.get("ULPGATE_IUT_SHM_BYTES")
        if fd is not None and size is not None:
            try:
                self.shared = mmap.mmap(int(fd), int(size))
            except (OSError, ValueError):
                self.shared = None

    def works(self, op, dtype):
        """Whether this PyTorch computes the op in the dtype on this device."""
        try:
            for n in (2, 3):  # two lengths: a compiled function's dynamic shape is made now
                values = self.torch.linspace(0.25, 0.5, n, dtype=self.tensor_dtype[dtype],
                                             device=self.device)
                self.functions[op](values, values)
            return True
        except Exception:  # noqa: BLE001 (any failure, Inductor's too, means "not offered")
            return False

    def tensor(self, array, dtype):
        t = self.torch.from_numpy(array)
        if dtype == "bf16":
            t = t.view(self.torch.bfloat16)
        return t.to(self.device) if self.device != "cpu" else t

    def outputs(self, result, dtype):
        result = result.cpu() if self.device != "cpu" else result
        if dtype == "bf16":
            result = result.view(self.torch.int16)
        return result.contiguous().numpy()

    def serve(self):
        out = sys.stdout.buffer
        out.write(GREETING)
        if self.shared is not None:
            out.write(b"data shm\n")
        for op, dtype in self.kernels:
            claim = " " + self.claim if self.claim else ""
            out.write(f"kernel {self.target} {op} {dtype} aten{claim}\n".encode())
        out.write(b"ready\n")
        out.flush()
        stdin = sys.stdin.buffer
        np = self.np
        while True:
            line = stdin.readline()
            if not line or line.strip() == b"quit":
                return 0
            words = line.decode(errors="replace").split()
            if len(words) != 7 or words[0] != "call" or words[2] not in self.bytes:
                out.write(b"error malformed request\n")
                out.flush()
                return 2
            _, op, dtype, target, variant, arity, n = words
            arity, n = int(arity), int(n)
            size = self.bytes[dtype]
            operands = []
            for k in range(arity):
                if self.shared is not None:
                    operands.append(np.frombuffer(self.shared, self.storage[dtype], n, k * n * size))
                else:
                    data = stdin.read(n * size)
                    if len(data) != n * size:
                        return 2
                    operands.append(np.frombuffer(bytearray(data), self.storage[dtype], n))
            if target != self.target or variant != "aten" or (op, dtype) not in self.kernels:
                out.write(f"error no {op} {dtype} kernel {variant} on {target}\n".encode())
                out.flush()
                continue
            if arity != 2:
                out.write(f"error {op} takes 2 operands, the request sent {arity}\n".encode())
                out.flush()
                continue
            with self.torch.no_grad():
                result = self.functions[op](*(self.tensor(a, dtype) for a in operands))
            y = self.outputs(result, dtype)
            if self.shared is not None:
                np.frombuffer(self.shared, y.dtype, n, arity * n * size)[:] = y
                out.write(f"ok {n}\n".encode())
            else:
                out.write(f"ok {n}\n".encode())
                out.write(y.tobytes())
            out.flush()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", default=",".join(OPS), help="comma-separated (default: all)")
    parser.add_argument("--dtypes", default=",".join(DTYPES), help="comma-separated (default: all)")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument("--target", help="the target's name (default: torch-CAPABILITY)")
    parser.add_argument("--claim", help="the model every kernel claims (default: none)")
    parser.add_argument("--compile", action="store_true",
                        help="torch.compile of each op (target torch-...-compiled)")
    args = parser.parse_args(argv)
    args.ops = [o for o in args.ops.split(",") if o]
    args.dtypes = [d for d in args.dtypes.split(",") if d]
    for o in args.ops:
        if o not in OPS:
            parser.error(f"unknown op '{o}' ({', '.join(OPS)})")
    for d in args.dtypes:
        if d not in DTYPES:
            parser.error(f"unknown dtype '{d}' ({', '.join(DTYPES)})")
    return Server(args).serve()


if __name__ == "__main__":
    sys.exit(main())
