package pipeline

import (
	"errors"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/embed/embedtest"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/chunk"
)

func TestKGPayload(t *testing.T) {
	u, _ := url.Parse("http://docs.test/library/json.html")
	page, _, err := Extract(u, "text/html; charset=utf-8", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := chunk.New(chunk.Options{MaxTokens: 32, Overlap: 8, MinTokens: 0})
	if err != nil {
		t.Fatal(err)
	}
	p := &Pipeline{embedder: embedtest.NewHash(8), splitter: ChunkSplitter{S: sp}, variant: "m/32/8", maxLinks: 10}
	pieces, err := p.splitter.Split(page)
	if err != nil {
		t.Fatal(err)
	}
	stored := &store.Document{URL: u.String(), Title: page.Title, ContentHash: p.ContentHash(page), ChunkCount: len(pieces)}
	// What the crawl sent is what the re-delivery sends.
	want := p.kgDocument(u.String(), stored, page, pieces)

	got, err := p.KGPayload(Page{URL: u.String(), Extracted: page, Previous: stored})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("payload (-crawl +re-delivery):\n%s", diff)
	}

	changedText := *stored
	changedText.ContentHash = "other"
	fewerChunks := *stored
	fewerChunks.ChunkCount = len(pieces) - 1
	for name, prev := range map[string]*store.Document{"content hash": &changedText, "chunk count": &fewerChunks} {
		if _, err := p.KGPayload(Page{URL: u.String(), Extracted: page, Previous: prev}); !errors.Is(err, ErrChanged) {
			t.Errorf("%s differs: got %v, want ErrChanged", name, err)
		}
	}
	if _, err := p.KGPayload(Page{URL: u.String(), Extracted: page}); err == nil || errors.Is(err, ErrChanged) {
		t.Errorf("no stored version: got %v, want an error that is not ErrChanged", err)
	}
}
