package engine

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/store"
)

// changesPerDocument counts the change feed's operations per document.
func changesPerDocument(t *testing.T, st *store.Store) map[string]map[store.Op]int {
	t.Helper()
	changes, err := st.Changes(context.Background(), 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[store.Op]int{}
	for _, c := range changes {
		if out[c.DocumentID] == nil {
			out[c.DocumentID] = map[store.Op]int{}
		}
		out[c.DocumentID][c.Op]++
	}
	return out
}

func TestKillAndResume(t *testing.T) {
	const pages = 60
	dsn := freshDatabase(t)
	st := openStore(t, dsn)
	s := wideSite(t, pages, 15*time.Millisecond)
	a := newEngine(t, st, engineOpts{workers: 3, lease: time.Second, owner: "crawler-a"})
	stopA := runEngine(t, a)
	id := createJob(t, st, Spec{URL: s.URL + "/p/0", MaxDepth: ptr(50), MaxPages: 1000, UseSitemap: ptr(false)})
	waitStored(t, a, id, 15)
	stopA() // the process dies mid-job

	mid, err := a.Status(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	// A's shutdown ended its lease: the job is running in MariaDB and shows
	// stalled (no crawler) until B claims it.
	if mid.Status != JobStalled || mid.Counters.Stored >= pages {
		t.Fatalf("after stopping A: status %s with %d stored; want stalled with < %d", mid.Status, mid.Counters.Stored, pages)
	}

	// A new process on the same database takes the job over once A's lease expires.
	st2 := openStore(t, dsn)
	b := newEngine(t, st2, engineOpts{workers: 3, lease: time.Second, owner: "crawler-b"})
	runEngine(t, b)
	final := waitJob(t, b, id, 60*time.Second)
	if final.Status != store.JobDone {
		t.Fatalf("status: got %s, want done (errors %v)", final.Status, final.LastErrors)
	}
	if final.Counters.Stored != pages {
		t.Errorf("stored: got %d, want %d (no page lost)", final.Counters.Stored, pages)
	}
	if got := len(storedPaths(t, st2)); got != pages {
		t.Errorf("documents in MariaDB: got %d, want %d", got, pages)
	}
	// Every document was written exactly once: one insert, no update.
	for doc, ops := range changesPerDocument(t, st2) {
		if diff := cmp.Diff(map[store.Op]int{store.OpInsert: 1}, ops); diff != "" {
			t.Errorf("changes of document %s (-want +got):\n%s", doc, diff)
		}
	}
	// Pages stored before the stop were not fetched again. A page whose fetch
	// the stop interrupted may have been requested twice, never more.
	refetched := 0
	for path, n := range s.allHits() {
		if strings.HasPrefix(path, "/p/") && n > 1 {
			refetched++
			if n > 2 {
				t.Errorf("hits of %s: got %d, want at most 2", path, n)
			}
		}
	}
	if refetched > 3 {
		t.Errorf("%d pages fetched twice; only the 3 in flight at the stop may be", refetched)
	}
}

// TestShutdownHandsTheJobOverAtOnce: a crawler that shuts down (SIGTERM: its
// context ends) mid-job ends its lease on the job, so a crawler started next
// (the same service restarted) resumes the job at once, not a lease later. The
// lease is 20 s here; before, the job waited those 20 s (30 s with the
// default CRAWLER_LEASE, seen in the audit of a running stack).
func TestShutdownHandsTheJobOverAtOnce(t *testing.T) {
	const lease = 20 * time.Second
	dsn := freshDatabase(t)
	st := openStore(t, dsn)
	s := wideSite(t, 40, 15*time.Millisecond)
	a := newEngine(t, st, engineOpts{workers: 2, lease: lease, owner: "crawler-a"})
	stopA := runEngine(t, a)
	id := createJob(t, st, Spec{URL: s.URL + "/p/0", MaxDepth: ptr(50), MaxPages: 1000, UseSitemap: ptr(false)})
	waitStored(t, a, id, 5)
	stopA()

	b := newEngine(t, openStore(t, dsn), engineOpts{workers: 2, lease: lease, owner: "crawler-b"})
	start := time.Now()
	runEngine(t, b)
	for {
		job, err := st.GetJob(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if job.Owner == "crawler-b" || job.Status.Terminal() {
			break
		}
		if time.Since(start) > lease/2 {
			t.Fatalf("after A's shutdown: B has not taken the job over in %s (owner %q, lease until %s); want it at once",
				time.Since(start).Round(time.Millisecond), job.Owner, job.LeaseUntil.Format(time.RFC3339Nano))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if final := waitJob(t, b, id, 60*time.Second); final.Status != store.JobDone || final.Counters.Stored != 40 {
		t.Errorf("after the hand-over: status %s with %d stored; want done with 40", final.Status, final.Counters.Stored)
	}
}

func TestTwoEnginesShareTheQueue(t *testing.T) {
	dsn := freshDatabase(t)
	st := openStore(t, dsn)
	var sites []*site
	var ids []string
	for i := 0; i < 4; i++ {
		s := wideSite(t, 12, 10*time.Millisecond)
		sites = append(sites, s)
		ids = append(ids, createJob(t, st, Spec{URL: s.URL + "/p/0", MaxDepth: ptr(20), UseSitemap: ptr(false)}))
	}
	var engines []*Engine
	for _, owner := range []string{"crawler-a", "crawler-b"} {
		e := newEngine(t, openStore(t, dsn), engineOpts{workers: 2, owner: owner})
		e.cfg.JobSlots = 1
		engines = append(engines, e)
		runEngine(t, e)
	}
	owners := map[string]bool{}
	var mu sync.Mutex
	for _, id := range ids {
		status := waitJob(t, engines[0], id, 60*time.Second)
		if status.Status != store.JobDone || status.Counters.Stored != 12 {
			t.Errorf("job %s: got %s with %d stored, want done with 12", id, status.Status, status.Counters.Stored)
		}
		job, err := st.GetJob(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		owners[loadProgress(job.Counters).Owner] = true
		mu.Unlock()
	}
	if !owners["crawler-a"] || !owners["crawler-b"] {
		t.Errorf("job owners: got %v, want both crawler-a and crawler-b", owners)
	}
	for i, s := range sites {
		for path, n := range s.allHits() {
			if n != 1 {
				t.Errorf("site %d: hits of %s: got %d, want 1", i, path, n)
			}
		}
	}
}

// recrawlSite serves /x with an ETag, /y whose text changes with version,
// and /z which disappears (410) when gone is set.
type recrawlSite struct {
	*site
	mu           sync.Mutex
	version      int
	gone         bool
	conditionals int
}

func newRecrawlSite(t *testing.T) *recrawlSite {
	rs := &recrawlSite{version: 1}
	pages := map[string]func(http.ResponseWriter, *http.Request){
		"/": htmlHandler(page("Root", "The start.", "/x", "/y", "/z")),
		"/x": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("ETag", `"x-v1"`)
			if r.Header.Get("If-None-Match") == `"x-v1"` {
				rs.mu.Lock()
				rs.conditionals++
				rs.mu.Unlock()
				w.WriteHeader(http.StatusNotModified)
				return
			}
			htmlHandler(page("X", "Stable content."))(w, r)
		},
		"/y": func(w http.ResponseWriter, r *http.Request) {
			rs.mu.Lock()
			v := rs.version
			rs.mu.Unlock()
			htmlHandler(page("Y", fmt.Sprintf("Content version %d.", v)))(w, r)
		},
		"/z": func(w http.ResponseWriter, r *http.Request) {
			rs.mu.Lock()
			gone := rs.gone
			rs.mu.Unlock()
			if gone {
				http.Error(w, "gone", http.StatusGone)
				return
			}
			htmlHandler(page("Z", "Soon gone."))(w, r)
		},
	}
	rs.site = newSite(t, pages)
	return rs
}

func TestRecrawl(t *testing.T) {
	st := openStore(t, freshDatabase(t))
	rs := newRecrawlSite(t)
	e := newEngine(t, st, engineOpts{})
	runEngine(t, e)
	first := waitJob(t, e, createJob(t, st, Spec{URL: rs.URL + "/", UseSitemap: ptr(false)}), 30*time.Second)
	if first.Counters.Stored != 4 {
		t.Fatalf("first crawl stored %d, want 4", first.Counters.Stored)
	}

	t.Run("same content is not stored again", func(t *testing.T) {
		before := changesPerDocument(t, st)
		again := waitJob(t, e, createJob(t, st, Spec{URL: rs.URL + "/", UseSitemap: ptr(false)}), 30*time.Second)
		if again.Counters.Unchanged != 4 || again.Counters.Stored != 0 {
			t.Errorf("second crawl: got %d unchanged, %d stored; want 4, 0", again.Counters.Unchanged, again.Counters.Stored)
		}
		if diff := cmp.Diff(before, changesPerDocument(t, st)); diff != "" {
			t.Errorf("change feed moved for unchanged pages (-before +after):\n%s", diff)
		}
	})

	t.Run("recrawl: 304, changed, gone", func(t *testing.T) {
		rs.mu.Lock()
		rs.version = 2
		rs.gone = true
		rs.mu.Unlock()
		z, err := st.DocumentByURL(context.Background(), rs.URL+"/z")
		if err != nil {
			t.Fatal(err)
		}
		re := waitJob(t, e, createJob(t, st, Spec{URL: rs.URL + "/", MaxDepth: ptr(1), UseSitemap: ptr(false), Recrawl: true}), 30*time.Second)
		if re.Counters.Deleted != 1 || re.Counters.Stored != 1 || re.Counters.Unchanged != 2 {
			t.Errorf("recrawl counters: got deleted %d, stored %d, unchanged %d; want 1, 1 (/y), 2 (/ and /x)",
				re.Counters.Deleted, re.Counters.Stored, re.Counters.Unchanged)
		}
		rs.mu.Lock()
		cond := rs.conditionals
		rs.mu.Unlock()
		if cond != 1 {
			t.Errorf("conditional GETs answered 304: got %d, want 1 (/x)", cond)
		}
		if _, err := st.DocumentByURL(context.Background(), rs.URL+"/z"); err == nil {
			t.Errorf("/z answered 410 but its document is still stored")
		}
		ops := changesPerDocument(t, st)[z.ID]
		if ops[store.OpDelete] != 1 {
			t.Errorf("changes of /z: got %v, want one delete", ops)
		}
		y, err := st.DocumentByURL(context.Background(), rs.URL+"/y")
		if err != nil {
			t.Fatal(err)
		}
		chunks, err := st.DocumentChunks(context.Background(), y.ID)
		if err != nil {
			t.Fatal(err)
		}
		text := ""
		for _, c := range chunks {
			text += c.Text
		}
		if !strings.Contains(text, "version 2") || strings.Contains(text, "version 1") {
			t.Errorf("chunks of /y after recrawl: got %q, want the version 2 text only", text)
		}
		items, err := st.OutboxItems(context.Background(), 100)
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]int{}
		for _, it := range items {
			if it.DocumentID == z.ID {
				kinds[it.Kind]++
			}
		}
		if kinds[store.OutboxDelete] != 1 {
			t.Errorf("outbox rows of /z: got %v, want one delete for kg", kinds)
		}
	})
}

// TestResumeAfterCrashBetweenStoreAndComplete simulates a crawler that died
// after storing a page and before completing its frontier row: the new owner
// completes the row without fetching the page again.
func TestResumeAfterCrashBetweenStoreAndComplete(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, freshDatabase(t))
	s := newSite(t, map[string]func(http.ResponseWriter, *http.Request){
		"/": htmlHandler(page("Only page", "Stored before the crash.")),
	})
	id := createJob(t, st, Spec{URL: s.URL + "/", UseSitemap: ptr(false)})

	// The dead crawler: claims the job and the URL, stores the page, dies.
	dead := newEngine(t, st, engineOpts{owner: "crawler-dead"})
	job, ok, err := st.ClaimJob(ctx, "crawler-dead", 200*time.Millisecond)
	if err != nil || !ok || job.ID != id {
		t.Fatalf("claim job: %v %v", ok, err)
	}
	if _, err := st.EnqueueURLs(ctx, id, []store.FrontierURL{{URL: s.URL + "/", Depth: 0}}); err != nil {
		t.Fatal(err)
	}
	items, err := st.ClaimURLs(ctx, store.ClaimRequest{JobID: id, Owner: "crawler-dead", N: 1, Lease: time.Hour, Budget: 100})
	if err != nil || len(items) != 1 {
		t.Fatalf("claim url: %v %v", items, err)
	}
	res, err := dead.CrawlPage(ctx, s.URL+"/", nil)
	if err != nil || res.Outcome != "stored" {
		t.Fatalf("store the page: %v %v", res.Outcome, err)
	}
	if _, err := st.HeartbeatJob(ctx, id, "crawler-dead", 200*time.Millisecond,
		store.JobProgress{Counters: []byte(`{"seeded":true,"owner":"crawler-dead"}`)}); err != nil {
		t.Fatal(err)
	}
	fetchesBefore := s.hit("/")

	// The new crawler takes the job over once the lease expired.
	b := newEngine(t, st, engineOpts{owner: "crawler-new"})
	runEngine(t, b)
	status := waitJob(t, b, id, 30*time.Second)
	if status.Status != store.JobDone || status.Counters.Stored != 1 {
		t.Fatalf("job: got %s with %d stored, want done with 1 (errors %v)", status.Status, status.Counters.Stored, status.LastErrors)
	}
	if n := s.hit("/") - fetchesBefore; n != 0 {
		t.Errorf("fetches of the stored page after the takeover: got %d, want 0", n)
	}
	for doc, ops := range changesPerDocument(t, st) {
		if diff := cmp.Diff(map[store.Op]int{store.OpInsert: 1}, ops); diff != "" {
			t.Errorf("changes of document %s (-want +got):\n%s", doc, diff)
		}
	}
}
