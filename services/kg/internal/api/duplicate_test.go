package api

import (
	"net/http"
	"strings"
	"testing"
)

// TestDuplicateKeyRefused: a key given twice in a request body is a 400 naming
// its path (httpserver.DecodeJSON), not the last value read silently, on the
// real routes; nothing reaches the graph.
func TestDuplicateKeyRefused(t *testing.T) {
	g := &fakeGraph{}
	ts := newTestServer(t, g)
	for _, tc := range []struct {
		name, path, body, field string
	}{
		{"match", "/api/v1/entities/match", `{"entities":["go"],"entities":["rust"]}`, "entities"},
		{"ingest nested", "/api/v1/ingest", `{"document":{"id":"d","url":"https://example.org/a","id":"e","chunks":[{"id":"c","text":"Go is a language."}]}}`, "document.id"},
		{"ingest in a list", "/api/v1/ingest", `{"document":{"id":"d","url":"https://example.org/a","chunks":[{"id":"c","text":"Go.","text":"Rust."}]}}`, "document.chunks[0].text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := call(t, ts, http.MethodPost, tc.path, tc.body)
			if code != http.StatusBadRequest || body["field"] != tc.field {
				t.Fatalf("got %d %v, want 400 naming %s", code, body, tc.field)
			}
			if d, _ := body["detail"].(string); !strings.Contains(d, "given twice") {
				t.Errorf("detail %q does not say the key is given twice", d)
			}
		})
	}
	if len(g.upserted) != 0 {
		t.Errorf("the graph received %d documents from refused bodies", len(g.upserted))
	}
}
