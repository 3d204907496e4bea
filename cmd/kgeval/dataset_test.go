package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	good := func() *Dataset {
		return &Dataset{Name: "t", Queries: []Query{
			{ID: "q1", Query: "read a file", Relevant: Judgments{"tutorial/inputoutput.html": 2, "library/io.html": 1}},
			{ID: "q2", Query: "parse json", Relevant: Judgments{"library/json.html": 2}},
		}}
	}
	if err := good().Validate(); err != nil {
		t.Fatalf("valid dataset: %v", err)
	}
	tests := []struct {
		name   string
		change func(d *Dataset)
		want   string
	}{
		{"no queries", func(d *Dataset) { d.Queries = nil }, "no queries"},
		{"empty id", func(d *Dataset) { d.Queries[1].ID = "" }, "id is empty"},
		{"duplicate id", func(d *Dataset) { d.Queries[1].ID = "q1" }, "id is used twice"},
		{"empty query", func(d *Dataset) { d.Queries[0].Query = "  " }, "query is empty"},
		{"duplicate text", func(d *Dataset) { d.Queries[1].Query = "Read a file" }, "same query text as q1"},
		{"no judgments", func(d *Dataset) { d.Queries[1].Relevant = nil }, "no relevant page judged"},
		{"no grade 2", func(d *Dataset) { d.Queries[1].Relevant = Judgments{"library/json.html": 1} }, "no page has grade 2"},
		{"grade too high", func(d *Dataset) { d.Queries[1].Relevant["library/json.html"] = 3 }, "grade of library/json.html is 3"},
		{"grade zero", func(d *Dataset) { d.Queries[0].Relevant["library/io.html"] = 0 }, "grade of library/io.html is 0"},
		{"absolute url", func(d *Dataset) { d.Queries[1].Relevant["http://h/library/os.html"] = 1 }, "must be a path relative to the site root"},
		{"fragment", func(d *Dataset) { d.Queries[1].Relevant["library/os.html#os.walk"] = 1 }, "must be a path relative"},
		{"leading slash", func(d *Dataset) { d.Queries[1].Relevant["/library/os.html"] = 1 }, "must be a path relative"},
		{"parent path", func(d *Dataset) { d.Queries[1].Relevant["library/../os.html"] = 1 }, "must be a path relative"},
		{"bad exclude", func(d *Dataset) { d.Crawl.Exclude = []string{"(unclosed"} }, `crawl.exclude "(unclosed"`},
		{"negative max_pages", func(d *Dataset) { d.Crawl.MaxPages = -1 }, "must not be negative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := good()
			tc.change(d)
			err := d.Validate()
			if err == nil {
				t.Fatalf("got no error, want one containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestLoadDatasetErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"queries": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct{ path, want string }{
		"missing file": {filepath.Join(dir, "nope.json"), "read dataset"},
		"broken json":  {bad, "parse dataset"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := LoadDataset(tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// The shipped dataset must load, hold at least 40 queries, and name its crawl.
func TestPydocsDataset(t *testing.T) {
	d, err := LoadDataset("../../eval/pydocs/queries.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Queries) < 40 {
		t.Errorf("got %d queries, want at least 40", len(d.Queries))
	}
	if d.Site.Root == "" || d.Crawl.Start == "" || d.Crawl.MaxPages < d.Crawl.ExpectedPages {
		t.Errorf("crawl spec incomplete: root %q start %q max_pages %d expected_pages %d", d.Site.Root, d.Crawl.Start, d.Crawl.MaxPages, d.Crawl.ExpectedPages)
	}
}

// Every shipped dataset (eval/*/queries.json) must load, name a complete crawl
// and a site script that exists, give each corpus (site root) its own tags, and
// key every judged page the way PageKey reduces a result URL, so that a
// judgment can match: a page served under a directory URL (MkDocs'
// api-guide/serializers/) is judged as its index.html.
func TestShippedDatasets(t *testing.T) {
	paths, err := filepath.Glob("../../eval/*/queries.json")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	tagRoot := map[string]string{}
	for _, path := range paths {
		d, err := LoadDataset(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		names[d.Name] = true
		if len(d.Queries) < 40 {
			t.Errorf("%s: %d queries, want at least 40", path, len(d.Queries))
		}
		c := d.Crawl
		if d.Site.Root == "" || c.Start == "" || c.MaxDepth < 1 || len(c.Tags) == 0 || c.ExpectedPages < 1 || c.MaxPages < c.ExpectedPages {
			t.Errorf("%s: crawl spec incomplete: root %q start %q max_depth %d tags %v max_pages %d expected_pages %d",
				path, d.Site.Root, c.Start, c.MaxDepth, c.Tags, c.MaxPages, c.ExpectedPages)
		}
		if d.Site.Script != "" {
			if _, err := os.Stat(filepath.Join("../..", d.Site.Script)); err != nil {
				t.Errorf("%s: site.script: %v", path, err)
			}
		}
		for _, tag := range c.Tags {
			if other, ok := tagRoot[tag]; ok && other != d.Site.Root {
				t.Errorf("%s: tag %q is also the tag of %s", path, tag, other)
			}
			tagRoot[tag] = d.Site.Root
		}
		root, err := siteRoot("", d.Site.Root)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		for _, q := range d.Queries {
			for page := range q.Relevant {
				urls := []string{d.Site.Root + page}
				if page == "index.html" || strings.HasSuffix(page, "/index.html") {
					urls = append(urls, d.Site.Root+strings.TrimSuffix(page, "index.html"))
				}
				for _, u := range urls {
					if got, err := PageKey(u, root); err != nil || got != page {
						t.Errorf("%s %s: PageKey(%s) = %q, %v; want the judged key %q", path, q.ID, u, got, err, page)
					}
				}
			}
		}
	}
	// The first MkDocs site, whose pages are only linked as directories.
	if !names["drf"] {
		t.Errorf("no dataset named drf among %d (eval/drf/queries.json)", len(paths))
	}
}
