#!/usr/bin/env python3
"""A kernel that runs somewhere ulpgate cannot: here, plain Python standing in
for a GPU, an accelerator or another framework. It reads the inputs ulpgate
exported (`ulpgate suite export --out inputs.txt`: one 'grad t' pair of hex
floats per line), computes tanh backward as grad * (1 - t*t) in binary32, every
operation rounded to binary32 (a Python float is a double; a product or
difference of two binary32 values rounded to double and then to binary32 is
rounded correctly, since 53 >= 2*24 + 2), and writes one output per line for
`ulpgate check --outputs`.

    python3 tanh_bwd_elsewhere.py inputs.txt outputs.txt
"""
import struct
import sys


def f32(x: float) -> float:
    """x rounded to the nearest binary32 value (ties to even)."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return float("inf") if x > 0 else float("-inf")


def tanh_bwd(grad: float, t: float) -> float:
    return f32(grad * f32(1.0 - f32(t * t)))


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    outputs = []
    with open(sys.argv[1], encoding="ascii") as inputs:
        for line in inputs:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            grad, t = (float.fromhex(v) for v in line.split())
            outputs.append(tanh_bwd(grad, t).hex())
    with open(sys.argv[2], "w", encoding="ascii") as out:
        out.write("\n".join(outputs) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
