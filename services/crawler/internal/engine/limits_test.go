package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
)

// wideSite serves n pages /p/0 .. /p/n-1; every page links to the next ten,
// so the frontier always holds more than the workers can take.
func wideSite(t *testing.T, n int, delay time.Duration) *site {
	pages := map[string]func(http.ResponseWriter, *http.Request){}
	for i := 0; i < n; i++ {
		var links []string
		for j := 1; j <= 10 && i+j < n; j++ {
			links = append(links, fmt.Sprintf("/p/%d", i+j))
		}
		body := page(fmt.Sprintf("Page %d", i), fmt.Sprintf("Number %d.", i), links...)
		pages[fmt.Sprintf("/p/%d", i)] = func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(delay)
			htmlHandler(body)(w, r)
		}
	}
	return newSite(t, pages)
}

func TestMaxPagesExactWithConcurrency(t *testing.T) {
	for _, tc := range []struct {
		maxPages, workers int
	}{{1, 8}, {7, 8}, {25, 8}} {
		t.Run(fmt.Sprintf("max_pages=%d/workers=%d", tc.maxPages, tc.workers), func(t *testing.T) {
			st := openStore(t, freshDatabase(t))
			s := wideSite(t, 200, 5*time.Millisecond)
			e := newEngine(t, st, engineOpts{workers: tc.workers})
			runEngine(t, e)
			id := createJob(t, st, Spec{URL: s.URL + "/p/0", MaxDepth: ptr(20), MaxPages: tc.maxPages, UseSitemap: ptr(false)})
			status := waitJob(t, e, id, 60*time.Second)
			if got := status.Counters.Stored; got != int64(tc.maxPages) {
				t.Errorf("stored: got %d, want exactly max_pages %d", got, tc.maxPages)
			}
			if got := len(storedPaths(t, st)); got != tc.maxPages {
				t.Errorf("documents in MariaDB: got %d, want %d", got, tc.maxPages)
			}
			pagesHit := 0
			for path, n := range s.allHits() {
				if !strings.HasPrefix(path, "/p/") {
					continue // robots.txt, and "/" (the nav link, a 404: failures use no page slot)
				}
				pagesHit++
				if n != 1 {
					// The job's own account says whether a retry asked for the refetch.
					t.Errorf("hits of %s: got %d, want 1 (job counters %+v, errors %v)", path, n, status.Counters, status.LastErrors)
				}
			}
			if pagesHit != tc.maxPages {
				t.Errorf("pages fetched: got %d, want exactly max_pages %d (a slot is reserved before fetching); hits %v", pagesHit, tc.maxPages, s.allHits())
			}
		})
	}
}

func TestTrapContained(t *testing.T) {
	st := openStore(t, freshDatabase(t))
	pages := map[string]func(http.ResponseWriter, *http.Request){}
	s := newSite(t, pages)
	// An endless calendar: every month links to the next and to a day view
	// with a session parameter in many spellings.
	for i := 0; i < 10000; i++ {
		n := i
		pages[fmt.Sprintf("/cal/%d", n)] = htmlHandler(page(fmt.Sprintf("Month %d", n), "Nothing happens.",
			fmt.Sprintf("/cal/%d", n+1), fmt.Sprintf("/cal/%d?utm_campaign=x", n+1), fmt.Sprintf("/cal/%d#day", n+1)))
	}
	e := newEngine(t, st, engineOpts{workers: 4})
	runEngine(t, e)
	id := createJob(t, st, Spec{URL: s.URL + "/cal/0", MaxDepth: ptr(30), MaxPages: 500, UseSitemap: ptr(false)})
	status := waitJob(t, e, id, 60*time.Second)
	// Depth bounds the trap: /cal/0 .. /cal/30.
	if got := status.Counters.Stored; got != 31 {
		t.Errorf("stored: got %d, want 31 (depth 0..30)", got)
	}
	if n := s.hit("/cal/31"); n != 0 {
		t.Errorf("hits of /cal/31 (beyond max_depth): got %d, want 0", n)
	}
	if status.Counters.Filtered[FilterDepth] == 0 {
		t.Errorf("filtered_links[max_depth]: got 0, want the links of the depth-30 page counted")
	}
	if status.Status != store.JobDone {
		t.Errorf("status: got %s, want done", status.Status)
	}
}

// TestOverlongLinksFiltered: a page with a link longer than a document URL can be
// (a hostile or broken page) is stored with its other links followed; the long
// links are counted as filtered, never fetched, and do not fail the page. Before
// canon.MaxBytes a link over 8192 bytes made the frontier insert fail, and with it
// the start page and so the whole crawl.
func TestOverlongLinksFiltered(t *testing.T) {
	st := openStore(t, freshDatabase(t))
	long3k := "/deep/" + strings.Repeat("a", 3000)
	long9k := "/deeper/" + strings.Repeat("b", 9000)
	s := newSite(t, map[string]func(http.ResponseWriter, *http.Request){
		"/start": htmlHandler(page("Start", "The start page links to two overlong URLs and to a normal page.", long3k, long9k, "/ok")),
		"/ok":    htmlHandler(page("OK", "A normal page reached from the start page.")),
		long3k:   htmlHandler(page("Long", "Never fetched.")),
	})
	e := newEngine(t, st, engineOpts{workers: 2})
	runEngine(t, e)
	id := createJob(t, st, Spec{URL: s.URL + "/start", MaxDepth: ptr(2), MaxPages: 10, UseSitemap: ptr(false)})
	status := waitJob(t, e, id, 60*time.Second)
	if status.Status != store.JobDone {
		t.Fatalf("status: got %s, want done (errors %v)", status.Status, status.LastErrors)
	}
	stored := storedPaths(t, st)
	if !stored["/start"] || !stored["/ok"] || len(stored) != 2 {
		t.Errorf("stored documents: got %v, want /start and /ok", stored)
	}
	if got := status.Counters.Filtered[FilterTooLong]; got != 2 {
		t.Errorf("filtered_links[%s]: got %d, want 2 (counters %+v)", FilterTooLong, got, status.Counters)
	}
	if n := status.Counters.FailedBy[FailStore]; n != 0 { // the nav link "/" is a 404 of its own
		t.Errorf("failed_by_reason[%s]: got %d, want 0; errors %v", FailStore, n, status.LastErrors)
	}
	if n := s.hit(long3k); n != 0 {
		t.Errorf("hits of the 3000-byte link: got %d, want 0", n)
	}
}

// TestSpecRefusesOverlongStartURL: POST /crawls answers 400 for a start URL that
// could not be stored, instead of a job that fails when it seeds its frontier.
func TestSpecRefusesOverlongStartURL(t *testing.T) {
	_, err := Spec{URL: "http://example.com/" + strings.Repeat("a", 9000)}.Normalize(Limits{MaxPages: 10, MaxDepth: 5}, canon.DefaultOptions())
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "url" || !errors.Is(err, canon.ErrTooLong) || !strings.Contains(fe.Reason, "is 9019 characters long; at most") {
		t.Fatalf("Normalize with a 9000-byte start URL: got %v, want a url field error saying how long it is and the limit", err)
	}
	if len(fe.Error()) > 300 {
		t.Errorf("the error repeats the URL (%d bytes): %.200s", len(fe.Error()), fe.Error())
	}
}

func TestCancelJob(t *testing.T) {
	st := openStore(t, freshDatabase(t))
	s := wideSite(t, 300, 30*time.Millisecond)
	e := newEngine(t, st, engineOpts{workers: 2, lease: 600 * time.Millisecond})
	runEngine(t, e)
	id := createJob(t, st, Spec{URL: s.URL + "/p/0", MaxDepth: ptr(50), MaxPages: 300, UseSitemap: ptr(false)})
	waitStored(t, e, id, 5)
	if _, err := st.CancelJob(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	status := waitJob(t, e, id, 30*time.Second)
	if status.Status != store.JobCancelled {
		t.Fatalf("status: got %s, want cancelled", status.Status)
	}
	if status.Counters.InFlight != 0 {
		t.Errorf("in_flight after cancel: got %d, want 0 (claims released)", status.Counters.InFlight)
	}
	// Every page counted as stored is in MariaDB with its chunks.
	docs := storedPaths(t, st)
	if int64(len(docs)) != status.Counters.Stored {
		t.Errorf("documents: got %d, counters.stored %d; want equal", len(docs), status.Counters.Stored)
	}
	if status.Counters.Stored >= 300 {
		t.Errorf("stored %d: the cancel did not stop the crawl", status.Counters.Stored)
	}
}

// waitStored waits until the job stored at least n pages.
func waitStored(t *testing.T, e *Engine, id string, n int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := e.Status(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if st.Counters.Stored >= n {
			return
		}
		if time.Now().After(deadline) || st.Status.Terminal() {
			t.Fatalf("job %s: %d stored (%s), want >= %d", id, st.Counters.Stored, st.Status, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPageLinksBounded: one page adds at most MaxPageLinks distinct links to
// the frontier; the rest are counted as filtered (link_limit). A page of the
// body limit could otherwise add some 400,000 rows no crawl would fetch.
func TestPageLinksBounded(t *testing.T) {
	const maxLinks = 40
	st := openStore(t, freshDatabase(t))
	links := make([]string, maxLinks+25)
	for i := range links {
		links[i] = fmt.Sprintf("/p/%d", i)
	}
	s := newSite(t, map[string]func(http.ResponseWriter, *http.Request){
		"/start": htmlHandler(page("Start", "The start page links to more pages than one page may queue.", links...)),
	})
	e := newEngine(t, st, engineOpts{workers: 2, maxLinks: maxLinks})
	runEngine(t, e)
	id := createJob(t, st, Spec{URL: s.URL + "/start", MaxDepth: ptr(1), MaxPages: 2, UseSitemap: ptr(false)})
	status := waitJob(t, e, id, 60*time.Second)
	// The nav link "/" comes first, so the first maxLinks are "/" and /p/0 ...
	if got, want := status.Counters.Filtered[FilterLinkLimit], int64(26); got != want {
		t.Errorf("filtered_links[%s]: got %d, want %d (counters %+v)", FilterLinkLimit, got, want, status.Counters.Filtered)
	}
	if got, want := status.Counters.Discovered, int64(maxLinks+1); got != want {
		t.Errorf("discovered: got %d, want %d (the start page and the links it may queue)", got, want)
	}
	// A prune crawl that reached everything it queued still has not seen the
	// pages beyond the limit: it removes nothing and says why.
	id = createJob(t, st, Spec{URL: s.URL + "/start", MaxDepth: ptr(1), MaxPages: 200, UseSitemap: ptr(false), Prune: true})
	status = waitJob(t, e, id, 60*time.Second)
	if len(status.Warnings) != 1 || !strings.Contains(status.Warnings[0], "(link_limit)") || status.Counters.Deleted != 0 {
		t.Errorf("prune crawl: warnings %q, deleted %d; want one naming link_limit, nothing deleted", status.Warnings, status.Counters.Deleted)
	}
}
