package ranker

import (
	"errors"
	"math"
	"testing"
)

func TestPageGenerated(t *testing.T) {
	for _, c := range []struct {
		url, title string
		want       Generated
	}{
		// Source listings: Sphinx viewcode (path, and the heading some themes make the
		// title), rustdoc, Doxygen, javadoc.
		{"http://d/_modules/django/views/generic/dates.html", "django.views.generic.dates — Django 3.2.25 documentation", SourceListing},
		{"http://d/en/latest/_modules/index.html", "Overview: module code", SourceListing},
		{"http://d/x.html", "Source code for celery.app.base", SourceListing},
		{"http://d/src/serde/de/mod.rs.html", "mod.rs - source", SourceListing},
		{"http://d/foo_8c_source.html", "libfoo: src/foo.c Source File", SourceListing},
		{"http://d/api/src-html/org/foo/Bar.html", "Source code", SourceListing},
		// Generated indexes and whole-site tables of contents.
		{"http://d/genindex.html", "Index — Python 3.11.2 documentation", GeneratedIndex},
		{"http://d/genindex-all.html", "Index — Python 3.11.2 documentation", GeneratedIndex},
		{"http://d/genindex-Symbols.html", "Index", GeneratedIndex},
		{"http://d/py-modindex.html", "Python Module Index — Django 3.2.25 documentation", GeneratedIndex},
		{"http://d/Concept-Index.html", "Concept Index (GNU Octave (version 7.3.0))", GeneratedIndex},
		{"http://d/Command-Index.html", "Command Index (GNU Emacs Manual)", GeneratedIndex},
		{"http://d/Key-Index.html", "Key Index (GNU Emacs Manual)", GeneratedIndex},
		{"http://d/Data-Type-Index.html", "Data Type Index (GNU C Library)", GeneratedIndex},
		{"http://d/serde/all.html", "List of all items in this crate", GeneratedIndex},
		{"http://d/bookindex.html", "Index", GeneratedIndex},
		{"http://d/api/index-all.html", "I-Index", GeneratedIndex},
		{"http://d/api/index-files/index-1.html", "A-Index (Java Platform SE 8 )", GeneratedIndex},
		{"http://d/html/my__file_8hpp_source.html", "libfoo: include/my_file.hpp Source File", SourceListing},
		{"http://d/html/foo_8c_source.htm", "", SourceListing},
		{"http://d/contents.html", "Python Documentation contents — Python 3.11.2 documentation", GeneratedIndex},
		{"http://d/contents.html", "Django documentation contents — Django 3.2.25 documentation", GeneratedIndex},
		{"http://d/toc.html", "Table of Contents", GeneratedIndex},
		// Pages people wrote, whose title or path names an index, a source or contents.
		{"http://d/Index-Expressions.html", "Index Expressions (GNU Octave (version 7.3.0))", NotGenerated},
		{"http://d/Key-Bindings.html", "Key Bindings (GNU Emacs Manual)", NotGenerated},
		{"http://d/type-checking.html", "Type checking index signatures — mypy documentation", NotGenerated},
		{"http://d/all-items.html", "A list of all items you can craft", NotGenerated},
		{"http://d/Indexing-Cell-Arrays.html", "Indexing Cell Arrays (GNU Octave)", NotGenerated},
		{"http://d/indexes-partial.html", "11.8. Partial Indexes", NotGenerated},
		{"http://d/sql-createindex.html", "CREATE INDEX", NotGenerated},
		{"http://d/library/asyncio-api-index.html", "High-level API Index — Python 3.11.2 documentation", NotGenerated},
		{"http://d/ref/contrib/admin/index.html", "The Django admin site — Django 3.2.25 documentation", NotGenerated},
		{"http://d/index.html", "3.11.2 Documentation", NotGenerated},
		{"http://d/topics/db/search.html", "Search — Django 3.2.25 documentation", NotGenerated},
		{"http://d/howto/custom-file-storage.html", "How to write a custom storage class", NotGenerated},
		{"http://d/ch01-02-hello-world.html", "Hello, World! - The Rust Programming Language", NotGenerated},
		{"http://d/src/guide.html", "Building from source", NotGenerated},
		{"http://d/install.html", "Installing from a source file", NotGenerated},
		{"http://d/library/inspect.html", "inspect — Inspect live objects", NotGenerated},
		{"http://d/tutorial/modules.html", "6. Modules — Python 3.11.2 documentation", NotGenerated},
		{"http://d/howto/custom_data_source.html", "Writing a custom data source — Foo 2.1 documentation", NotGenerated},
		{"http://d/guide/event_source.html", "", NotGenerated},
		{"http://d/content-management/toc/", "Table of contents | Hugo", NotGenerated},
		{"http://d/extensions/toc.html", "Table of Contents — Python-Markdown 3.5.2 documentation", NotGenerated},
		{"http://d/asciidoc/latest/toc/", "Table of Contents (ToC) | Asciidoctor Docs", NotGenerated},
		{"%zz", "", NotGenerated},
	} {
		if got := PageGenerated(c.url, c.title); got != c.want {
			t.Errorf("PageGenerated(%q, %q) = %q, want %q", c.url, c.title, got, c.want)
		}
	}
}

func TestAsksForSource(t *testing.T) {
	for q, want := range map[string]bool{
		"source code of the login view":                true,
		"how is get_object_or_404 implemented":         true,
		"where is the Signal class implemented":        true,
		"show me the code of the Signal class":         true,
		"what happens under the hood when i call save": true,
		// Documentation answers these in prose.
		"how are models defined?":                  false,
		"where are settings defined":               false,
		"default implementation of a trait method": false,
		"a single source of truth for settings":    false,
		"how do i implement a custom auth backend": false,
		"read a file line by line":                 false,
		"define a model field":                     false,
		"open source license":                      false,
	} {
		if got := AsksForSource(q); got != want {
			t.Errorf("AsksForSource(%q) = %v, want %v", q, got, want)
		}
	}
}

func TestRankGeneratedFactors(t *testing.T) {
	r := newTestRanker(t, Options{})
	cands := []Candidate{
		{ChunkID: "s", DocumentID: "source", URL: "http://d/_modules/x.html", Title: "x",
			VectorSimilarity: 0.80, HasVector: true, BM25Score: 10, HasBM25: true, Generated: SourceListing},
		{ChunkID: "i", DocumentID: "index", URL: "http://d/genindex.html", Title: "Index",
			VectorSimilarity: 0.79, HasVector: true, BM25Score: 9.9, HasBM25: true, Generated: GeneratedIndex},
		{ChunkID: "a", DocumentID: "answer", URL: "http://d/topics/x.html", Title: "x",
			VectorSimilarity: 0.76, HasVector: true, BM25Score: 9.5, HasBM25: true},
		{ChunkID: "w", DocumentID: "weak", URL: "http://d/topics/y.html", Title: "y",
			VectorSimilarity: 0.20, HasVector: true, BM25Score: 1, HasBM25: true},
	}
	w := Weights{Vector: 0.6, BM25: 0.4}
	order := func(req Request) string {
		t.Helper()
		req.Weights, req.Query = w, Query{Text: "x"}
		out, err := r.Rank(req, cands)
		if err != nil {
			t.Fatal(err)
		}
		s := ""
		for _, o := range out {
			s += o.Candidate.ChunkID
		}
		return s
	}
	for _, c := range []struct {
		req  Request
		want string
	}{
		{Request{}, "siaw"},
		{Request{SourceFactor: 1, IndexFactor: 1}, "siaw"},
		{Request{SourceFactor: 0.7}, "iasw"},
		{Request{IndexFactor: 0.7}, "saiw"},
		{Request{SourceFactor: 0.7, IndexFactor: 0.7}, "asiw"},
		// A factor applies only to its own kind: history does not touch these pages.
		{Request{HistoryFactor: 0.5}, "siaw"},
	} {
		if got := order(c.req); got != c.want {
			t.Errorf("%+v: order %s, want %s", c.req, got, c.want)
		}
	}
	out, err := r.Rank(Request{Query: Query{Text: "x"}, Weights: w, SourceFactor: 0.7}, cands)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out {
		if o.Candidate.ChunkID == "s" {
			plain := o.Breakdown.Vector*0.6 + o.Breakdown.BM25*0.4
			if math.Abs(o.Score-0.7*plain) > 1e-9 {
				t.Errorf("source listing's score %g, want 0.7 × %g", o.Score, plain)
			}
		}
	}
	for _, req := range []Request{{SourceFactor: -0.1}, {IndexFactor: 1.5}, {SourceFactor: math.NaN()}} {
		req.Weights = w
		if _, err := r.Rank(req, cands); !errors.Is(err, ErrBadRequest) {
			t.Errorf("%+v: err %v, want ErrBadRequest", req, err)
		}
	}
}
