package app

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"testing"

	"github.com/kgsearch/kgsearch/internal/testenv"
	"github.com/kgsearch/kgsearch/pkg/graph/profile"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
)

// TestFeedback ingests three documents into the real Neo4j, two of them sharing
// identifiers, and checks graph feedback: the neighbour of the seed scores, the
// unrelated page does not, the profiles this process updated on ingest and delete
// equal a fresh load from Neo4j, and bad requests are refused with 400.
func TestFeedback(t *testing.T) {
	uri, user, password := testenv.Neo4j(t)
	s := start(t, testConfig(t, uri, user, password), true)
	ctx := context.Background()
	word := randomWord(10)
	prefix := "kgtest-" + word + "-"
	ids := [3]string{prefix + "seed", prefix + "near", prefix + "far"}
	t.Cleanup(func() {
		for _, id := range ids {
			_ = s.client.DeleteDocument(ctx, id)
		}
	})
	ident := func(name string) string { return "zq_" + name + "_" + word }
	texts := [3]string{
		fmt.Sprintf("Call `%s` to open the stream, then `%s` to flush it. `%s` closes it.", ident("open"), ident("flush"), ident("close")),
		fmt.Sprintf("`%s` and `%s` both take a timeout. Use `%s` in tests.", ident("open"), ident("flush"), ident("mock")),
		fmt.Sprintf("The `%s` setting changes the colour of the `%s` widget.", ident("colour"), ident("widget")),
	}
	for i, id := range ids {
		doc := kgapi.Document{ID: id, URL: "https://kgtest.example/" + word + "/" + id, Title: "Page " + id,
			Chunks: []kgapi.Chunk{{ID: id + "-0", Text: texts[i]}}}
		if _, err := s.client.Ingest(ctx, doc); err != nil {
			t.Fatalf("ingest %s: %v", id, err)
		}
	}
	ask := func() map[string]float64 {
		t.Helper()
		res, err := s.client.Feedback(ctx, kgapi.FeedbackRequest{
			Seeds: []kgapi.FeedbackSeed{{DocumentID: ids[0], Weight: 1}}, Candidates: ids[1:], Entities: 5})
		if err != nil {
			t.Fatalf("feedback: %v", err)
		}
		got := map[string]float64{}
		for _, d := range res.Scores {
			got[d.DocumentID] = d.Score
		}
		if len(res.Entities) == 0 {
			t.Errorf("feedback named no entities of the seed")
		}
		return got
	}
	got := ask()
	if got[ids[1]] <= 0 || got[ids[1]] > 1 {
		t.Errorf("near page scores %v, want (0,1]", got[ids[1]])
	}
	if v, ok := got[ids[2]]; ok {
		t.Errorf("unrelated page scores %v, want no score", v)
	}

	// What ingest and delete did to the in-memory profiles equals a load from Neo4j.
	if err := s.client.DeleteDocument(ctx, ids[1]); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if v, ok := ask()[ids[1]]; ok {
		t.Errorf("deleted page still scores %v", v)
	}
	fresh := profile.New()
	if err := fresh.Load(ctx, s.parts.Store); err != nil {
		t.Fatal(err)
	}
	seeds := []profile.Seed{{DocumentID: ids[0], Weight: 1}}
	mine := s.parts.Profiles.Feedback(seeds, ids[:], 10)
	theirs := fresh.Feedback(seeds, ids[:], 10)
	if !sameFeedback(mine, theirs) {
		t.Errorf("incrementally kept profiles answer %v, a fresh load from Neo4j %v", mine, theirs)
	}

	for name, req := range map[string]kgapi.FeedbackRequest{
		"no seeds":        {Candidates: ids[:]},
		"zero weight":     {Seeds: []kgapi.FeedbackSeed{{DocumentID: ids[0]}}},
		"empty id":        {Seeds: []kgapi.FeedbackSeed{{Weight: 1}}},
		"too many ents":   {Seeds: []kgapi.FeedbackSeed{{DocumentID: ids[0], Weight: 1}}, Entities: 1000},
		"empty candidate": {Seeds: []kgapi.FeedbackSeed{{DocumentID: ids[0], Weight: 1}}, Candidates: []string{""}},
	} {
		_, err := s.client.Feedback(ctx, req)
		var se *kgapi.StatusError
		if !errors.As(err, &se) || se.Status != http.StatusBadRequest {
			t.Errorf("%s: got %v, want a 400", name, err)
		}
	}
}

// sameFeedback compares two answers up to rounding (sums run in map order).
func sameFeedback(a, b profile.Result) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9 }
	if len(a.Scores) != len(b.Scores) || len(a.Entities) != len(b.Entities) {
		return false
	}
	for id, v := range a.Scores {
		if w, ok := b.Scores[id]; !ok || !near(v, w) {
			return false
		}
	}
	// Entities of equal weight may come in either order.
	byID := map[string]profile.Entity{}
	for _, e := range b.Entities {
		byID[e.ID] = e
	}
	for _, x := range a.Entities {
		y, ok := byID[x.ID]
		if !ok || x.Name != y.Name || x.Type != y.Type || !near(x.Weight, y.Weight) {
			return false
		}
	}
	return true
}
