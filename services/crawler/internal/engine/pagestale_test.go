package engine

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kgsearch/kgsearch/pkg/embed/embedtest"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
	"github.com/kgsearch/kgsearch/services/crawler/internal/fetch"
	"github.com/kgsearch/kgsearch/services/crawler/internal/pipeline"
)

// TestCrawlPageRemovesStaleDocuments: POST /api/v1/pages (CrawlPage) removes
// a stored version for the same reasons as a crawl (staleDeletions), says so
// in its result in the words of the crawl's page events, counts
// pages_deleted_total and tells kg through the outbox. Pages it does not
// fetch or that fail, are too large or redirect to their own canonical URL
// keep their document.
func TestCrawlPageRemovesStaleDocuments(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, freshDatabase(t))
	s := newStaleSite(t, false)
	crawlStale(t, st, s, false)
	ids := map[string]string{}
	for _, p := range append([]string{"/"}, stalePaths...) {
		d, err := st.DocumentByURL(ctx, s.URL+p)
		if err != nil {
			t.Fatalf("document of %s after the first crawl: %v", p, err)
		}
		ids[p] = d.ID
	}
	s.changed.Store(true)
	copts := canon.DefaultOptions()
	copts.TrailingSlash = canon.StripTrailingSlash
	e := newEngine(t, st, engineOpts{canon: &copts})

	for p, want := range staleDeletions {
		if p == "/moved" {
			continue // below: the page answers its redirect target
		}
		res, err := e.CrawlPage(ctx, s.URL+p, nil)
		if err != nil {
			t.Errorf("%s: %v, want its stored version removed", p, err)
			continue
		}
		if res.Outcome != Deleted || res.Reason != want.why || !strings.Contains(res.Detail, want.detail) ||
			!strings.HasSuffix(res.Detail, "; its stored version was removed") || res.Document.ID != ids[p] || res.Chunks != 0 {
			t.Errorf("%s: got outcome %q, reason %q, detail %q, id %s; want deleted, %s, a detail with %q, id %s",
				p, res.Outcome, res.Reason, res.Detail, res.Document.ID, want.why, want.detail, ids[p])
		}
		wantRemoved := []Removal{{ID: ids[p], URL: s.URL + p, Title: res.Document.Title, Reason: want.why, Detail: res.Detail}}
		if diff := cmp.Diff(wantRemoved, res.Removed); diff != "" {
			t.Errorf("%s: removed (-want +got):\n%s", p, diff)
		}
	}

	// A redirect to another URL of the site: the old URL's version goes, the
	// target is indexed under its own URL.
	res, err := e.CrawlPage(ctx, s.URL+"/moved", nil)
	if err != nil {
		t.Fatalf("/moved: %v", err)
	}
	if res.Outcome != "stored" || res.Document.URL != s.URL+"/moved-target" || len(res.Removed) != 1 ||
		res.Removed[0].ID != ids["/moved"] || res.Removed[0].Reason != SkipRedirect ||
		res.Removed[0].Detail != "the URL now redirects to "+s.URL+"/moved-target; its stored version was removed" {
		t.Errorf("/moved: got outcome %q for %s, removed %+v; want the target stored and /moved removed as redirect", res.Outcome, res.Document.URL, res.Removed)
	}

	// Not fetched, failing, too large or redirecting to itself: kept, and
	// answered as before.
	for p, reason := range map[string]string{"/private": "robots", "/flaky": "http_503", "/big": fetch.ReasonTooLarge,
		"/big-declared": fetch.ReasonTooLarge, "/same": SkipRedirect} {
		_, err := e.CrawlPage(ctx, s.URL+p, nil)
		var pe *PageError
		if !errors.As(err, &pe) || pe.Reason != reason || len(pe.Removed) != 0 {
			t.Errorf("%s: got %v, want a PageError %s with nothing removed", p, err, reason)
		}
	}

	wantMetric := map[string]float64{DoneNoIndex: 2, DoneEmpty: 1, DoneScriptRendered: 1, SkipRedirect: 1,
		SkipRedirectOutOfScope: 1, "http_404": 1, fetch.ReasonContentType: 2}
	for why, n := range wantMetric {
		if got := testutil.ToFloat64(e.m.deleted.WithLabelValues(why)); got != n {
			t.Errorf("pages_deleted_total{reason=%q}: got %v, want %v", why, got, n)
		}
	}
	if diff := cmp.Diff(map[string]bool{"/": true, "/moved-target": true, "/private": true, "/flaky": true, "/same": true,
		"/big": true, "/big-declared": true}, storedPaths(t, st)); diff != "" {
		t.Errorf("stored pages after the single-page crawls (-want +got):\n%s", diff)
	}
	checkDeleteRows(t, st, ids, staleDeletions)
}

// checkDeleteRows checks that kg is told (one outbox delete row each) of the
// removal of exactly the pages of deleted.
func checkDeleteRows(t *testing.T, st *store.Store, ids map[string]string, deleted map[string]struct{ why, detail string }) {
	t.Helper()
	items, err := st.OutboxItems(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int{}
	for _, it := range items {
		if it.Kind == store.OutboxDelete {
			rows[it.DocumentID]++
		}
	}
	for p := range deleted {
		if rows[ids[p]] != 1 {
			t.Errorf("%s: outbox delete rows for kg: got %d, want 1", p, rows[ids[p]])
		}
		if chunks, err := st.DocumentChunks(context.Background(), ids[p]); err != nil || len(chunks) != 0 {
			t.Errorf("%s: chunks after removal: got %d (%v), want none", p, len(chunks), err)
		}
	}
	if len(rows) != len(deleted) {
		t.Errorf("outbox delete rows: got %d documents, want %d", len(rows), len(deleted))
	}
}

// TestCrawlPageKeepsWhatItCannotFetch: a stored page that the SSRF guard or
// the blocklist now refuses, that times out, whose site no longer answers or
// whose host name no longer resolves keeps its document: its current state
// is unknown.
func TestCrawlPageKeepsWhatItCannotFetch(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, freshDatabase(t))
	var slow atomic.Bool
	s := newSite(t, map[string]func(http.ResponseWriter, *http.Request){"/kept": func(w http.ResponseWriter, r *http.Request) {
		if slow.Load() { // answers nothing until the crawler gives up
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return
		}
		htmlHandler(page("Kept", "Text to keep."))(w, r)
	}})
	e := newEngine(t, st, engineOpts{})
	res, err := e.CrawlPage(ctx, s.URL+"/kept", nil)
	if err != nil || res.Outcome != "stored" {
		t.Fatalf("store the page: %v %v", res.Outcome, err)
	}
	id := res.Document.ID
	slow.Store(true)
	if _, err := e.CrawlPage(ctx, s.URL+"/kept", nil); !isPageError(err, FailTimeout) {
		t.Errorf("timeout: got %v, want a PageError timeout", err)
	}
	slow.Store(false)

	refused := newEngine(t, st, engineOpts{allow: []string{"192.0.2.1"}}) // not this loopback site
	if _, err := refused.CrawlPage(ctx, s.URL+"/kept", nil); !isPageError(err, SkipSSRF) {
		t.Errorf("SSRF guard: got %v, want a PageError ssrf", err)
	}
	if _, err := st.BlockDomain(ctx, "127.0.0.1", "test"); err != nil {
		t.Fatal(err)
	}
	blocked := newEngine(t, st, engineOpts{})
	if _, err := blocked.CrawlPage(ctx, s.URL+"/kept", nil); !isPageError(err, SkipBlocked) {
		t.Errorf("blocklist: got %v, want a PageError blocked", err)
	}
	if err := st.UnblockDomain(ctx, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	s.Close() // the site is down: connection refused
	down := newEngine(t, st, engineOpts{})
	if _, err := down.CrawlPage(ctx, s.URL+"/kept", nil); !isPageError(err, FailNetwork) {
		t.Errorf("site down: got %v, want a PageError network", err)
	}
	if d, err := st.DocumentByURL(ctx, s.URL+"/kept"); err != nil || d.ID != id {
		t.Errorf("document after refusals and a failure: got %v (%v), want it kept", d.ID, err)
	}
	// A host name that no longer resolves (the resolver fails without any
	// network): the page stored under it keeps its document too.
	const unresolved = "http://docs.unresolved.test/page"
	pu, _ := url.Parse(unresolved)
	extracted, _, err := pipeline.Extract(pu, "text/html", []byte(page("Unresolved", "Text under a name.")), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := pipeline.New(st, embedtest.NewHash(testDims), sectionSplitter{}, "test")
	if res, err := p.Index(ctx, pipeline.Page{URL: unresolved, Extracted: extracted, FetchedAt: time.Now().UTC()}); err != nil || res.Outcome != pipeline.Stored {
		t.Fatalf("store the page of the name: %v %v", res.Outcome, err)
	}
	noDNS := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS server in this test")
	}}
	dns := newEngine(t, st, engineOpts{allow: []string{"docs.unresolved.test"}, resolver: noDNS})
	if _, err := dns.CrawlPage(ctx, unresolved, nil); !isPageError(err, FailNetwork) || !strings.Contains(err.Error(), "resolve") {
		t.Errorf("unresolvable host: got %v, want a PageError network saying it could not resolve", err)
	}
	if _, err := st.DocumentByURL(ctx, unresolved); err != nil {
		t.Errorf("document of the unresolvable host: %v, want it kept", err)
	}
	for _, eng := range []*Engine{e, refused, blocked, down, dns} {
		if n := testutil.CollectAndCount(eng.m.deleted); n != 0 {
			t.Errorf("pages_deleted_total series: got %d, want none", n)
		}
	}
}

func isPageError(err error, reason string) bool {
	var pe *PageError
	return errors.As(err, &pe) && pe.Reason == reason
}
