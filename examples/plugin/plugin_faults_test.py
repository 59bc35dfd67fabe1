#!/usr/bin/env python3
"""ctest driver: kernels that crash, hang, overrun their output or return NaN
(faulty_plugin.c) run through `ulpgate run` in their own process. Each fault is
reported for its case with the first input that causes it on its own (found
here independently, from the exported inputs and the plugin's trigger), the
other cases complete, the JSON report is written, the exit status is 3, and
the printed replay command reproduces the crash.

usage: plugin_faults_test.py ULPGATE LIBFAULTY WORKDIR (libsigmoid_off.so beside LIBFAULTY)"""
import json
import os
import shlex
import struct
import subprocess
import sys

ulpgate, plugin, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
N = 5000
failures = []


def expect(condition, message):
    if not condition:
        failures.append(message)


def run(args, timeout=240):
    return subprocess.run([ulpgate] + args, capture_output=True, text=True, timeout=timeout)


# The inputs, exported, and the first whose grad has the plugin's trigger.
inputs_path = os.path.join(work, "inputs.txt")
r = run(["suite", "export", "--op", "sigmoid_bwd", "--suite", "random", "--n", str(N),
         "--seed", "1", "--out", inputs_path])
assert r.returncode == 0, r.stderr
grads = []
for line in open(inputs_path):
    line = line.split("#")[0].strip()
    if line:
        grads.append(float.fromhex(line.split()[0]))
assert len(grads) == N, "exported %d inputs, expected %d" % (len(grads), N)


def triggers(g):
    return (struct.unpack("<I", struct.pack("<f", g))[0] & 0x3FF) == 0x155


hits = [i for i, g in enumerate(grads) if triggers(g)]
assert hits, "no input of the suite triggers the faulty kernels: pick another n or seed"
first = hits[0]

report = os.path.join(work, "run.json")
if os.path.exists(report):
    os.remove(report)
r = run(["run", "--kernel", "sigmoid_bwd", "--plugin", plugin, "--variant", "none", "--suite",
         "random", "--n", str(N), "--seed", "1", "--kernel-timeout", "1", "--json", report])
out = r.stdout
expect(r.returncode == 3, "run: exit status %d, expected 3 (a kernel faulted)\n%s\n%s" %
       (r.returncode, out, r.stderr))
expect(os.path.exists(report), "run: no JSON report written")
cases = {c["variant"]: c for c in json.load(open(report))["results"]} if os.path.exists(report) else {}
expect(sorted(cases) == ["crash", "fine", "hang", "nan", "overrun"], "cases: %s" % sorted(cases))

fine = cases.get("fine", {})
expect("fault" not in fine and fine.get("n") == N and fine.get("conformance", {}).get("mismatches") == 0,
       "the fine kernel did not complete: %s" % json.dumps(fine)[:400])

for variant, kind in (("crash", "crashed"), ("hang", "timeout")):
    fault = cases.get(variant, {}).get("fault")
    expect(fault is not None and fault["kind"] == kind,
           "%s: fault %s, expected %s" % (variant, fault, kind))
    if fault:
        expect(fault["input"] is not None and fault["input"]["index"] == first,
               "%s: the fault's input %s, expected #%d" % (variant, fault["input"], first))
crash = cases.get("crash", {}).get("fault") or {}
expect(crash.get("detail") == "SIGSEGV", "crash: detail %s, expected SIGSEGV" % crash.get("detail"))

# Every call overruns: the first call of the plan (one input) is the fault's.
overrun = cases.get("overrun", {}).get("fault")
expect(overrun is not None and overrun["kind"] == "out_of_bounds" and overrun["call_first"] == 0,
       "overrun: fault %s, expected out_of_bounds on the first call" % overrun)

nan = cases.get("nan", {})
expect("fault" not in nan, "nan: a NaN is a wrong output, not a fault")
expect(nan.get("conformance", {}).get("mismatches") == len(hits),
       "nan: %s mismatches, expected %d" % (nan.get("conformance", {}).get("mismatches"), len(hits)))
expect(nan.get("special_mismatch", 0) > fine.get("special_mismatch", 0),
       "nan: %s special mismatches, not more than the fine kernel's %s" %
       (nan.get("special_mismatch"), fine.get("special_mismatch")))
first_input = nan.get("conformance", {}).get("first_mismatch_input") or {}
expect(first_input.get("index") == first, "nan: first mismatch %s, expected #%d" % (first_input, first))

# The text names the kernel, the fault and the input, with a command that replays it.
expect("CRASHED: sigmoid_bwd crash (f32) on faulty: SIGSEGV at input #%d" % first in out,
       "run's text lacks the crash line:\n" + out)
expect("TIMEOUT: sigmoid_bwd hang (f32) on faulty" in out, "run's text lacks the timeout line")
expect("OUT OF BOUNDS: sigmoid_bwd overrun (f32) on faulty" in out, "run's text lacks the overrun line")
replay = None
lines = out.splitlines()
for k, line in enumerate(lines):
    if line.startswith("CRASHED:"):
        for j in range(k + 1, len(lines)):
            if lines[j].strip().startswith("reproduce:"):
                parts = [lines[j].split("reproduce:", 1)[1].strip()]
                while parts[-1].endswith("\\") and j + 1 < len(lines):  # wrapped as a shell line
                    parts[-1] = parts[-1][:-1].rstrip()
                    j += 1
                    parts.append(lines[j].strip())
                replay = " ".join(parts)
                break
        break
expect(replay is not None and replay.startswith("ulpgate explain") and "--variant crash" in replay,
       "no replay command after the crash line")
if replay:
    args = shlex.split(replay)[1:]
    r = run(args)
    expect(r.returncode == 3 and "CRASHED" in r.stderr and "SIGSEGV" in r.stderr,
           "the replay command did not reproduce the crash: status %d\n%s%s" %
           (r.returncode, r.stdout, r.stderr))

# In this process, by request: the same formula from another library
# (sigmoid_bwd_plugin.c built without contraction) gives the fine kernel's
# outputs and report.
same = os.path.join(os.path.dirname(plugin), "libsigmoid_off.so")
r = run(["run", "--kernel", "sigmoid_bwd", "--plugin", same, "--variant", "none", "--suite",
         "random", "--n", str(N), "--seed", "1", "--in-process", "--json", os.path.join(work, "in.json")])
expect(r.returncode == 0, "--in-process: status %d\n%s" % (r.returncode, r.stderr))
if r.returncode == 0:
    inproc = json.load(open(os.path.join(work, "in.json")))["results"][0]
    expect(inproc["output_digest"] == fine.get("output_digest") and inproc["histogram"] == fine.get("histogram"),
           "--in-process and the IUT disagree on the fine kernel")

# In this process nothing can contain a crash or a hang, but the guards around
# every call still see an overrun: a fault of that case (out_of_bounds, exit 3),
# the other kernels measured. (The inputs before the first trigger: no other
# kernel faults on them.)
if first > 0:
    inproc_report = os.path.join(work, "in_overrun.json")
    r = run(["run", "--kernel", "sigmoid_bwd", "--plugin", plugin, "--variant", "none", "--inputs",
             inputs_path, "--n", str(first), "--in-process", "--json", inproc_report])
    expect(r.returncode == 3 and "OUT OF BOUNDS: sigmoid_bwd overrun (f32) on faulty" in r.stdout,
           "--in-process: the overrun is not its case's fault: status %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
    if os.path.exists(inproc_report):
        inproc = {c["variant"]: c for c in json.load(open(inproc_report))["results"]}
        expect(inproc.get("overrun", {}).get("fault", {}).get("kind") == "out_of_bounds",
               "--in-process: overrun's record %s" % inproc.get("overrun"))
        expect(all("max_ulp" in inproc.get(v, {}) for v in ("fine", "crash", "nan", "hang")),
               "--in-process: the other kernels were not measured")

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("plugin faults: crash and hang reported at input #%d, the overrun on its first call (in this "
      "process too), the NaN measured, the fine kernel complete, exit status 3, replay reproduces" % first)
