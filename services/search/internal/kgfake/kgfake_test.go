package kgfake

import (
	"context"
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
