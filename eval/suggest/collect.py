#!/usr/bin/env python3
"""Collect suggested queries and related entities from a running search service.

For every query of one or more datasets (eval/*/queries.json), asks
GET /api/v1/search?q=...&format=json&tags=<the dataset's crawl tag> and writes one
JSON line per shown item:

  {"corpus", "tag", "query_id", "query", "kind": "suggestion"|"related",
   "item", "rank", "entity_type", "source", "top_titles", "degraded"}

An answer with a degraded phase (a retrieval or the expansion timed out on a
loaded machine) is asked again, up to --retries times; one still degraded is kept
and named on stderr, and its rows carry the degraded phases.

`top_titles` are the titles of the first five results, so that a judge can tell
whether the results are about a related entity. With --sample N the output keeps
at most N items per (corpus, kind): the first N by a hash of the seed and the
item's (corpus, query, kind, item), so a later run draws the same items where the
service still shows them; without it every item is kept.

Usage:
  eval/suggest/collect.py [--search URL] [--sample N] [--seed S] \
      eval/django/queries.json eval/pydocs/queries.json > sample.jsonl
  eval/suggest/collect.py --input all.jsonl --sample 120 DATASETS... > sample.jsonl
    (draws the sample from a saved full collection, without asking the service)
  eval/suggest/collect.py --carry old-judgments.jsonl ... > judgments.jsonl
    (copies the judgment of an identical (corpus, query, kind, item) from the old
     file; the rest get "judgment": null to be filled in)
"""
import argparse
import hashlib
import json
import sys
import time
import urllib.parse
import urllib.request


def search(base, query, tag, timeout):
    qs = urllib.parse.urlencode({"q": query, "format": "json", "tags": tag})
    with urllib.request.urlopen(f"{base}/api/v1/search?{qs}", timeout=timeout) as r:
        return json.load(r)


def answer(base, query, tag, timeout, retries):
    """The answer, asked again (up to retries times) while a phase is degraded: a
    loaded machine times out the expansion phase, which then shows no related
    entities at all; that measures the load, not the feature."""
    for attempt in range(retries + 1):
        ans = search(base, query, tag, timeout)
        if not ans.get("degraded"):
            return ans
        time.sleep(0.5 * (attempt + 1))
    print(f"degraded after {retries + 1} tries: {query!r} {ans.get('degraded')}", file=sys.stderr)
    return ans


def items_of(ds_path, base, timeout, retries):
    d = json.load(open(ds_path))
    tag = d["crawl"]["tags"][0]
    for q in d["queries"]:
        ans = answer(base, q["query"], tag, timeout, retries)
        titles = [r.get("title", "") for r in ans.get("results", [])[:5]]
        common = {"corpus": d["name"], "tag": tag, "query_id": q["id"], "query": q["query"], "top_titles": titles,
                  "degraded": ans.get("degraded") or []}
        for i, s in enumerate(ans.get("suggested_queries") or []):
            yield dict(common, kind="suggestion", item=s, rank=i + 1, entity_type=None, source=None)
        for i, e in enumerate(ans.get("related_entities") or []):
            yield dict(common, kind="related", item=e.get("name", ""), rank=i + 1,
                       entity_type=e.get("type"), source=e.get("source"))


def key(r):
    return (r["corpus"], r["query_id"], r["kind"], r["item"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("datasets", nargs="+")
    ap.add_argument("--search", default="http://127.0.0.1:8080")
    ap.add_argument("--sample", type=int, default=0, help="at most N items per corpus and kind")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--carry", help="a judgments file whose judgments are copied to identical items")
    ap.add_argument("--input", help="sample from an earlier full collection instead of asking the service")
    ap.add_argument("--retries", type=int, default=8, help="ask again while the answer is degraded")
    args = ap.parse_args()
    rows = []
    if args.input:
        names = {json.load(open(ds))["name"] for ds in args.datasets}
        rows = [r for r in map(json.loads, filter(str.strip, open(args.input))) if r["corpus"] in names]
    else:
        for ds in args.datasets:
            rows.extend(items_of(ds, args.search.rstrip("/"), args.timeout, args.retries))
    if args.sample:
        groups = {}
        for r in rows:
            groups.setdefault((r["corpus"], r["kind"]), []).append(r)
        rows = []
        for g in groups.values():
            # The first N by a hash of (seed, item key): the same items are drawn
            # again when the service shows the same items, whatever else changed.
            keep = sorted(g, key=lambda r: hashlib.sha256(f"{args.seed}|{key(r)}".encode()).hexdigest())[:args.sample]
            keep = {id(r) for r in keep}
            rows.extend(r for r in g if id(r) in keep)
    old = {}
    if args.carry:
        for line in open(args.carry):
            if line.strip():
                r = json.loads(line)
                old[key(r)] = (r.get("judgment"), r.get("reason"))
    for r in rows:
        if args.carry:
            r["judgment"], r["reason"] = old.get(key(r), (None, None))
        print(json.dumps(r, ensure_ascii=False))
    counts = {}
    for r in rows:
        counts[(r["corpus"], r["kind"])] = counts.get((r["corpus"], r["kind"]), 0) + 1
    for (c, k), n in sorted(counts.items()):
        print(f"{c} {k}: {n} items", file=sys.stderr)


if __name__ == "__main__":
    main()
