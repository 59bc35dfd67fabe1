#!/usr/bin/env python3
"""The cast ops through the CLI: run, check and sweep name the policies of the
cast model that outputs follow. Outputs for check are made here by an
independent implementation of float8_e4m3fn rounding (ties away from zero), so
check must name nearest_away.saturate and refuse nearest_even.saturate.

With MUTANT (build/bin/ulpgate_mutant), the mutant cast kernels instead
(ULPGATE_CAST_MUTANT puts one in the place of every rne_sat kernel from f32):
run and sweep must catch each and name the policy it follows.

Usage: cast_cli_test.py ULPGATE WORKDIR [MUTANT]
"""
import math
import os
import struct
import subprocess
import sys


def run(ulpgate, args, want_rc, mutant=None):
    env = dict(os.environ)
    if mutant:
        env["ULPGATE_CAST_MUTANT"] = mutant
    p = subprocess.run([ulpgate] + args, capture_output=True, text=True, env=env)
    out = p.stdout + p.stderr
    if p.returncode != want_rc:
        sys.exit(f"{' '.join(args)}: exit {p.returncode}, expected {want_rc}\n{out}")
    return out


def expect(text, needle, what):
    if needle not in text:
        sys.exit(f"{what}: expected '{needle}' in\n{text}")


def e4m3fn_ties_away(x):
    """float8_e4m3fn code of a finite binary32 value x, rounding to nearest with
    ties away from zero, saturating at 448 (bias 7, 3 mantissa bits, subnormal
    quantum 2^-9)."""
    sign = 0x80 if math.copysign(1.0, x) < 0 else 0
    a = abs(x)
    if a == 0:
        return sign
    e = max(math.floor(math.log2(a)), -6)
    quantum = 2.0 ** (e - 3)
    n = math.floor(a / quantum + 0.5)
    v = min(n * quantum, 448.0)
    if v == 0:
        return sign
    if v < 2.0 ** -6:
        return sign | int(v / 2.0 ** -9)
    e = math.floor(math.log2(v))
    return sign | ((e + 7) << 3) | (int(v / 2.0 ** (e - 3)) - 8)


def mutants(ulpgate):
    run_e4m3 = ["run", "--op", "cast_f32", "--dtype", "float8_e4m3fn", "--variant", "rne_sat",
                "--require-conformance"]
    out = run(ulpgate, run_e4m3, 1, "ties_away")
    expect(out, "claims nearest_even.saturate, LEAVES IT", "ties_away")
    expect(out, "follows bit for bit: nearest_away.saturate", "ties_away")
    # Ties are boundary inputs: random patterns almost never hit one.
    expect(out, "random 0 of 10000", "ties_away")
    out = run(ulpgate, run_e4m3, 1, "sticky_dropped")
    expect(out, "follows no policy; nearest", "sticky_dropped")
    out = run(ulpgate, ["sweep", "--op", "cast_f32", "--dtype", "float8_e5m2", "--variant",
                        "rne_sat", "--target", "best"], 1, "overflow_nan")
    expect(out, "follows bit for bit on every pattern: nearest_even.nan", "overflow_nan")
    print("cast mutants: caught, and named by the policy they follow")


def main():
    ulpgate, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    if len(sys.argv) > 3:
        mutants(sys.argv[3])
        return

    out = run(ulpgate, ["run", "--op", "cast_f32", "--dtype", "float8_e4m3fn",
                        "--require-conformance"], 0)
    expect(out, "rne_sat on", "run")
    expect(out, "claims nearest_even.saturate, follows it", "run")
    expect(out, "follows bit for bit: nearest_even.saturate", "run")
    expect(out, "claims nearest_even.saturate.via_bf16, follows it", "run")
    expect(out, "claims toward_zero.saturate, follows it", "run")
    out = run(ulpgate, ["run", "--op", "cast_bf16", "--dtype", "float4_e2m1fn", "--suite",
                        "boundary", "--require-conformance"], 0)
    expect(out, "off nearest_even.saturate: boundary 0 of", "run bf16")
    out = run(ulpgate, ["run", "--op", "cast_f32", "--dtype", "f16"], 2)
    expect(out, "float8_e4m3fn", "run to a format that is no destination")

    # Exact ties of float8_e4m3fn (k + 1/2 quanta) and values around them.
    values = []
    for e in range(-6, 9):
        for k in range(8, 16):
            values.append(math.ldexp(k + 0.5, e - 3))
            values.append(-math.ldexp(k + 0.25, e - 3))
    for k in range(1, 8):
        values.append(math.ldexp(k + 0.5, -9))
    values += [0.0, 1000.0, -1e30]
    values = [struct.unpack("<f", struct.pack("<f", v))[0] for v in values]
    inputs, outputs = os.path.join(work, "in.bin"), os.path.join(work, "codes.bin")
    with open(inputs, "wb") as f:
        f.write(b"".join(struct.pack("<f", v) for v in values))
    with open(outputs, "wb") as f:
        f.write(bytes(e4m3fn_ties_away(v) for v in values))
    check = ["check", "--op", "cast_f32", "--dtype", "float8_e4m3fn", "--inputs", inputs,
             "--outputs", outputs]
    out = run(ulpgate, check, 0)
    expect(out, "follows bit for bit: nearest_away.saturate", "check")
    out = run(ulpgate, check + ["--require-model", "nearest_even.saturate"], 1)
    expect(out, "claims nearest_even.saturate, LEAVES IT", "check --require-model")
    run(ulpgate, check + ["--require-model", "nearest_away.saturate"], 0)
    # The same sources through the kernels: run --inputs.
    out = run(ulpgate, ["run", "--op", "cast_f32", "--dtype", "float8_e4m3fn", "--inputs", inputs,
                        "--variant", "rne_sat", "--require-conformance"], 0)
    expect(out, f"off nearest_even.saturate: {inputs} 0 of {len(values)}", "run --inputs")

    out = run(ulpgate, ["sweep", "--op", "cast_f16", "--dtype", "float6_e3m2fn"], 0)
    expect(out, "every f16 pattern (65536)", "sweep")
    expect(out, "follows bit for bit: nearest_even.saturate", "sweep")
    print("cast CLI: run, check and sweep name the policies")


if __name__ == "__main__":
    main()
