package entitygraph

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/extract"
	"github.com/kgsearch/kgsearch/pkg/graph"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
)

// deadlineWriter records the deadline of the graph write.
type deadlineWriter struct{ deadline time.Time }

func (w *deadlineWriter) UpsertDocument(ctx context.Context, d graph.Doc) (graph.UpsertResult, error) {
	w.deadline, _ = ctx.Deadline()
	return graph.UpsertResult{Chunks: len(d.Chunks)}, nil
}

func (w *deadlineWriter) DeleteDocument(context.Context, string) error { return nil }

// TestIngestBudgetGrowsWithTheDocument: the ingest of a large document gets one
// graph timeout per 100 chunks (at most eight). With a single timeout for every
// size, a 507-chunk index page timed out at each delivery and never reached the
// graph, while pages of a few chunks keep the plain timeout.
func TestIngestBudgetGrowsWithTheDocument(t *testing.T) {
	x, err := extract.New()
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 2 * time.Second
	for _, tc := range []struct{ chunks, scale int }{{1, 1}, {100, 1}, {101, 2}, {507, 6}, {5000, 8}} {
		w := &deadlineWriter{}
		s := New(Limits{MaxChunkBytes: 1 << 16, MaxChunks: 10000, MaxLinks: 10, MaxQueryBytes: 1024, GraphTimeout: timeout},
			Deps{Extractor: x, Writer: w, Logger: slog.New(slog.DiscardHandler)})
		s.SetReady(true)
		doc := kgapi.Document{ID: "d", URL: "https://docs.example/d"}
		for i := 0; i < tc.chunks; i++ {
			doc.Chunks = append(doc.Chunks, kgapi.Chunk{ID: fmt.Sprintf("d-%d", i), Ordinal: i, Text: "PostgreSQL"})
		}
		// The budget starts after validation, before extraction: measured from just
		// before the call, the deadline is the scaled timeout plus the validation's time.
		start := time.Now()
		if _, err := s.Ingest(context.Background(), doc); err != nil {
			t.Fatalf("%d chunks: %v", tc.chunks, err)
		}
		budget, want := w.deadline.Sub(start), time.Duration(tc.scale)*timeout
		if budget < want || budget > want+timeout {
			t.Errorf("%d chunks: the ingest had %v, want about %v", tc.chunks, budget.Round(time.Millisecond), want)
		}
	}
}
