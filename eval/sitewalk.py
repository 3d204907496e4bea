#!/usr/bin/env python3
"""Breadth-first walk over an unpacked documentation site, as the crawler would crawl it.

Reads a dataset's crawl spec (queries.json: crawl.start, max_depth, max_pages,
exclude) and walks the HTML files under a local folder (the site root), following
<a href> and <area href> links the way the crawler does: fragments dropped, links
outside the root ignored, `rel=nofollow` not followed, the exclude patterns
(regular expressions) matched against the absolute URL under a stand-in root
(http://127.0.0.1:PORT/, the address the site is served on, from site.root).
It prints the number of pages reached within max_depth (capped at max_pages), and
with --check, verifies that every judged page of the dataset exists and is reached.

Usage:
  eval/sitewalk.py DATASET HTML_ROOT [--list] [--check] [--sections]

Exit status: 0 fine, 1 when --check finds a judged page missing or out of the crawl.
"""
import argparse
import collections
import html.parser
import json
import os
import posixpath
import re
import sys
import urllib.parse


class Links(html.parser.HTMLParser):
    """Collects href of <a> and <area>, skipping rel=nofollow."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.hrefs = []
        self.base = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "base" and a.get("href") and self.base is None:
            self.base = a["href"].strip()
        if tag not in ("a", "area"):
            return
        href = (a.get("href") or "").strip()
        if not href or "nofollow" in (a.get("rel") or "").lower().split():
            return
        self.hrefs.append(href)


def links_of(path, url):
    """Absolute URLs (no fragment) linked from the page at url, stored at path."""
    p = Links()
    with open(path, encoding="utf-8", errors="replace") as f:
        p.feed(f.read())
    base = urllib.parse.urljoin(url, p.base) if p.base else url
    out = []
    for h in p.hrefs:
        u = urllib.parse.urljoin(base, h)
        u, _ = urllib.parse.urldefrag(u)
        out.append(u)
    return out


def page_key(rel):
    """The judgments' key of a path under the root: a directory ("tutorial/",
    or the root itself) means its index.html, as cmd/kgeval's PageKey reads it."""
    return rel + "index.html" if rel == "" or rel.endswith("/") else rel


def local_file(root_dir, root_url, u):
    """The file behind URL u, or None when u is outside the site or missing."""
    if not u.startswith(root_url):
        return None
    rel = urllib.parse.unquote(urllib.parse.urlsplit(u).path)[len(urllib.parse.urlsplit(root_url).path):]
    rel = posixpath.normpath("/" + rel).lstrip("/") if rel else ""
    if rel == "" or u.endswith("/"):
        rel = posixpath.join(rel, "index.html") if rel else "index.html"
    p = os.path.join(root_dir, rel)
    return p if os.path.isfile(p) else None


def walk(spec, root_dir, root_url):
    """Pages reached breadth-first: list of (depth, relative path)."""
    exclude = [re.compile(x) for x in spec.get("exclude", [])]
    start = urllib.parse.urljoin(root_url, spec["start"])
    seen = {start}
    queue = collections.deque([(start, 0)])
    pages = []
    while queue and len(pages) < spec["max_pages"]:
        u, d = queue.popleft()
        path = local_file(root_dir, root_url, u)
        if path is None:
            rel = urllib.parse.unquote(urllib.parse.urlsplit(u).path)[len(urllib.parse.urlsplit(root_url).path):]
            if rel and not u.endswith("/") and os.path.isfile(os.path.join(root_dir, rel, "index.html")):
                # A directory without its slash: the static server redirects
                # to dir/, and the crawler queues the target at the same depth.
                v = u + "/"
                if v not in seen:
                    seen.add(v)
                    queue.appendleft((v, d))
            continue  # a 404: the crawler records a failure, not a page
        pages.append((d, page_key(u[len(root_url):])))
        if d >= spec["max_depth"] or not path.endswith((".html", ".htm")):
            continue
        for v in links_of(path, u):
            if v in seen or not v.startswith(root_url):
                continue
            seen.add(v)
            if any(x.search(v) for x in exclude):
                continue
            queue.append((v, d + 1))
    return pages


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("html_root")
    ap.add_argument("--list", action="store_true", help="print every page with its depth")
    ap.add_argument("--sections", action="store_true", help="pages per top-level folder")
    ap.add_argument("--check", action="store_true", help="judged pages exist and are crawled")
    args = ap.parse_args()
    d = json.load(open(args.dataset))
    root_url = d.get("site", {}).get("root", "http://127.0.0.1:8000/")
    pages = walk(d["crawl"], args.html_root, root_url)
    if args.list:
        for depth, p in pages:
            print(depth, p)
    if args.sections:
        c = collections.Counter(p.split("/")[0] if "/" in p else "(top)" for _, p in pages)
        for k, v in sorted(c.items(), key=lambda kv: -kv[1]):
            print(f"{v:5d} {k}")
    print(f"{len(pages)} pages within max_depth {d['crawl']['max_depth']} (max_pages {d['crawl']['max_pages']}, "
          f"expected_pages {d['crawl'].get('expected_pages')})")
    if not args.check:
        return 0
    crawled = {p for _, p in pages}
    bad = 0
    for q in d["queries"]:
        for p in q["relevant"]:
            f = os.path.join(args.html_root, p)
            if not os.path.isfile(f):
                print(f"{q['id']}: {p} does not exist", file=sys.stderr)
                bad += 1
            elif p not in crawled:
                print(f"{q['id']}: {p} is not reached by the crawl", file=sys.stderr)
                bad += 1
    n = sum(len(q["relevant"]) for q in d["queries"])
    print(f"{len(d['queries'])} queries, {n} judged pages, {bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
