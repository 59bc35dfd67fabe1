#!/usr/bin/env python3
"""ctest driver: --iut COMMAND through the commands. The built-in kernels served by
`ulpgate-iut --builtin` (targets NAME-iut) measure bit for bit as the same kernels in
process do: a bf16 sweep (every statistic and the outputs' digest), with the data in
shared memory and, with the IUT's view of it taken away, on the pipes; a run in f32.
The one-page C IUT (minimal_iut.c, sigmoid_bwd fms in f32, claiming no model) joins a run
and is reported with the model it follows. And the errors: a command that is not an IUT,
an IUT that offers an op this build does not know, a sweep with nothing to sweep.

usage: iut_commands_test.py ULPGATE ULPGATE_IUT MINIMAL_IUT WORK"""
import json
import os
import subprocess
import sys

ulpgate, ulpgate_iut, minimal, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
failures = []


def run(*args, expect=0):
    p = subprocess.run([ulpgate, *args], capture_output=True, text=True, timeout=600)
    if p.returncode != expect:
        failures.append(f"ulpgate {' '.join(args)}: exit {p.returncode}, expected {expect}\n"
                        f"{p.stdout}{p.stderr}")
    return p


def cases(path):
    with open(path) as f:
        j = json.load(f)
    return j.get("cases", j.get("results"))


def same_case(a, b):
    keep = lambda c: {k: v for k, v in c.items() if k not in ("target", "kind")}  # noqa: E731
    return keep(a) == keep(b)


# A sweep in process, and through the IUT with shared memory and with pipes.
sweep = ["sweep", "--kernel", "sigmoid_bwd", "--dtype", "bf16", "--range", "0x10000:0x50000", "--quiet"]
run(*sweep, "--target", "SCALAR", "--json", f"{work}/in_process.json")
modes = {"shm": f"{ulpgate_iut} --builtin --targets SCALAR",
         # Without the variable that names the shared memory the IUT keeps to the pipes.
         "pipes": f"env -u ULPGATE_IUT_SHM_FD {ulpgate_iut} --builtin --targets SCALAR"}
for mode, command in modes.items():
    run(*sweep, "--variant", "none", "--iut", command, "--json", f"{work}/iut_{mode}.json")
if not failures:
    here = {c["variant"]: c for c in cases(f"{work}/in_process.json")}
    for mode in modes:
        there = cases(f"{work}/iut_{mode}.json")
        if sorted(c["variant"] for c in there) != sorted(here):
            failures.append(f"{mode}: variants {[c['variant'] for c in there]}, expected {sorted(here)}")
        for c in there:
            if c["target"] != "SCALAR-iut":
                failures.append(f"{mode}: target {c['target']}")
            if c["variant"] in here and not same_case(c, here[c["variant"]]):
                failures.append(f"{mode}: {c['variant']} through the IUT differs from in process")
            if c["conformance"]["expected"] != here.get(c["variant"], {}).get("conformance", {}).get("expected"):
                failures.append(f"{mode}: {c['variant']} expects {c['conformance']['expected']}")

# A run in f32: the same statistics.
r = ["run", "--kernel", "tanh_bwd", "--suite", "adversarial", "--n", "3000", "--quiet"]
run(*r, "--target", "AVX2" if "avx2" in open("/proc/cpuinfo").read() else "SSE4",
    "--variant", "mulsub", "--json", f"{work}/run_in.json")
target = cases(f"{work}/run_in.json")[0]["target"] if os.path.exists(f"{work}/run_in.json") else "SSE4"
run(*r, "--variant", "none", "--iut", f"{ulpgate_iut} --builtin --targets {target}",
    "--json", f"{work}/run_iut.json")
if os.path.exists(f"{work}/run_iut.json"):
    theirs = [c for c in cases(f"{work}/run_iut.json") if c["variant"] == "mulsub"]
    mine = cases(f"{work}/run_in.json")[0]
    if len(theirs) != 1 or theirs[0]["output_digest"] != mine["output_digest"] or \
            theirs[0]["max_ulp"] != mine["max_ulp"]:
        failures.append(f"run: mulsub through the IUT differs from in process: {theirs} vs {mine}")

# Another IUT altogether, claiming no model: the model it follows is found.
p = run("run", "--kernel", "sigmoid_bwd", "--variant", "none", "--iut", minimal, "--suite", "domain",
        "--n", "5000", "--quiet")
if "fms_unfused (none claimed)" not in p.stdout:
    failures.append(f"minimal IUT: expected 'fms_unfused (none claimed)' in\n{p.stdout}")

# Its kernel shares its name, fms, with a built-in variant: --variant fms runs
# both (a name selects every kernel of that name), fms@mine only its; a command
# that takes one kernel refuses the bare name, listing both.
p = run("run", "--kernel", "sigmoid_bwd", "--variant", "fms", "--target", "SCALAR", "--iut", minimal,
        "--suite", "domain", "--n", "2000", "--quiet")
rows = [line.split()[:2] for line in p.stdout.split("\n") if line.startswith("fms ")]
if rows != [["fms", "SCALAR"], ["fms", "mine"]]:
    failures.append(f"run --variant fms: rows {rows}, expected fms on SCALAR and on mine\n{p.stdout}")
p = run("run", "--kernel", "sigmoid_bwd", "--variant", "fms@mine", "--iut", minimal, "--suite", "domain",
        "--n", "2000", "--quiet")
rows = [line.split()[:2] for line in p.stdout.split("\n") if line.startswith("fms ")]
if rows != [["fms", "mine"]]:
    failures.append(f"run --variant fms@mine: rows {rows}, expected fms on mine only\n{p.stdout}")
p = run("diverge", "--kernel", "sigmoid_bwd", "--a", "fms", "--b", "exact", "--iut", minimal, expect=2)
if "--a fms: several kernels have that name (fms@" not in p.stderr or "fms@mine)" not in p.stderr:
    failures.append(f"diverge --a fms with the minimal IUT: {p.stderr}")
p = run("run", "--kernel", "sigmoid_bwd", "--variant", "fms@nowhere", "--iut", minimal, expect=2)
if "--variant fms@nowhere: no target 'nowhere' (compiled: " not in p.stderr or "; plugins and IUTs: mine)" not in p.stderr:
    failures.append(f"run --variant fms@nowhere: {p.stderr}")

# Errors: one line each, status 2.
for args, says in [
        (["--iut", "true"], "did not greet"),
        (["--iut", f"printf 'ulpgate-iut 1\\nkernel X no_such_reduction f32 v\\nready\\n'; sleep 5"],
         "unknown op 'no_such_reduction'"),
        (["--iut", f"printf 'ulpgate-iut 1\\nready\\n'; sleep 5"], "offers no kernels"),
        # Two IUTs offering one target: the second is refused, naming it.
        (["--iut", f"{ulpgate_iut} --builtin --targets SCALAR", "--iut",
          f"{ulpgate_iut} --targets SCALAR --builtin"], "named 'SCALAR-iut'")]:
    p = run("run", "--kernel", "tanh_bwd", "--variant", "none", *args, "--n", "10", expect=2)
    if says and says not in p.stderr:
        failures.append(f"{args}: expected '{says}' in: {p.stderr}")
p = run("sweep", "--kernel", "tanh_bwd", "--variant", "none", expect=2)
if "give --plugin or --iut" not in p.stderr:
    failures.append(f"sweep without kernels: {p.stderr}")

for f in failures:
    print("FAIL:", f)
print(f"{'FAILED' if failures else 'passed'}")
sys.exit(1 if failures else 0)
