#!/usr/bin/env python3
"""Runs every shell command the README and docs/*.md show, in order, as a user in a clone
would, and fails naming the page, line and command of each one that does not do what its
page says.

Which blocks run. A fenced block tagged `sh`, `bash` or `shell` holds commands, and every
command in it runs; a block tagged anything else (`text` for output, `cpp`, `python`,
`json`, `yaml`, `cmake`) is shown, not run. A fence without a tag is an error, so that no
command goes untested by accident. A command is a line, with the lines that continue it (a
trailing backslash, an open quote, a here-document up to its end marker); comment lines
and blank lines are skipped.

Markers. HTML comments on the lines right before a fence (invisible on the rendered page)
change how its commands run:

    <!-- docs-test: skip: REASON -->   none of the block's commands runs; the test prints
                                       them with the reason (needs a GPU, takes minutes)
    <!-- docs-test: exit N -->         every command of the block must exit with status N
                                       (a command shown failing on purpose)

Where they run. Each page starts in a clean scratch folder that looks like a clone after
`bash ci/test.sh`: every top-level entry of the source tree is a symbolic link to it, but
golden/ is a copy (bless writes there) and build/ is a folder of links to the build
folder's entries (so that what a command writes under build/, such as build/reports, stays
in the scratch folder). The build's bin/ is first on PATH (`ulpgate`, `ulpgate-iut`),
PYTHONPATH holds its python/ (`import ulpgate`), and `python3` is the interpreter given by
--python (Debian's /usr/bin/python3, the one with numpy and torch). Each command runs in a
fresh `bash -o pipefail -c` from the scratch folder's root, so a variable or `cd` does not
carry from one command to the next. A page's commands may use only files of the repository
and files that earlier commands of the same page made.

Links. Every link of a page to a file of the repository must name one that exists, and an
anchor (`page.md#heading`, `#heading`) a heading of that page, as GitHub writes its anchors.

Exit status: 0 every command did what its page says and every link holds; 1 a command
failed (each failure is printed with its page, line, command, exit status and the tail of
its output; the commands after a failure on the same page are not run) or a link is broken;
2 a page is malformed (an untagged fence, an unknown marker, a skip without a reason) or bad
arguments; 77 (ctest's skip) where the pages' commands cannot run as written: a CPU without
AVX2 and FMA (the examples name AVX2 and load the x86-64-v3 example plugins), a build
without the Python package, an interpreter without numpy and torch. ULPGATE_CPU_TARGETS is
left out of the commands' environment: a user's shell does not set it.
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

RUN_TAGS = {"sh", "bash", "shell"}
# A fence opens with three or more backticks or tildes; after backticks the rest of the line
# holds none (CommonMark), else the line is a code span such as ```` ```sh ````.
FENCE = re.compile(r"^ {0,3}(?:(?P<fence>`{3,})(?=[^`]*$)|(?P<tildes>~{3,}))\s*(?P<tag>[^\s`]*)")
MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<body>.*?)\s*-->\s*$")
HEREDOC = re.compile(r"<<-?\s*(['\"]?)(?P<word>[A-Za-z_][A-Za-z0-9_]*)\1")
OUTPUT_TAIL_LINES = 25


class PageError(Exception):
    """A page the test cannot read as intended (exit 2)."""


class Command:
    def __init__(self, page, line, text, expect_exit=0, skip=None):
        self.page, self.line, self.text = page, line, text
        self.expect_exit, self.skip = expect_exit, skip

    def where(self):
        return f"{self.page}:{self.line}"


def parse_markers(lines, page, fence_line):
    """The docs-test markers on the lines right before the fence at index fence_line."""
    expect_exit, skip = 0, None
    i = fence_line - 1
    while i >= 0:
        m = MARKER.match(lines[i])
        if not m:
            break
        body = m.group("body")
        where = f"{page}:{i + 1}"
        if body.startswith("skip"):
            reason = body[len("skip"):].lstrip(":").strip()
            if not reason:
                raise PageError(f"{where}: a skip marker needs a reason: <!-- docs-test: skip: WHY -->")
            skip = reason
        elif re.fullmatch(r"exit \d+", body):
            expect_exit = int(body.split()[1])
        else:
            raise PageError(f"{where}: unknown marker '{body}' (skip: REASON, or exit N)")
        i -= 1
    return expect_exit, skip


def is_complete(text):
    """Whether text is a whole command: no trailing backslash, no open quote, no open
    here-document (the caller closes those)."""
    if text.endswith("\\"):
        return False
    try:
        shlex.split(text, comments=True)
    except ValueError:  # an open quote
        return False
    return True


def split_commands(block_lines, first_line, page):
    """[(line number, command text)] of a shell block's lines (first_line: the number of
    its first line in the page)."""
    commands = []
    current, start, heredoc_end = [], None, None
    for offset, line in enumerate(block_lines):
        number = first_line + offset
        if heredoc_end is not None:
            current.append(line)
            if line.strip() == heredoc_end:
                heredoc_end = None
                commands.append((start, "\n".join(current)))
                current, start = [], None
            continue
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if not current:
            start = number
        current.append(line)
        text = "\n".join(current)
        m = HEREDOC.search(line)
        if m:
            heredoc_end = m.group("word")
            continue
        if is_complete(text.rstrip()):
            commands.append((start, text))
            current, start = [], None
    if current:
        what = f"here-document without its end marker '{heredoc_end}'" if heredoc_end else "unfinished command"
        raise PageError(f"{page}:{start}: {what}")
    return commands


def read_page(path, page):
    """Every command of the page's shell blocks, in order."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    commands = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            if MARKER.match(lines[i]):
                j = i
                while j < len(lines) and MARKER.match(lines[j]):
                    j += 1
                if j >= len(lines) or not FENCE.match(lines[j]):
                    raise PageError(f"{page}:{i + 1}: a docs-test marker must stand right before a fence")
            i += 1
            continue
        fence, tag = m.group("fence") or m.group("tildes"), m.group("tag").lower()
        if not tag:
            raise PageError(f"{page}:{i + 1}: a fence without a tag: write ```sh for commands the "
                            "test runs, ```text for output, or the block's language")
        expect_exit, skip = parse_markers(lines, page, i)
        end = i + 1
        while end < len(lines) and not lines[end].strip().startswith(fence[0] * len(fence)):
            end += 1
        if end >= len(lines):
            raise PageError(f"{page}:{i + 1}: a fence that is never closed")
        if tag in RUN_TAGS:
            for number, text in split_commands(lines[i + 1:end], i + 2, page):
                commands.append(Command(page, number, text, expect_exit, skip))
        elif skip is not None or expect_exit:
            raise PageError(f"{page}:{i + 1}: a docs-test marker on a block that is not run (```{tag})")
        i = end + 1
    for c in commands:
        if c.skip is None and re.search(r"(^|\s)--kernel(\s|=|$)", c.text):
            raise PageError(f"{c.where()}: the op's option is --op (--kernel is an alias): {c.text}")
    return commands


LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
IMAGE = re.compile(r"!\[[^\]]*\]\((?P<target>[^)\s]+)\)")


def outside_fences(lines):
    """(line number, line) of the lines outside fenced blocks."""
    fence = None
    for number, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group("fence") or m.group("tildes")
            continue
        if fence is not None:
            if line.strip().startswith(fence[0] * len(fence)):
                fence = None
            continue
        yield number, line


def anchors(path):
    """The anchors GitHub gives the headings of a Markdown file."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    seen, result = {}, set()
    for _, line in outside_fences(lines):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1))  # a link: its text
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        result.add(slug if n == 0 else f"{slug}-{n}")
    return result


def broken_links(source, page):
    """Messages for the links of a page that name no file, or no heading, of the repository."""
    path = os.path.join(source, page)
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    problems = []
    for number, line in outside_fences(lines):
        prose = re.sub(r"`[^`]*`", "", line)  # a code span is no link
        for m in list(LINK.finditer(prose)) + list(IMAGE.finditer(prose)):
            target = m.group("target")
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            linked = (os.path.normpath(os.path.join(os.path.dirname(path), file_part))
                      if file_part else path)
            where = f"{page}:{number}: link {target}"
            if not os.path.exists(linked):
                problems.append(f"{where}: no such file")
            elif anchor and linked.endswith(".md") and anchor not in anchors(linked):
                problems.append(f"{where}: no heading '{anchor}' in {os.path.relpath(linked, source)}")
    return problems


def make_scratch(scratch, source, build):
    """A folder that looks like a clone with its build: links to the source tree's entries,
    golden/ copied, build/ a folder of links to the build's entries."""
    if os.path.lexists(scratch):
        shutil.rmtree(scratch)
    os.makedirs(scratch)
    for name in sorted(os.listdir(source)):
        if name in (".git", "build"):
            continue
        src = os.path.join(source, name)
        if name == "golden":
            shutil.copytree(src, os.path.join(scratch, name), symlinks=False)
        else:
            os.symlink(src, os.path.join(scratch, name))
    os.makedirs(os.path.join(scratch, "build"))
    for name in sorted(os.listdir(build)):
        # build/reports is what the main job writes; install_manifest.txt what an install
        # writes: a page must make either itself.
        if name in ("reports", "install_manifest.txt"):
            continue
        os.symlink(os.path.join(build, name), os.path.join(scratch, "build", name))


def tail(output, lines=OUTPUT_TAIL_LINES):
    rows = output.rstrip("\n").split("\n")
    shown = rows[-lines:]
    head = f"    ... ({len(rows) - lines} lines before)\n" if len(rows) > lines else ""
    return head + "\n".join("    | " + r for r in shown)


def one_line(text, width=100):
    text = " ".join(part.strip() for part in text.replace("\\\n", " ").split("\n"))
    return text if len(text) <= width else text[:width - 3] + "..."


def run_page(page, commands, args, env):
    """Runs the page's commands; returns (failures, seconds)."""
    slug = re.sub(r"[^A-Za-z0-9]+", "_", page).strip("_")
    scratch = os.path.join(args.work, slug)
    make_scratch(scratch, args.source, args.build)
    failures = []
    page_start = time.monotonic()
    for c in commands:
        if c.skip is not None:
            continue
        start = time.monotonic()
        try:
            done = subprocess.run(["bash", "-o", "pipefail", "-c", c.text], cwd=scratch, env=env,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=args.timeout)
            status, output = done.returncode, done.stdout.decode("utf-8", "replace")
            timed_out = False
        except subprocess.TimeoutExpired as e:
            status, timed_out = None, True
            output = (e.stdout or b"").decode("utf-8", "replace")
        seconds = time.monotonic() - start
        ok = not timed_out and status == c.expect_exit
        shown = "ok  " if ok else "FAIL"
        expect = f" (exit {c.expect_exit} expected)" if c.expect_exit else ""
        print(f"  {shown} {seconds:6.1f} s  {c.where()}  {one_line(c.text)}{expect}", flush=True)
        if not ok:
            why = (f"timed out after {args.timeout} s" if timed_out
                   else f"exit status {status}, expected {c.expect_exit}")
            failures.append(f"{c.where()}: {why}\n  command (run from {scratch}):\n"
                            + "\n".join("    $ " + line for line in c.text.split("\n"))
                            + f"\n  output:\n{tail(output) if output.strip() else '    (none)'}")
            remaining = [x for x in commands[commands.index(c) + 1:] if x.skip is None]
            if remaining:
                print(f"  not run: the {len(remaining)} later commands of {page} (they may need this one)")
            break
    return failures, time.monotonic() - page_start


SKIPPED = 77  # ctest's SKIP_RETURN_CODE


def missing_prerequisite(args):
    """Why the pages' commands cannot run here as written, or None. They load the example
    plugins (x86-64-v3 code), name AVX2 among the targets, and run PyTorch and the Python
    package with the given interpreter."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = set(f.read().split())
    except OSError:
        flags = set()
    if not {"avx2", "fma"} <= flags:
        return "this CPU lacks AVX2 or FMA, which the pages' examples use (AVX2, the example plugins)"
    if not os.path.isdir(os.path.join(args.build, "python", "ulpgate")):
        return f"no Python package in {args.build}/python (pybind11 was not found)"
    probe = subprocess.run([args.python, "-c", "import numpy, torch"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"{args.python} cannot import numpy and torch (python3-numpy, python3-torch)"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", required=True, help="the repository's root")
    parser.add_argument("--build", required=True, help="the build folder (bin/, plugins/, python/)")
    parser.add_argument("--work", help="where the scratch folders go (default: BUILD/docs_test)")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter `python3` names in the pages (default: this one)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds one command may take (300)")
    parser.add_argument("--list", action="store_true", help="print the commands and markers, run nothing")
    parser.add_argument("pages", nargs="*",
                        help="pages relative to the source (default: README.md and docs/*.md)")
    args = parser.parse_args()
    args.source = os.path.abspath(args.source)
    args.build = os.path.abspath(args.build)
    args.work = os.path.abspath(args.work or os.path.join(args.build, "docs_test"))
    pages = args.pages or (["README.md"] + sorted(
        os.path.join("docs", f) for f in os.listdir(os.path.join(args.source, "docs")) if f.endswith(".md")))

    try:
        parsed = [(page, read_page(os.path.join(args.source, page), page)) for page in pages]
    except (PageError, OSError) as e:
        print(f"docs_test: {e}", file=sys.stderr)
        return 2

    links = [problem for page in pages for problem in broken_links(args.source, page)]
    skipped = [c for _, commands in parsed for c in commands if c.skip is not None]
    total = sum(len(commands) for _, commands in parsed)
    if args.list:
        for page, commands in parsed:
            for c in commands:
                mark = f"  [skip: {c.skip}]" if c.skip is not None else (
                    f"  [exit {c.expect_exit}]" if c.expect_exit else "")
                print(f"{c.where()}: {one_line(c.text, 140)}{mark}")
        print(f"{total} commands, {len(skipped)} not run")
        for problem in links:
            print(problem)
        return 1 if links else 0

    for tool in ("ulpgate", "ulpgate-iut"):
        if not os.access(os.path.join(args.build, "bin", tool), os.X_OK):
            print(f"docs_test: {args.build}/bin/{tool} is missing: build first", file=sys.stderr)
            return 2
    why_not = missing_prerequisite(args)
    if why_not:
        print(f"docs_test: skipped: {why_not}")
        return SKIPPED
    shims = os.path.join(args.work, "shims")
    os.makedirs(shims, exist_ok=True)
    shim = os.path.join(shims, "python3")
    if os.path.lexists(shim):
        os.remove(shim)
    os.symlink(args.python, shim)
    env = dict(os.environ)
    # The pages show what a user's shell gives; a restriction of the targets would change
    # what the commands that name AVX2 select.
    env.pop("ULPGATE_CPU_TARGETS", None)
    env["PATH"] = os.pathsep.join([shims, os.path.join(args.build, "bin"), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [os.path.join(args.build, "python"), env.get("PYTHONPATH", "")] if p)

    print(f"docs_test: {total - len(skipped)} commands of {len(parsed)} pages to run, "
          f"{len(skipped)} not run (marked):")
    for c in skipped:
        print(f"  {c.where()}  {one_line(c.text)}\n      not run: {c.skip}")
    failures, start = [], time.monotonic()
    for page, commands in parsed:
        to_run = [c for c in commands if c.skip is None]
        if not to_run:
            continue
        print(f"{page}: {len(to_run)} commands", flush=True)
        page_failures, seconds = run_page(page, commands, args, env)
        print(f"{page}: {seconds:.1f} s", flush=True)
        failures += page_failures
    elapsed = time.monotonic() - start
    if links:
        failures.append("broken links:\n" + "\n".join("  " + problem for problem in links))
    if failures:
        print(f"\ndocs_test: FAIL ({len(failures)} failures), {elapsed:.0f} s")
        for f in failures:
            print("\n" + f)
        return 1
    print(f"\ndocs_test: PASS, {total - len(skipped)} commands in {elapsed:.0f} s "
          f"({len(skipped)} not run, listed above)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
