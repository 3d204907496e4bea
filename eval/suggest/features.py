#!/usr/bin/env python3
"""Collect the related-entity confidence features a running search service computes.

Asks every query of the given datasets with explain=true (and the dataset's crawl tag)
and writes one JSON object: query id -> {"related": the entities the selection's rules
kept, each with "name", "confidence", "shown" and "features", "feature_names", and
"suggested": the suggestions shown}. train_related.py reads it. Run the service with
SEARCH_RELATED_MIN_CONFIDENCE=0 to have every kept entity shown (and so collected by
collect.py for judging).

    features.py [--search http://127.0.0.1:8080] DATASET... > features.json
"""
import argparse, json, sys, urllib.parse, urllib.request

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--search", default="http://127.0.0.1:8080")
    ap.add_argument("datasets", nargs="+")
    args = ap.parse_args()
    out = {}
    for f in args.datasets:
        ds = json.load(open(f))
        tags = ds.get("tags") or ds.get("crawl", {}).get("tags") or []
        for q in ds["queries"]:
            params = {"q": q["query"], "format": "json", "explain": "true"}
            if tags:
                params["tags"] = tags[0]
            r = json.load(urllib.request.urlopen(args.search + "/api/v1/search?" + urllib.parse.urlencode(params), timeout=60))
            ex = r.get("explain") or {}
            out[q["id"]] = {"related": ex.get("related") or [], "feature_names": ex.get("related_features") or [],
                            "suggested": r.get("suggested_queries") or [], "degraded": r.get("degraded") or []}
    json.dump(out, sys.stdout)
    return 0

if __name__ == "__main__":
    sys.exit(main())
