package pipeline_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/services/search/internal/pipeline"
	"github.com/kgsearch/kgsearch/services/search/internal/searchtest"
)

// TestQueryVectorCache: a repeated query (after normalisation) is not embedded again
// and gets the same results as when it was; another query is embedded; with the
// cache off every search embeds and the results are the same.
func TestQueryVectorCache(t *testing.T) {
	for _, size := range []int{0, -1} { // 0: the default cache; -1: none
		e := searchtest.New(t, searchtest.Options{Pipeline: func(o *pipeline.Options) { o.QueryCache = size }})
		e.Add(t, corpus()...)
		embeds := func() int64 { n, _ := e.Embedder.Calls(); return n }
		req := pipeline.Request{Query: "PostgreSQL streaming replication", Expand: true}
		before := embeds()
		first := search(t, e, req)
		if embeds() != before+1 {
			t.Fatalf("cache %d: first search embedded %d times, want 1", size, embeds()-before)
		}
		req.Query = "  postgresql   STREAMING replication "
		second := search(t, e, req)
		want := before + 1
		if size < 0 {
			want++
		}
		if embeds() != want {
			t.Errorf("cache %d: after the repeated query %d embeddings, want %d", size, embeds()-before, want-before)
		}
		if diff := cmp.Diff(first.Results, second.Results); diff != "" || len(first.Results) == 0 {
			t.Errorf("cache %d: repeated query's results differ (-first +second):\n%s", size, diff)
		}
		search(t, e, pipeline.Request{Query: "redis persistence"})
		if embeds() != want+1 {
			t.Errorf("cache %d: a new query was not embedded", size)
		}
	}
}
