#!/usr/bin/env python3
"""ctest arm_iut_casts (label arm): the cast kernels built for 64-bit ARM, run under
qemu-aarch64 through the IUT protocol (docs/iut.md, version 2), follow their variants'
policies bit for bit, as the x86 ones do in process.

1. Builds the IUT for aarch64 (preset aarch64; nothing to do when arm_iut built it).
2. Starts it under qemu-aarch64 at SVE vector lengths 128 bits (NEON, SVE_VL128,
   SVE2_VL128, SVE2_128) and 512 (SVE_VL512), and runs `ulpgate run` of every cast (f32,
   bf16, f16 to each of the 8 destinations; float4_e2m1fn's codes packed two a byte,
   --packed4) over the boundary, random and scaled suites (--n each). Each kernel claims
   its variant's policy; --require-conformance exits 0 only when every one follows it,
   and each ARM target's case of each variant must say so.
Skips (77) where the cross compiler, the arm64 Highway or qemu-aarch64 is missing.

    arm_iut_cast_test.py --ulpgate build/bin/ulpgate --source . [--n N]
"""

import argparse
import os
import shutil
import subprocess
import sys
import time

# SVE vector length (bytes) -> the ARM targets the IUT offers there that are checked.
LENGTHS = {16: ["NEON", "SVE_VL128", "SVE2_VL128", "SVE2_128"], 64: ["SVE_VL512"]}
SOURCES = ["f32", "bf16", "f16"]
DESTINATIONS = ["float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
                "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn", "float8_e8m0fnu"]


def variants(source, dest):
    """rne_sat and trunc always; via_bf16 from f32 to all but E8M0 (bf16 lacks its range)."""
    return ["rne_sat", "trunc"] + (["via_bf16"] if source == "f32" and dest != "float8_e8m0fnu" else [])


POLICY = {"rne_sat": "nearest_even.saturate", "via_bf16": "nearest_even.saturate.via_bf16",
          "trunc": "toward_zero.saturate"}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ulpgate", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--n", default="20000")
    args = parser.parse_args()
    for tool in ("aarch64-linux-gnu-g++", "qemu-aarch64"):
        if shutil.which(tool) is None:
            print(f"skipped: {tool} is missing (ci/setup.sh installs it)")
            return 77
    if not os.path.exists("/usr/lib/aarch64-linux-gnu/cmake/hwy"):
        print("skipped: the arm64 Highway is missing (libhwy-dev:arm64; ci/setup.sh installs it)")
        return 77
    start = time.time()
    for cmd in (["cmake", "--preset", "aarch64"],
                ["cmake", "--build", "--preset", "aarch64", "-j", str(os.cpu_count() or 2)]):
        p = subprocess.run(cmd, cwd=args.source, capture_output=True, text=True)
        if p.returncode != 0:
            print(p.stdout[-4000:], p.stderr[-4000:])
            print("FAIL: " + " ".join(cmd))
            return 1
    built = time.time()
    iut = os.path.join(args.source, "build-aarch64", "bin", "ulpgate-iut")
    failures = []
    for length, targets in LENGTHS.items():
        for source in SOURCES:
            for dest in DESTINATIONS:
                # The 4-bit codes come packed two a byte (data packed4).
                packed = ["--packed4"] if dest == "float4_e2m1fn" else []
                command = " ".join(["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu", "-cpu",
                                    f"max,sve-default-vector-length={length}", iut, "--builtin",
                                    "--targets", ",".join(targets)] + packed)
                argv = [args.ulpgate, "run", "--op", f"cast_{source}", "--dtype", dest, "--n", args.n,
                        "--target", "SCALAR", "--iut", command, "--require-conformance",
                        "--kernel-timeout", "60"]
                t = time.time()
                p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
                out = p.stdout + p.stderr
                print(f"VL {8 * length}: cast_{source} -> {dest}: {time.time() - t:.1f} s, exit {p.returncode}",
                      flush=True)
                if p.returncode != 0:
                    failures.append(f"cast_{source} {dest}: exit {p.returncode}\n{out}")
                # Each variant's case on every ARM target says it follows its policy (targets
                # with the same codes share a line).
                for v in variants(source, dest):
                    lines = [l for l in out.splitlines() if l.startswith(f"  {v} on ")]
                    for target in targets:
                        ok = [l for l in lines if target in l.split(" on ", 1)[1].split(":")[0].split(", ")]
                        if not any(f"claims {POLICY[v]}, follows it" in l for l in ok):
                            failures.append(f"cast_{source} {dest} {v} on {target}: not shown following "
                                            f"{POLICY[v]}\n{out}")
    print(f"built in {built - start:.1f} s, casts in {time.time() - built:.1f} s")
    if failures:
        print("\n".join("FAIL: " + f for f in failures))
        return 1
    print("arm casts: every source, destination and variant on "
          + ", ".join(t for ts in LENGTHS.values() for t in ts) + " follows its policy bit for bit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
