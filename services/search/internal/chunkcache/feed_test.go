package chunkcache_test

import (
	"context"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/search/internal/searchtest"
)

// TestFollowsTheChangeFeed: with the real store and indexer, cached rows are replaced
// once the indexer has read an update (same chunk ids, new text) and dropped once it
// has read a delete.
func TestFollowsTheChangeFeed(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{NoKG: true})
	ctx := context.Background()
	doc := searchtest.Doc{URL: "https://cache.example/a", Title: "A", Chunks: []searchtest.Chunk{{Text: "old first"}, {Text: "old second"}}}
	other := searchtest.Doc{URL: "https://cache.example/b", Title: "B", Chunks: []searchtest.Chunk{{Text: "other"}}}
	e.Add(t, doc, other)
	ids := func(d searchtest.Doc, n int) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = store.ChunkID(store.DocumentID(d.URL), i)
		}
		return out
	}
	all := append(ids(doc, 2), ids(other, 1)...)
	read := func() []string {
		t.Helper()
		rows, err := e.Chunks.ChunksByIDs(ctx, all)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, r := range rows {
			out = append(out, r.Text)
		}
		return out
	}
	equal := func(got []string, want ...string) bool {
		if len(got) != len(want) {
			return false
		}
		for i := range got {
			if got[i] != want[i] {
				return false
			}
		}
		return true
	}
	if got := read(); !equal(got, "old first", "old second", "other") {
		t.Fatalf("first read: %q", got)
	}
	if rows, _, _ := e.Chunks.Stats(); rows != 3 {
		t.Fatalf("%d rows cached, want 3", rows)
	}

	doc.Chunks = []searchtest.Chunk{{Text: "new first"}} // one chunk now: id 0 reused, id 1 gone
	e.Add(t, doc)                                        // writes and syncs the index
	if got := read(); !equal(got, "new first", "other") {
		t.Errorf("after the update was synced: %q, want new first, other", got)
	}

	if _, err := e.Store.DeleteDocument(ctx, store.DocumentID(doc.URL), nil); err != nil {
		t.Fatal(err)
	}
	e.Sync(t)
	if got := read(); !equal(got, "other") {
		t.Errorf("after the delete was synced: %q, want other", got)
	}
	if _, hits, _ := e.Chunks.Stats(); hits == 0 {
		t.Error("no read was served from the cache; the test did not exercise it")
	}
}
