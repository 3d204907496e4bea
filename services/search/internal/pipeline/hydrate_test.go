package pipeline

import (
	"context"
	"strconv"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/ranker"
	"github.com/kgsearch/kgsearch/services/search/internal/indexer"
)

// recrawledDocs answers every lookup with a new content hash, as the indexer's table
// does when a recrawl that changed the page is applied between two lookups.
type recrawledDocs struct{ n int }

func (r *recrawledDocs) Doc(id string) (indexer.Doc, bool) {
	r.n++
	return indexer.Doc{ID: id, URL: "https://example.org/" + id, ContentHash: "h" + strconv.Itoa(r.n)}, true
}

func (r *recrawledDocs) CaughtUp() bool { return true }

// TestHydrateGivesADocumentsChunksOneContentKey: the chunks of one page take its
// metadata from one lookup, so they share a content key and the ranker keeps one of
// them; a key per lookup would show the page twice while a recrawl is applied.
func TestHydrateGivesADocumentsChunksOneContentKey(t *testing.T) {
	docs := &recrawledDocs{}
	p := &Pipeline{docs: docs}
	cands := map[string]*cand{}
	var order []string
	for i, doc := range []string{"a", "a", "b", "a"} {
		id := strconv.Itoa(i + 1)
		cands[id] = &cand{id: int64(i + 1), hydrated: true, c: ranker.Candidate{ChunkID: id, DocumentID: doc}}
		order = append(order, id)
	}
	if err := p.hydrateChunks(context.Background(), cands, order); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"2", "4"} {
		if got, want := cands[id].c.ContentKey, cands["1"].c.ContentKey; got != want || !cands[id].docKnown {
			t.Errorf("chunk %s of document a: content key %q (known %v), chunk 1's %q", id, got, cands[id].docKnown, want)
		}
	}
	if cands["3"].c.ContentKey == cands["1"].c.ContentKey {
		t.Errorf("documents a and b share content key %q", cands["3"].c.ContentKey)
	}
	if docs.n != 2 {
		t.Errorf("%d lookups, want one per document (2)", docs.n)
	}
}
