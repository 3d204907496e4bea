package pipeline

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/embed/embedtest"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/htmltext"
)

// countingStore records upserts.
type countingStore struct{ upserts int }

func (s *countingStore) UpsertDocument(_ context.Context, _ *store.Document, chunks []store.Chunk, _ json.RawMessage) (store.UpsertResult, error) {
	s.upserts++
	return store.UpsertResult{}, nil
}

func (s *countingStore) SetDocumentTags(context.Context, string, []string) (store.Document, error) {
	return store.Document{}, nil
}

// wholeSplitter makes one piece of a page's whole text.
type wholeSplitter struct{}

func (wholeSplitter) Split(p *htmltext.Page) ([]Piece, error) {
	if strings.TrimSpace(p.Text) == "" {
		return nil, nil
	}
	return []Piece{{Text: p.Text, Tokens: len(strings.Fields(p.Text)), End: len(p.Text)}}, nil
}

func TestIndexTellsScriptRenderedPages(t *testing.T) {
	docsify := `<!DOCTYPE html><html><head><title>Acme docs</title></head><body>
<div id="app">Loading ...</div><script>window.$docsify = {}</script><script src="docsify.js"></script></body></html>`
	blank := `<!DOCTYPE html><html><head><title>Nothing</title></head><body></body></html>`
	for _, tc := range []struct {
		name     string
		page     string
		withBody bool
		want     Outcome
		upserts  int
	}{
		{"docsify shell", docsify, true, ScriptRendered, 0},
		// Without the fetched body the page is what it was before: its
		// placeholder is its text.
		{"docsify shell, no body given", docsify, false, Stored, 1},
		{"real page", doc, true, Stored, 1},
		{"blank page without scripts", blank, true, Empty, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, _ := url.Parse("http://docs.test/")
			const ct = "text/html; charset=utf-8"
			page, _, err := Extract(u, ct, []byte(tc.page), nil)
			if err != nil {
				t.Fatal(err)
			}
			st := &countingStore{}
			p := New(st, embedtest.NewHash(8), wholeSplitter{}, "test")
			in := Page{URL: u.String(), Extracted: page}
			if tc.withBody {
				in.Body, in.ContentType = []byte(tc.page), ct
			}
			res, err := p.Index(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tc.want || st.upserts != tc.upserts {
				t.Fatalf("got %s with %d upserts, want %s with %d", res.Outcome, st.upserts, tc.want, tc.upserts)
			}
			if (res.Shell != nil) != (tc.want == ScriptRendered) {
				t.Errorf("shell: got %+v for outcome %s", res.Shell, res.Outcome)
			}
			if res.Shell != nil && res.Shell.Evidence() != `<div id="app"> holding only "Loading ..."` {
				t.Errorf("evidence: got %q", res.Shell.Evidence())
			}
		})
	}
}
