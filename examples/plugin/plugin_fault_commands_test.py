#!/usr/bin/env python3
"""ctest driver: the faulty plugin (fine, crash, overrun, nan, hang) and the flaky one (ok,
off, segv, hang) through every command that runs kernels, each in its own process. On every
command each fault is reported as its case's (kind, kernel, input or call, replay), every
good kernel is measured, and the exit status is 3; the reports that carry a faulted case
carry no measurement of it, and every reader (report, Python) shows the fault.

usage: plugin_fault_commands_test.py ULPGATE PLUGINS_DIR WORKDIR [PYTHONPATH]"""
import json
import os
import re
import subprocess
import sys
import time

ulpgate, plugins, work = sys.argv[1:4]
python_path = sys.argv[4] if len(sys.argv) > 4 else ""
os.makedirs(work, exist_ok=True)
faulty = os.path.join(plugins, "libfaulty.so")
flaky = os.path.join(plugins, "libflaky.so")
BOTH = ["--plugin", faulty, "--plugin", flaky, "--kernel-timeout", "0.3"]
# kernel@plugin -> the fault kind it must report; None: measured.
EXPECTED = {"fine@faulty": None, "crash@faulty": "crashed", "overrun@faulty": "out_of_bounds",
            "nan@faulty": None, "hang@faulty": "timeout", "ok@flaky": None, "off@flaky": None,
            "segv@flaky": "crashed", "hang@flaky": "timeout"}
NAMES = {"crashed": "CRASHED", "timeout": "TIMEOUT", "out_of_bounds": "OUT OF BOUNDS"}
MEASUREMENTS = ["histogram", "max_ulp", "mean_ulp", "percentiles", "correctly_rounded", "special_mismatch",
                "conformance", "output_digest", "outputs_digest", "bound_fraction", "matching", "model", "group"]
failures = []


def expect(condition, message):
    if not condition:
        failures.append(message)


def run(args, timeout=240):
    r = subprocess.run([ulpgate] + args, capture_output=True, text=True, timeout=timeout)
    r.stdout = re.sub(r"\n +", " ", r.stdout)  # wrapped lines joined
    return r


def path(name):
    return os.path.join(work, name)


def check_cases(command, cases, text, key=lambda c: c["variant"] + "@" + c["target"], expected=None):
    """Every expected case present; a faulted one with its fault and nothing measured, named
    in the text with its kernel; a good one measured."""
    seen = {key(c): c for c in cases}
    for name, kind in (expected or EXPECTED).items():
        c = seen.get(name)
        if c is None:
            failures.append("%s: no case %s (cases: %s)" % (command, name, sorted(seen)))
            continue
        if kind is None:
            expect("fault" not in c and any(k in c for k in MEASUREMENTS),
                   "%s: %s was not measured: %s" % (command, name, json.dumps(c)[:300]))
            continue
        fault = c.get("fault") or {}
        expect(fault.get("kind") == kind, "%s: %s: fault %s, expected %s" % (command, name, fault, kind))
        expect(not any(k in c for k in MEASUREMENTS),
               "%s: %s faulted but carries measurements: %s" % (command, name, sorted(c)))
        expect(fault.get("replay"), "%s: %s: no replay in its fault" % (command, name))
        variant, plugin = name.split("@")
        expect(re.search(r"%s: sigmoid_bwd %s \(f32\) on %s" % (NAMES[kind], variant, plugin), text) or
               re.search(r"%s@%s.*%s" % (variant, plugin, NAMES[kind]), text),
               "%s: the text does not name %s's %s:\n%s" % (command, name, kind, text[:3000]))


# run: the reference behaviour.
r = run(["run", "--op", "sigmoid_bwd", "--variant", "none", "--suite", "random", "--n", "3000", "--json",
         path("run.json")] + BOTH)
expect(r.returncode == 3, "run: exit %d\n%s" % (r.returncode, r.stderr))
if os.path.exists(path("run.json")):
    check_cases("run", json.load(open(path("run.json")))["results"], r.stdout)

# Without --kernel-timeout a hang costs seconds: 100 times the kernel's median time per input,
# times the call's inputs, at least 1 s; the progress says what it bisects.
start = time.monotonic()
r = run(["run", "--op", "sigmoid_bwd", "--variant", "none", "--suite", "random", "--n", "3000",
         "--plugin", flaky])
seconds = time.monotonic() - start
expect(r.returncode == 3 and "TIMEOUT: sigmoid_bwd hang (f32) on flaky: no answer in 1 s" in r.stdout,
       "run without --kernel-timeout: exit %d\n%s" % (r.returncode, r.stdout[-1500:]))
expect(seconds < 40, "run without --kernel-timeout took %.1f s: a hang should cost seconds" % seconds)
expect("bisecting a hang of sigmoid_bwd hang on flaky" in r.stderr and
       "bisecting a crash of sigmoid_bwd segv on flaky" in r.stderr,
       "run: the progress does not say what it bisects:\n" + r.stderr[-1500:])

# sweep: a block of inputs at a grad that triggers the faulty kernels, every kernel measured or
# faulted, none ending the sweep.
r = run(["sweep", "--op", "sigmoid_bwd", "--variant", "none", "--dtype", "f32", "--grad", "0x1.8002aap-1",
         "--range", "0x3e000000:0x3e020000", "--json", path("sweep.json")] + BOTH)
expect(r.returncode == 3, "sweep: exit %d\n%s%s" % (r.returncode, r.stdout[-2000:], r.stderr))
if os.path.exists(path("sweep.json")):
    check_cases("sweep", json.load(open(path("sweep.json")))["cases"], r.stdout)

# check --plugin: one kernel's outputs; a faulting kernel is named with its input.
inputs = path("inputs.txt")
r = run(["suite", "export", "--op", "sigmoid_bwd", "--suite", "random", "--n", "3000", "--seed", "1",
         "--out", inputs])
assert r.returncode == 0, r.stderr
for name, kind in EXPECTED.items():
    variant, plugin = name.split("@")
    report = path("check_%s_%s.json" % (variant, plugin))
    r = run(["check", "--op", "sigmoid_bwd", "--inputs", inputs, "--plugin", faulty if plugin == "faulty" else flaky,
             "--variant", variant, "--kernel-timeout", "0.3", "--json", report])
    if kind is None:
        expect(r.returncode in (0, 1) and "fault" not in json.load(open(report))["results"][0],
               "check %s: exit %d\n%s" % (name, r.returncode, r.stderr))
        continue
    expect(r.returncode == 3, "check %s: exit %d, expected 3\n%s%s" % (name, r.returncode, r.stdout, r.stderr))
    if os.path.exists(report):
        check_cases("check " + name, json.load(open(report))["results"], r.stdout,
                    key=lambda c: name, expected={name: kind})

# matrix: faulted cells reported, the others measured.
r = run(["matrix", "--op", "sigmoid_bwd", "--n", "1500", "--json", path("matrix.json")] + BOTH)
expect(r.returncode == 3, "matrix: exit %d\n%s" % (r.returncode, r.stderr))
if os.path.exists(path("matrix.json")):
    cells = [c for c in json.load(open(path("matrix.json")))["cells"] if c["target"] in ("faulty", "flaky")]
    check_cases("matrix", cells, r.stdout)

# golden: blessed from the claimed models (no kernel runs), then checked by running the
# kernels: every fault a difference naming it; bless with a ledger refuses over a fault.
gold = path("golden")
r = run(["golden", "bless", "--dir", gold, "--op", "sigmoid_bwd"] + BOTH)
expect(r.returncode == 0, "golden bless (models): exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
r = run(["golden", "check", "--dir", gold, "--op", "sigmoid_bwd"] + BOTH)
expect(r.returncode == 3, "golden check: exit %d, expected 3\n%s" % (r.returncode, r.stdout[-3000:]))
for name, kind in EXPECTED.items():
    variant, plugin = name.split("@")
    if kind is None:
        expect(not re.search(r"sigmoid_bwd %s %s [^:]*: the kernel faulted" % (variant, plugin), r.stdout),
               "golden check: %s reported as faulted" % name)
    else:
        expect(re.search(r"sigmoid_bwd %s %s [^:]*: the kernel faulted: %s" % (variant, plugin, NAMES[kind]),
                         r.stdout), "golden check: %s's %s not named:\n%s" % (name, kind, r.stdout[-3000:]))
ledger = {"format": "ulpgate-budgets-1",
          "runs": [{"op": "sigmoid_bwd", "suites": ["random"], "seed": 1, "n": 2000}],
          "rules": [{"id": "sigmoid_bwd.plugins", "match": {"op": "sigmoid_bwd"},
                     "limits": {"max_ulp": 1e9}, "why": "any measured kernel passes: the faults fail"}]}
gold2 = path("golden_ledger")
os.makedirs(gold2, exist_ok=True)
json.dump(ledger, open(os.path.join(gold2, "budgets.json"), "w"), indent=2)
r = run(["golden", "bless", "--dir", gold2, "--op", "sigmoid_bwd", "--force", "anyway"] + BOTH)
expect(r.returncode == 3 and "refused, nothing written" in r.stdout and "a kernel faulted" in r.stdout,
       "golden bless over a fault: exit %d\n%s" % (r.returncode, r.stdout[-2000:]))
expect(not os.path.exists(os.path.join(gold2, "faulty")), "golden bless over a fault wrote goldens")

# gate: each faulted case fails every rule over it, the good ones pass.
r = run(["gate", "--budgets", os.path.join(gold2, "budgets.json"), "--target", "SCALAR", "--json",
         path("gate.json"), "--junit", path("gate.xml")] + BOTH)
if os.path.exists(path("gate.xml")):
    junit = open(path("gate.xml")).read()
    expect(junit.count('classname="ulpgate.gate.fault"') == sum(1 for k in EXPECTED.values() if k),
           "gate --junit: not one failing test per faulted case:\n" + junit)
expect(r.returncode == 3, "gate: exit %d, expected 3\n%s" % (r.returncode, r.stdout[-2000:]))
if os.path.exists(path("gate.json")):
    gate = json.load(open(path("gate.json")))
    expect(gate["status"] == "FAIL", "gate: status %s" % gate["status"])
    for name, kind in EXPECTED.items():
        variant, plugin = name.split("@")
        named = [f for f in gate.get("faults", []) if "%s@%s" % (variant, plugin) in f]
        expect(bool(named) == (kind is not None) and all(NAMES[kind] in f for f in named if kind),
               "gate: faults %s for %s (expected %s)" % (named, name, kind))
    row = gate["rows"][0]
    expect(row["status"] == "FAIL" and "faulted" in row["message"], "gate: row %s" % row)

# report: every faulted case of the run, matrix and gate named; exit 3.
r = run(["report", path("run.json"), path("matrix.json"), path("gate.json"), "--html", path("report.html")])
expect(r.returncode == 3, "report: exit %d\n%s" % (r.returncode, r.stdout))
for name, kind in EXPECTED.items():
    if kind:
        expect(re.search(r"FAULT .*run\.json: %s: %s" % (re.escape(name), NAMES[kind]), r.stdout),
               "report: %s's %s not named:\n%s" % (name, kind, r.stdout))

# Python: the report of a faulted check shows the fault, no figure.
if python_path:
    sys.path.insert(0, python_path)
    try:
        import ulpgate as ug
    except ImportError as e:
        ug = None
        print("(the Python package is not importable: %s)" % e)
    if ug is not None:
        record = json.load(open(path("check_crash_faulty.json")))["results"][0]
        rep = ug.CheckReport(record, "sigmoid_bwd", "f32", ["grad", "s"], [[0.0], [0.0]])
        expect(rep.max_ulp is None and "CRASHED (SIGSEGV) at input #" in repr(rep),
               "Python: the faulted check reads as:\n%r" % rep)

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("plugin faults on every command: run, sweep, check, matrix, golden check and bless, gate, report "
      "and Python report each fault and measure every good kernel")
