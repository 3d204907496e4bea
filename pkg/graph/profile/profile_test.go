package profile

import (
	"context"
	"math"
	"strconv"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/graph"
)

// fakeSource serves fixed profiles, the way graph.Store answers DocumentProfiles.
type fakeSource map[string][]graph.EntityCount

func (f fakeSource) DocumentProfiles(_ context.Context, ids []string) (map[string][]graph.EntityCount, error) {
	out := map[string][]graph.EntityCount{}
	if len(ids) == 0 {
		for k, v := range f {
			out[k] = v
		}
		return out, nil
	}
	for _, id := range ids {
		if v, ok := f[id]; ok {
			out[id] = v
		}
	}
	return out, nil
}

func ec(id string, n int64) graph.EntityCount {
	return graph.EntityCount{Entity: graph.EntityRef{ID: id, Name: id + "-name", Type: "concept"}, Count: n}
}

func corpus() fakeSource {
	return fakeSource{
		"enum-howto": {ec("enum", 9), ec("flag", 3), ec("constant", 2), ec("class", 4)},
		"enum-ref":   {ec("enum", 12), ec("flag", 5), ec("auto", 2), ec("class", 3)},
		"constants":  {ec("constant", 4), ec("none", 2), ec("class", 1)},
		"json":       {ec("json", 10), ec("dict", 3), ec("class", 1)},
		"pickle":     {ec("pickle", 8), ec("dict", 1), ec("class", 2)},
	}
}

func TestFeedbackRanksNeighboursOfTheSeeds(t *testing.T) {
	s := New()
	if err := s.Load(context.Background(), corpus()); err != nil {
		t.Fatal(err)
	}
	res := s.Feedback([]Seed{{DocumentID: "enum-howto", Weight: 1}},
		[]string{"enum-ref", "constants", "json", "pickle", "unknown"}, 3)
	if res.Scores["enum-ref"] <= res.Scores["constants"] {
		t.Errorf("enum-ref scores %.3f, constants %.3f: want the page sharing enum and flag first",
			res.Scores["enum-ref"], res.Scores["constants"])
	}
	if _, ok := res.Scores["json"]; ok {
		t.Errorf("json shares only the ubiquitous entity class; got score %.3f, want none", res.Scores["json"])
	}
	if _, ok := res.Scores["unknown"]; ok {
		t.Error("an unknown document got a score")
	}
	for id, v := range res.Scores {
		if v < 0 || v > 1 || math.IsNaN(v) {
			t.Errorf("score of %s is %v, want [0,1]", id, v)
		}
	}
	if len(res.Entities) == 0 || res.Entities[0].ID != "enum" {
		t.Errorf("top entities %+v, want enum first", res.Entities)
	}
	if len(res.Entities) > 3 {
		t.Errorf("got %d entities, want at most 3", len(res.Entities))
	}
	for _, e := range res.Entities {
		want := 0
		for _, list := range corpus() {
			for _, x := range list {
				if x.Entity.ID == e.ID {
					want++
				}
			}
		}
		if e.Documents != want {
			t.Errorf("entity %s: %d documents, want its document frequency %d", e.ID, e.Documents, want)
		}
	}
}

func TestFeedbackWithoutUsableSeeds(t *testing.T) {
	s := New()
	if err := s.Load(context.Background(), corpus()); err != nil {
		t.Fatal(err)
	}
	for _, seeds := range [][]Seed{nil, {{DocumentID: "nope", Weight: 1}}, {{DocumentID: "json", Weight: 0}},
		{{DocumentID: "json", Weight: math.NaN()}}, {{DocumentID: "json", Weight: math.Inf(1)}}} {
		res := s.Feedback(seeds, []string{"json", "pickle"}, 5)
		if len(res.Scores) != 0 || len(res.Entities) != 0 {
			t.Errorf("seeds %+v: got %+v, want nothing", seeds, res)
		}
	}
}

func TestRefreshAndDeleteKeepDocumentFrequencies(t *testing.T) {
	src := corpus()
	s := New()
	if err := s.Load(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	if d, e := s.Size(); d != 5 || e != 9 {
		t.Fatalf("size %d docs %d entities, want 5 and 9", d, e)
	}
	// The JSON page is re-ingested about enums: its old entities go, new ones count.
	src["json"] = []graph.EntityCount{ec("enum", 2)}
	if err := s.Refresh(context.Background(), src, "json"); err != nil {
		t.Fatal(err)
	}
	if got := s.entities["enum"].df; got != 3 {
		t.Errorf("enum df %d after refresh, want 3", got)
	}
	if _, ok := s.entities["json"]; ok {
		t.Error("entity json is still held after its only document changed")
	}
	s.Delete("pickle")
	s.Delete("pickle") // twice is harmless
	if _, ok := s.entities["pickle"]; ok {
		t.Error("entity pickle is still held after its only document was deleted")
	}
	if got := s.entities["class"].df; got != 3 {
		t.Errorf("class df %d, want 3 (enum-howto, enum-ref, constants)", got)
	}
	// A document that lost every mention disappears on refresh.
	delete(src, "constants")
	if err := s.Refresh(context.Background(), src, "constants"); err != nil {
		t.Fatal(err)
	}
	if d, _ := s.Size(); d != 3 {
		t.Errorf("%d documents, want 3", d)
	}
	// A full load gives the same frequencies as the incremental updates.
	fresh := New()
	delete(src, "pickle")
	if err := fresh.Load(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	for id, e := range fresh.entities {
		if got := s.entities[id]; got == nil || got.df != e.df {
			t.Errorf("entity %s: incremental df %v, full load %d", id, got, e.df)
		}
	}
	if len(fresh.entities) != len(s.entities) {
		t.Errorf("incremental store holds %d entities, full load %d", len(s.entities), len(fresh.entities))
	}
}

// TestFeedbackScoresCountSeedsEqually: the candidates' scores do not depend on the
// seeds' weights, each seed counts once (referenceFeedback checks the entities).
func TestFeedbackScoresCountSeedsEqually(t *testing.T) {
	src := corpus()
	for i := range 100 { // enough documents for two seeds (one per docsPerSeed)
		id := "filler-" + strconv.Itoa(i)
		src[id] = []graph.EntityCount{ec("own-"+strconv.Itoa(i), 1)}
	}
	s := New()
	if err := s.Load(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	cands := []string{"enum-howto", "enum-ref", "constants", "json", "pickle"}
	equal := s.Feedback([]Seed{{DocumentID: "enum-ref", Weight: 1}, {DocumentID: "json", Weight: 1}}, cands, 5)
	skewed := s.Feedback([]Seed{{DocumentID: "enum-ref", Weight: 9}, {DocumentID: "json", Weight: 0.1}}, cands, 5)
	if len(equal.Scores) != len(cands) {
		t.Fatalf("scores %v, want one per candidate", equal.Scores)
	}
	for id, w := range equal.Scores {
		if g := skewed.Scores[id]; math.Abs(g-w) > 1e-12 {
			t.Errorf("score of %s: %v with skewed seed weights, %v with equal ones; want the same", id, g, w)
		}
	}
}

// TestFeedbackCountsNearCopiesAsOneSeed: three seeds with the same profile (copies of
// one page) and one distinct seed pull the centroid equally towards both topics, so
// a fourth copy and a page like the distinct seed score alike; counted once each,
// the copies would score the fourth copy three times as close.
func TestFeedbackCountsNearCopiesAsOneSeed(t *testing.T) {
	diff := []graph.EntityCount{ec("d1", 5), ec("d2", 4), ec("d3", 3)}
	blame := []graph.EntityCount{ec("b1", 5), ec("b2", 4), ec("b3", 3)}
	src := fakeSource{"diff-a": diff, "diff-b": diff, "diff-c": diff, "diff-d": diff, "blame": blame, "blame-2": blame}
	for i := range 200 { // enough documents for four seeds (one per docsPerSeed)
		id := "filler-" + strconv.Itoa(i)
		src[id] = []graph.EntityCount{ec("own-"+strconv.Itoa(i), 1)}
	}
	s := New()
	if err := s.Load(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	seeds := []Seed{{DocumentID: "diff-a", Weight: 4}, {DocumentID: "diff-b", Weight: 3},
		{DocumentID: "diff-c", Weight: 2}, {DocumentID: "blame", Weight: 1}}
	res := s.Feedback(seeds, []string{"diff-d", "blame-2"}, 5)
	d, b := res.Scores["diff-d"], res.Scores["blame-2"]
	if d <= 0 || math.Abs(d-b) > 1e-9 {
		t.Errorf("diff-d scores %v, blame-2 %v: want equal and positive (three copies count as one seed)", d, b)
	}
	// The shares themselves: a copy shares with the other copies, distinct seeds and
	// a seed without a profile keep 1.
	dense := make([]float64, len(s.ids))
	for _, tc := range []struct {
		seeds []string
		want  []float64
	}{
		{[]string{"diff-a", "diff-b", "diff-c", "blame"}, []float64{1. / 3, 1. / 3, 1. / 3, 1}},
		{[]string{"diff-a", "blame", "filler-1"}, []float64{1, 1, 1}},
		{[]string{"diff-a", "unknown", "diff-b"}, []float64{0.5, 1, 0.5}},
	} {
		var sd []Seed
		for _, id := range tc.seeds {
			sd = append(sd, Seed{DocumentID: id, Weight: 1})
		}
		got := s.seedShares(sd, dense)
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-12 {
				t.Errorf("shares of %v: got %v, want %v", tc.seeds, got, tc.want)
				break
			}
		}
		for e, x := range dense {
			if x != 0 {
				t.Fatalf("shares of %v left %v at entity %d of the scratch vector, want zeros", tc.seeds, x, e)
			}
		}
	}
}

// TestFeedbackNamesEntitiesOfTheTopPagesInASmallStore: a store of five documents
// scores the candidates with its one seed (one per docsPerSeed documents), but the
// related entities still come from the first entitySeeds seeds and must be shared by
// two of them: the first page's own names alone are not what the results are about.
func TestFeedbackNamesEntitiesOfTheTopPagesInASmallStore(t *testing.T) {
	src := corpus()
	src["enum-howto"] = append(src["enum-howto"], ec("howto-only", 20))
	s := New()
	if err := s.Load(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	cands := []string{"enum-howto", "enum-ref", "constants", "json", "pickle"}
	one := s.Feedback([]Seed{{DocumentID: "enum-howto", Weight: 3}}, cands, 10)
	three := s.Feedback([]Seed{{DocumentID: "enum-howto", Weight: 3}, {DocumentID: "constants", Weight: 2},
		{DocumentID: "enum-ref", Weight: 1}}, cands, 10)
	if len(three.Scores) != len(one.Scores) {
		t.Fatalf("scores %v with three seeds, %v with one: want the same candidates", three.Scores, one.Scores)
	}
	for id, w := range one.Scores {
		if g := three.Scores[id]; math.Abs(g-w) > 1e-12 {
			t.Errorf("score of %s: %v with three seeds, %v with the one scoring seed; want the same", id, g, w)
		}
	}
	named := map[string]bool{}
	for _, e := range three.Entities {
		named[e.ID] = true
	}
	if named["howto-only"] || !named["enum"] || !named["constant"] {
		t.Errorf("entities %+v: want enum and constant (each on two seeds), not howto-only (the first page's alone)", three.Entities)
	}
	if len(one.Entities) == 0 || one.Entities[0].ID != "howto-only" {
		t.Errorf("one seed: entities %+v, want its own heaviest (howto-only) first", one.Entities)
	}
}
