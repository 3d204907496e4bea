package pipeline_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/kgsearch/kgsearch/services/search/internal/pipeline"
	"github.com/kgsearch/kgsearch/services/search/internal/searchtest"
)

// The relevance tests are data: testdata/relevance/<dataset>/site is a small website
// served on an httptest server, queries.json lists plain-language queries with the
// page that must rank first or the pages that must appear in the first results.
// The crawler's engine lives in services/crawler/internal, which this service cannot
// import, so the test fetches the site with a small breadth-first crawler of its own
// (same host, <a href> links), cuts each page into one chunk per <h2> section and
// indexes the chunks through the real store, the real indexer and Bleve, and the fake
// kg service fed by pkg/extract; the searches go through the HTTP API.

type relevanceQueries struct {
	Queries []struct {
		Q      string   `json:"q"`
		Top    string   `json:"top"`
		Within int      `json:"within"`
		Expect []string `json:"expect"`
		Why    string   `json:"why"`
	} `json:"queries"`
}

func TestRelevanceDatasets(t *testing.T) {
	dirs, err := filepath.Glob("../../testdata/relevance/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no relevance datasets: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			site := httptest.NewServer(http.FileServer(http.Dir(filepath.Join(dir, "site"))))
			defer site.Close()
			e := searchtest.New(t, searchtest.Options{})
			docs := crawl(t, site.URL+"/index.html")
			if len(docs) < 5 {
				t.Fatalf("crawled %d pages, want the whole site", len(docs))
			}
			e.Add(t, docs...)

			raw, err := os.ReadFile(filepath.Join(dir, "queries.json"))
			if err != nil {
				t.Fatal(err)
			}
			var qs relevanceQueries
			if err := json.Unmarshal(raw, &qs); err != nil {
				t.Fatalf("queries.json: %v", err)
			}
			for _, q := range qs.Queries {
				t.Run(q.Q, func(t *testing.T) {
					got := searchPaths(t, e, site.URL, q.Q)
					if q.Top != "" && (len(got) == 0 || got[0] != q.Top) {
						t.Errorf("first result: got %v, want %s first", got, q.Top)
					}
					if q.Within > 0 {
						top := got[:min(q.Within, len(got))]
						for _, want := range q.Expect {
							if !contains(top, want) {
								t.Errorf("first %d results %v lack %s", q.Within, top, want)
							}
						}
					}
				})
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func searchPaths(t *testing.T, e *searchtest.Env, base, q string) []string {
	t.Helper()
	resp, err := http.Get(e.HTTP.URL + "/api/v1/search?format=json&k=5&q=" + url.QueryEscape(q))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("search %q: %d %s", q, resp.StatusCode, body)
	}
	var r pipeline.Response
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Degraded) > 0 {
		t.Errorf("degraded: %v", r.Degraded)
	}
	out := make([]string, len(r.Results))
	for i, x := range r.Results {
		out[i] = strings.TrimPrefix(x.URL, base)
	}
	return out
}

// crawl fetches every page reachable from start on the same host.
func crawl(t *testing.T, start string) []searchtest.Doc {
	t.Helper()
	su, _ := url.Parse(start)
	seen := map[string]bool{start: true}
	queue := []string{start}
	var docs []searchtest.Doc
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("fetch %s: %d %v", u, resp.StatusCode, err)
		}
		p, links := parsePage(t, string(body))
		for _, l := range links {
			ref, err := url.Parse(l)
			if err != nil {
				continue
			}
			abs := su.ResolveReference(ref)
			abs.Fragment = ""
			if abs.Host == su.Host && !seen[abs.String()] {
				seen[abs.String()] = true
				queue = append(queue, abs.String())
			}
		}
		if len(p.Chunks) == 0 {
			continue // the link index has no content of its own
		}
		p.URL = u
		docs = append(docs, p)
	}
	return docs
}

// parsePage reads the title, meta date and keywords, and the <main> content cut at
// <h2> into chunks, and returns every link.
func parsePage(t *testing.T, src string) (searchtest.Doc, []string) {
	t.Helper()
	root, err := html.Parse(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	var d searchtest.Doc
	var links []string
	var h1, heading string
	var text strings.Builder
	flush := func() {
		if s := strings.Join(strings.Fields(text.String()), " "); s != "" {
			d.Chunks = append(d.Chunks, searchtest.Chunk{Heading: strings.TrimSpace(h1 + " > " + heading), Text: s})
		}
		text.Reset()
	}
	var walk func(n *html.Node, inMain bool)
	walk = func(n *html.Node, inMain bool) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "title":
				d.Title = textOf(n)
				return
			case "meta":
				name, content := attr(n, "name"), attr(n, "content")
				switch name {
				case "date":
					if ts, err := time.Parse(time.DateOnly, content); err == nil {
						d.Published = ts
					}
				case "keywords":
					for _, k := range strings.Split(content, ",") {
						if k = strings.TrimSpace(k); k != "" {
							d.Tags = append(d.Tags, k)
						}
					}
				}
			case "a":
				if h := attr(n, "href"); h != "" {
					links = append(links, h)
				}
			case "main":
				inMain = true
			case "nav", "footer":
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c, false)
				}
				return
			case "h1":
				if inMain {
					h1 = textOf(n)
					return
				}
			case "h2":
				if inMain {
					flush()
					heading = textOf(n)
					return
				}
			case "ul":
				if inMain && len(d.Chunks) == 0 && text.Len() == 0 && h1 != "" && strings.Contains(h1, "docs") {
					// the index page's link list is navigation, not content
					for c := n.FirstChild; c != nil; c = c.NextSibling {
						walk(c, false)
					}
					return
				}
			}
		}
		if n.Type == html.TextNode && inMain {
			text.WriteString(n.Data)
			text.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inMain)
		}
	}
	walk(root, false)
	flush()
	return d, links
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var f func(*html.Node)
	f = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			f(c)
		}
	}
	f(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
