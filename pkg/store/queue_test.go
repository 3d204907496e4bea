package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestJobLifecycle(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	spec := json.RawMessage(`{"url":"https://example.com/","max_pages":10}`)
	j, err := s.CreateJob(ctx, spec, "")
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != JobQueued || j.ID == "" || !j.StartedAt.IsZero() {
		t.Fatalf("created job: got %+v, want queued with an id and no start time", j)
	}
	var gotSpec, wantSpec any
	_ = json.Unmarshal(j.Spec, &gotSpec)
	_ = json.Unmarshal(spec, &wantSpec)
	if diff := cmp.Diff(wantSpec, gotSpec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}

	claimed, ok, err := s.ClaimJob(ctx, "worker-a", time.Minute)
	if err != nil || !ok || claimed.ID != j.ID || claimed.Status != JobRunning || claimed.Owner != "worker-a" || claimed.StartedAt.IsZero() {
		t.Fatalf("ClaimJob: got %+v ok=%v err=%v, want job %s running for worker-a", claimed, ok, err, j.ID)
	}
	if _, ok, err := s.ClaimJob(ctx, "worker-b", time.Minute); ok || err != nil {
		t.Errorf("second ClaimJob: got ok=%v err=%v, want nothing to claim", ok, err)
	}
	status, err := s.HeartbeatJob(ctx, j.ID, "worker-a", time.Minute, JobProgress{Counters: json.RawMessage(`{"fetched":3}`), LastErrors: []string{"timeout on /x"}})
	if err != nil || status != JobRunning {
		t.Fatalf("HeartbeatJob: got %s, %v; want running", status, err)
	}
	if _, err := s.HeartbeatJob(ctx, j.ID, "worker-b", time.Minute, JobProgress{}); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("heartbeat by a non-owner: got %v, want ErrLeaseLost", err)
	}
	done, err := s.FinishJob(ctx, j.ID, "worker-a", JobDone, JobProgress{Counters: json.RawMessage(`{"fetched":5}`)})
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != JobDone || done.FinishedAt.IsZero() || done.Owner != "" || string(done.Counters) != `{"fetched":5}` && string(done.Counters) != `{"fetched": 5}` {
		t.Errorf("finished job: got %+v", done)
	}
	if diff := cmp.Diff([]string{"timeout on /x"}, done.LastErrors); diff != "" {
		t.Errorf("last errors kept across finish (-want +got):\n%s", diff)
	}
	list, err := s.ListJobs(ctx, JobDone, 10)
	if err != nil || len(list) != 1 || list[0].ID != j.ID {
		t.Errorf("ListJobs(done): got %d jobs (%v), want the one", len(list), err)
	}
	if _, err := s.GetJob(ctx, "no-such-job"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetJob(unknown): got %v, want ErrNotFound", err)
	}
}

func TestJobCancelAndExpiredLeaseResume(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	a, _ := s.CreateJob(ctx, json.RawMessage(`{"n":1}`), "")
	b, _ := s.CreateJob(ctx, json.RawMessage(`{"n":2}`), "")

	c, err := s.CancelJob(ctx, a.ID)
	if err != nil || c.Status != JobCancelled || c.FinishedAt.IsZero() {
		t.Fatalf("cancel queued job: got %+v, %v; want cancelled and finished", c, err)
	}
	// The crashed worker: claims b with a short lease and never heartbeats.
	got, ok, err := s.ClaimJob(ctx, "crashed", 50*time.Millisecond)
	if err != nil || !ok || got.ID != b.ID {
		t.Fatalf("claim: got %s ok=%v err=%v, want %s", got.ID, ok, err, b.ID)
	}
	time.Sleep(120 * time.Millisecond)
	resumed, ok, err := s.ClaimJob(ctx, "rescuer", time.Minute)
	if err != nil || !ok || resumed.ID != b.ID || resumed.Owner != "rescuer" || !resumed.StartedAt.Equal(got.StartedAt) {
		t.Fatalf("resume: got %+v ok=%v err=%v, want %s taken over by rescuer with the original start time", resumed, ok, err, b.ID)
	}
	if _, err := s.HeartbeatJob(ctx, b.ID, "crashed", time.Minute, JobProgress{}); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("old owner heartbeat: got %v, want ErrLeaseLost", err)
	}
	// Cancelling a running job: the owner learns it at its heartbeat, and finishing keeps it cancelled.
	if _, err := s.CancelJob(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	st, err := s.HeartbeatJob(ctx, b.ID, "rescuer", time.Minute, JobProgress{})
	if err != nil || st != JobCancelled {
		t.Errorf("heartbeat after cancel: got %s, %v; want cancelled", st, err)
	}
	fin, err := s.FinishJob(ctx, b.ID, "rescuer", JobDone, JobProgress{})
	if err != nil || fin.Status != JobCancelled || fin.FinishedAt.IsZero() {
		t.Errorf("finish after cancel: got %+v, %v; want cancelled with a finish time", fin, err)
	}
	if _, err := s.FinishJob(ctx, b.ID, "rescuer", JobQueued, JobProgress{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("finish with status queued: got %v, want ErrInvalid", err)
	}
}

func TestFrontierEnqueueDedupAndOrder(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	j, _ := s.CreateJob(ctx, json.RawMessage(`{}`), "")
	n, err := s.EnqueueURLs(ctx, j.ID, []FrontierURL{
		{"https://example.com/b", 1}, {"https://example.com/", 0}, {"https://example.com/a", 1},
		{"https://example.com/", 0}, // duplicate in the batch
	})
	if err != nil || n != 3 {
		t.Fatalf("enqueue: got %d, %v; want 3 new", n, err)
	}
	n, err = s.EnqueueURLs(ctx, j.ID, []FrontierURL{{"https://example.com/a", 2}, {"https://example.com/c", 2}})
	if err != nil || n != 1 {
		t.Fatalf("second enqueue: got %d, %v; want 1 new", n, err)
	}
	items, err := s.ClaimURLs(ctx, ClaimRequest{JobID: j.ID, Owner: "w", N: 10, Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		got = append(got, fmt.Sprintf("%d %s", it.Depth, it.URL))
		if it.URLHash != URLHash(it.URL) || it.Attempts != 1 {
			t.Errorf("item %s: hash %s attempts %d, want %s and 1", it.URL, it.URLHash, it.Attempts, URLHash(it.URL))
		}
	}
	want := []string{"0 https://example.com/", "1 https://example.com/b", "1 https://example.com/a", "2 https://example.com/c"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("claim order (-want +got):\n%s", diff)
	}
	if _, err := s.EnqueueURLs(ctx, "no-such-job", []FrontierURL{{"https://x.example/", 0}}); !errors.Is(err, ErrNotFound) {
		t.Errorf("enqueue for unknown job: got %v, want ErrNotFound", err)
	}
}

func TestFrontierTwoWorkersNeverShareAURL(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	j, _ := s.CreateJob(ctx, json.RawMessage(`{}`), "")
	const total = 600
	urls := make([]FrontierURL, total)
	for i := range urls {
		urls[i] = FrontierURL{URL: fmt.Sprintf("https://example.com/p%d", i), Depth: i % 3}
	}
	if _, err := s.EnqueueURLs(ctx, j.ID, urls); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]string{}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		owner := fmt.Sprintf("worker-%d", w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				items, err := s.ClaimURLs(ctx, ClaimRequest{JobID: j.ID, Owner: owner, N: 7, Lease: time.Minute})
				if err != nil {
					errs <- err
					return
				}
				if len(items) == 0 {
					return
				}
				for _, it := range items {
					mu.Lock()
					if prev, dup := seen[it.URL]; dup {
						errs <- fmt.Errorf("%s handed to %s and %s", it.URL, prev, owner)
					}
					seen[it.URL] = owner
					mu.Unlock()
					if err := s.CompleteURL(ctx, j.ID, it.URLHash, owner, FrontierDone, ""); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(seen) != total {
		t.Errorf("claimed %d distinct URLs, want %d", len(seen), total)
	}
	c, err := s.FrontierCounts(ctx, j.ID)
	if err != nil || c != (FrontierCounts{Done: total}) {
		t.Errorf("counts: got %+v (%v), want all %d done", c, err, total)
	}
}

func TestFrontierBudgetIsExactAcrossWorkers(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	j, _ := s.CreateJob(ctx, json.RawMessage(`{}`), "")
	urls := make([]FrontierURL, 100)
	for i := range urls {
		urls[i] = FrontierURL{URL: fmt.Sprintf("https://example.com/%d", i)}
	}
	if _, err := s.EnqueueURLs(ctx, j.ID, urls); err != nil {
		t.Fatal(err)
	}
	const budget = 25
	var wg sync.WaitGroup
	var mu sync.Mutex
	claimed := 0
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := fmt.Sprintf("w%d", w)
			for {
				items, err := s.ClaimURLs(ctx, ClaimRequest{JobID: j.ID, Owner: owner, N: 4, Lease: time.Minute, Budget: budget})
				if err != nil {
					t.Error(err)
					return
				}
				if len(items) == 0 {
					return
				}
				for _, it := range items {
					// Every tenth URL fails, whoever claims it: failures return their
					// budget, and 90 URLs remain for the 25 done (failing by claim,
					// e.g. each claim's first item, can exhaust the queue in one-item
					// claims once the budget is nearly spent).
					state := FrontierDone
					if strings.HasSuffix(it.URL, "0") {
						state = FrontierFailed
					}
					if err := s.CompleteURL(ctx, j.ID, it.URLHash, owner, state, "test"); err != nil {
						t.Error(err)
					}
				}
				mu.Lock()
				claimed += len(items)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	c, _ := s.FrontierCounts(ctx, j.ID)
	if c.Done != budget {
		t.Errorf("got %d done, want exactly the budget %d (counts %+v)", c.Done, budget, c)
	}
	if int64(claimed) != c.Done+c.Failed {
		t.Errorf("claimed %d, want done+failed = %d", claimed, c.Done+c.Failed)
	}
}

func TestFrontierResumeAfterCrash(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	j, _ := s.CreateJob(ctx, json.RawMessage(`{}`), "")
	if _, err := s.EnqueueURLs(ctx, j.ID, []FrontierURL{{"https://example.com/1", 0}, {"https://example.com/2", 0}, {"https://example.com/3", 0}}); err != nil {
		t.Fatal(err)
	}
	// The lease must outlast the claim, the completion and the first requeue even on
	// a loaded machine (50 ms did not, under make test's parallel packages).
	const lease = 2 * time.Second
	items, err := s.ClaimURLs(ctx, ClaimRequest{JobID: j.ID, Owner: "crashed", N: 2, Lease: lease})
	if err != nil || len(items) != 2 {
		t.Fatalf("claim: got %d, %v", len(items), err)
	}
	if err := s.CompleteURL(ctx, j.ID, items[0].URLHash, "crashed", FrontierDone, ""); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.RequeueExpired(ctx, j.ID); n != 0 {
		t.Errorf("requeued %d before the lease expired, want 0", n)
	}
	time.Sleep(lease + 200*time.Millisecond)
	if n, err := s.RequeueExpired(ctx, ""); err != nil || n != 1 {
		t.Errorf("RequeueExpired: got %d, %v; want 1", n, err)
	}
	if err := s.CompleteURL(ctx, j.ID, items[1].URLHash, "crashed", FrontierDone, ""); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("completing an expired claim: got %v, want ErrLeaseLost", err)
	}
	again, err := s.ClaimURLs(ctx, ClaimRequest{JobID: j.ID, Owner: "rescuer", N: 10, Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range again {
		got = append(got, fmt.Sprintf("%s#%d", it.URL, it.Attempts))
	}
	want := []string{items[1].URL + "#2", "https://example.com/3#1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reclaimed after crash (-want +got):\n%s", diff)
	}
	if n, err := s.ReleaseClaims(ctx, j.ID, "rescuer"); err != nil || n != 2 {
		t.Errorf("ReleaseClaims: got %d, %v; want 2", n, err)
	}
	if c, _ := s.FrontierCounts(ctx, j.ID); c != (FrontierCounts{Queued: 2, Done: 1}) {
		t.Errorf("counts: got %+v, want 2 queued 1 done", c)
	}
	if err := s.CompleteURL(ctx, j.ID, items[1].URLHash, "rescuer", FrontierClaimed, ""); !errors.Is(err, ErrInvalid) {
		t.Errorf("complete with state claimed: got %v, want ErrInvalid", err)
	}
}

func TestOutboxClaimAckBackoff(t *testing.T) {
	dsn := freshDatabase(t)
	s, err := Open(context.Background(), Config{DSN: dsn, Model: testModel,
		OutboxBackoff: func(attempts int) time.Duration { return time.Duration(attempts) * 200 * time.Millisecond }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	g := newClustered(30, 384, 2, 0.5)
	a := &Document{URL: "https://example.com/a"}
	b := &Document{URL: "https://example.com/b"}
	if _, err := s.UpsertDocument(ctx, a, makeChunks(g, 1, "a"), json.RawMessage(`{"doc":"a","v":1}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpsertDocument(ctx, b, makeChunks(g, 1, "b"), json.RawMessage(`{"doc":"b"}`)); err != nil {
		t.Fatal(err)
	}
	// A newer version of a supersedes its undelivered row.
	if _, err := s.UpsertDocument(ctx, a, makeChunks(g, 1, "a"), json.RawMessage(`{"doc":"a","v":2}`)); err != nil {
		t.Fatal(err)
	}
	first, err := s.ClaimOutbox(ctx, "d1", 10, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 2 {
		t.Fatalf("claimed %d rows, want 2 (a's first version superseded)", len(first))
	}
	if first[0].DocumentID != b.ID || first[1].DocumentID != a.ID || first[0].Attempts != 1 || first[0].Kind != OutboxUpsert {
		t.Errorf("claimed %+v, want b then a (v2), attempt 1", first)
	}
	var v struct{ V int }
	_ = json.Unmarshal(first[1].Payload, &v)
	if v.V != 2 {
		t.Errorf("a's payload: got %s, want version 2", first[1].Payload)
	}
	if more, _ := s.ClaimOutbox(ctx, "d2", 10, time.Minute); len(more) != 0 {
		t.Errorf("second worker claimed %d in-flight rows, want 0", len(more))
	}
	if err := s.AckOutbox(ctx, first[0].ID, "d1"); err != nil {
		t.Fatal(err)
	}
	if err := s.AckOutbox(ctx, first[0].ID, "d1"); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("double ack: got %v, want ErrLeaseLost", err)
	}
	before := time.Now()
	next, err := s.FailOutbox(ctx, first[1].ID, "d1", errors.New("kg unavailable: 503"))
	if err != nil {
		t.Fatal(err)
	}
	if d := next.Sub(before); d < 100*time.Millisecond || d > 5*time.Second {
		t.Errorf("retry scheduled %s after the failure, want about the 200ms backoff", d)
	}
	if early, _ := s.ClaimOutbox(ctx, "d2", 10, time.Minute); len(early) != 0 {
		t.Errorf("claimed %d rows during backoff, want 0", len(early))
	}
	time.Sleep(time.Until(next) + 50*time.Millisecond)
	retry, err := s.ClaimOutbox(ctx, "d2", 10, time.Minute)
	if err != nil || len(retry) != 1 {
		t.Fatalf("after backoff: got %d rows, %v; want 1", len(retry), err)
	}
	if retry[0].Attempts != 2 || retry[0].LastError != "kg unavailable: 503" {
		t.Errorf("retry: got attempts %d last error %q, want 2 and the failure", retry[0].Attempts, retry[0].LastError)
	}
	next2, err := s.FailOutbox(ctx, retry[0].ID, "d2", errors.New("again"))
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Until(next2); d < 250*time.Millisecond {
		t.Errorf("second backoff %s, want about 400ms (grows with attempts)", d)
	}

	// Delete: an outbox delete event follows, superseding the pending upsert row.
	if _, err := s.DeleteDocument(ctx, a.ID, &DeletePayload{URL: a.URL}); err != nil {
		t.Fatal(err)
	}
	items, err := s.OutboxItems(ctx, 10)
	if err != nil || len(items) != 1 || items[0].Kind != OutboxDelete || items[0].DocumentID != a.ID {
		t.Fatalf("outbox after delete: got %+v (%v), want one delete row for a", items, err)
	}
	if p, err := items[0].DeletePayload(); err != nil || p != (DeletePayload{ID: a.ID, URL: a.URL}) {
		t.Errorf("delete payload: got %+v (%v), want id and url of a", p, err)
	}
	if _, err := s.DeleteDocument(ctx, a.ID, &DeletePayload{ID: "other"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("delete with another document's payload: got %v, want ErrInvalid", err)
	}
	old := OutboxItem{ID: 7, DocumentID: "d7"}
	if p, err := old.DeletePayload(); err != nil || p.ID != "d7" {
		t.Errorf("payload of a row without one: got %+v (%v), want the row's document id", p, err)
	}
}

func TestOutboxLeaseExpiryRedelivers(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	g := newClustered(31, 384, 2, 0.5)
	if _, err := s.UpsertDocument(ctx, &Document{URL: "https://example.com/x"}, makeChunks(g, 1, "x"), json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	got, err := s.ClaimOutbox(ctx, "crashed", 5, 50*time.Millisecond)
	if err != nil || len(got) != 1 {
		t.Fatalf("claim: %d, %v", len(got), err)
	}
	time.Sleep(120 * time.Millisecond)
	again, err := s.ClaimOutbox(ctx, "rescuer", 5, time.Minute)
	if err != nil || len(again) != 1 || again[0].ID != got[0].ID || again[0].Attempts != 2 {
		t.Fatalf("after lease expiry: got %+v, %v; want the same row at attempt 2", again, err)
	}
	if err := s.AckOutbox(ctx, got[0].ID, "crashed"); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("ack by the expired owner: got %v, want ErrLeaseLost", err)
	}
	if err := s.AckOutbox(ctx, again[0].ID, "rescuer"); err != nil {
		t.Error(err)
	}
	if _, err := s.ClaimOutbox(ctx, "", 5, time.Minute); !errors.Is(err, ErrInvalid) {
		t.Errorf("claim without owner: got %v, want ErrInvalid", err)
	}
}

func TestBlocklist(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	if _, err := s.BlockDomain(ctx, "Tracker.Example.COM.", "ads"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BlockDomain(ctx, "10.0.0.1:8080", ""); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host  string
		want  bool
		match string
	}{
		{"tracker.example.com", true, "tracker.example.com"},
		{"cdn.TRACKER.example.com", true, "tracker.example.com"},
		{"tracker.example.com:443", true, "tracker.example.com"},
		{"example.com", false, ""},
		{"nottracker.example.com", false, ""},
		{"10.0.0.1", true, "10.0.0.1"},
		{"10.0.0.2", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			got, match, err := s.IsBlocked(ctx, tt.host)
			if err != nil || got != tt.want || match != tt.match {
				t.Errorf("IsBlocked(%q): got %v %q (%v), want %v %q", tt.host, got, match, err, tt.want, tt.match)
			}
		})
	}
	list, err := s.BlockedDomains(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range list {
		names = append(names, b.Domain)
	}
	if diff := cmp.Diff([]string{"10.0.0.1", "tracker.example.com"}, names); diff != "" {
		t.Errorf("BlockedDomains (-want +got):\n%s", diff)
	}
	if err := s.UnblockDomain(ctx, "tracker.example.com"); err != nil {
		t.Fatal(err)
	}
	if err := s.UnblockDomain(ctx, "tracker.example.com"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second unblock: got %v, want ErrNotFound", err)
	}
	for _, bad := range []string{"", "exa mple.com", "-x.com", "a..b", "bücher.de", "x'); DROP TABLE blocklist; --"} {
		if _, err := s.BlockDomain(ctx, bad, ""); !errors.Is(err, ErrInvalid) {
			t.Errorf("BlockDomain(%q): got %v, want ErrInvalid", bad, err)
		}
	}
}

func TestFrontierReleaseLostClaims(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	j, _ := s.CreateJob(ctx, json.RawMessage(`{}`), "")
	if _, err := s.EnqueueURLs(ctx, j.ID, []FrontierURL{{"https://example.com/1", 0}, {"https://example.com/2", 0}, {"https://example.com/3", 0}}); err != nil {
		t.Fatal(err)
	}
	mine, err := s.ClaimURLs(ctx, ClaimRequest{JobID: j.ID, Owner: "me", N: 2, Lease: time.Hour})
	if err != nil || len(mine) != 2 {
		t.Fatalf("claim: got %d, %v", len(mine), err)
	}
	other, err := s.ClaimURLs(ctx, ClaimRequest{JobID: j.ID, Owner: "other", N: 1, Lease: time.Hour})
	if err != nil || len(other) != 1 {
		t.Fatalf("claim: got %d, %v", len(other), err)
	}
	// mine[0] is still held by a worker; mine[1]'s completion was lost.
	n, err := s.ReleaseClaimsExcept(ctx, j.ID, "me", []string{mine[0].URLHash})
	if err != nil || n != 1 {
		t.Fatalf("ReleaseClaimsExcept: got %d, %v; want 1", n, err)
	}
	if c, _ := s.FrontierCounts(ctx, j.ID); c != (FrontierCounts{Queued: 1, Claimed: 2}) {
		t.Errorf("counts: got %+v, want 1 queued (the lost claim), 2 claimed", c)
	}
	if err := s.CompleteURL(ctx, j.ID, mine[0].URLHash, "me", FrontierDone, ""); err != nil {
		t.Errorf("the kept claim: %v", err)
	}
	if n, err := s.ReleaseClaimsExcept(ctx, j.ID, "me", nil); err != nil || n != 0 {
		t.Errorf("nothing left to release: got %d, %v", n, err)
	}
}

func TestFrontierReasons(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	j, _ := s.CreateJob(ctx, json.RawMessage(`{}`), "")
	if _, err := s.EnqueueURLs(ctx, j.ID, []FrontierURL{{"https://example.com/1", 0}, {"https://example.com/2", 0}, {"https://example.com/3", 0}, {"https://example.com/4", 0}}); err != nil {
		t.Fatal(err)
	}
	items, err := s.ClaimURLs(ctx, ClaimRequest{JobID: j.ID, Owner: "w", N: 3, Lease: time.Minute})
	if err != nil || len(items) != 3 {
		t.Fatalf("claim: %d, %v", len(items), err)
	}
	for i, c := range []struct {
		state  FrontierState
		reason string
	}{{FrontierDone, "stored"}, {FrontierFailed, "http_404"}} {
		if err := s.CompleteURL(ctx, j.ID, items[i].URLHash, "w", c.state, c.reason); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.FrontierReasons(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[FrontierState]map[string]int64{
		FrontierDone: {"stored": 1}, FrontierFailed: {"http_404": 1}, FrontierClaimed: {"": 1}, FrontierQueued: {"": 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
}

// TestCreateJobKey: a key is held by its queued or running job only; an
// identical job meanwhile is refused with the holder's id, and of identical
// jobs created at once exactly one is stored.
func TestCreateJobKey(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	spec := json.RawMessage(`{"url":"https://example.com/"}`)
	key := strings.Repeat("ab", 32)
	first, err := s.CreateJob(ctx, spec, key)
	if err != nil {
		t.Fatal(err)
	}
	refused := func(step, holder string, status JobStatus) {
		t.Helper()
		_, err := s.CreateJob(ctx, spec, key)
		var dup *DuplicateJobError
		if !errors.As(err, &dup) || !errors.Is(err, ErrDuplicateJob) || dup.ID != holder || dup.Status != status {
			t.Fatalf("%s: got %v, want a DuplicateJobError naming %s (%s)", step, err, holder, status)
		}
	}
	refused("while queued", first.ID, JobQueued)
	if _, err := s.CreateJob(ctx, spec, strings.Repeat("cd", 32)); err != nil {
		t.Errorf("another key: got %v, want it created", err)
	}
	if _, err := s.CreateJob(ctx, spec, ""); err != nil {
		t.Errorf("no key: got %v, want it created", err)
	}
	if _, ok, err := s.ClaimJob(ctx, "w", time.Minute); !ok || err != nil {
		t.Fatalf("claim: ok=%v err=%v", ok, err)
	}
	refused("while running", first.ID, JobRunning)
	if _, err := s.FinishJob(ctx, first.ID, "w", JobDone, JobProgress{}); err != nil {
		t.Fatal(err)
	}
	second, err := s.CreateJob(ctx, spec, key)
	if err != nil {
		t.Fatalf("after the first finished: got %v, want a new job", err)
	}
	refused("the second while queued", second.ID, JobQueued)
	if _, err := s.CancelJob(ctx, second.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateJob(ctx, spec, key); err != nil {
		t.Fatalf("after the second was cancelled: got %v, want a new job", err)
	}

	// Identical creates at once, on separate connections: one wins.
	raceKey := strings.Repeat("ef", 32)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = s.CreateJob(ctx, spec, raceKey)
		}()
	}
	close(start)
	wg.Wait()
	created, dups := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			created++
		case errors.Is(err, ErrDuplicateJob):
			dups++
		default:
			t.Errorf("concurrent create: %v", err)
		}
	}
	if created != 1 || dups != n-1 {
		t.Errorf("concurrent identical creates: got %d created and %d refused, want 1 and %d", created, dups, n-1)
	}
}

// TestDeleteDocumentInJob: the document, its chunks, the change, the kg
// outbox row and the job's frontier row are written together or not at all;
// a document written since the job started is kept.
func TestDeleteDocumentInJob(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	g := newClustered(5, 384, 2, 0.5)
	j, _ := s.CreateJob(ctx, json.RawMessage(`{}`), "")
	doc := &Document{URL: "https://example.com/gone", Title: "gone", ContentHash: "h"}
	if _, err := s.UpsertDocument(ctx, doc, makeChunks(g, 2, "x"), json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.ClaimJob(ctx, "w", time.Minute); !ok || err != nil {
		t.Fatalf("start the job: %v %v", ok, err)
	}
	// Written after the job started (another job, a single page): kept.
	fresh := &Document{URL: "https://example.com/fresh", Title: "fresh", ContentHash: "f"}
	if _, err := s.UpsertDocument(ctx, fresh, makeChunks(g, 1, "y"), json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteDocumentInJob(ctx, fresh.ID, &DeletePayload{URL: fresh.URL}, j.ID, "deleted_vanished"); !errors.Is(err, ErrWrittenSince) {
		t.Errorf("a document written since the job started: got %v, want ErrWrittenSince", err)
	}
	if _, err := s.GetDocument(ctx, fresh.ID); err != nil {
		t.Errorf("a document written since the job started was removed: %v", err)
	}
	if _, err := s.DeleteDocumentInJob(ctx, doc.ID, &DeletePayload{URL: "https://example.com/other"}, j.ID, "deleted_vanished"); !errors.Is(err, ErrInvalid) {
		t.Errorf("another document's URL: got %v, want ErrInvalid", err)
	}
	state := func() (stored bool, changes int, outbox []OutboxItem, frontier map[FrontierState]map[string]int64) {
		t.Helper()
		_, err := s.GetDocument(ctx, doc.ID)
		stored = err == nil
		ch, _ := s.Changes(ctx, 0, 100)
		outbox, _ = s.OutboxItems(ctx, 100)
		frontier, _ = s.FrontierReasons(ctx, j.ID)
		return stored, len(ch), outbox, frontier
	}
	_, changesBefore, outboxBefore, _ := state()

	forced := errors.New("forced failure")
	s.testHook = func(p string) error {
		if p == "delete-in-job:after-frontier" {
			return forced
		}
		return nil
	}
	_, err := s.DeleteDocumentInJob(ctx, doc.ID, &DeletePayload{URL: doc.URL}, j.ID, "deleted_vanished")
	s.testHook = nil
	if !errors.Is(err, forced) {
		t.Fatalf("got %v, want the forced failure", err)
	}
	stored, changes, outbox, frontier := state()
	if !stored || changes != changesBefore || len(outbox) != len(outboxBefore) || len(frontier) != 0 {
		t.Fatalf("after a failure mid-transaction: stored %v, changes %d (before %d), outbox %d rows (before %d), frontier %v; want everything as before",
			stored, changes, changesBefore, len(outbox), len(outboxBefore), frontier)
	}

	if _, err := s.DeleteDocumentInJob(ctx, doc.ID, &DeletePayload{URL: doc.URL}, j.ID, "deleted_vanished"); err != nil {
		t.Fatal(err)
	}
	stored, changes, outbox, frontier = state()
	last := outbox[len(outbox)-1]
	if stored || changes != changesBefore+1 || last.Kind != OutboxDelete || last.DocumentID != doc.ID ||
		frontier[FrontierDone]["deleted_vanished"] != 1 {
		t.Errorf("after the removal: stored %v, changes %d, last outbox row %+v, frontier %v; want removed, one delete change, a kg delete and the frontier row",
			stored, changes, last, frontier)
	}
	if missing, err := s.FrontierMissing(ctx, j.ID, []string{doc.URL, "https://example.com/never"}); err != nil || len(missing) != 1 || missing[0] != "https://example.com/never" {
		t.Errorf("FrontierMissing: got %v, %v; want only the URL never seen", missing, err)
	}
	if starts, err := s.FrontierStartURLs(ctx, j.ID); err != nil || len(starts) != 1 || starts[0] != doc.URL {
		t.Errorf("FrontierStartURLs: got %v, %v; want %s", starts, err, doc.URL)
	}
}

// A database of schema 0002 with jobs in every state is upgraded in place by
// Open (0003 adds crawl_jobs.active_key): the old jobs, two of them queued with
// one spec, keep their rows and hold no key, so they block nothing; a new job
// with a key is created once and refused while it is queued, and the
// migration can run again without harm.
func TestActiveKeyMigrationUpgradesOldDatabase(t *testing.T) {
	ctx := context.Background()
	dsn := freshDatabase(t)
	db := rawDB(t, dsn)
	var keyMig migration
	for _, m := range migrateThrough(t, db, 2) {
		if m.name == "crawl_jobs_active_key" {
			keyMig = m
		}
	}
	if keyMig.version != 3 || columnExists(t, db, "crawl_jobs", "active_key") {
		t.Fatalf("want migration 0003 crawl_jobs_active_key and a schema without active_key; got %+v", keyMig)
	}
	spec := `{"url":"https://old.example/"}`
	for i, status := range []string{"queued", "queued", "running", "done", "cancelled"} {
		if _, err := db.Exec(`INSERT INTO crawl_jobs (id, spec, status, counters, last_errors, created_at, updated_at)
			VALUES (?, ?, ?, '{}', '[]', UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`, fmt.Sprintf("old-%d", i), spec, status); err != nil {
			t.Fatal(err)
		}
	}

	s := openStore(t, dsn, testModel)
	if !columnExists(t, db, "crawl_jobs", "active_key") || !indexExists(t, db, "crawl_jobs", "crawl_jobs_active_key") {
		t.Fatal("active_key or its unique index missing after the upgrade")
	}
	var n, keyed int
	if err := db.QueryRow("SELECT COUNT(*), COUNT(active_key) FROM crawl_jobs").Scan(&n, &keyed); err != nil || n != 5 || keyed != 0 {
		t.Fatalf("old jobs after the upgrade: %d rows, %d with a key (%v); want 5 and 0", n, keyed, err)
	}
	key := strings.Repeat("a", 64)
	j, err := s.CreateJob(ctx, json.RawMessage(spec), key)
	if err != nil {
		t.Fatalf("a new job beside the old active ones: %v", err)
	}
	var dup *DuplicateJobError
	if _, err := s.CreateJob(ctx, json.RawMessage(spec), key); !errors.As(err, &dup) || dup.ID != j.ID {
		t.Errorf("the same job again: got %v, want a DuplicateJobError naming %s", err, j.ID)
	}
	for i, stmt := range keyMig.stmts {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("0003 statement %d again: %v", i+1, err)
		}
	}
	if _, err := s.CreateJob(ctx, json.RawMessage(spec), key); !errors.As(err, &dup) {
		t.Errorf("after running 0003 again: got %v, want the key still held", err)
	}
}
