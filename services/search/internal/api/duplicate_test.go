package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kgsearch/kgsearch/services/search/internal/searchtest"
)

// TestSearchPOSTDuplicateKey: a key given twice in the body of POST
// /api/v1/search is a 400 naming its path (httpserver.DecodeJSON), also inside
// the fields kept as raw JSON (weights), instead of the last value winning.
func TestSearchPOSTDuplicateKey(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	e.Add(t, docs()...)
	for _, tc := range []struct{ name, body, field string }{
		{"q", `{"q":"database","q":"redis"}`, "q"},
		{"k in other case", `{"q":"database","k":1,"K":5}`, "k"},
		{"weights", `{"q":"database","weights":{"bm25":1,"vector":1,"bm25":0}}`, "weights.bm25"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, body := post(t, e, "/api/v1/search?format=json", tc.body)
			var p struct{ Field, Detail string }
			if err := json.Unmarshal(body, &p); err != nil || code != http.StatusBadRequest || p.Field != tc.field {
				t.Fatalf("got %d %s, want 400 naming %s", code, body, tc.field)
			}
			if !strings.Contains(p.Detail, "given twice") {
				t.Errorf("detail %q does not say the key is given twice", p.Detail)
			}
		})
	}
}
