package app

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/embed/embedtest"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/search/internal/bm25"
	"github.com/kgsearch/kgsearch/services/search/internal/config"
	"github.com/kgsearch/kgsearch/services/search/internal/searchtest"
)

func storeWithOneDoc(t *testing.T) (*store.Store, string) {
	t.Helper()
	dsn := searchtest.FreshDatabase(t)
	h := embedtest.NewHash(32)
	st, err := store.Open(context.Background(), store.Config{DSN: dsn, Model: store.Model{Name: h.Info().Name, Dims: 32}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	v, _ := h.Embed(context.Background(), []string{"zebra crossing"})
	doc := store.Document{URL: "https://a.example/z", Title: "Zebra"}
	if _, err := st.UpsertDocument(context.Background(), &doc, []store.Chunk{{Text: "zebra crossing", Embedding: v[0], EndOffset: 14}}, nil); err != nil {
		t.Fatal(err)
	}
	return st, dsn
}

func TestOpenIndexRebuildsADamagedIndex(t *testing.T) {
	st, _ := storeWithOneDoc(t)
	dir := filepath.Join(t.TempDir(), "bleve")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index_meta.json"), []byte("{garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := openIndex(context.Background(), dir, st, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("openIndex on a damaged directory: %v", err)
	}
	defer ix.Close()
	hits, err := ix.Search(context.Background(), "zebra", 10, bm25.Filter{})
	if err != nil || len(hits) != 1 || ix.Watermark() != 1 {
		t.Errorf("rebuilt index: %d hits, watermark %d, err %v; want 1 hit, watermark 1", len(hits), ix.Watermark(), err)
	}
}

func TestReindexRefusesAHeldIndex(t *testing.T) {
	_, dsn := storeWithOneDoc(t)
	dir := filepath.Join(t.TempDir(), "bleve")
	cfg := config.Default()
	cfg.MariaDBDSN, cfg.IndexDir = dsn, dir
	logger := slog.New(slog.DiscardHandler)
	if err := Reindex(context.Background(), cfg, logger); err != nil {
		t.Fatalf("Reindex: %v", err)
	}
	held, err := bm25.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if held.Watermark() != 1 {
		t.Errorf("watermark after reindex: got %d, want 1", held.Watermark())
	}
	if err := Reindex(context.Background(), cfg, logger); !errors.Is(err, bm25.ErrLocked) {
		t.Errorf("Reindex while the index is open: got %v, want ErrLocked", err)
	}
}
