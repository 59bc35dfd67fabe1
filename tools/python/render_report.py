#!/usr/bin/env python3
"""Renders an `ulpgate report` page in headless Chromium: the page must run
its script to the end (it then marks <body data-rendered="yes">), log nothing
to the console (no error, no warning), and a screenshot of it is written.

Exit 0 on success, 1 on a failure, 77 (ctest's skip) when no Chromium is
installed (Debian's package `chromium`; ci/setup.sh installs it)."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

# As this workplace's machines run Chromium: no sandbox (root), no network
# chatter a closed network would refuse, a fresh profile.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0"]


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run(binary, args, profile):
    return subprocess.run([binary, *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=180)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("page")
    p.add_argument("--screenshot", required=True, help="PNG to write")
    p.add_argument("--size", default="1400,6000", help="window WIDTH,HEIGHT")
    args = p.parse_args()
    binary = chromium()
    if binary is None:
        print("no Chromium here (Debian package chromium): the page's rendering is not checked")
        return 77
    url = "file://" + os.path.abspath(args.page)
    problems = []
    with tempfile.TemporaryDirectory() as profile:
        dom = run(binary, ["--dump-dom", url], profile)
        if dom.returncode != 0:
            problems.append(f"chromium --dump-dom exited {dom.returncode}: {dom.stderr[-500:]}")
        if 'data-rendered="yes"' not in dom.stdout:
            problems.append("the page's script did not run to the end (no data-rendered=\"yes\")")
        console = [l for l in dom.stderr.splitlines() if ":CONSOLE" in l]
        problems += ["console: " + l for l in console]
        shot = run(binary, [f"--screenshot={os.path.abspath(args.screenshot)}",
                            f"--window-size={args.size}", url], profile)
        if shot.returncode != 0 or not os.path.exists(args.screenshot):
            problems.append(f"no screenshot (exit {shot.returncode}): {shot.stderr[-500:]}")
        problems += ["console: " + l for l in shot.stderr.splitlines() if ":CONSOLE" in l]
    for line in problems:
        print(f"{args.page}: {line}")
    if not problems:
        print(f"{args.page}: rendered in {binary}, no console messages; screenshot {args.screenshot}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
