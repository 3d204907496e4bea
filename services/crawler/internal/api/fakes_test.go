package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
	"github.com/kgsearch/kgsearch/services/crawler/internal/engine"
	"github.com/kgsearch/kgsearch/services/crawler/internal/pipeline"
)

// Fakes for the API's seams: the handlers run without MariaDB or an engine.

// fakeCrawls answers the status of one job from a list of answers, one per call
// (the last one repeats).
type fakeCrawls struct {
	mu      sync.Mutex
	answers []func() (engine.Status, error)
	calls   int
}

func (f *fakeCrawls) Limits() engine.Limits                   { return engine.Limits{MaxPages: 10, MaxDepth: 2} }
func (f *fakeCrawls) CanonOptions() canon.Options             { return canon.DefaultOptions() }
func (f *fakeCrawls) CheckSeed(context.Context, string) error { return nil }
func (f *fakeCrawls) Wake()                                   {}
func (f *fakeCrawls) Subscribe(string) (<-chan engine.Event, func()) {
	return make(chan engine.Event), func() {}
}

func (f *fakeCrawls) Status(context.Context, string) (engine.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := min(f.calls, len(f.answers)-1)
	f.calls++
	return f.answers[i]()
}

type fakePages struct {
	res engine.PageResult
	err error
}

func (p fakePages) CrawlPage(context.Context, string, []string) (engine.PageResult, error) {
	return p.res, p.err
}

type fakeDocuments struct{ Documents }

func (fakeDocuments) DeleteDocument(_ context.Context, id string, _ *store.DeletePayload) (int64, error) {
	if id == "known" {
		return 42, nil
	}
	return 0, fmt.Errorf("delete document %s: %w", id, store.ErrNotFound)
}

func fakeAPI(t *testing.T, d Deps) string {
	t.Helper()
	srv := httpserver.New("crawler", httpserver.Config{Addr: "127.0.0.1:0"}, slogDiscard())
	a := New(srv, d)
	a.EventPoll = 20 * time.Millisecond
	a.Register()
	hs := httptest.NewServer(srv.Engine())
	t.Cleanup(hs.Close)
	return hs.URL
}

func TestPagesWithFakes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pages  fakePages
		status int
		want   string
	}{
		{"stored", fakePages{res: engine.PageResult{Document: store.Document{ID: "d1", URL: "https://docs.example/a"}, Outcome: pipeline.Stored, Chunks: 3}},
			http.StatusOK, `"chunks":3`},
		{"refused address names the field", fakePages{err: &engine.PageError{Field: "url", Reason: engine.SkipSSRF, Err: errors.New("10.0.0.1 is internal")}},
			http.StatusBadRequest, `url`},
		{"page error without a field", fakePages{err: &engine.PageError{Reason: "http_404", Err: errors.New("answered HTTP 404")}},
			http.StatusUnprocessableEntity, `http_404`},
		{"database down", fakePages{err: fmt.Errorf("document by url: %w", store.ErrNotReady)},
			http.StatusServiceUnavailable, `retry later`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := fakeAPI(t, Deps{Pages: tc.pages})
			resp, err := http.Post(base+"/api/v1/pages", "application/json", strings.NewReader(`{"url":"https://docs.example/a"}`))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body strings.Builder
			_, _ = bufio.NewReader(resp.Body).WriteTo(&body)
			if resp.StatusCode != tc.status || !strings.Contains(body.String(), tc.want) {
				t.Errorf("got %d %s, want %d containing %q", resp.StatusCode, body.String(), tc.status, tc.want)
			}
		})
	}
}

func TestDeleteDocumentWithFakes(t *testing.T) {
	base := fakeAPI(t, Deps{Documents: fakeDocuments{}})
	for id, want := range map[string]int{"known": http.StatusOK, "unknown": http.StatusNotFound} {
		req, _ := http.NewRequest(http.MethodDelete, base+"/api/v1/documents/"+id, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("DELETE %s: got %d, want %d", id, resp.StatusCode, want)
		}
	}
}

// TestEventsReportStalls: the event stream says "stalled" when the job's
// status cannot be read because the database is down, "resumed" when it can
// again, "stalled" with the reason when the job has no crawler, and ends with
// the summary.
func TestEventsReportStalls(t *testing.T) {
	running := func() (engine.Status, error) { return engine.Status{ID: "j", Status: store.JobRunning}, nil }
	down := func() (engine.Status, error) { return engine.Status{}, fmt.Errorf("get job: %w", store.ErrNotReady) }
	noCrawler := func() (engine.Status, error) {
		return engine.Status{ID: "j", Status: engine.JobStalled, Stall: &engine.Stall{Reason: engine.StallNoCrawler, Detail: "crawler x stopped"}}, nil
	}
	done := func() (engine.Status, error) {
		now := time.Now()
		return engine.Status{ID: "j", Status: store.JobDone, FinishedAt: &now}, nil
	}
	crawls := &fakeCrawls{answers: []func() (engine.Status, error){running, down, down, running, noCrawler, done}}
	base := fakeAPI(t, Deps{Crawls: crawls})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/crawls/j/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var events []string
	var reasons []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if typ, ok := strings.CutPrefix(line, "event: "); ok {
			events = append(events, typ)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok && len(events) > 0 && events[len(events)-1] == engine.EventStalled {
			for _, r := range []string{engine.StallDatabase, engine.StallNoCrawler} {
				if strings.Contains(data, `"reason":"`+r+`"`) {
					reasons = append(reasons, r)
				}
			}
		}
	}
	want := "progress stalled resumed stalled progress summary"
	if got := strings.Join(events, " "); got != want {
		t.Errorf("events: got %q, want %q", got, want)
	}
	if got := strings.Join(reasons, " "); got != engine.StallDatabase+" "+engine.StallNoCrawler {
		t.Errorf("stall reasons: got %q, want database_unavailable then no_crawler", got)
	}
}

// TestEventStreamsShareStatusReads: the event streams of one job share their
// periodic status reads, so opening many streams does not multiply the
// database's work (each read counts the job's frontier). Before, every stream
// read the status once a poll: 20 streams, 20 reads a poll.
func TestEventStreamsShareStatusReads(t *testing.T) {
	running := func() (engine.Status, error) { return engine.Status{ID: "j", Status: store.JobRunning}, nil }
	crawls := &fakeCrawls{answers: []func() (engine.Status, error){running}}
	base := fakeAPI(t, Deps{Crawls: crawls}) // EventPoll 20ms
	const streams = 20
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	opened := make(chan struct{}, streams)
	for range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/crawls/j/events", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				opened <- struct{}{}
				return
			}
			defer resp.Body.Close()
			opened <- struct{}{}
			_, _ = io.Copy(io.Discard, resp.Body)
		}()
	}
	for range streams {
		<-opened
	}
	crawls.mu.Lock()
	before := crawls.calls // the first read of each stream is its own
	crawls.mu.Unlock()
	start := time.Now()
	time.Sleep(500 * time.Millisecond)
	crawls.mu.Lock()
	polled := crawls.calls - before
	crawls.mu.Unlock()
	elapsed := time.Since(start)
	cancel()
	wg.Wait()
	// At most about two reads a poll interval (20ms) for the job, with slack for
	// a slow machine; unshared it would be one per stream and poll (about 500).
	if limit := 3*int(elapsed/(20*time.Millisecond)) + 5; polled > limit {
		t.Errorf("%d streams made %d status reads in %v, want at most %d (shared)", streams, polled, elapsed.Round(time.Millisecond), limit)
	}
	if polled == 0 {
		t.Errorf("no status reads in %v: the streams stopped polling", elapsed)
	}
}

// ctxBlocklist adds a domain as a database driver would: not once the
// request's context has ended.
type ctxBlocklist struct{ Blocklist }

func (ctxBlocklist) BlockDomain(ctx context.Context, domain, reason string) (store.BlockedDomain, error) {
	if err := ctx.Err(); err != nil {
		return store.BlockedDomain{}, fmt.Errorf("block domain %s: %w", domain, err)
	}
	return store.BlockedDomain{Domain: domain, Reason: reason}, nil
}

// TestSlowBodyIsNotTheDatabasesTime: StoreTimeout bounds the database work of
// a request, not the client's upload. A body that arrives slower than
// StoreTimeout (a slow link, a client that pauses) used to spend the whole
// budget before the handler reached MariaDB, and the request was a 503 saying
// the database did not answer.
func TestSlowBodyIsNotTheDatabasesTime(t *testing.T) {
	const storeTimeout = time.Second
	srv := httpserver.New("crawler", httpserver.Config{Addr: "127.0.0.1:0"}, slogDiscard())
	a := New(srv, Deps{Crawls: &fakeCrawls{}, Blocklist: ctxBlocklist{}, BlocklistChanged: func() {}})
	a.StoreTimeout = storeTimeout
	a.Register()
	hs := httptest.NewServer(srv.Engine())
	t.Cleanup(hs.Close)

	body := `{"domain":"ads.example.com","reason":"slow client"}`
	pr, pw := io.Pipe()
	go func() {
		_, _ = io.WriteString(pw, body[:10])
		time.Sleep(2 * storeTimeout)
		_, _ = io.WriteString(pw, body[10:])
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPost, hs.URL+"/api/v1/blocklist", pr)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("POST /blocklist with a body sent over %s (StoreTimeout %s): got %d %s, want 201", 2*storeTimeout, storeTimeout, resp.StatusCode, b)
	}
}

// TestSharedStatusReadsDoNotPileUp: while a job's status read is slow (a
// database under load), the streams wait for the read in progress instead of
// starting another every half poll: before, each read that took longer than
// that overlapped the next ones (a 300 ms read, five streams polling every
// 20 ms: three at once), more load on a database already slow to answer.
func TestSharedStatusReadsDoNotPileUp(t *testing.T) {
	var mu sync.Mutex
	running, most, reads := 0, 0, 0
	slow := func(context.Context, string) (engine.Status, error) {
		mu.Lock()
		running++
		reads++
		most = max(most, running)
		mu.Unlock()
		time.Sleep(300 * time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
		return engine.Status{ID: "j", Status: store.JobRunning}, nil
	}
	var p statusPolls
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 5 { // five streams polling every 20 ms, 4 ms apart, as crawlEvents does
		wg.Go(func() {
			time.Sleep(time.Duration(i) * 4 * time.Millisecond)
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					_, _ = p.get(ctx, "j", 10*time.Millisecond, slow)
				}
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if most != 1 || reads == 0 {
		t.Errorf("slow status reads: %d at once at most (%d in all), want 1 at a time", most, reads)
	}
}

// TestPageTagsBounded: POST /pages takes at most as many tags as a crawl (64),
// refusing more with a 400 naming tags. It took any number: a 1 MiB body holds
// some 170,000 distinct short tags, each stored with the document, and the
// duplicate check compared every pair of them.
func TestPageTagsBounded(t *testing.T) {
	base := fakeAPI(t, Deps{Pages: fakePages{res: engine.PageResult{Document: store.Document{ID: "d1", URL: "https://docs.example/a"}, Outcome: pipeline.Stored}}})
	for _, tc := range []struct {
		tags   int
		status int
	}{{engine.MaxTags, http.StatusOK}, {engine.MaxTags + 1, http.StatusBadRequest}} {
		tags := make([]string, tc.tags)
		for i := range tags {
			tags[i] = fmt.Sprintf("t%d", i)
		}
		body, _ := json.Marshal(map[string]any{"url": "https://docs.example/a", "tags": tags})
		resp, err := http.Post(base+"/api/v1/pages", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || (tc.status == http.StatusBadRequest && !strings.Contains(string(b), `"field":"tags"`)) {
			t.Errorf("POST /pages with %d tags: got %d %s, want %d", tc.tags, resp.StatusCode, b, tc.status)
		}
	}
}
