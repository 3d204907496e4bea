package engine

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
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
	"github.com/kgsearch/kgsearch/services/crawler/internal/htmltext"
	"github.com/kgsearch/kgsearch/services/crawler/internal/pipeline"
	"github.com/kgsearch/kgsearch/services/crawler/internal/testsite"
)

// staleSite serves pages with text until changed is set; then most of them
// answer in a way that leaves nothing to keep: noindex (meta tag or header),
// no text, an empty shell that scripts fill, a redirect in and out of the
// crawl's scope, 404. /private becomes disallowed by robots.txt, /flaky
// answers 503 and /same redirects to the URL with a trailing slash, which
// the test's canonical form folds into /same: those keep their document.
// /binary now serves application/octet-stream and /image a PNG without a
// Content-Type (the type is sniffed from the body): no HTML document is
// there any more. /big and /big-declared now answer more than the fetcher's
// 1 MiB limit (chunked, and with a Content-Length): their content still
// exists, so they keep their document too.
type staleSite struct {
	*site
	changed atomic.Bool
}

// stalePaths are the paths the start page links to.
var stalePaths = []string{"/noindex", "/noindex-header", "/empty", "/shell", "/moved", "/away", "/gone", "/private", "/flaky", "/same",
	"/binary", "/image", "/big", "/big-declared"}

// pngBytes is the start of a PNG file: http.DetectContentType says image/png.
const pngBytes = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"

// bigHTML is an HTML page over the test fetcher's 1 MiB limit.
var bigHTML = page("Big", strings.Repeat("Many words in a page that grew too large. ", 30_000))

// staleOutOfScope is where /away redirects: never fetched (out of scope).
const staleOutOfScope = "http://elsewhere.invalid/away"

func newStaleSite(t *testing.T, changed bool) *staleSite {
	s := &staleSite{}
	s.changed.Store(changed)
	text := func(title string) func(http.ResponseWriter, *http.Request) {
		return htmlHandler(page(title, "Text that was there when the page was stored."))
	}
	// after serves text before the change and now after it.
	after := func(title string, now func(http.ResponseWriter, *http.Request)) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) {
			if s.changed.Load() {
				now(w, r)
				return
			}
			text(title)(w, r)
		}
	}
	redirect := func(to string, code int) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, code) }
	}
	noindexPage := strings.Replace(page("Noindex", "Words that must not be indexed any more."),
		"<head>", `<head><meta name="robots" content="noindex">`, 1)
	pages := map[string]func(http.ResponseWriter, *http.Request){
		"/": htmlHandler(page("Start", "The start page.", stalePaths...)),
		"/robots.txt": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			if s.changed.Load() {
				_, _ = w.Write([]byte("User-agent: *\nDisallow: /private\n"))
				return
			}
			_, _ = w.Write([]byte("User-agent: *\nAllow: /\n"))
		},
		"/noindex": after("Noindex", htmlHandler(noindexPage)),
		"/noindex-header": after("Header", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Robots-Tag", "noindex")
			text("Header")(w, r)
		}),
		"/empty":        after("Empty", htmlHandler(`<!doctype html><html><head><title>Blank</title></head><body></body></html>`)),
		"/shell":        after("Shell", htmlHandler(testsite.ShellPages()[testsite.PathShellReact])),
		"/moved":        after("Moved", redirect("/moved-target", http.StatusMovedPermanently)),
		"/moved-target": text("Moved target"),
		"/away":         after("Away", redirect(staleOutOfScope, http.StatusFound)),
		"/gone":         after("Gone", http.NotFound),
		"/private":      text("Private"),
		"/flaky":        after("Flaky", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "busy", http.StatusServiceUnavailable) }),
		"/binary": after("Binary", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write([]byte("\x00\x01\x02 binary data"))
		}),
		"/image": after("Image", func(w http.ResponseWriter, _ *http.Request) {
			w.Header()["Content-Type"] = nil // no header: net/http does not sniff one either
			_, _ = w.Write([]byte(pngBytes))
		}),
		"/big": after("Big", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(bigHTML[:1000]))
			w.(http.Flusher).Flush() // chunked: the size shows only while reading
			_, _ = w.Write([]byte(bigHTML[1000:]))
		}),
		"/big-declared": after("Big declared", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Length", strconv.Itoa(len(bigHTML)))
			_, _ = w.Write([]byte(bigHTML))
		}),
		"/same": func(w http.ResponseWriter, r *http.Request) {
			if s.changed.Load() && r.URL.Path == "/same" {
				redirect("/same/", http.StatusMovedPermanently)(w, r)
				return
			}
			text("Same")(w, r)
		},
	}
	pages["/same/"] = pages["/same"]
	s.site = newSite(t, pages)
	return s
}

// staleCrawl is one crawl of the stale site by an engine of its own.
type staleCrawl struct {
	status  Status
	pages   map[string]Event // page events by URL
	fr      map[store.FrontierState]map[string]int64
	deleted map[string]float64 // pages_deleted_total by reason
}

// crawlStale crawls s with a new engine and collects the job's page events.
func crawlStale(t *testing.T, st *store.Store, s *staleSite, recrawl bool) staleCrawl {
	t.Helper()
	copts := canon.DefaultOptions()
	copts.TrailingSlash = canon.StripTrailingSlash
	e := newEngine(t, st, engineOpts{canon: &copts})
	id := createJob(t, st, Spec{URL: s.URL + "/", MaxDepth: ptr(1), UseSitemap: ptr(false), Recrawl: recrawl})
	events, unsubscribe := e.Subscribe(id)
	defer unsubscribe()
	stop := runEngine(t, e)
	out := staleCrawl{status: waitJob(t, e, id, 60*time.Second), pages: map[string]Event{}}
	stop()
	out.deleted = map[string]float64{}
	for _, why := range []string{DoneNoIndex, DoneEmpty, DoneScriptRendered, SkipRedirect, SkipRedirectOutOfScope, "http_404", "http_410", fetch.ReasonContentType} {
		if n := testutil.ToFloat64(e.m.deleted.WithLabelValues(why)); n > 0 {
			out.deleted[why] = n
		}
	}
	if out.status.Status != store.JobDone {
		t.Fatalf("job %s: %s, errors %v", id, out.status.Status, out.status.LastErrors)
	}
	for drained := false; !drained; {
		select {
		case ev := <-events:
			if ev.Type == EventPage {
				out.pages[strings.TrimPrefix(ev.URL, s.URL)] = ev
			}
		default:
			drained = true
		}
	}
	var err error
	if out.fr, err = st.FrontierReasons(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	return out
}

// staleDeletions are the pages whose document the second crawl removes,
// with the reason their page event names and what its detail says.
var staleDeletions = map[string]struct{ why, detail string }{
	"/noindex":        {DoneNoIndex, "asks not to be indexed"},
	"/noindex-header": {DoneNoIndex, "asks not to be indexed"},
	"/empty":          {DoneEmpty, "no text to index"},
	"/shell":          {DoneScriptRendered, `rendered by JavaScript in the browser (an empty <div id="root">)`},
	"/moved":          {SkipRedirect, "redirects to http://"},
	"/away":           {SkipRedirectOutOfScope, "redirects to " + staleOutOfScope + ", outside the crawl's scope"},
	"/gone":           {"http_404", "answered HTTP 404"},
	"/binary":         {fetch.ReasonContentType, "the URL now serves application/octet-stream, not an HTML or text page"},
	"/image":          {fetch.ReasonContentType, "the URL now serves image/png, not an HTML or text page"},
}

// TestRecrawlRemovesStaleDocuments stores a site, changes it, and crawls it
// again, with and without recrawl: every page whose answer leaves nothing
// to keep loses its stored document, its chunks and (through the outbox)
// its kg document, and the job's counters and page events say why. Pages
// that were not fetched (robots.txt), failed (503) or redirect to their own
// canonical URL keep theirs.
func TestRecrawlRemovesStaleDocuments(t *testing.T) {
	for _, recrawl := range []bool{false, true} {
		name := "plain crawl"
		if recrawl {
			name = "recrawl"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t, freshDatabase(t))
			s := newStaleSite(t, false)
			first := crawlStale(t, st, s, false)
			if first.status.Counters.Stored != int64(1+len(stalePaths)) || first.status.Counters.Deleted != 0 {
				t.Fatalf("first crawl: stored %d, deleted %d; want %d, 0 (errors %v)", first.status.Counters.Stored,
					first.status.Counters.Deleted, 1+len(stalePaths), first.status.LastErrors)
			}
			ids := map[string]string{}
			for _, p := range append([]string{"/"}, stalePaths...) {
				d, err := st.DocumentByURL(ctx, s.URL+p)
				if err != nil {
					t.Fatalf("document of %s after the first crawl: %v", p, err)
				}
				ids[p] = d.ID
			}

			s.changed.Store(true)
			second := crawlStale(t, st, s, recrawl)
			checkStaleCounters(t, second)
			checkStaleEvents(t, second)

			if diff := cmp.Diff(map[string]bool{"/": true, "/moved-target": true, "/private": true, "/flaky": true, "/same": true,
				"/big": true, "/big-declared": true},
				storedPaths(t, st)); diff != "" {
				t.Errorf("stored pages after the second crawl (-want +got):\n%s", diff)
			}
			items, err := st.OutboxItems(ctx, 1000)
			if err != nil {
				t.Fatal(err)
			}
			deletes := map[string]int{}
			for _, it := range items {
				if it.Kind == store.OutboxDelete {
					deletes[it.DocumentID]++
				}
			}
			for p := range staleDeletions {
				if _, err := st.DocumentByURL(ctx, s.URL+p); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("%s: document lookup after the second crawl: got %v, want ErrNotFound", p, err)
				}
				if chunks, err := st.DocumentChunks(ctx, ids[p]); err != nil || len(chunks) != 0 {
					t.Errorf("%s: chunks after the second crawl: got %d (%v), want none", p, len(chunks), err)
				}
				if deletes[ids[p]] != 1 {
					t.Errorf("%s: outbox delete rows for kg: got %d, want 1", p, deletes[ids[p]])
				}
			}
			if len(deletes) != len(staleDeletions) {
				t.Errorf("outbox delete rows: got %d documents, want %d", len(deletes), len(staleDeletions))
			}
		})
	}
}

func checkStaleCounters(t *testing.T, c staleCrawl) {
	t.Helper()
	got := c.status.Counters
	wantBy := map[string]int64{DoneNoIndex: 2, DoneEmpty: 1, DoneScriptRendered: 1, SkipRedirect: 1, SkipRedirectOutOfScope: 1, "http_404": 1,
		fetch.ReasonContentType: 2}
	if got.Deleted != int64(len(staleDeletions)) || !cmp.Equal(got.DeletedBy, wantBy) {
		t.Errorf("deleted: got %d %v, want %d %v", got.Deleted, got.DeletedBy, len(staleDeletions), wantBy)
	}
	// The start page is unchanged and the redirect target new; nothing is
	// counted as empty: the pages that had a stored version are deletions.
	if got.Stored != 1 || got.Unchanged != 1 || got.Empty != 0 || got.ScriptRendered != 0 {
		t.Errorf("stored %d, unchanged %d, empty %d, script_rendered %d; want 1, 1, 0, 0",
			got.Stored, got.Unchanged, got.Empty, got.ScriptRendered)
	}
	if diff := cmp.Diff(map[string]int64{"robots": 1, SkipRedirect: 1, fetch.ReasonTooLarge: 2}, got.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int64{"http_503": 1}, got.FailedBy); diff != "" {
		t.Errorf("failed (-want +got):\n%s", diff)
	}
	for why, n := range wantBy {
		if c.deleted[why] != float64(n) {
			t.Errorf("metric pages_deleted_total{reason=%q}: got %v, want %d", why, c.deleted[why], n)
		}
		if c.fr[store.FrontierDone][deletedReason(why)] != n {
			t.Errorf("frontier rows done with reason %s: got %d, want %d (all: %v)", deletedReason(why), c.fr[store.FrontierDone][deletedReason(why)], n, c.fr)
		}
	}
}

func checkStaleEvents(t *testing.T, c staleCrawl) {
	t.Helper()
	for p, want := range staleDeletions {
		ev, ok := c.pages[p]
		if !ok {
			t.Errorf("%s: no page event", p)
			continue
		}
		if ev.Outcome != DoneDeleted || ev.Reason != want.why || !strings.Contains(ev.Detail, want.detail) ||
			!strings.HasSuffix(ev.Detail, "; its stored version was removed") {
			t.Errorf("%s: page event outcome %q, reason %q, detail %q; want deleted, %s, a detail with %q saying the stored version was removed",
				p, ev.Outcome, ev.Reason, ev.Detail, want.why, want.detail)
		}
	}
	for p, want := range map[string][2]string{"/private": {"skipped", "robots"}, "/flaky": {"failed", "http_503"}, "/same": {"skipped", SkipRedirect},
		"/big": {"skipped", fetch.ReasonTooLarge}, "/big-declared": {"skipped", fetch.ReasonTooLarge}} {
		if ev := c.pages[p]; ev.Outcome != want[0] || ev.Reason != want[1] {
			t.Errorf("%s: page event outcome %q, reason %q; want %s, %s", p, ev.Outcome, ev.Reason, want[0], want[1])
		}
	}
}

// TestCrawlWithoutStoredVersionsKeepsOutcomes crawls the changed site into
// an empty store: every page ends as it did before removals existed, and
// nothing is deleted.
func TestCrawlWithoutStoredVersionsKeepsOutcomes(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, freshDatabase(t))
	s := newStaleSite(t, true)
	c := crawlStale(t, st, s, false)
	want := map[store.FrontierState]map[string]int64{
		store.FrontierDone:    {DoneStored: 2, DoneNoIndex: 2, DoneEmpty: 1, DoneScriptRendered: 1},
		store.FrontierSkipped: {SkipRedirect: 2, SkipRedirectOutOfScope: 1, "robots": 1, fetch.ReasonContentType: 2, fetch.ReasonTooLarge: 2},
		store.FrontierFailed:  {"http_404": 1, "http_503": 1},
	}
	if diff := cmp.Diff(want, c.fr); diff != "" {
		t.Errorf("frontier reasons (-want +got):\n%s", diff)
	}
	if c.status.Counters.Deleted != 0 || len(c.status.Counters.DeletedBy) != 0 || len(c.deleted) != 0 {
		t.Errorf("deleted: got %d %v (metric %v), want none", c.status.Counters.Deleted, c.status.Counters.DeletedBy, c.deleted)
	}
	for p, want := range map[string][2]string{
		"/noindex": {DoneNoIndex, DoneNoIndex}, "/empty": {DoneEmpty, DoneEmpty}, "/shell": {DoneScriptRendered, DoneScriptRendered},
		"/moved": {"skipped", SkipRedirect}, "/away": {"skipped", SkipRedirectOutOfScope}, "/gone": {"failed", "http_404"},
		"/binary": {"skipped", fetch.ReasonContentType}, "/image": {"skipped", fetch.ReasonContentType},
	} {
		if ev := c.pages[p]; ev.Outcome != want[0] || ev.Reason != want[1] {
			t.Errorf("%s: page event outcome %q, reason %q; want %s, %s", p, ev.Outcome, ev.Reason, want[0], want[1])
		}
	}
	if ev := c.pages["/shell"]; ev.Detail != `an empty <div id="root">` {
		t.Errorf("/shell: page event detail %q, want the shell's evidence only", ev.Detail)
	}
	items, err := st.OutboxItems(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Kind == store.OutboxDelete {
			t.Errorf("outbox delete row for %s; want none", it.DocumentID)
		}
	}
}

// TestRecrawlRemovesShellStoredByOlderVersions: a shell stored as a document
// whose text is its "Loading ..." placeholder (as crawlers before shell
// detection stored them) is removed by the next crawl of the page.
func TestRecrawlRemovesShellStoredByOlderVersions(t *testing.T) {
	ctx := context.Background()
	site := testsite.NewShellSite()
	t.Cleanup(site.Close)
	st := openStore(t, freshDatabase(t))
	u := site.URL() + testsite.PathShellDocsify
	html := testsite.ShellPages()[testsite.PathShellDocsify]
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	extracted, _, err := pipeline.Extract(pu, "text/html", []byte(html), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Without the fetched body the indexer cannot tell the shell: it
	// stores the placeholder, as older versions did.
	p := pipeline.New(st, embedtest.NewHash(testDims), sectionSplitter{}, "test")
	res, err := p.Index(ctx, pipeline.Page{URL: u, Extracted: extracted, FetchedAt: time.Now().UTC()})
	if err != nil || res.Outcome != pipeline.Stored {
		t.Fatalf("store the shell as an older crawler did: %v %v", res.Outcome, err)
	}
	if !strings.Contains(extracted.Text, "Loading") {
		t.Fatalf("stored text %q, want the placeholder", extracted.Text)
	}

	e := newEngine(t, st, engineOpts{allow: []string{site.Addr()}})
	runEngine(t, e)
	status := waitJob(t, e, createJob(t, st, Spec{URL: u, MaxDepth: ptr(0), UseSitemap: ptr(false)}), 60*time.Second)
	if status.Counters.Deleted != 1 || status.Counters.DeletedBy[DoneScriptRendered] != 1 {
		t.Errorf("deleted: got %d %v, want 1 script_rendered", status.Counters.Deleted, status.Counters.DeletedBy)
	}
	if _, err := st.DocumentByURL(ctx, u); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("document of the shell after the crawl: got %v, want ErrNotFound", err)
	}
	evidence := htmltext.DetectShell([]byte(html), "text/html").Evidence()
	if len(status.Warnings) != 1 || !strings.Contains(status.Warnings[0], "1 of 1 page is rendered by JavaScript") ||
		!strings.Contains(status.Warnings[0], evidence) {
		t.Errorf("warnings: got %q, want one naming the removed shell (%s)", status.Warnings, evidence)
	}
}
