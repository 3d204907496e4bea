package profile

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/graph"
)

// BenchmarkFeedback scores 200 candidates against 8 seeds (what search sends) in a
// store shaped like the Python manual's (about 500 documents, 100 entities each out
// of 25,000).
func BenchmarkFeedback(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := fakeSource{}
	var ids []string
	for d := range 500 {
		id := fmt.Sprintf("doc-%d", d)
		ids = append(ids, id)
		for range 100 {
			e := fmt.Sprintf("e%d", int(rng.ExpFloat64()*3000)%25000)
			src[id] = append(src[id], graph.EntityCount{Entity: graph.EntityRef{ID: e, Name: e}, Count: int64(1 + rng.IntN(5))})
		}
	}
	s := New()
	if err := s.Load(context.Background(), src); err != nil {
		b.Fatal(err)
	}
	seeds := []Seed{{ids[0], 1}, {ids[1], 0.9}, {ids[2], 0.8}, {ids[3], 0.7}, {ids[4], 0.6}, {ids[5], 0.5}, {ids[6], 0.4}, {ids[7], 0.3}}
	s.Feedback(seeds, ids[:200], 10) // vectors computed once, as after a change
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s.Feedback(seeds, ids[:200], 10)
	}
}
