#!/usr/bin/env python3
"""Standard BM25 peer for cmd/kgeval: tantivy over the stored chunks.

Evaluation only (never a product dependency): `make eval` installs tantivy from PyPI
into a venv under $KGS_STATE/eval/venv and cmd/kgeval runs this script as a child
process.

    eval-tantivy.py CORPUS.jsonl

CORPUS.jsonl has one stored chunk per line: {"id": "...", "title": "...",
"headings": ["..."], "text": "..."}. The script indexes every chunk as one tantivy
document with three text fields, title, headings and text, each with tantivy's
"en_stem" tokenizer (split on non-alphanumerics, lower-case, English Snowball stem;
no stop-word list, BM25 k1 1.2, b 0.75, per-field length normalisation) and no field
boosts, then prints "ready N" (N indexed chunks).

It then reads requests from stdin, one JSON object per line, {"q": "...", "n": 1000},
and answers each on one line with the n best chunks: {"hits": [["id", score], ...]}.
The query is what the user typed: non-alphanumeric characters become spaces (the
tokenizer splits on them in the documents too; this also keeps tantivy's query
syntax, such as quotes, +, -, AND and field:, out of it), and every remaining term
is a SHOULD clause on each of the three fields, scores summed (no coordination
factor) — tantivy's QueryParser over several default fields.
"""
import json
import re
import sys

import tantivy

FIELDS = ["title", "headings", "text"]
NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def build(path):
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("id", stored=True, tokenizer_name="raw")
    for f in FIELDS:
        sb.add_text_field(f, stored=False, tokenizer_name="en_stem")
    index = tantivy.Index(sb.build())
    writer = index.writer(heap_size=200_000_000, num_threads=1)
    n = 0
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            c = json.loads(line)
            writer.add_document(tantivy.Document(
                id=c["id"], title=c.get("title", ""),
                headings=c.get("headings") or [], text=c.get("text", "")))
            n += 1
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index, n


def answer(index, searcher, req):
    text = NON_WORD.sub(" ", req.get("q", "")).lower().strip()
    if not text:
        return []
    query = index.parse_query(text, FIELDS)
    n = max(1, min(int(req.get("n", 1000)), 10000))
    return [[searcher.doc(addr)["id"][0], score] for score, addr in searcher.search(query, n).hits]


def main():
    if len(sys.argv) != 2:
        print("usage: eval-tantivy.py CORPUS.jsonl", file=sys.stderr)
        return 2
    index, n = build(sys.argv[1])
    searcher = index.searcher()
    print(f"ready {n}", flush=True)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            hits = answer(index, searcher, json.loads(line))
            print(json.dumps({"hits": hits}), flush=True)
        except Exception as e:  # one bad request must not end the session
            print(json.dumps({"error": str(e)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
