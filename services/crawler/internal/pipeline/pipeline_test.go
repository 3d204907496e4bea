package pipeline

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kgsearch/kgsearch/pkg/embed/embedtest"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/chunk"
)

const doc = `<!doctype html><html lang="en"><head><title>json — JSON encoder</title></head><body>
<nav><a href="/">Home</a> <a href="/library/">Library</a></nav>
<main><h1>json — JSON encoder and decoder</h1>
<p>The <code>json</code> module exposes an API familiar to users of the standard library <code>marshal</code> and <code>pickle</code> modules. It encodes Python objects as JSON text and decodes them back.</p>
<h2>Basic usage</h2>
<p>Use <code>json.dumps()</code> to serialise an object to a JSON formatted string, and <code>json.loads()</code> to read one. See <a href="/library/pickle.html">pickle</a> for binary formats.</p>
</main><footer>© footer</footer></body></html>`

func TestSplitAndPayload(t *testing.T) {
	u, _ := url.Parse("http://docs.test/library/json.html")
	page, _, err := Extract(u, "text/html; charset=utf-8", []byte(doc), nil)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := chunk.New(chunk.Options{MaxTokens: 32, Overlap: 8, MinTokens: 0})
	if err != nil {
		t.Fatal(err)
	}
	pieces, err := ChunkSplitter{S: sp}.Split(page)
	if err != nil {
		t.Fatal(err)
	}
	if len(pieces) < 2 {
		t.Fatalf("got %d chunks, want several 32-token chunks", len(pieces))
	}
	sawHeading := false
	for i, pc := range pieces {
		if page.Text[pc.Start:pc.End] != pc.Text {
			t.Errorf("chunk %d: offsets [%d,%d) do not give its text", i, pc.Start, pc.End)
		}
		if pc.Tokens < 1 || pc.Tokens > 32 {
			t.Errorf("chunk %d: %d tokens, want 1..32", i, pc.Tokens)
		}
		if len(pc.HeadingPath) > 0 && pc.HeadingPath[len(pc.HeadingPath)-1] == "Basic usage" {
			sawHeading = true
		}
	}
	if !sawHeading {
		t.Errorf("no chunk under the heading path ending in %q", "Basic usage")
	}

	p := &Pipeline{embedder: embedtest.NewHash(8), variant: "x", maxLinks: 10}
	d := &store.Document{Title: page.Title}
	payload := p.kgDocument(u.String(), d, page, pieces)
	id := store.DocumentID(u.String())
	if payload.ID != id || len(payload.Chunks) != len(pieces) {
		t.Fatalf("payload: got id %s with %d chunks, want %s with %d", payload.ID, len(payload.Chunks), id, len(pieces))
	}
	for i, c := range payload.Chunks {
		if want := strconv.FormatInt(store.ChunkID(id, i), 10); c.ID != want {
			t.Errorf("payload chunk %d id: got %s, want store.ChunkID %s", i, c.ID, want)
		}
	}
	var spans []string
	for _, c := range payload.Chunks {
		spans = append(spans, c.CodeSpans...)
	}
	if !strings.Contains(strings.Join(spans, " "), "json.dumps()") {
		t.Errorf("code spans: got %v, want json.dumps() in the chunk that mentions it", spans)
	}
	found := false
	for _, l := range payload.Links {
		if l.URL == "http://docs.test/library/pickle.html" && l.Anchor == "pickle" {
			found = true
		}
	}
	if !found {
		t.Errorf("links: got %v, want the pickle link with its anchor", payload.Links)
	}
}

func TestContentHashCoversSettings(t *testing.T) {
	u, _ := url.Parse("http://docs.test/a")
	page, _, err := Extract(u, "text/plain", []byte("Some text that will be hashed."), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &Pipeline{variant: "m/256/32"}
	b := &Pipeline{variant: "m/128/16"}
	if a.ContentHash(page) == b.ContentHash(page) {
		t.Errorf("same hash under different chunk settings: a page would not be re-chunked")
	}
	if a.ContentHash(page) != a.ContentHash(page) { //nolint:staticcheck // SA4000: two calls on purpose; the test is that they agree
		t.Errorf("hash is not deterministic")
	}
}

func TestEmbedTextAndClip(t *testing.T) {
	for _, tc := range []struct {
		title string
		pc    Piece
		want  string
	}{
		{"Doc", Piece{Text: "body"}, "Doc\nbody"},
		{"Doc", Piece{Text: "body", HeadingPath: []string{"A", "B"}}, "Doc > A > B\nbody"},
		{"A", Piece{Text: "body", HeadingPath: []string{"A", "B"}}, "A > B\nbody"},
		{"", Piece{Text: "body"}, "body"},
	} {
		if got := embedText(tc.title, tc.pc); got != tc.want {
			t.Errorf("embedText(%q, %v): got %q, want %q", tc.title, tc.pc.HeadingPath, got, tc.want)
		}
	}
	s := "añb" // ñ is two bytes
	for n := 0; n <= len(s); n++ {
		if got := clip(s, n); !utf8.ValidString(got) || len(got) > n {
			t.Errorf("clip(%q, %d) = %q: want valid UTF-8 of at most %d bytes", s, n, got, n)
		}
	}
}
