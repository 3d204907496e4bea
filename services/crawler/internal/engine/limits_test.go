package engine

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/store"
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
