#!/usr/bin/env python3
"""ctest (label arm): the kernels built for 64-bit ARM, run under qemu-aarch64 through the
IUT protocol (docs/iut.md), held to their models like the x86 ones.

1. Builds the IUT for aarch64 (preset aarch64: the kernels and ulpgate-iut only).
2. Starts it under qemu-aarch64 at SVE vector lengths 128, 256, 512 and 2048 bits
   (`-cpu max,sve-default-vector-length=BYTES`); the targets it offers there: NEON, SVE and
   SVE2 at the run-time length (SVE_VL128 ...), and Highway's fixed-length SVE2_128 and
   SVE_256 where the length is theirs. Each kernel claims the model its target implies
   (kernels/expected_model.h: every aarch64 SIMD target fuses its multiply-adds and converts
   f16 in hardware).
3. golden check --dir golden/arm64: the sampled suites of every op, dtype and variant, run
   on the emulated kernels (RAN) and compared bit for bit with goldens blessed from the
   models.
4. A bf16 sweep of 2^24 (grad, second operand) pairs of every elementwise op on NEON, SVE
   at each length and SVE2 at 128 bits: each kernel follows its model (exit 0), and beside it the same sweep of the x86
   targets in process; the table of digests says where ARM and x86 kernels of a variant
   give the same outputs (`--table FILE` writes it as Markdown).
Skips (77) where the cross compiler, the arm64 Highway or qemu-aarch64 is missing
(ci/setup.sh installs them).

    arm_iut_test.py --ulpgate build/bin/ulpgate --source . --work DIR [--range N] [--table FILE]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

# Vector length (bits) -> the targets the IUT offers there that are checked.
LENGTHS = {
    128: ["NEON", "SVE_VL128", "SVE2_VL128", "SVE2_128"],
    256: ["SVE_VL256", "SVE_256"],
    512: ["SVE_VL512"],
    2048: ["SVE_VL2048"],
}
# The sweeps leave out the fixed-length SVE2_128 and SVE_256 (the golden check runs them):
# minutes of emulation that SVE2_VL128 and SVE_VL256, the same code paths, already cover.
SWEPT = {bits: [t for t in targets if t not in ("SVE2_128", "SVE_256")]
         for bits, targets in LENGTHS.items()}
OPS = ["tanh_bwd", "sigmoid_bwd", "silu_bwd", "gelu_bwd", "gelu_tanh_bwd"]


def iut_command(iut, bits, targets):
    return (f"qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu max,sve-default-vector-length={bits // 8} "
            f"{iut} --builtin --targets {','.join(targets)}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ulpgate", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--range", type=lambda s: int(s, 0), default=1 << 24)
    parser.add_argument("--table", help="write the digest table here (Markdown)")
    args = parser.parse_args()
    for tool in ("aarch64-linux-gnu-g++", "qemu-aarch64"):
        if shutil.which(tool) is None:
            print(f"skipped: {tool} is missing (ci/setup.sh installs it)")
            return 77
    if not os.path.exists("/usr/lib/aarch64-linux-gnu/cmake/hwy"):
        print("skipped: the arm64 Highway is missing (libhwy-dev:arm64; ci/setup.sh installs it)")
        return 77
    os.makedirs(args.work, exist_ok=True)
    failures = []
    start = time.time()

    def step(what):
        print(f"[{time.time() - start:6.0f} s] {what}", flush=True)

    step("building the aarch64 IUT (preset aarch64)")
    for cmd in (["cmake", "--preset", "aarch64"],
                ["cmake", "--build", "--preset", "aarch64", "-j", str(os.cpu_count() or 2)]):
        p = subprocess.run(cmd, cwd=args.source, capture_output=True, text=True)
        if p.returncode != 0:
            print(p.stdout[-4000:], p.stderr[-4000:])
            print("FAIL: " + " ".join(cmd))
            return 1
    iut = os.path.join(args.source, "build-aarch64", "bin", "ulpgate-iut")

    def ulpgate(*a, expect=0):
        p = subprocess.run([args.ulpgate, *a], capture_output=True, text=True, cwd=args.source)
        if p.returncode != expect:
            failures.append(f"ulpgate {' '.join(a)}: exit {p.returncode}, expected {expect}\n"
                            f"{p.stdout[-3000:]}{p.stderr[-3000:]}")
        return p

    # 3. The goldens: every target at its length, one IUT per length, in one check.
    step("golden check --dir golden/arm64: " + ", ".join(t for ts in LENGTHS.values() for t in ts))
    iuts = []
    for bits, targets in LENGTHS.items():
        iuts += ["--iut", iut_command(iut, bits, targets)]
    p = ulpgate("golden", "check", "--dir", "golden/arm64", *iuts)
    for targets in LENGTHS.values():
        for t in targets:
            ran = [line for line in p.stdout.splitlines() if line.startswith("ok      RAN") and
                   f"/{t}/" in line]
            if len(ran) != len(OPS):
                failures.append(f"golden check: {len(ran)} files of {t} RAN and matched, expected {len(OPS)}")
    print("\n".join(p.stdout.splitlines()[-3:]))

    # 4. The sweeps: ARM and x86, digests side by side.
    digests = {}  # (op, variant) -> {target: (digest, model)}
    end = f"{args.range:#x}"
    for op in OPS:
        for bits, targets in SWEPT.items():
            step(f"sweep {op} bf16 [0, {end}), vector length {bits}")
            out = os.path.join(args.work, f"sweep_{op}_{bits}.json")
            ulpgate("sweep", "--kernel", op, "--dtype", "bf16", "--variant", "none", "--iut",
                    iut_command(iut, bits, targets), "--range", f"0:{end}", "--quiet", "--json", out)
            if os.path.exists(out):
                for c in json.load(open(out))["cases"]:
                    digests.setdefault((op, c["variant"]), {})[c["target"]] = (
                        c["outputs_digest"], c["conformance"]["model"])
        step(f"sweep {op} bf16 [0, {end}), x86 in process")
        out = os.path.join(args.work, f"sweep_{op}_x86.json")
        ulpgate("sweep", "--kernel", op, "--dtype", "bf16", "--range", f"0:{end}", "--quiet",
                "--json", out)
        if os.path.exists(out):
            for c in json.load(open(out))["cases"]:
                digests.setdefault((op, c["variant"]), {})[c["target"]] = (
                    c["outputs_digest"], c["conformance"]["model"])

    arm = [t for ts in SWEPT.values() for t in ts]
    lines = ["| op | variant | ARM targets (model) | x86 targets with the same outputs | x86 targets that differ (model) |",
             "|---|---|---|---|---|"]
    for (op, variant), by_target in sorted(digests.items()):
        arm_digests = {by_target[t] for t in arm if t in by_target}
        if len(arm_digests) != 1:
            failures.append(f"{op} {variant}: the ARM targets give different outputs: "
                            f"{ {t: by_target.get(t) for t in arm} }")
        if not arm_digests:
            continue
        digest, model = next(iter(arm_digests))
        same = [t for t in by_target if t not in arm and by_target[t][0] == digest]
        other = [f"{t} ({by_target[t][1]})" for t in by_target if t not in arm and by_target[t][0] != digest]
        lines.append(f"| {op} | {variant} | all ({model}) | {', '.join(same) or '-'} | {', '.join(other) or '-'} |")
    table = "\n".join(lines)
    print(table)
    if args.table:
        with open(args.table, "w") as f:
            f.write(table + "\n")
    step("done")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
