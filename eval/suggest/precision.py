#!/usr/bin/env python3
"""Precision of suggested queries and related entities from a judgments file.

A judgments file (JSON lines, written by eval/suggest/collect.py and completed by
a judge) holds one shown item per line with "judgment": "useful" or
"not_useful" and a "reason". Precision = useful / judged, per corpus and kind
(suggestion, related), with a 95% Wilson interval. Lines without a judgment are
counted and reported, never guessed.

Usage: eval/suggest/precision.py judgments.jsonl [--md] [--by FIELD]
  --md       print a Markdown table (for docs/benchmarks.md)
  --by F     also break down by another field (e.g. entity_type, source, rank)
Exit status 1 when a line has a judgment other than useful / not_useful.
"""
import argparse
import collections
import json
import math
import sys


def wilson(k, n, z=1.96):
    if n == 0:
        return (0.0, 0.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("judgments")
    ap.add_argument("--md", action="store_true")
    ap.add_argument("--by")
    args = ap.parse_args()
    stats = collections.defaultdict(lambda: [0, 0, 0])  # useful, judged, unjudged
    bad = 0
    for n, line in enumerate(open(args.judgments), 1):
        if not line.strip():
            continue
        r = json.loads(line)
        keys = [(r["corpus"], r["kind"], "")]
        if args.by:
            keys.append((r["corpus"], r["kind"], f"{args.by}={r.get(args.by)}"))
        j = r.get("judgment")
        for k in keys:
            s = stats[k]
            if j is None:
                s[2] += 1
            elif j in ("useful", "not_useful"):
                s[1] += 1
                s[0] += j == "useful"
        if j not in (None, "useful", "not_useful"):
            print(f"line {n}: judgment {j!r}, want useful or not_useful", file=sys.stderr)
            bad += 1
    if args.md:
        print("| corpus | kind | | judged | useful | precision | 95% interval | unjudged |")
        print("|---|---|---|---:|---:|---:|---|---:|")
    for (corpus, kind, sub), (u, n, un) in sorted(stats.items()):
        p = u / n if n else float("nan")
        lo, hi = wilson(u, n)
        if args.md:
            print(f"| {corpus} | {kind} | {sub} | {n} | {u} | {p:.2f} | {lo:.2f}–{hi:.2f} | {un} |")
        else:
            print(f"{corpus:8s} {kind:10s} {sub:24s} precision {p:.3f} ({u}/{n}, 95% {lo:.2f}-{hi:.2f}){f', {un} unjudged' if un else ''}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
