package pipeline_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/services/search/internal/pipeline"
	"github.com/kgsearch/kgsearch/services/search/internal/searchtest"
)

// stuckGraph is a kg that accepts calls and never answers.
type stuckGraph struct{ calls atomic.Int64 }

func (g *stuckGraph) hang(ctx context.Context) error {
	g.calls.Add(1)
	<-ctx.Done()
	return ctx.Err()
}

func (g *stuckGraph) Match(ctx context.Context, _ kgapi.MatchRequest) (*kgapi.MatchResponse, error) {
	return nil, g.hang(ctx)
}

func (g *stuckGraph) Expand(ctx context.Context, _ kgapi.ExpandRequest) (*kgapi.ExpandResponse, error) {
	return nil, g.hang(ctx)
}

func (g *stuckGraph) Feedback(ctx context.Context, _ kgapi.FeedbackRequest) (*kgapi.FeedbackResponse, error) {
	return nil, g.hang(ctx)
}

// TestStuckKGOpensTheCircuit: a kg that hangs costs the first searches their graph
// budget, then the circuit opens and later searches no longer call it; every search
// is answered, degraded graph.
func TestStuckKGOpensTheCircuit(t *testing.T) {
	g := &stuckGraph{}
	e := searchtest.New(t, searchtest.Options{
		Graph: func(pipeline.Graph) pipeline.Graph { return g },
		Pipeline: func(o *pipeline.Options) {
			o.GraphTimeout, o.ExpandTimeout = 50*time.Millisecond, 50*time.Millisecond
			o.BreakerFailures, o.BreakerCooldown = 3, time.Hour
		},
	})
	e.Add(t, corpus()...)
	var last *pipeline.Response
	for range 10 {
		last = search(t, e, pipeline.Request{Query: "PostgreSQL replication", Expand: true, Explain: true})
		if strings.Join(last.Degraded, ",") != "graph" || len(last.Results) == 0 {
			t.Fatalf("stuck kg: degraded %v, %d results; want graph and results", last.Degraded, len(last.Results))
		}
	}
	// Each search calls match and expand at once: two searches reach the threshold.
	if n := g.calls.Load(); n > 4 {
		t.Errorf("stuck kg was called %d times in 10 searches, want at most 4", n)
	}
	if got := last.Explain.Retrievers["graph"].Error; got != "kg circuit open after repeated failures" {
		t.Errorf("graph error after the circuit opened: %q", got)
	}
}
