#!/usr/bin/env python3
"""ctest device_script: the parts of ci/device.sh that run without a GPU.

1. The table (ci/device.sh --table, ci/device_table.py) of a small fake results folder:
   one row per step with its status, exit status and seconds, what each found read from
   its report (a sweep's models and max ULP, reveal's tree, golden check's line, a skip's
   reason), README.md written with info.json's provenance; exit 1 while a step failed or
   timed out, 0 once none did.
2. Without a GPU (NVIDIA_SMI pointing at a command that fails) the script runs nothing,
   says why, and exits 77.
3. --dry-run lists every step with its time limit and command: the golden check of
   golden/cuda, a bf16 sweep of every op through the CUDA IUT and through PyTorch's CUDA
   ops, reveal of cuBLAS in four precisions and of Triton's tl.dot, compiled against eager.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

OPS = ["tanh_bwd", "sigmoid_bwd", "silu_bwd", "gelu_bwd", "gelu_tanh_bwd"]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def fake_folder(folder):
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    rows = [("build_iut", "PASS", "0", "14.2"), ("golden_cuda", "FAIL", "3", "20.5"),
            ("sweep_cuda_tanh_bwd", "PASS", "0", "3.1"), ("reveal_cublas_tf32", "TIMEOUT", "124", "40.0"),
            ("reveal_cublas_f32", "PASS", "0", "2.0"), ("reveal_triton_python", "SKIP", "77", "1.5")]
    write(os.path.join(folder, "steps.tsv"),
          "".join("\t".join(r + ("cmd",)) + "\n" for r in rows))
    write(os.path.join(folder, "golden_cuda.txt"),
          "DIFFERS RAN golden/cuda/CUDA_SM90/tanh_bwd.json: 1 of 72 cases\n"
          "golden check: 1 files match, 1 differ, 0 targets not covered (2.0 s)\n  RAN: CUDA_SM90\n")
    json.dump({"format": "ulpgate-sweep-2", "cases": [
        {"variant": "mac_opmath", "target": "CUDA_SM90", "max_ulp": 0.5,
         "conformance": {"expected": "mac_fused_opmath", "model": "mac_fused_opmath"}},
        {"variant": "mac_per_op", "target": "CUDA_SM90", "fault": {"kind": "REFUSED"}}]},
        open(os.path.join(folder, "sweep_cuda_tanh_bwd.json"), "w"))
    write(os.path.join(folder, "reveal_cublas_tf32.txt"), "probing ...\n")
    json.dump({"format": "ulpgate-reveal-1", "kernels": [
        {"shape_name": "sequential chain, rounded products", "shape": {"k": 64},
         "check": {"outputs": 1000, "mismatches": 0}}]},
        open(os.path.join(folder, "reveal_cublas_f32.json"), "w"))
    write(os.path.join(folder, "reveal_triton_python.txt"),
          "skipped: No module named 'ulpgate' (needs torch, triton and ulpgate's Python module)\n")
    json.dump({"gpu": "NVIDIA H200, 580.65, 9.0, 143771 MiB", "torch": "2.11.0+cu130"},
              open(os.path.join(folder, "info.json"), "w"))
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--source", required=True)
    p.add_argument("--work", required=True)
    a = p.parse_args()
    script = os.path.join(a.source, "ci", "device.sh")
    os.makedirs(a.work, exist_ok=True)

    # 1. The table.
    folder = os.path.join(a.work, "results")
    fake_folder(folder)
    r = subprocess.run(["bash", script, "--table", folder], capture_output=True, text=True, timeout=60)
    table = r.stdout
    expected = [
        "| build_iut | PASS | 0 | 14.2 |",
        "| golden_cuda | **FAIL** | 3 | 20.5 | golden check: 1 files match, 1 differ, 0 targets not covered",
        "| sweep_cuda_tanh_bwd | PASS | 0 | 3.1 | mac_opmath@CUDA_SM90: mac_fused_opmath, max 0.5 ULP; "
        "mac_per_op@CUDA_SM90: REFUSED |",
        "| reveal_cublas_tf32 | **TIMEOUT** | 124 | 40.0 | probing ... |",
        "| reveal_cublas_f32 | PASS | 0 | 2.0 | sequential chain, rounded products (k=64); model checked on "
        "1000 outputs, 0 off |",
        "| reveal_triton_python | SKIP | 77 | 1.5 | skipped: No module named 'ulpgate'",
        "6 steps: 3 PASS, 1 FAIL, 1 TIMEOUT, 1 SKIP",
    ]
    for line in expected:
        if line not in table:
            fail(f"the table lacks\n  {line}\n{table}{r.stderr}")
    if r.returncode != 1:
        fail(f"a failed and a timed-out step: exit {r.returncode}, expected 1")
    readme = open(os.path.join(folder, "README.md")).read()
    if "NVIDIA H200" not in readme or expected[1] not in readme or "torch: 2.11.0+cu130" not in readme:
        fail("README.md lacks the GPU, the provenance or the table:\n" + readme)
    # Every step passed or was skipped: exit 0.
    steps = open(os.path.join(folder, "steps.tsv")).read()
    write(os.path.join(folder, "steps.tsv"), steps.replace("FAIL", "PASS").replace("TIMEOUT", "PASS"))
    r = subprocess.run(["bash", script, "--table", folder], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        fail(f"no step failed: exit {r.returncode}, expected 0\n{r.stdout}")
    print("table: every row, README.md, exit 1 then 0")

    # 2. No GPU.
    env = dict(os.environ, NVIDIA_SMI="false")
    r = subprocess.run(["bash", script, "--out", os.path.join(a.work, "nogpu")], capture_output=True,
                       text=True, timeout=60, env=env)
    if r.returncode != 77 or "no NVIDIA GPU here" not in r.stdout:
        fail(f"without a GPU: exit {r.returncode}, expected 77 saying so\n{r.stdout}{r.stderr}")
    print("no GPU: " + r.stdout.strip())

    # 3. The steps, without running them.
    r = subprocess.run(["bash", script, "--dry-run", "--out", os.path.join(a.work, "dry")],
                       capture_output=True, text=True, timeout=120)
    plan = r.stdout
    wanted = ["build_iut", "selftest_cuda", "--selftest 65536", "golden check --dir golden/cuda", "reveal_cublas_tf32", "--door cublas_bf16",
              "torch_iut.py\\ --device\\ cuda", "--compile", "triton_dot_reveal.py", "--door tl_dot_tf32"]
    wanted += [f"sweep_cuda_{op}" for op in OPS] + [f"sweep_torch_{op}" for op in OPS]
    wanted += [f"compiled_eager_{op}" for op in OPS]
    for w in wanted:
        if w not in plan:
            fail(f"--dry-run lacks {w!r}:\n{plan}{r.stderr}")
    if r.returncode != 0:
        fail(f"--dry-run: exit {r.returncode}\n{plan}{r.stderr}")
    print(f"dry run: {len(plan.splitlines())} steps listed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
