#!/usr/bin/env python3
"""The table of a ci/device.sh results folder: one row per step (status, exit status,
seconds, what it found), printed and written into the folder's README.md with the
provenance of info.json. Standard library only, so that it runs anywhere the folder is.

    python3 ci/device_table.py suites/peer/device-h200-2026-12-03

The folder holds steps.tsv (name, status, exit status, seconds, command: one line a step,
as device.sh writes it), NAME.txt (each step's output) and the JSON reports steps wrote
(NAME.json: a sweep's or run's cases, reveal's kernels, the Triton door's precisions).
Exit status: 0 every step passed or was skipped, 1 a step failed or timed out, 2 no
steps.tsv.
"""

import json
import os
import sys

STATUSES = ("PASS", "FAIL", "TIMEOUT", "SKIP")


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def last_line(path, prefix=None):
    try:
        with open(path, errors="replace") as f:
            lines = [l.strip() for l in f if l.strip()]
    except OSError:
        return ""
    if prefix is not None:
        found = [l for l in lines if l.startswith(prefix)]
        if found:
            return found[-1]
    return lines[-1] if lines else ""


def case_summary(cases):
    """variant@target -> model (max ULP), for a sweep's or run's cases."""
    parts = []
    for c in cases:
        name = c.get("variant", "?") + ("@" + c["target"] if c.get("target") else "")
        if "fault" in c:
            parts.append(f"{name}: {c['fault'].get('kind', 'fault')}")
            continue
        conf = c.get("conformance") or {}
        model = conf.get("model") or "none"
        dtype = f" {c['dtype']}" if c.get("dtype") else ""
        ulp = c.get("max_ulp")
        ulp_text = f", max {ulp:.4g} ULP" if isinstance(ulp, (int, float)) else ""
        parts.append(f"{name}{dtype}: {model}{ulp_text}")
    return "; ".join(parts)


def summary(folder, name):
    """What one step found, in a line."""
    report = os.path.join(folder, name + ".json")
    text = os.path.join(folder, name + ".txt")
    data = load_json(report)
    if isinstance(data, dict):
        if isinstance(data.get("cases"), list) and data["cases"]:
            return case_summary(data["cases"])
        if isinstance(data.get("kernels"), list) and data["kernels"]:
            k = data["kernels"][0]
            check = k.get("check") or {}
            checked = (f"; model checked on {check['outputs']} outputs, {check['mismatches']} off"
                       if "outputs" in check else "")
            return f"{k.get('shape_name') or 'a tree'} (k={k.get('shape', {}).get('k', '?')}){checked}"
        if isinstance(data.get("precisions"), dict):
            return "; ".join(
                f"{p}: " + (r["error"] if "error" in r else
                            f"{r.get('known_shape') or r.get('tree')}"
                            f"{'' if r.get('follows_tree') else ' (model NOT followed)'}")
                for p, r in data["precisions"].items())
    if name.startswith("golden"):
        return last_line(text, "golden check:")
    return last_line(text)


def cell(s, width=160):
    s = s.replace("|", "\\|").replace("\n", " ")
    return s if len(s) <= width else s[:width - 3] + "..."


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    folder = argv[1]
    try:
        with open(os.path.join(folder, "steps.tsv")) as f:
            rows = [l.rstrip("\n").split("\t") for l in f if l.strip()]
    except OSError as e:
        print(f"device_table: {e}")
        return 2
    table = ["| step | status | exit | seconds | found |", "|---|---|---|---|---|"]
    counts = {s: 0 for s in STATUSES}
    for row in rows:
        name, status, rc, seconds = (row + ["", "", "", ""])[:4]
        counts[status] = counts.get(status, 0) + 1
        table.append(f"| {name} | {'**' + status + '**' if status in ('FAIL', 'TIMEOUT') else status} "
                     f"| {rc} | {seconds} | {cell(summary(folder, name))} |")
    total = ", ".join(f"{counts[s]} {s}" for s in STATUSES)
    print("\n".join(table))
    print(f"\n{len(rows)} steps: {total}")
    info = load_json(os.path.join(folder, "info.json")) or {}
    provenance = [f"- {k}: {info[k]}" for k in ("date_utc", "gpu", "nvcc", "torch", "torch_cuda", "triton",
                                                 "jax", "python", "ulpgate", "git") if k in info]
    with open(os.path.join(folder, "README.md"), "w") as f:
        f.write(f"# ci/device.sh on {info.get('gpu', 'a GPU')}\n\n"
                "Written by ci/device.sh (docs/gpu.md): one report per step (NAME.txt, and NAME.json\n"
                "where the step writes one), every command and version in info.json and steps.tsv.\n"
                "Regenerate the table: `python3 ci/device_table.py <this folder>`.\n\n")
        if provenance:
            f.write("\n".join(provenance) + "\n\n")
        f.write("\n".join(table) + f"\n\n{len(rows)} steps: {total}\n")
    return 1 if counts.get("FAIL", 0) or counts.get("TIMEOUT", 0) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
