package engine

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kgsearch/kgsearch/pkg/store"
)

// TestStalledWhenTheOwnerIsGone: a running job whose crawler stopped renewing
// its lease shows as stalled, with the reason, until a crawler takes it over
// and finishes it.
func TestStalledWhenTheOwnerIsGone(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, freshDatabase(t))
	s := newSite(t, map[string]func(http.ResponseWriter, *http.Request){
		"/": htmlHandler(page("Only page", "Crawled after the takeover.")),
	})
	id := createJob(t, st, Spec{URL: s.URL + "/", UseSitemap: ptr(false)})
	if _, ok, err := st.ClaimJob(ctx, "crawler-gone", 100*time.Millisecond); err != nil || !ok {
		t.Fatalf("claim job: %v %v", ok, err)
	}
	e := newEngine(t, st, engineOpts{owner: "crawler-new"})
	if got, err := e.Status(ctx, id); err != nil || got.Status != store.JobRunning || got.Stall != nil {
		t.Fatalf("status within the lease: got %s %+v (%v), want running without a stall", got.Status, got.Stall, err)
	}
	time.Sleep(200 * time.Millisecond)
	got, err := e.Status(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != JobStalled || got.Stall == nil || got.Stall.Reason != StallNoCrawler || !strings.Contains(got.Stall.Detail, "crawler-gone") {
		t.Fatalf("status after the lease: got %s %+v, want stalled (no_crawler) naming crawler-gone", got.Status, got.Stall)
	}
	b, _ := json.Marshal(got)
	if !strings.Contains(string(b), `"status":"stalled"`) || !strings.Contains(string(b), `"reason":"no_crawler"`) {
		t.Errorf("status JSON: got %s, want status stalled with the reason", b)
	}

	runEngine(t, e)
	final := waitJob(t, e, id, 30*time.Second)
	if final.Status != store.JobDone || final.Stall != nil || final.Counters.Stored != 1 {
		t.Errorf("after the takeover: got %s %+v with %d stored, want done with 1", final.Status, final.Stall, final.Counters.Stored)
	}
}

func TestRetryPolicy(t *testing.T) {
	outage := &mysql.MySQLError{Number: 2013, Message: "Lost connection to server during query"}
	constraint := &mysql.MySQLError{Number: 1406, Message: "Data too long"}
	for _, tc := range []struct {
		name     string
		out      outcome
		attempts int
		want     bool
	}{
		{"store failure, first attempt", outcome{state: store.FrontierFailed, reason: FailStore, err: constraint}, 1, true},
		{"store failure, last attempt", outcome{state: store.FrontierFailed, reason: FailStore, err: constraint}, maxAttempts, false},
		{"embed failure, first attempt", outcome{state: store.FrontierFailed, reason: FailEmbed, err: errors.New("busy")}, 1, true},
		{"database gone, beyond maxAttempts", outcome{state: store.FrontierFailed, reason: FailStore, err: outage}, maxAttempts + 1, true},
		{"database gone, bounded", outcome{state: store.FrontierFailed, reason: FailStore, err: outage}, maxOutageAttempts, false},
		{"http error is final", outcome{state: store.FrontierFailed, reason: "http_500", err: errors.New("HTTP 500")}, 1, false},
		{"done is final", outcome{state: store.FrontierDone, reason: DoneStored}, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := retry(store.FrontierItem{Attempts: tc.attempts}, tc.out); got != tc.want {
				t.Errorf("retry: got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestReclaimLoopReturnsLostClaims: while a job runs, a claim of its own
// owner that no worker holds (its answer was lost in an outage) and an
// expired claim of a dead owner are returned to the queue by the job's own
// reclaim loop, and the job finishes with every page stored, long before the
// 10-minute URL lease.
func TestReclaimLoopReturnsLostClaims(t *testing.T) {
	ctx := context.Background()
	const pages = 40
	st := openStore(t, freshDatabase(t))
	s := wideSite(t, pages, 20*time.Millisecond)
	e := newEngine(t, st, engineOpts{workers: 2, owner: "crawler-a"})
	e.cfg.Reclaim = 100 * time.Millisecond
	runEngine(t, e)
	id := createJob(t, st, Spec{URL: s.URL + "/p/0", MaxDepth: ptr(50), MaxPages: 1000, UseSitemap: ptr(false)})
	waitStored(t, e, id, 3)
	claim := func(owner string, lease time.Duration) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			items, err := st.ClaimURLs(ctx, store.ClaimRequest{JobID: id, Owner: owner, N: 1, Lease: lease})
			if err != nil {
				t.Fatal(err)
			}
			if len(items) == 1 {
				return
			}
		}
		t.Fatalf("no queued URL to claim as %s", owner)
	}
	claim("crawler-a", time.Hour)               // lost: the engine's own name, no worker holds it
	claim("crawler-dead", 200*time.Millisecond) // a dead owner's claim, expiring soon
	final := waitJob(t, e, id, 60*time.Second)
	if final.Status != store.JobDone || final.Counters.Stored != pages || final.Counters.InFlight != 0 {
		t.Errorf("job: got %s with %d stored, %d in flight; want done with %d, 0", final.Status, final.Counters.Stored, final.Counters.InFlight, pages)
	}
	if n := testutil.ToFloat64(e.m.reclaimed); n < 2 {
		t.Errorf("claims reclaimed: got %v, want at least 2", n)
	}
}
