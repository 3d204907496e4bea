package extract

import (
	"strings"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	"",
	"PostgreSQL uses a write-ahead log (WAL).",
	"WAL (Write-Ahead Log) and `os.path.join()` in Python 3.11; $ pip install -r requirements.txt",
	"```\n$ git commit -m x\n```",
	"`unterminated code",
	"It depends on Flask. It uses Redis, Kafka and ZooKeeper, which runs on the JVM.",
	"Ünïcödé — 数据库 Redis — \xff\xfe broken utf8",
	"((((((( ))))) ``` ` ` PEP 8 CVE-2021-1 RFC",
	"https://example.org/a?b=c#d /etc/hosts ./x ~/.bashrc .github/workflows",
	"C++ C# F# .NET Node.js A* search B+ tree HTTP/2 TCP/IP",
}

func FuzzDocument(f *testing.F) {
	x, err := New()
	if err != nil {
		f.Fatal(err)
	}
	for i, s := range fuzzSeeds {
		f.Add(s, "x.py", i, 3*i+4)
	}
	f.Fuzz(func(t *testing.T, text, span string, a, b int) {
		doc := Document{ID: "d", Title: text, Headings: []string{text},
			Chunks: []Chunk{{ID: "c1", Text: text, CodeSpans: []string{span},
				CodeRanges: []Span{{a, b}, {b, b + 3}}, CodeBlocks: []Span{{a / 2, b + a}}}, {ID: "c2", Text: span}},
			Links: []Link{{URL: "u", Anchor: text}}}
		res := x.Document(doc)
		texts := map[string]string{"c1": text, "c2": span}
		ents := map[string]bool{}
		for _, e := range res.Entities {
			if e.ID == "" || !x.HasType(e.Type) {
				t.Fatalf("entity %+v: empty id or unknown type", e)
			}
			ents[e.ID] = true
		}
		for _, m := range res.Mentions {
			if !ents[m.EntityID] {
				t.Fatalf("mention of %q without an entity", m.EntityID)
			}
			tx := texts[m.ChunkID]
			for _, o := range m.Offsets {
				if o.Start < 0 || o.End > len(tx) || o.Start >= o.End {
					t.Fatalf("offset %+v out of [0,%d]", o, len(tx))
				}
				if utf8.ValidString(tx) && !utf8.ValidString(tx[o.Start:o.End]) {
					t.Fatalf("offset %+v splits a character of %q", o, tx)
				}
			}
		}
		for _, r := range res.Relations {
			if !ents[r.From] || !ents[r.To] {
				t.Fatalf("relation %+v between unknown entities", r)
			}
			if r.Confidence < 0 || r.Confidence > 1 {
				t.Fatalf("relation %+v: confidence out of [0,1]", r)
			}
			for _, ev := range r.Evidence {
				tx := texts[ev.ChunkID]
				if ev.Start < 0 || ev.End > len(tx) || ev.Start > ev.End {
					t.Fatalf("evidence %+v out of [0,%d]", ev, len(tx))
				}
			}
		}
	})
}

func FuzzQuery(f *testing.F) {
	x, err := New()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add(strings.Repeat("postgres ", 1000))
	f.Fuzz(func(t *testing.T, q string) {
		for _, e := range x.Query(q) {
			if e.Start < 0 || e.End > len(q) || e.Start >= e.End || q[e.Start:e.End] != e.Text {
				t.Fatalf("entity %+v: offsets do not match the query", e)
			}
			if e.ID == "" || e.Confidence <= 0 || e.Confidence > 1 || !x.HasType(e.Type) {
				t.Fatalf("entity %+v: bad id, confidence or type", e)
			}
		}
	})
}
