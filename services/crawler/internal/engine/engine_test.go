package engine

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/store"
)

// smallSite has duplicate spellings, robots.txt, a sitemap, a redirect, a
// redirect written in HTML (meta refresh), a flaky page, a trap, a non-HTML
// file, a 404 and an external link.
func smallSite(t *testing.T) *site {
	var flaky atomic.Int32
	pages := map[string]func(http.ResponseWriter, *http.Request){
		"/": htmlHandler(page("Home", "Welcome home.",
			"/a", "/b", "/a?utm_source=news", "/a#top", "/B/../a", "/./a", "/private/secret", "/redirect", "/moved",
			"http://example.com/elsewhere", "/flaky", "/cal/1", "/image.png", "/missing")),
		"/a": htmlHandler(page("Page A", "About alpha.", "/a/deep1", "/")),
		"/b": htmlHandler(page("Page B", "About beta.", "/", "/a")),
		"/c": htmlHandler(page("Page C", "Redirect target.", "/")),
		"/d": htmlHandler(page("Page D", "Meta refresh target.", "/")),
		"/moved": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(`<html><head><meta http-equiv="refresh" content="0; url=/d"><title>Moved</title></head><body><p>Redirecting to the new page.</p></body></html>`))
		},
		"/a/deep1":        htmlHandler(page("Deep 1", "Deeper.", "/a/deep2")),
		"/a/deep2":        htmlHandler(page("Deep 2", "Deepest.", "/a/deep3")),
		"/orphan":         htmlHandler(page("Orphan", "Only in the sitemap.")),
		"/private/secret": htmlHandler(page("Secret", "Robots say no.")),
		"/redirect": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/c", http.StatusMovedPermanently)
		},
		"/flaky": func(w http.ResponseWriter, r *http.Request) {
			if flaky.Add(1) <= 2 {
				http.Error(w, "try again", http.StatusServiceUnavailable)
				return
			}
			htmlHandler(page("Flaky", "Worked on the third try."))(w, r)
		},
		"/image.png": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n"))
		},
	}
	s := newSite(t, pages)
	calendar := func(w http.ResponseWriter, r *http.Request) {
		var n int
		_, _ = fmt.Sscanf(r.URL.Path, "/cal/%d", &n)
		htmlHandler(page(fmt.Sprintf("Month %d", n), "A calendar trap.", fmt.Sprintf("/cal/%d", n+1)))(w, r)
	}
	for i := 1; i < 200; i++ {
		pages[fmt.Sprintf("/cal/%d", i)] = calendar
	}
	pages["/robots.txt"] = func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "User-agent: *\nDisallow: /private/\n\nSitemap: %s/sitemap.xml\n", s.URL)
	}
	pages["/sitemap.xml"] = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/orphan</loc></url><url><loc>%s/a</loc></url></urlset>`, s.URL, s.URL)
	}
	return s
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestCrawlSmallSite(t *testing.T) {
	st := openStore(t, freshDatabase(t))
	s := smallSite(t)
	e := newEngine(t, st, engineOpts{retries: 3})
	runEngine(t, e)
	id := createJob(t, st, Spec{URL: s.URL + "/", MaxDepth: ptr(2), Tags: []string{"test"}})
	status := waitJob(t, e, id, 60*time.Second)

	if status.Status != store.JobDone {
		t.Fatalf("status: got %s, want done (errors %v)", status.Status, status.LastErrors)
	}
	want := []string{"/", "/a", "/a/deep1", "/b", "/c", "/cal/1", "/cal/2", "/d", "/flaky", "/orphan"}
	if diff := cmp.Diff(want, sortedKeys(storedPaths(t, st))); diff != "" {
		t.Errorf("stored pages (-want +got):\n%s", diff)
	}
	c := status.Counters
	if c.Stored != int64(len(want)) {
		t.Errorf("counters.stored: got %d, want %d", c.Stored, len(want))
	}
	wantSkipped := map[string]int64{"robots": 1, "content_type": 1, "redirect": 2} // /redirect (301) and /moved (meta refresh)
	if diff := cmp.Diff(wantSkipped, c.Skipped); diff != "" {
		t.Errorf("counters.skipped (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int64{"http_404": 1}, c.FailedBy); diff != "" {
		t.Errorf("counters.failed_by_reason (-want +got):\n%s", diff)
	}
	if c.Filtered[FilterOutOfScope] < 1 {
		t.Errorf("counters.filtered_links[out_of_scope]: got %d, want >= 1", c.Filtered[FilterOutOfScope])
	}
	// Every URL fetched once, whatever its spelling; the flaky page three times
	// (two 503s, then success); the robots-disallowed page never.
	for path, n := range s.allHits() {
		want := 1
		if path == "/flaky" {
			want = 3
		}
		if n != want {
			t.Errorf("hits of %s: got %d, want %d", path, n, want)
		}
	}
	if n := s.hit("/private/secret"); n != 0 {
		t.Errorf("hits of /private/secret (robots.txt Disallow): got %d, want 0", n)
	}
	if n := s.hit("/a/deep2"); n != 0 {
		t.Errorf("hits of /a/deep2 (depth 3 > max_depth 2): got %d, want 0", n)
	}

	// What MariaDB holds for one page.
	doc, err := st.DocumentByURL(context.Background(), s.URL+"/a")
	if err != nil {
		t.Fatalf("document /a: %v", err)
	}
	if doc.Title != "Page A" || doc.ChunkCount < 1 || doc.ContentHash == "" || len(doc.Tags) != 1 || doc.Tags[0] != "test" {
		t.Errorf("document /a: got title %q, %d chunks, hash %q, tags %v; want Page A, >=1 chunk, a hash, [test]",
			doc.Title, doc.ChunkCount, doc.ContentHash, doc.Tags)
	}
	chunks, err := st.DocumentChunks(context.Background(), doc.ID)
	if err != nil || len(chunks) != doc.ChunkCount {
		t.Fatalf("chunks of /a: got %d (%v), want %d", len(chunks), err, doc.ChunkCount)
	}
	items, err := st.OutboxItems(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != len(want) {
		t.Errorf("outbox rows: got %d, want one per stored page (%d)", len(items), len(want))
	}
}

func ptr[T any](v T) *T { return &v }
