#!/usr/bin/env python3
"""Which ulpgate variant each path of a peer's tanh_bwd outputs follows, bit for bit.

Reads a peer archive (.npz of float32 arrays `grad`, `t` and one array per path, as in
suites/peer/*/README.md) with the standard library only, and an `ulpgate run --dump` of
the same inputs (written from `inputs`, below). For every path it prints the variants
(variant@target) whose outputs equal the path's on every input, or the closest ones, and
checks the expectations given with --expect.

    python3 tools/python/peer_models.py inputs ARCHIVE OUT.txt
    python3 tools/python/peer_models.py compare ARCHIVE DUMP.jsonl \\
        [--expect PATH=VARIANT@TARGET ...] [--expect-none PATH ...]

Exit status: 0 when every expectation holds, 1 when one does not, 2 on unreadable input.
"""

import argparse
import ast
import json
import math
import struct
import sys
import zipfile


def load_npz(path):
    """The float32 arrays of an .npz archive, as tuples of Python floats (exact)."""
    arrays = {}
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            data = archive.read(name)
            if data[:6] != b"\x93NUMPY":
                raise ValueError("%s: %s is not a .npy array" % (path, name))
            major = data[6]
            if major == 1:
                header_len, start = struct.unpack("<H", data[8:10])[0], 10
            else:
                header_len, start = struct.unpack("<I", data[8:12])[0], 12
            header = ast.literal_eval(data[start:start + header_len].decode("latin1"))
            if header.get("descr") != "<f4" or header.get("fortran_order"):
                raise ValueError("%s: %s is %r, expected little-endian float32" %
                                 (path, name, header.get("descr")))
            raw = data[start + header_len:]
            arrays[name[:-4] if name.endswith(".npy") else name] = struct.unpack(
                "<%df" % (len(raw) // 4), raw)
    return arrays


def same(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


def write_inputs(archive, out):
    arrays = load_npz(archive)
    with open(out, "w") as f:
        f.write("# grad t, from %s\n" % archive)
        for g, t in zip(arrays["grad"], arrays["t"]):
            f.write("%s %s\n" % (float(g).hex(), float(t).hex()))
    return 0


def compare(archive, dump, expect, expect_none):
    arrays = load_npz(archive)
    cases = {}
    with open(dump) as f:
        for line in f:
            record = json.loads(line)
            for result in record["results"]:
                key = "%s@%s" % (result["variant"], result["target"])
                cases.setdefault(key, []).append(float.fromhex(result["outputs"][0]))
    n = len(arrays["grad"])
    if any(len(outputs) != n for outputs in cases.values()):
        print("peer_models: the dump has %d records, the archive %d inputs" %
              (len(next(iter(cases.values()))), n))
        return 2
    paths = [k for k in arrays if k not in ("grad", "t")]
    differ = {}
    for path in paths:
        peer = arrays[path]
        differ[path] = {key: sum(not same(a, b) for a, b in zip(peer, outputs))
                        for key, outputs in cases.items()}
        ranked = sorted(differ[path].items(), key=lambda kv: (kv[1], kv[0]))
        exact = [key for key, d in ranked if d == 0]
        if exact:
            print("%-24s follows %s" % (path, ", ".join(exact)))
        else:
            print("%-24s follows none; closest %s" %
                  (path, ", ".join("%s (%d of %d differ)" % (k, d, n) for k, d in ranked[:2])))
    failures = []
    for item in expect:
        path, _, key = item.partition("=")
        if path not in differ or key not in differ[path]:
            failures.append("unknown path or variant@target in --expect %s" % item)
        elif differ[path][key] != 0:
            failures.append("%s: %d of %d outputs differ from %s" % (path, differ[path][key], n, key))
    for path in expect_none:
        if path not in differ:
            failures.append("unknown path in --expect-none %s" % path)
        elif min(differ[path].values()) == 0:
            failures.append("%s follows a variant, expected none" % path)
    for f in failures:
        print("peer_models: " + f)
    return 1 if failures else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("inputs", help="write the archive's (grad, t) as an ulpgate input file")
    p.add_argument("archive")
    p.add_argument("out")
    p = sub.add_parser("compare", help="compare every path with every case of a dump")
    p.add_argument("archive")
    p.add_argument("dump")
    p.add_argument("--expect", action="append", default=[], metavar="PATH=VARIANT@TARGET")
    p.add_argument("--expect-none", action="append", default=[], metavar="PATH")
    args = parser.parse_args(argv)
    try:
        if args.command == "inputs":
            return write_inputs(args.archive, args.out)
        return compare(args.archive, args.dump, args.expect, args.expect_none)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as e:
        print("peer_models: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
