package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/services/search/internal/admission"
	"github.com/kgsearch/kgsearch/services/search/internal/pipeline"
	"github.com/kgsearch/kgsearch/services/search/internal/searchtest"
)

// gatedGraph is a slow kg: every call waits until the gate opens (or its context
// ends), so searches that reached kg hold their admission slots.
type gatedGraph struct {
	pipeline.Graph
	gate    chan struct{}
	matches atomic.Int64 // Match calls that reached the gate
}

func (g *gatedGraph) wait(ctx context.Context) error {
	select {
	case <-g.gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gatedGraph) Match(ctx context.Context, req kgapi.MatchRequest) (*kgapi.MatchResponse, error) {
	g.matches.Add(1)
	if err := g.wait(ctx); err != nil {
		return nil, err
	}
	return g.Graph.Match(ctx, req)
}

func (g *gatedGraph) Expand(ctx context.Context, req kgapi.ExpandRequest) (*kgapi.ExpandResponse, error) {
	if err := g.wait(ctx); err != nil {
		return nil, err
	}
	return g.Graph.Expand(ctx, req)
}

type answer struct {
	status     int
	retryAfter string
	ctype      string
	problem    map[string]any
	degraded   []string
	results    int
	err        error
}

func fetch(url string) answer {
	resp, err := http.Get(url)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), ctype: resp.Header.Get("Content-Type"), err: err}
	if resp.StatusCode == http.StatusOK {
		var r pipeline.Response
		a.err = json.Unmarshal(body, &r)
		a.degraded, a.results = r.Degraded, r.ResultCount
	} else {
		a.err = json.Unmarshal(body, &a.problem)
	}
	return a
}

// TestSaturatedAnswers503 saturates the service with a slow kg: two searches hold the
// two slots, one waits in the queue and gives up, the rest find the queue full. Every
// refused search is a 503 problem with Retry-After; every answered search is whole.
func TestSaturatedAnswers503(t *testing.T) {
	g := &gatedGraph{gate: make(chan struct{})}
	e := searchtest.New(t, searchtest.Options{
		Graph:     func(kg pipeline.Graph) pipeline.Graph { g.Graph = kg; return g },
		Admission: &admission.Options{MaxInFlight: 2, MaxQueue: 1, MaxWait: 20 * time.Millisecond},
	})
	e.Add(t, docs()...)
	url := e.HTTP.URL + "/api/v1/search?q=postgresql+replication&format=json&expand=true"

	const clients = 10
	answers := make([]answer, clients)
	var wg sync.WaitGroup
	for i := range 2 { // these two take the slots and block in kg
		wg.Go(func() { answers[i] = fetch(url) })
	}
	for g.matches.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	var refused sync.WaitGroup
	for i := 2; i < clients; i++ { // no slot frees while the gate is shut
		refused.Go(func() { answers[i] = fetch(url) })
	}
	refused.Wait()
	close(g.gate)
	wg.Wait()

	for i, a := range answers {
		if a.err != nil {
			t.Fatalf("search %d: %v", i, a.err)
		}
		if i < 2 {
			if a.status != http.StatusOK || len(a.degraded) != 0 || a.results == 0 {
				t.Errorf("admitted search %d: status %d, degraded %v, %d results; want 200, whole, with results", i, a.status, a.degraded, a.results)
			}
			continue
		}
		if a.status != http.StatusServiceUnavailable || a.retryAfter != "1" || !strings.HasPrefix(a.ctype, "application/problem+json") {
			t.Errorf("refused search %d: status %d, Retry-After %q, Content-Type %q; want 503, 1, problem+json", i, a.status, a.retryAfter, a.ctype)
		}
		if a.problem["title"] != "overloaded" || a.problem["status"] != float64(503) {
			t.Errorf("refused search %d: problem %v", i, a.problem)
		}
	}
	if n := g.matches.Load(); n != 2 {
		t.Errorf("kg match calls: %d, want 2 (refused searches must not reach the dependencies)", n)
	}
}

// TestKGDownUnderAdmissionStillDegrades keeps the fault contract behind admission
// control: a stopped kg gives degraded answers, not refusals or failures.
func TestKGDownUnderAdmissionStillDegrades(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{Admission: &admission.Options{MaxInFlight: 2, MaxQueue: 8, MaxWait: 5 * time.Second}})
	e.Add(t, docs()...)
	url := e.HTTP.URL + "/api/v1/search?q=postgresql+replication&format=json&expand=true"
	if a := fetch(url); a.err != nil || a.status != http.StatusOK || len(a.degraded) != 0 {
		t.Fatalf("kg up: %+v", a)
	}
	e.KG.Close() // connection refused
	answers := make([]answer, 8)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() { answers[i] = fetch(url) })
	}
	wg.Wait()
	for i, a := range answers {
		if a.err != nil || a.status != http.StatusOK || strings.Join(a.degraded, ",") != "graph" || a.results == 0 {
			t.Errorf("kg down, search %d: status %d, degraded %v, %d results, err %v; want 200 degraded graph", i, a.status, a.degraded, a.results, a.err)
		}
	}
}
