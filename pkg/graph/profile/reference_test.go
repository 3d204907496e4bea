package profile

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/graph"
)

// referenceFeedback is Feedback written plainly over string-keyed maps (as it was
// before the vectors were interned): the definition the fast path must equal.
func referenceFeedback(s *Store, seeds []Seed, candidates []string, topEntities int) Result {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := float64(len(s.docs))
	vec := func(doc string) map[string]float64 {
		out := map[string]float64{}
		sum := 0.0
		for id, count := range s.docs[doc] {
			if e := s.entities[id]; e != nil && e.df > 0 {
				if w := (1 + math.Log(float64(count))) * math.Log(n/float64(e.df)); w > 0 {
					out[id] = w
					sum += w * w
				}
			}
		}
		for id := range out {
			out[id] /= math.Sqrt(sum)
		}
		return out
	}
	seeds = slices.DeleteFunc(slices.Clone(seeds), func(sd Seed) bool { return !(sd.Weight > 0) || math.IsInf(sd.Weight, 0) })
	slices.SortStableFunc(seeds, func(a, b Seed) int { return cmp.Compare(b.Weight, a.Weight) })
	res := Result{Scores: map[string]float64{}}
	if len(seeds) == 0 || len(s.docs[seeds[0].DocumentID]) == 0 {
		return res
	}
	// One seed per docsPerSeed documents scores the candidates; the entities come
	// from the first entitySeeds seeds whatever the store's size.
	scoring := seeds[:min(len(seeds), max(1, len(s.docs)/docsPerSeed))]
	namedSeeds := seeds[:min(len(seeds), entitySeeds)]
	// Candidates are scored against every seed counted once; the entities come from
	// the first entitySeeds seeds weighted by their scores.
	// A seed shares its weight with the other seeds that are near-copies of it.
	share := make([]float64, len(scoring))
	for i := range scoring {
		copies := 0
		for j := range scoring {
			dot := 0.0
			for id, w := range vec(scoring[i].DocumentID) {
				dot += w * vec(scoring[j].DocumentID)[id]
			}
			if j != i && dot >= nearDuplicate {
				copies++
			}
		}
		share[i] = 1 / float64(1+copies)
	}
	centroid, named, support, used := map[string]float64{}, map[string]float64{}, map[string]int{}, 0
	for i, sd := range scoring {
		for id, w := range vec(sd.DocumentID) {
			centroid[id] += share[i] * w
		}
	}
	for _, sd := range namedSeeds {
		v := vec(sd.DocumentID)
		if len(v) > 0 {
			used++
		}
		for id, w := range v {
			named[id] += sd.Weight * w
			support[id]++
		}
	}
	norm, namedNorm := 0.0, 0.0
	for _, w := range centroid {
		norm += w * w
	}
	for _, w := range named {
		namedNorm += w * w
	}
	if norm == 0 {
		return res
	}
	norm, namedNorm = math.Sqrt(norm), math.Sqrt(namedNorm)
	for _, c := range candidates {
		dot := 0.0
		for id, w := range vec(c) {
			dot += w * centroid[id]
		}
		if dot > 0 {
			res.Scores[c] = min(dot/norm, 1)
		}
	}
	for id, w := range named {
		if e := s.entities[id]; e != nil && support[id] >= min(used, 2) && namedNorm > 0 {
			res.Entities = append(res.Entities, Entity{ID: id, Name: e.name, Type: e.typ, Weight: w / namedNorm})
		}
	}
	slices.SortFunc(res.Entities, func(a, b Entity) int {
		if c := cmp.Compare(b.Weight, a.Weight); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if len(res.Entities) > topEntities {
		res.Entities = res.Entities[:topEntities]
	}
	return res
}

// TestFeedbackEqualsReference compares Feedback with referenceFeedback on random
// stores, changed between rounds by refreshes and deletes (so the interned vectors
// are rebuilt), for random seeds and candidates. Sums run in another order, so
// scores may differ in the last bits; nothing else may. The smaller store has fewer
// scoring seeds (one per docsPerSeed documents) than entity seeds.
func TestFeedbackEqualsReference(t *testing.T) {
	for _, n := range []int{300, 120} {
		t.Run(fmt.Sprintf("%d documents", n), func(t *testing.T) { feedbackEqualsReference(t, n) })
	}
}

func feedbackEqualsReference(t *testing.T, n int) {
	rng := rand.New(rand.NewPCG(7, 13))
	src := fakeSource{}
	var docs []string
	for d := range n {
		id := fmt.Sprintf("doc-%d", d)
		docs = append(docs, id)
		for range 1 + rng.IntN(40) {
			e := fmt.Sprintf("e%d", int(rng.ExpFloat64()*200)%3000)
			src[id] = append(src[id], graph.EntityCount{Entity: graph.EntityRef{ID: e, Name: e + "-n", Type: "t"}, Count: int64(1 + rng.IntN(5))})
		}
	}
	s := New()
	if err := s.Load(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	const eps = 1e-12
	checked := 0
	for round := range 30 {
		if round%5 == 4 { // change the store: vectors and interned ids are rebuilt
			s.Delete(docs[rng.IntN(len(docs))])
			id := docs[rng.IntN(len(docs))]
			src[id] = append(src[id], graph.EntityCount{Entity: graph.EntityRef{ID: fmt.Sprintf("new%d", round), Name: "x"}, Count: 2})
			if err := s.Refresh(context.Background(), src, id); err != nil {
				t.Fatal(err)
			}
		}
		var seeds []Seed
		for i := range 1 + rng.IntN(10) {
			seeds = append(seeds, Seed{DocumentID: docs[rng.IntN(len(docs))], Weight: 1 / float64(i+1)})
		}
		cands := make([]string, 0, 150)
		for range 150 {
			cands = append(cands, docs[rng.IntN(len(docs))])
		}
		cands = append(cands, "unknown-doc")
		limit := 1 + rng.IntN(12)
		got, want := s.Feedback(seeds, cands, limit), referenceFeedback(s, seeds, cands, limit)
		if len(got.Scores) != len(want.Scores) {
			t.Fatalf("round %d: %d scores, want %d", round, len(got.Scores), len(want.Scores))
		}
		for id, w := range want.Scores {
			if g, ok := got.Scores[id]; !ok || math.Abs(g-w) > eps {
				t.Errorf("round %d: score of %s = %v (present %v), want %v", round, id, g, ok, w)
			}
		}
		if len(got.Entities) != len(want.Entities) {
			t.Fatalf("round %d: entities %v, want %v", round, got.Entities, want.Entities)
		}
		for i := range want.Entities {
			g, w := got.Entities[i], want.Entities[i]
			if g.ID != w.ID || g.Name != w.Name || g.Type != w.Type || math.Abs(g.Weight-w.Weight) > eps {
				t.Errorf("round %d: entity %d = %+v, want %+v", round, i, g, w)
			}
		}
		checked += len(want.Scores) + len(want.Entities)
	}
	if checked < 500 {
		t.Errorf("only %d scores and entities compared; the random store is too sparse", checked)
	}
}
