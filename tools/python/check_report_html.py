#!/usr/bin/env python3
"""Checks an `ulpgate report` page without a browser: the HTML parses with
its tags balanced, every inline SVG is well-formed XML, nothing is fetched
from elsewhere (no src= or href= but in-page anchors), the histograms of a
table share one x scale (the same bin labels), and the page holds the
sections asked for (--expect TEXT, repeatable: text that must appear;
--count N:TEXT, text that must appear at least N times). --max-bytes N: the
page is at most N bytes. --folded RUN.json (repeatable): the run report's
histograms are folded, one per variant and set of targets whose outputs are
identical (the same output digest), titled with all those targets, and none
drawn twice.

Exit 0 when all holds, 1 with a line per problem otherwise."""
import argparse
import html.entities
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

XML_ENTITIES = {"amp", "lt", "gt", "quot", "apos"}
VOID = {"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "wbr", "source"}


class Balance(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.problems, self.svg_depth = [], [], 0

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("src", "href") and value and not value.startswith("#"):
                self.problems.append(f"<{tag} {name}={value!r}>: the page must not fetch anything")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes <{self.stack[-1] if self.stack else 'nothing'}>")
            return
        self.stack.pop()


def folding_problems(path, titles):
    """The histograms of run report `path` among the page's (by their titles, "variant@T1, T2:
    max ..."): one per variant whose targets gave the same output digest, titled with them all."""
    results = json.load(open(path, encoding="utf-8"))["results"]
    groups = {}  # (variant, dtype, digest) -> targets, in the report's order
    for c in results:
        if "histogram" in c:
            groups.setdefault((c["variant"], c.get("dtype"), c["output_digest"]), []).append(c["target"])
    problems = []
    named = [t.split(":", 1)[0] for t in titles]
    for (variant, _, digest), targets in groups.items():
        title = f"{variant}@{', '.join(targets)}"
        if named.count(title) != 1:
            problems.append(f"{path}: {named.count(title)} histograms titled {title!r} (outputs {digest}), "
                            "expected one")
    for variant in {v for v, _, _ in groups}:
        drawn = [n for n in named if n.startswith(variant + "@")]
        want = [k for k in groups if k[0] == variant]
        if len(drawn) > len(want):
            problems.append(f"{path}: {len(drawn)} histograms of {variant}, for {len(want)} distinct outputs")
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("page")
    p.add_argument("--expect", action="append", default=[])
    p.add_argument("--count", action="append", default=[], metavar="N:TEXT")
    p.add_argument("--svgs", type=int, default=1, help="at least this many inline SVGs")
    p.add_argument("--max-bytes", type=int, help="the page's size at most this")
    p.add_argument("--folded", action="append", default=[], metavar="RUN.json",
                   help="a run report whose histograms the page folds by output digest")
    args = p.parse_args()
    text = open(args.page, encoding="utf-8").read()
    problems = []
    b = Balance()
    b.feed(text)
    b.close()
    problems += b.problems
    if b.stack:
        problems.append("unclosed tags: " + " ".join(b.stack[-5:]))
    svgs = re.findall(r"<svg\b.*?</svg>", text, flags=re.S)
    for i, svg in enumerate(svgs):
        try:
            # HTML's named entities are not XML's: as numeric references.
            for name, code in html.entities.name2codepoint.items():
                svg = svg.replace(f"&{name};", f"&#{code};") if name not in XML_ENTITIES else svg
            ET.fromstring(svg)
        except ET.ParseError as e:
            problems.append(f"SVG {i} is not well-formed XML: {e}")
    if len(svgs) < args.svgs:
        problems.append(f"{len(svgs)} inline SVGs, expected at least {args.svgs}")
    for want in args.expect:
        if want not in text:
            problems.append(f"missing: {want!r}")
    for spec in args.count:
        n, want = spec.split(":", 1)
        if text.count(want) < int(n):
            problems.append(f"{want!r} appears {text.count(want)} times, expected at least {n}")
    # A grid of histograms is read across: every one must have the same bins.
    for g, grid in enumerate(re.findall(r"<div class='grid'>(.*?)</div>", text, flags=re.S)):
        scales = [re.findall(r"text-anchor='middle'>([^<]*)</text>", h)
                  for h in re.findall(r"<svg class='hist'.*?</svg>", grid, flags=re.S)]
        if any(scale != scales[0] for scale in scales):
            problems.append(f"histogram grid {g}: the histograms' x scales differ: {scales}")
    size = os.path.getsize(args.page)
    if args.max_bytes is not None and size > args.max_bytes:
        problems.append(f"{size} bytes, more than {args.max_bytes}")
    titles = [html.unescape(t) for t in re.findall(r"<svg class='hist'[^>]*><title>([^<]*)</title>", text)]
    for path in args.folded:
        problems += folding_problems(path, titles)
    for line in problems:
        print(f"{args.page}: {line}")
    if not problems:
        print(f"{args.page}: {len(svgs)} SVGs, balanced, self-contained, {len(args.expect)} expected texts found")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
