#!/usr/bin/env python3
"""Fit the related-entity confidence model of services/search/internal/pipeline/confidence.go.

Inputs: a features file (query id -> the related entities a search build shows, each
with the "features" vector that build attaches; see README "Eighth round" for how it
was collected) and judgment files (collect.py lines with "judgment"). The model is
fitted on related entities; a suggestion is a related entity's name, and the
suggestion cut reads the same model's probability for that entity, so the
cross-validation reports both.

The model is L2-regularised logistic regression fitted by Newton's method (no
dependencies). Grouped cross-validation (the folds split queries, never the items of
one query) estimates, per corpus, the precision and the share of items kept at each
threshold; --weights prints the fit on all the data as Go source.

    train_related.py FEATURES JUDGMENTS... [--l2 1.0] [--split do,po] [--weights]
"""
import argparse, json, math, random, sys

def load(features, judgment_files, kind="related"):
    feats = json.load(open(features))
    X, y, groups, corpus = [], [], [], []
    seen = set()
    for f in judgment_files:
        for line in open(f):
            r = json.loads(line)
            if r.get("kind") != kind or r.get("judgment") not in ("useful", "not_useful"):
                continue
            key = (r["query_id"], r["item"])
            if key in seen:
                continue
            answer = feats.get(r["query_id"], {})
            shown = {e["name"]: e for e in answer.get("related", [])}
            e = shown.get(r["item"])
            if kind == "suggestion" and r["item"] not in answer.get("suggested", []):
                e = None
            if e is None or "features" not in e:
                continue  # not shown by the build the features come from
            seen.add(key)
            X.append([float(v) for v in e["features"]])
            y.append(1.0 if r["judgment"] == "useful" else 0.0)
            groups.append(r["query_id"])
            corpus.append(r["corpus"].replace("pydocs-holdout", "pydocs"))
    return X, y, groups, corpus

def solve(A, b):
    n = len(b)
    M = [row[:] + [b[i]] for i, row in enumerate(A)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(M[r][c]))
        M[c], M[p] = M[p], M[c]
        piv = M[c][c]
        if abs(piv) < 1e-12:
            continue
        for r in range(n):
            if r != c and M[r][c] != 0:
                f = M[r][c] / piv
                for k in range(c, n + 1):
                    M[r][k] -= f * M[c][k]
    return [M[i][n] / M[i][i] if abs(M[i][i]) > 1e-12 else 0.0 for i in range(n)]

def fit(X, y, l2):
    d = len(X[0])
    w = [0.0] * d
    for _ in range(50):
        g = [0.0] * d
        H = [[0.0] * d for _ in range(d)]
        for x, t in zip(X, y):
            z = sum(a * b for a, b in zip(w, x))
            p = 1 / (1 + math.exp(-max(-30, min(30, z))))
            s = p * (1 - p)
            for i in range(d):
                if x[i] == 0:
                    continue
                g[i] += (p - t) * x[i]
                for j in range(d):
                    if x[j]:
                        H[i][j] += s * x[i] * x[j]
        for i in range(1, d):  # the bias (feature 0) is not regularised
            g[i] += l2 * w[i]
            H[i][i] += l2
        H[0][0] += 1e-9
        step = solve(H, g)
        w = [a - b for a, b in zip(w, step)]
        if max(abs(s) for s in step) < 1e-8:
            break
    return w

def prob(w, x):
    z = sum(a * b for a, b in zip(w, x))
    return 1 / (1 + math.exp(-max(-30, min(30, z))))

def cv_table(title, p, y, groups, corpus, parts):
    print(title)
    for th in (0.0, 0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9):
        cells = []
        for (label, inpart), c in ((pt, c) for pt in parts for c in sorted(set(corpus))):
            idx = [i for i in range(len(y)) if corpus[i] == c and inpart(groups[i])]
            kept = [i for i in idx if p[i] >= th]
            prec = sum(y[i] for i in kept) / len(kept) if kept else float("nan")
            cells.append("%s %s %.2f (%d/%d)" % (label, c, prec, len(kept), len(idx)))
        print("%.2f | %s" % (th, " | ".join(cells)))

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("features")
    ap.add_argument("judgments", nargs="+")
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--weights", action="store_true")
    ap.add_argument("--split", default="", help="comma-separated query-id prefixes reported apart (e.g. do,po)")
    args = ap.parse_args()
    X, y, groups, corpus = load(args.features, args.judgments, "related")
    SX, sy, sgroups, scorpus = load(args.features, args.judgments, "suggestion")
    qs = sorted(set(groups) | set(sgroups))
    random.Random(14).shuffle(qs)
    fold = {q: i % args.folds for i, q in enumerate(qs)}
    p, sp = [0.0] * len(y), [0.0] * len(sy)
    for k in range(args.folds):
        tr = [i for i in range(len(y)) if fold[groups[i]] != k]
        w = fit([X[i] for i in tr], [y[i] for i in tr], args.l2)
        for i in range(len(y)):
            if fold[groups[i]] == k:
                p[i] = prob(w, X[i])
        for i in range(len(sy)):
            if fold[sgroups[i]] == k:
                sp[i] = prob(w, SX[i])
    print("related entities %d (useful %.2f), suggestions %d (useful %.2f), queries %d" % (
        len(y), sum(y) / len(y), len(sy), sum(sy) / max(1, len(sy)), len(qs)))
    prefixes = tuple(x for x in args.split.split(",") if x)
    parts = [("all", lambda q: True)]
    if prefixes:
        parts = [("ids " + args.split, lambda q: q.startswith(prefixes)), ("other ids", lambda q: not q.startswith(prefixes))]
    cv_table("related entities, cross-validated: threshold | precision (kept / items)", p, y, groups, corpus, parts)
    cv_table("suggestions (the suggested entity's probability), cross-validated", sp, sy, sgroups, scorpus, parts)
    if args.weights:
        w = fit(X, y, args.l2)
        print("var confidenceWeights = [numFeatures]float64{" + ", ".join("%.4f" % v for v in w) + "}")
    return 0

if __name__ == "__main__":
    sys.exit(main())
