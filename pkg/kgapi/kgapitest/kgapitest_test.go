package kgapitest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/kgapi"
)

// TestMatchTopK checks the bounded selection against the plain order: scores summed
// over entities, best first, chunk id breaking ties, cut at the limit.
func TestMatchTopK(t *testing.T) {
	s := New(t)
	a, b := map[string]float64{}, map[string]float64{}
	for i := range 300 {
		a[fmt.Sprintf("c%03d", i)] = float64(i % 7)
		if i%3 == 0 {
			b[fmt.Sprintf("c%03d", i)] = 2
		}
	}
	doc := func(string) string { return "d" }
	s.AddEntity("a", "A", "library", a, doc)
	s.AddEntity("b", "B", "library", b, doc)
	c := kgapi.NewClient(s.URL, nil, "")
	for _, limit := range []int{1, 10, 100, 1000} {
		resp, err := c.Match(context.Background(), kgapi.MatchRequest{Entities: []string{"a", "b"}, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for score := 8.0; score >= 0 && len(want) < limit; score-- {
			for i := range 300 {
				id := fmt.Sprintf("c%03d", i)
				if a[id]+b[id] == score && len(want) < limit {
					want = append(want, id)
				}
			}
		}
		var got []string
		for _, m := range resp.Chunks {
			got = append(got, m.ChunkID)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("limit %d (-want +got):\n%s", limit, diff)
		}
	}
}

// TestIngestDelete checks the crawler's side of the contract: an ingested document
// becomes matchable, a delete removes it, and both are recorded.
func TestIngestDelete(t *testing.T) {
	s := New(t)
	c := kgapi.NewClient(s.URL, nil, "")
	ctx := context.Background()
	doc := kgapi.Document{ID: "d/1", URL: "https://example.org/django", Chunks: []kgapi.Chunk{{ID: "c1", Text: "Django is a web framework written in Python."}}}
	if _, err := c.Ingest(ctx, doc); err != nil {
		t.Fatal(err)
	}
	m, err := c.Match(ctx, kgapi.MatchRequest{Entities: []string{"Django"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Chunks) != 1 || m.Chunks[0].ChunkID != "c1" || m.Chunks[0].DocumentID != "d/1" {
		t.Fatalf("match after ingest: got %+v, want chunk c1 of d/1", m.Chunks)
	}
	if err := c.DeleteDocument(ctx, "d/1"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteDocument(ctx, "never-sent"); err != nil {
		t.Fatalf("delete of an unknown document: got %v, want nil (404 is not an error)", err)
	}
	m, err = c.Match(ctx, kgapi.MatchRequest{Entities: []string{"Django"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Chunks) != 0 {
		t.Errorf("match after delete: got %+v, want no chunks", m.Chunks)
	}
	if diff := cmp.Diff([]kgapi.Document{doc}, s.Ingested()); diff != "" {
		t.Errorf("ingested (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"d/1", "never-sent"}, s.Deleted()); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
}

func TestFailures(t *testing.T) {
	s := New(t)
	c := kgapi.NewClient(s.URL, nil, "")
	ctx := context.Background()
	s.FailIngest("https://example.org/x")
	doc := kgapi.Document{ID: "x", URL: "https://example.org/x", Chunks: []kgapi.Chunk{{ID: "1", Text: "Go"}}}
	if _, err := c.Ingest(ctx, doc); !errors.Is(err, kgapi.ErrUnavailable) {
		t.Errorf("refused ingest: got %v, want ErrUnavailable", err)
	}
	if len(s.Ingested()) != 0 {
		t.Errorf("refused ingest was recorded")
	}
	if err := c.Ready(ctx); err != nil {
		t.Errorf("ready: got %v, want nil", err)
	}
	s.SetDown(true)
	if err := c.Ready(ctx); !errors.Is(err, kgapi.ErrUnavailable) {
		t.Errorf("ready while down: got %v, want ErrUnavailable", err)
	}
	if _, err := c.Match(ctx, kgapi.MatchRequest{Entities: []string{"go"}}); !errors.Is(err, kgapi.ErrUnavailable) {
		t.Errorf("match while down: got %v, want ErrUnavailable", err)
	}
}

// TestFeedbackFollowsChanges: the fake keeps its entity profiles between feedback
// calls, and an added entity or a deleted document changes the next answer.
func TestFeedbackFollowsChanges(t *testing.T) {
	s := New(t)
	docOf := func(chunk string) string { return chunk[:2] } // "d1#0" → "d1"
	s.AddEntity("a", "A", "library", map[string]float64{"d1#0": 1, "d2#0": 1}, docOf)
	s.AddEntity("b", "B", "library", map[string]float64{"d3#0": 1}, docOf)
	c := kgapi.NewClient(s.URL, nil, "")
	ctx := context.Background()
	scores := func() map[string]float64 {
		t.Helper()
		resp, err := c.Feedback(ctx, kgapi.FeedbackRequest{Seeds: []kgapi.FeedbackSeed{{DocumentID: "d1", Weight: 1}},
			Candidates: []string{"d2", "d3"}})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, sc := range resp.Scores {
			out[sc.DocumentID] = sc.Score
		}
		return out
	}
	if got := scores(); got["d2"] <= 0 || got["d3"] != 0 {
		t.Fatalf("before: got %v, want d2 > 0 and d3 absent", got)
	}
	s.AddEntity("a2", "A", "library", map[string]float64{"d1#1": 1, "d3#1": 1}, docOf)
	if got := scores(); got["d3"] <= 0 {
		t.Errorf("after an entity shared by d1 and d3: got %v, want d3 > 0", got)
	}
	if err := c.DeleteDocument(ctx, "d2"); err != nil {
		t.Fatal(err)
	}
	if got := scores(); got["d2"] != 0 {
		t.Errorf("after deleting d2: got %v, want d2 absent", got)
	}
}
