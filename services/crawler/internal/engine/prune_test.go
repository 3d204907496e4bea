package engine

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/testsite"
)

// TestPruneBlocker: anything that may have hidden part of the scope from
// the crawl stops prune, and says what.
func TestPruneBlocker(t *testing.T) {
	spec := Spec{MaxPages: 50, MaxDepth: ptr(2)}
	complete := Counters{FailedBy: map[string]int64{"http_404": 2, "http_410": 1},
		Skipped: map[string]int64{"content_type": 3, SkipRedirect: 1, SkipRedirectOutOfScope: 1}}
	with := func(f func(c *Counters)) Counters {
		c := complete
		c.FailedBy, c.Skipped = map[string]int64{}, map[string]int64{}
		for k, v := range complete.FailedBy {
			c.FailedBy[k] = v
		}
		for k, v := range complete.Skipped {
			c.Skipped[k] = v
		}
		f(&c)
		return c
	}
	depthLink := []unfollowedLink{{URL: "https://a.example/deep", Why: FilterDepth}}
	for _, tc := range []struct {
		name       string
		c          Counters
		missing    []unfollowedLink
		more       int64
		sitemap    string
		wantPrefix string
	}{
		{"complete (404, 410, non-pages and redirects are answers)", complete, nil, 0, "", ""},
		{"max_pages", with(func(c *Counters) { c.Queued = 7 }), nil, 0, "", "max_pages (50) was reached with 7 URLs still queued"},
		{"in flight", with(func(c *Counters) { c.InFlight = 1 }), nil, 0, "", "max_pages (50) was reached with 1 URLs still queued"},
		{"failures", with(func(c *Counters) { c.FailedBy["http_500"] = 2; c.FailedBy["timeout"] = 1 }), nil, 0, "",
			"3 pages failed (http_500: 2, timeout: 1), so what they link to is unknown"},
		{"robots", with(func(c *Counters) { c.Skipped["robots"] = 1 }), nil, 0, "", "1 page were not fetched (robots: 1)"},
		{"too large", with(func(c *Counters) { c.Skipped["too_large"] = 2 }), nil, 0, "", "2 pages were not fetched (too_large: 2)"},
		{"depth", complete, depthLink, 0, "", "1 in-scope links were not followed and lead to pages the crawl did not reach, e.g. https://a.example/deep (it is beyond max_depth 2)"},
		{"nofollow", complete, []unfollowedLink{{URL: "https://a.example/n", Why: FilterNoFollow}}, 2, "", "3 in-scope links were not followed and lead to pages the crawl did not reach, e.g. https://a.example/n (the link is rel=nofollow)"},
		{"link limit", complete, []unfollowedLink{{URL: "https://a.example/l", Why: FilterLinkLimit}}, 0, "", "1 in-scope links were not followed and lead to pages the crawl did not reach, e.g. https://a.example/l (its page holds more links than one page may queue (link_limit))"},
		{"sitemap", complete, nil, 0, "1 sitemaps could not be read (x)", "1 sitemaps could not be read (x)"},
	} {
		got := pruneBlocker(spec, tc.c, tc.missing, tc.more, tc.sitemap)
		if (tc.wantPrefix == "") != (got == "") || !strings.HasPrefix(got, tc.wantPrefix) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.wantPrefix)
		}
	}
}

// pruneSite is the test site with a crawl of its articles (/articles/ and
// the pages its include pattern admits), an engine and a stored page
// outside that scope.
type pruneSite struct {
	site *testsite.Site
	st   *store.Store
	e    *Engine
	spec Spec
}

func newPruneSite(t *testing.T, o engineOpts) *pruneSite {
	t.Helper()
	site := testsite.New(testsite.Options{})
	t.Cleanup(site.Close)
	st := openStore(t, freshDatabase(t))
	o.allow, o.retries = []string{site.Addr()}, 3
	e := newEngine(t, st, o)
	return &pruneSite{site: site, st: st, e: e,
		spec: Spec{URL: site.URL() + "/articles/", MaxDepth: ptr(3), Include: []string{"/articles/"}}}
}

func (p *pruneSite) crawl(t *testing.T, e *Engine, spec Spec) Status {
	t.Helper()
	st := waitJob(t, e, createJob(t, p.st, spec), 60*time.Second)
	if st.Status != store.JobDone {
		t.Fatalf("crawl %+v: status %s, errors %v", spec, st.Status, st.LastErrors)
	}
	return st
}

func (p *pruneSite) stored(t *testing.T, path string) bool {
	t.Helper()
	_, err := p.st.DocumentByURL(context.Background(), p.site.URL()+path)
	return err == nil
}

// TestPruneRemovesVanishedPages: a page no page links to any more stays
// stored after a recrawl without prune and is removed, as vanished, by a
// recrawl with prune that saw its whole scope, through the one deletion
// (change feed, kg outbox, event); pages outside the crawl's scope stay. A
// prune crawl cut short by max_pages removes nothing and says why.
func TestPruneRemovesVanishedPages(t *testing.T) {
	p := newPruneSite(t, engineOpts{})
	runEngine(t, p.e)
	ctx := context.Background()
	// Outside the scope of the articles crawl (its include pattern).
	if _, err := p.e.CrawlPage(ctx, p.site.URL()+"/about", nil); err != nil {
		t.Fatal(err)
	}
	p.crawl(t, p.e, p.spec)
	if !p.stored(t, "/articles/8") {
		t.Fatal("/articles/8 not stored by the first crawl")
	}

	p.site.Unlink("/articles/8")
	st := p.crawl(t, p.e, p.spec)
	if !p.stored(t, "/articles/8") || st.Counters.Deleted != 0 {
		t.Errorf("recrawl without prune: stored %v, deleted %d; want the unlinked page kept", p.stored(t, "/articles/8"), st.Counters.Deleted)
	}

	before := st.Counters
	p.site.ResetCounts()
	prune := p.spec
	prune.Prune = true
	id := createJob(t, p.st, prune)
	events, unsubscribe := p.e.Subscribe(id)
	defer unsubscribe()
	var mu sync.Mutex
	var deleted []Event
	go func() {
		for ev := range events {
			if ev.Type == EventPage && ev.Outcome == DoneDeleted {
				mu.Lock()
				deleted = append(deleted, ev)
				mu.Unlock()
			}
		}
	}()
	st = waitJob(t, p.e, id, 60*time.Second)
	if st.Status != store.JobDone || st.Counters.Deleted != 1 || st.Counters.DeletedBy[DeleteVanished] != 1 || len(st.Warnings) != 0 {
		t.Fatalf("prune crawl: status %s, deleted %d %v, warnings %v, errors %v; want done with 1 vanished and no warning",
			st.Status, st.Counters.Deleted, st.Counters.DeletedBy, st.Warnings, st.LastErrors)
	}
	if p.stored(t, "/articles/8") {
		t.Error("/articles/8 still stored after the prune crawl")
	}
	for _, path := range []string{"/about", "/articles/", "/articles/1", "/articles/7"} {
		if !p.stored(t, path) {
			t.Errorf("%s removed by the prune crawl; want it kept", path)
		}
	}
	if n := p.site.Hits("/articles/8"); n != 0 {
		t.Errorf("the prune crawl fetched /articles/8 %d times; want 0 (nothing links to it)", n)
	}
	if st.Counters.Discovered != before.Discovered || st.Counters.Fetched != before.Fetched {
		t.Errorf("discovered %d, fetched %d; want %d and %d as without prune: the removed document is neither", st.Counters.Discovered, st.Counters.Fetched,
			before.Discovered, before.Fetched)
	}
	id8 := store.DocumentID(p.site.URL() + "/articles/8")
	items, err := p.st.OutboxItems(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if last := items[len(items)-1]; last.Kind != store.OutboxDelete || last.DocumentID != id8 {
		t.Errorf("last outbox row: %s %s, want the kg delete of /articles/8", last.Kind, last.DocumentID)
	}
	changes, err := p.st.Changes(ctx, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	if last := changes[len(changes)-1]; last.Op != store.OpDelete || last.DocumentID != id8 {
		t.Errorf("last change: %+v, want the delete of /articles/8", last)
	}
	mu.Lock()
	if len(deleted) != 1 || deleted[0].Reason != DeleteVanished || deleted[0].URL != p.site.URL()+"/articles/8" {
		t.Errorf("deleted page events: %+v, want one for /articles/8 with reason vanished", deleted)
	}
	mu.Unlock()

	// Cut short by max_pages: nothing removed, and the status says why.
	p.site.Unlink("/articles/7")
	short := prune
	short.MaxPages = 3
	st = p.crawl(t, p.e, short)
	if !p.stored(t, "/articles/7") || st.Counters.DeletedBy[DeleteVanished] != 0 {
		t.Errorf("prune crawl cut by max_pages: /articles/7 stored %v, vanished %d; want it kept", p.stored(t, "/articles/7"), st.Counters.DeletedBy[DeleteVanished])
	}
	if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "nothing was removed, because max_pages (3) was reached") {
		t.Errorf("warnings: %q, want one saying max_pages stopped the prune", st.Warnings)
	}
}

// TestPruneStaysUnderTheStartDirectory: a prune crawl started at
// /articles/ removes an unlinked page under /articles/ but keeps a stored
// page of the same site outside that directory which its filters admit and
// it did not reach (stored earlier by a single-page crawl).
func TestPruneStaysUnderTheStartDirectory(t *testing.T) {
	p := newPruneSite(t, engineOpts{})
	runEngine(t, p.e)
	ctx := context.Background()
	p.site.Unlink(testsite.PathOrphan) // off the sitemap: no crawl reaches it
	if _, err := p.e.CrawlPage(ctx, p.site.URL()+testsite.PathOrphan, nil); err != nil {
		t.Fatal(err)
	}
	spec := p.spec
	spec.Include = []string{"/articles/", testsite.PathOrphan}
	p.crawl(t, p.e, spec)
	if !p.stored(t, "/articles/8") || !p.stored(t, testsite.PathOrphan) {
		t.Fatal("/articles/8 or the orphan page not stored before the prune crawl")
	}

	p.site.Unlink("/articles/8")
	spec.Prune = true
	st := p.crawl(t, p.e, spec)
	if st.Counters.DeletedBy[DeleteVanished] != 1 || p.stored(t, "/articles/8") {
		t.Errorf("prune crawl: vanished %d, /articles/8 stored %v, warnings %v; want it removed", st.Counters.DeletedBy[DeleteVanished], p.stored(t, "/articles/8"), st.Warnings)
	}
	if !p.stored(t, testsite.PathOrphan) {
		t.Errorf("%s (outside the start directory /articles/) removed by the prune crawl; want it kept", testsite.PathOrphan)
	}
}

func TestStartDir(t *testing.T) {
	for in, want := range map[string]string{
		"http://h/docs/v3/":           "/docs/v3/",
		"http://h/docs/v3/index.html": "/docs/v3/",
		"http://h/docs/v3":            "/docs/",
		"http://h/":                   "/",
		"http://h":                    "/",
		"http://h/a%2Fb/c?x=/y/":      "/a%2Fb/",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := startDir(u); got != want {
			t.Errorf("startDir(%s) = %q, want %q", in, got, want)
		}
	}
}

// TestPruneBeyondDepthRemovesNothing: a prune crawl whose max_depth kept it
// from following links to pages it did not reach removes nothing.
func TestPruneBeyondDepthRemovesNothing(t *testing.T) {
	p := newPruneSite(t, engineOpts{})
	runEngine(t, p.e)
	p.crawl(t, p.e, p.spec)
	p.site.Unlink("/articles/8")
	shallow := p.spec
	shallow.MaxDepth, shallow.UseSitemap, shallow.Prune = ptr(0), ptr(false), true
	st := p.crawl(t, p.e, shallow)
	if !p.stored(t, "/articles/8") || !p.stored(t, "/articles/1") || st.Counters.Deleted != 0 {
		t.Errorf("depth 0 prune crawl: deleted %d; want nothing removed", st.Counters.Deleted)
	}
	if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], "beyond max_depth 0") {
		t.Errorf("warnings: %q, want one naming max_depth", st.Warnings)
	}
}

// crashingStore loses MariaDB for good right after the first removal of a
// prune: the job can only stall until its crawler stops.
type crashingStore struct {
	Store
	done atomic.Int64
}

func (s *crashingStore) DeleteDocumentInJob(ctx context.Context, id string, del *store.DeletePayload, jobID, reason string) (int64, error) {
	if s.done.Load() > 0 {
		return 0, fmt.Errorf("delete document %s: %w", id, store.ErrNotReady)
	}
	seq, err := s.Store.DeleteDocumentInJob(ctx, id, del, jobID, reason)
	if err == nil {
		s.done.Add(1)
	}
	return seq, err
}

// TestPruneResumesAfterACrash: a crawler that stops in the middle of a
// prune leaves every document stored or removed and counted; the crawler
// that takes the job over finds no work left and removes the rest.
func TestPruneResumesAfterACrash(t *testing.T) {
	var crashing *crashingStore
	p := newPruneSite(t, engineOpts{owner: "first", lease: time.Second, wrap: func(s Store) Store {
		crashing = &crashingStore{Store: s}
		return crashing
	}})
	stop := runEngine(t, p.e)
	p.crawl(t, p.e, p.spec)
	for _, path := range []string{"/articles/6", "/articles/7", "/articles/8"} {
		p.site.Unlink(path)
	}
	prune := p.spec
	prune.Prune = true
	id := createJob(t, p.st, prune)
	deadline := time.Now().Add(60 * time.Second)
	for crashing.done.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	job, err := p.st.GetJob(context.Background(), id)
	if err != nil || job.Status != store.JobRunning || crashing.done.Load() != 1 {
		t.Fatalf("after the crash: job %s %v, removals %d; want it running with 1 removal", job.Status, err, crashing.done.Load())
	}
	mid, err := p.e.Status(context.Background(), id)
	if err != nil || mid.Counters.DeletedBy[DeleteVanished] != 1 {
		t.Fatalf("after the crash: vanished %d (%v), want the 1 removal counted", mid.Counters.DeletedBy[DeleteVanished], err)
	}
	stored := 0
	for _, path := range []string{"/articles/6", "/articles/7", "/articles/8"} {
		if p.stored(t, path) {
			stored++
		}
	}
	if stored != 2 {
		t.Fatalf("after the crash: %d of the 3 unlinked pages stored, want 2", stored)
	}

	second := newEngine(t, p.st, engineOpts{owner: "second", allow: []string{p.site.Addr()}})
	runEngine(t, second)
	st := waitJob(t, second, id, 60*time.Second)
	if st.Status != store.JobDone || st.Counters.DeletedBy[DeleteVanished] != 3 || len(st.Warnings) != 0 {
		t.Fatalf("resumed prune: status %s, vanished %d, warnings %v, errors %v; want done with 3", st.Status, st.Counters.DeletedBy[DeleteVanished], st.Warnings, st.LastErrors)
	}
	for _, path := range []string{"/articles/6", "/articles/7", "/articles/8"} {
		if p.stored(t, path) {
			t.Errorf("%s still stored after the resumed prune", path)
		}
	}
}

// TestPruneLeavesSitesEnteredByALink: a prune crawl of one site whose page
// links to a page of another site on the same host (another port, in the
// crawl's scope) fetches that page but removes nothing of the other site: its
// other pages, stored by its own crawl, are not linked from the first site
// and were never part of what the prune crawl saw.
func TestPruneLeavesSitesEnteredByALink(t *testing.T) {
	page := func(w http.ResponseWriter, title string, links ...string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<html><head><title>%s</title></head><body><main><h1>%s</h1><p>%s has enough words to be stored as a document by the crawl under test.</p>", title, title, title)
		for _, l := range links {
			fmt.Fprintf(w, `<a href="%s">%s</a> `, l, l)
		}
		fmt.Fprint(w, "</main></body></html>")
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			page(w, "Other home", "/one", "/two")
		case "/one":
			page(w, "Other one")
		case "/two":
			page(w, "Other two")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(other.Close)
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		page(w, "First home", other.URL+"/one")
	}))
	t.Cleanup(first.Close)
	st := openStore(t, freshDatabase(t))
	e := newEngine(t, st, engineOpts{allow: []string{strings.TrimPrefix(first.URL, "http://"), strings.TrimPrefix(other.URL, "http://")}})
	runEngine(t, e)
	if s := waitJob(t, e, createJob(t, st, Spec{URL: other.URL + "/", UseSitemap: ptr(false)}), 60*time.Second); s.Status != store.JobDone {
		t.Fatalf("crawl of the other site: %s %v", s.Status, s.LastErrors)
	}
	s := waitJob(t, e, createJob(t, st, Spec{URL: first.URL + "/", UseSitemap: ptr(false), Prune: true}), 60*time.Second)
	if s.Status != store.JobDone || s.Counters.Deleted != 0 {
		t.Errorf("prune crawl of the first site: status %s, deleted %d (%v), want done and 0 deleted", s.Status, s.Counters.Deleted, s.Counters.DeletedBy)
	}
	for _, p := range []string{"/", "/one", "/two"} {
		if _, err := st.DocumentByURL(context.Background(), other.URL+p); err != nil {
			t.Errorf("the other site's %s: %v; want it kept", p, err)
		}
	}
}
