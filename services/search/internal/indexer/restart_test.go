package indexer_test

import (
	"context"
	"errors"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/search/internal/bm25"
	"github.com/kgsearch/kgsearch/services/search/internal/indexer"
	"github.com/kgsearch/kgsearch/services/search/internal/searchtest"
)

// dyingStore is the store as a search process sees it when it is stopped in
// the middle of a sync: after its first batches of changes, reads fail.
type dyingStore struct {
	indexer.Store
	batches int
}

var errStopped = errors.New("search service stopped")

func (s *dyingStore) Changes(ctx context.Context, since int64, limit int) ([]store.Change, error) {
	if s.batches == 0 {
		return nil, errStopped
	}
	s.batches--
	return s.Store.Changes(ctx, since, limit)
}

// TestRestartMidSync stops the indexer in the middle of a sync (after one of
// several batches), closes the Bleve index as a stopping service does, writes
// and deletes more documents while it is down, and starts a new indexer on the
// same index directory: it must catch up to the store's latest change with no
// deleted document left, whether the delete came before the stop, during the
// partial sync, or while the service was down.
func TestRestartMidSync(t *testing.T) {
	ctx := context.Background()
	e := searchtest.New(t, searchtest.Options{NoKG: true})
	add := func(url, text string) {
		t.Helper()
		d := store.Document{URL: url, Title: text}
		v, _ := e.Embedder.Embed(ctx, []string{text})
		if _, err := e.Store.UpsertDocument(ctx, &d, []store.Chunk{{Text: text, Embedding: v[0], EndOffset: len(text)}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	del := func(url string) {
		t.Helper()
		if _, err := e.Store.DeleteDocument(ctx, store.DocumentID(url), nil); err != nil {
			t.Fatal(err)
		}
	}
	url := func(i int) string { return "https://restart.example/" + string(rune('a'+i)) }
	for i := range 8 {
		add(url(i), "quokka page")
	}
	del(url(0)) // deleted before the sync starts; its insert and delete are both pending
	del(url(1))

	dir := filepath.Join(t.TempDir(), "bleve")
	ix, err := bm25.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	first := indexer.New(&dyingStore{Store: e.Store, batches: 2}, ix, indexer.Config{BatchSize: 3}, nil, nil)
	if _, err := first.Sync(ctx); !errors.Is(err, errStopped) {
		t.Fatalf("first sync: got %v, want it stopped mid-way", err)
	}
	stoppedAt := ix.Watermark()
	latest, err := e.Store.LatestSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stoppedAt == 0 || stoppedAt >= latest {
		t.Fatalf("watermark at the stop: got %d, want strictly between 0 and %d (mid-sync)", stoppedAt, latest)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	// While search is down: a document it indexed is deleted, one is added.
	del(url(2))
	add(url(8), "quokka late page")

	ix, err = bm25.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.Watermark() != stoppedAt {
		t.Errorf("watermark after reopening: got %d, want %d (kept across the restart)", ix.Watermark(), stoppedAt)
	}
	second := indexer.New(e.Store, ix, indexer.Config{BatchSize: 3}, nil, nil)
	if _, err := second.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	latest, _ = e.Store.LatestSeq(ctx)
	if !second.CaughtUp() || ix.Watermark() != latest {
		t.Errorf("after the restart: caught up %v at %d, want caught up at the store's %d", second.CaughtUp(), ix.Watermark(), latest)
	}
	var want []string
	for i := 3; i <= 8; i++ {
		want = append(want, url(i))
	}
	got := hits(t, ix, "quokka")
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("documents found after the restart (-want +got):\n%s", diff)
	}
	// One chunk per live document: nothing of a deleted one is left behind.
	if n, err := ix.DocCount(); err != nil || n != uint64(len(want)) {
		t.Errorf("chunks in the index: got %d (%v), want %d", n, err, len(want))
	}
}
