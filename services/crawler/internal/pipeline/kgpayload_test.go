package pipeline

import (
	"errors"
	"net/url"
	"strings"
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

// TestKGPayloadLeavesOutOverlongLinks: a link longer than any stored document URL
// is left out of kg's payload. kg refuses a whole document for one link over its
// limit (400), which the outbox retries forever, so before this the page that held
// such a link never reached the graph.
func TestKGPayloadLeavesOutOverlongLinks(t *testing.T) {
	long := "http://docs.test/" + strings.Repeat("x", 9000)
	body := `<!doctype html><html><head><title>Links</title></head><body><main><h1>Links</h1>
<p>PostgreSQL replication keeps a standby server in sync with the primary server.</p>
<a href="/a.html">a</a> <a href="` + long + `">long</a> <a href="/b.html">b</a></main></body></html>`
	u, _ := url.Parse("http://docs.test/index.html")
	page, _, err := Extract(u, "text/html; charset=utf-8", []byte(body), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Links) != 3 {
		t.Fatalf("extracted links: got %d, want 3 (the test needs the long link in the page)", len(page.Links))
	}
	sp, err := chunk.New(chunk.Options{MaxTokens: 64, Overlap: 8, MinTokens: 0})
	if err != nil {
		t.Fatal(err)
	}
	p := &Pipeline{embedder: embedtest.NewHash(8), splitter: ChunkSplitter{S: sp}, variant: "m/64/8", maxLinks: 10}
	pieces, err := p.splitter.Split(page)
	if err != nil {
		t.Fatal(err)
	}
	doc := p.kgDocument(u.String(), &store.Document{URL: u.String(), Title: page.Title}, page, pieces)
	var got []string
	for _, l := range doc.Links {
		got = append(got, l.URL)
	}
	if diff := cmp.Diff([]string{"http://docs.test/a.html", "http://docs.test/b.html"}, got); diff != "" {
		t.Errorf("payload links (-want +got):\n%s", diff)
	}
}
