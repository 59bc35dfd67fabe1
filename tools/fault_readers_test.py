#!/usr/bin/env python3
"""ctest driver: a faulted case is a fault to every reader. Reports holding one case of each
fault kind (crashed, timeout, out_of_bounds, refused) beside measured ones are fed to
`ulpgate report` (text and HTML), `ulpgate merge` (sweep shards) and the Python package's
report objects; each must name every fault, draw no figure for it (never 0 ULP, never a
pass) and exit 3 where it exits. The faulted records are written as the CLI writes them:
identity fields, then "fault" (kind, detail, input, call range, replay), no measurement.

usage: fault_readers_test.py ULPGATE WORKDIR [PYTHONPATH of the ulpgate package]"""
import copy
import html
import json
import os
import re
import subprocess
import sys

ulpgate, work = sys.argv[1:3]
python_path = sys.argv[3] if len(sys.argv) > 3 else ""
os.makedirs(work, exist_ok=True)
failures = []
KINDS = {"crashed": "CRASHED", "timeout": "TIMEOUT", "out_of_bounds": "OUT OF BOUNDS", "refused": "REFUSED"}
DETAILS = {"crashed": "SIGSEGV", "timeout": "no answer in 1 s",
           "out_of_bounds": "the kernel wrote outside its output", "refused": "unknown kernel"}
MEASUREMENTS = ["histogram", "max_ulp", "mean_ulp", "percentiles", "correctly_rounded", "special_mismatch",
                "conformance", "output_digest", "outputs_digest", "bound_fraction", "max_input", "fine_histogram",
                "digest", "matching", "model", "group"]


def expect(condition, message):
    if not condition:
        failures.append(message)


def run(args):
    """The command's result, its stdout with wrapped lines joined (a fault's words may wrap)."""
    r = subprocess.run([ulpgate] + args, capture_output=True, text=True, timeout=300)
    r.stdout = re.sub(r"\n +", " ", r.stdout)
    return r


def path(name):
    return os.path.join(work, name)


def fault(kind, index, replay):
    """A fault as CaseJson writes it: an input where one faults alone, else the call."""
    return {"kind": kind, "detail": DETAILS[kind],
            "input": None if kind in ("out_of_bounds", "refused") else {"index": index},
            "call_first": index, "call_count": 1 if kind != "refused" else 7, "replay": replay}


def faulted(record, kind, index):
    """The record of a faulted case: its identity and the fault, nothing measured."""
    keep = {k: v for k, v in record.items() if k not in MEASUREMENTS and k != "error_map"}
    keep["variant"] = "faulty_" + kind
    keep["fault"] = fault(kind, index, "ulpgate explain --op %s --variant %s" % (record.get("op"), keep["variant"]))
    return keep


# ---- run reports: `report` draws each fault as a red row naming it, exit 3 ----
r = run(["run", "--op", "sigmoid_bwd", "--variant", "fms", "--target", "SCALAR", "--n", "300", "--json",
         path("good.json")])
assert r.returncode == 0, r.stdout + r.stderr
good = json.load(open(path("good.json")))
report = copy.deepcopy(good)
for k, kind in enumerate(KINDS):
    report["results"].append(faulted(good["results"][0], kind, 10 + k))
json.dump(report, open(path("run.json"), "w"), indent=2)

# ---- check report: one faulted case ----
check = {"format": "ulpgate-check-1", "tool": good["tool"], "label": "faulty_crashed@lib",
         "inputs": "in.txt", "outputs": "", "results": [faulted(good["results"][0], "crashed", 3)]}
json.dump(check, open(path("check.json"), "w"), indent=2)

# ---- matrix report: a faulted cell of each kind beside a measured one ----
r = run(["matrix", "--op", "sigmoid_bwd", "--n", "200", "--json", path("matrix_good.json")])
expect(r.returncode in (0, 1), "matrix: exit %d\n%s" % (r.returncode, r.stderr))
matrix = json.load(open(path("matrix_good.json")))
cell = next(c for c in matrix["cells"] if c.get("run"))
for k, kind in enumerate(KINDS):
    c = {key: cell[key] for key in ("variant", "target", "run", "fused_negmuladd", "expected_model")}
    c["variant"] = "faulty_" + kind
    c["fault"] = dict(fault(kind, 20 + k, "ulpgate run ..."), suite="random")
    matrix["cells"].append(c)
json.dump(matrix, open(path("matrix.json"), "w"), indent=2)

# ---- gate report: its faults ----
gate = {"format": "ulpgate-gate-2", "budgets": "b.json", "today": "2026-01-01", "status": "FAIL",
        "counts": {}, "rows": [], "model_targets": [], "skipped_targets": [],
        "faults": ["sigmoid_bwd faulty_%s@lib random: %s (%s) at input #5" % (k, n, DETAILS[k])
                   for k, n in KINDS.items()]}
json.dump(gate, open(path("gate.json"), "w"), indent=2)

for name in ("run", "check", "matrix", "gate"):
    page = path(name + ".html")
    r = run(["report", path(name + ".json"), "--html", page])
    expect(r.returncode == 3, "report %s: exit %d, expected 3 (a kernel faulted)\n%s%s" %
           (name, r.returncode, r.stdout, r.stderr))
    text = open(page).read() if os.path.exists(page) else ""
    kinds = ["crashed"] if name == "check" else list(KINDS)
    for kind in kinds:
        expect(re.search(r"FAULT .*%s" % re.escape(KINDS[kind]), r.stdout),
               "report %s: the text does not name the %s fault:\n%s" % (name, kind, r.stdout))
        expect(html.escape(KINDS[kind], quote=True) in text and "FAULT" in text,
               "report %s: the page does not name the %s fault" % (name, kind))
    if name == "run":
        for kind in KINDS:
            row = re.search(r"<tr class='st-FAIL'><td>faulty_%s@SCALAR</td>(.*?)</tr>" % kind, text)
            expect(row is not None and KINDS[kind] in row.group(1) and "ULP" not in row.group(1),
                   "report run: faulty_%s is not a red row naming its fault: %s" %
                   (kind, row.group(0) if row else "no row"))
        # Histograms: the measured case's only (each chart is titled "NAME: max E ULP, n = N").
        expect(re.search(r"<title>fms@SCALAR: max [^<]* ULP", text) and
               not re.search(r"<title>faulty_\w+@SCALAR: max", text),
               "report run: a histogram drawn for a faulted case, or none for the measured one")
    if name == "matrix":
        for kind in KINDS:
            expect(re.search(r"<td class='cell-bad'><b>%s" % re.escape(html.escape(KINDS[kind], quote=True)), text),
                   "report matrix: faulty_%s's cell does not name its fault" % kind)

# ---- sweep shards: `merge` keeps each fault, measures the others, exit 3 ----
for k in (0, 1):
    r = run(["sweep", "--op", "tanh_bwd", "--target", "SCALAR", "--dtype", "f32", "--t", "0.5", "--range",
             "0x3f000000:0x3f040000", "--shard", "%d/2" % k, "--json", path("shard%d.json" % k)])
    assert r.returncode == 0, r.stdout + r.stderr
shard = json.load(open(path("shard1.json")))
assert len(shard["cases"]) >= 4, "the sweep has fewer cases than fault kinds"
names = []
for c, kind in zip(shard["cases"], KINDS):
    names.append((c["variant"], kind))
    for key in list(c):
        if key not in ("variant", "target", "kind"):
            del c[key]
    c["fault"] = fault(kind, shard["range"][0] + 5, "ulpgate explain ...")
json.dump(shard, open(path("shard1_faulted.json"), "w"), indent=2)
r = run(["merge", path("shard0.json"), path("shard1_faulted.json"), "--json", path("merged.json")])
expect(r.returncode == 3, "merge: exit %d, expected 3\n%s%s" % (r.returncode, r.stdout, r.stderr))
merged = json.load(open(path("merged.json"))) if os.path.exists(path("merged.json")) else {"cases": []}
for variant, kind in names:
    case = next((c for c in merged["cases"] if c["variant"] == variant), {})
    expect(case.get("fault", {}).get("kind") == kind,
           "merge: %s lost its %s fault: %s" % (variant, kind, json.dumps(case)[:300]))
    expect(not any(key in case for key in MEASUREMENTS + ["n"]),
           "merge: %s (faulted) carries measurements: %s" % (variant, sorted(case)))
    expect(re.search(r"%s: tanh_bwd %s \(f32\) on SCALAR" % (re.escape(KINDS[kind]), variant), r.stdout),
           "merge: the text does not name %s's %s fault:\n%s" % (variant, kind, r.stdout))
# A faulted part merged the other way round: still the fault.
r = run(["merge", path("shard1_faulted.json"), path("shard0.json")])
expect(r.returncode == 3 and "CRASHED" in r.stdout, "merge (reversed): exit %d\n%s" % (r.returncode, r.stdout))

# ---- the Python package's report objects ----
if python_path:
    sys.path.insert(0, python_path)
    try:
        import ulpgate as ug
    except ImportError as e:
        ug = None
        print("(the Python package is not importable here: %s; its readers untested)" % e)
    if ug is not None:
        for record in report["results"][1:]:
            kind = record["fault"]["kind"]
            rep = ug.CheckReport(record, "sigmoid_bwd", "f32", ["grad", "s"], [[0.0] * 300, [0.0] * 300])
            text = repr(rep)
            expect(rep.fault is not None and rep.max_ulp is None and rep.matching == [],
                   "Python CheckReport of a %s case: fault %r, max_ulp %r" % (kind, rep.fault, rep.max_ulp))
            expect(KINDS[kind] in text and "FAULT" in text and "0 ULP" not in text,
                   "Python CheckReport repr of a %s case:\n%s" % (kind, text))
            expect(KINDS[kind] in rep._repr_html_(), "Python CheckReport HTML of a %s case" % kind)
        for variant, kind in names:
            one = dict(merged, cases=[c for c in merged["cases"] if c["variant"] == variant])
            rep = ug.SweepReport(one)
            text = repr(rep)
            expect(rep.fault is not None and rep.max_ulp is None and KINDS[kind] in text,
                   "Python SweepReport of a %s case:\n%s" % (kind, text))

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("fault readers: report (text, HTML: run, check, matrix, gate), merge and Python read every fault "
      "kind as a fault, with no figure")
