package api

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/openapi/openapitest"
)

// pageAnswer is the JSON answer of POST /api/v1/pages.
type pageAnswer struct {
	ID       string          `json:"id"`
	URL      string          `json:"url"`
	Outcome  string          `json:"outcome"`
	Reason   string          `json:"reason"`
	Detail   string          `json:"detail"`
	Chunks   int             `json:"chunks"`
	Document json.RawMessage `json:"document"`
	Removed  []struct {
		ID, URL, Reason, Detail string
	} `json:"removed"`
}

// TestPageRemovesStaleDocument: POST /api/v1/pages of a stored page that now
// answers 404, an image, or a redirect removes its stored version like a crawl
// does, answers the removal in the documented shape (checked against the
// OpenAPI document) and counts it in pages_deleted_total; a failure after a
// removal says what was removed.
func TestPageRemovesStaleDocument(t *testing.T) {
	var changed atomic.Bool
	text := func(w http.ResponseWriter, title string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>%s</title></head><body><main><h1>%s</h1><p>Words of %s, enough of them for the extractor to keep as the main text of this page.</p></main></body></html>`, title, title, title)
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch now := changed.Load(); {
		case r.URL.Path == "/target":
			text(w, "Target")
		case r.URL.Path == "/busy-target":
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case !now:
			text(w, strings.TrimPrefix(r.URL.Path, "/"))
		case r.URL.Path == "/gone":
			http.NotFound(w, r)
		case r.URL.Path == "/picture":
			w.Header().Set("Content-Type", "image/jpeg")
			_, _ = io.WriteString(w, "\xff\xd8\xff\xe0 jpeg data")
		case r.URL.Path == "/moved":
			http.Redirect(w, r, "/target", http.StatusMovedPermanently)
		case r.URL.Path == "/moved-to-busy":
			http.Redirect(w, r, "/busy-target", http.StatusFound)
		}
	}))
	t.Cleanup(site.Close)
	f := newFixture(t, []string{strings.TrimPrefix(site.URL, "http://")})
	c := openapitest.New(t, OpenAPI)
	post := func(path string, want int) []byte {
		t.Helper()
		code, _, data := c.Fetch(f.url, "POST", "/api/v1/pages", fmt.Sprintf(`{"url":%q}`, site.URL+path))
		if code != want {
			t.Fatalf("POST /pages %s: got %d, want %d: %s", path, code, want, data)
		}
		return data
	}
	ids := map[string]string{}
	for _, p := range []string{"/gone", "/picture", "/moved", "/moved-to-busy"} {
		var a pageAnswer
		if err := json.Unmarshal(post(p, http.StatusOK), &a); err != nil || a.Outcome != "stored" {
			t.Fatalf("store %s: %v %+v", p, err, a)
		}
		ids[p] = a.ID
	}
	changed.Store(true)

	for p, want := range map[string][2]string{
		"/gone":    {"http_404", "the page answered HTTP 404; its stored version was removed"},
		"/picture": {"content_type", "the URL now serves image/jpeg, not an HTML or text page; its stored version was removed"},
	} {
		var a pageAnswer
		if err := json.Unmarshal(post(p, http.StatusOK), &a); err != nil {
			t.Fatal(err)
		}
		if a.Outcome != "deleted" || a.Reason != want[0] || a.Detail != want[1] || a.ID != ids[p] || a.URL != site.URL+p ||
			a.Chunks != 0 || a.Document != nil || len(a.Removed) != 1 || a.Removed[0].ID != ids[p] || a.Removed[0].Reason != want[0] {
			t.Errorf("%s: got %+v; want deleted, %s, %q, id %s, no document", p, a, want[0], want[1], ids[p])
		}
	}

	var a pageAnswer
	if err := json.Unmarshal(post("/moved", http.StatusOK), &a); err != nil {
		t.Fatal(err)
	}
	if a.Outcome != "stored" || a.URL != site.URL+"/target" || len(a.Removed) != 1 || a.Removed[0].ID != ids["/moved"] ||
		a.Removed[0].Reason != "redirect" || a.Removed[0].Detail != "the URL now redirects to "+site.URL+"/target; its stored version was removed" {
		t.Errorf("/moved: got %+v; want the target stored and /moved removed as a redirect", a)
	}

	var p struct{ Detail string }
	if err := json.Unmarshal(post("/moved-to-busy", http.StatusUnprocessableEntity), &p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Detail, "HTTP 503") || !strings.Contains(p.Detail, "The stored version of "+site.URL+"/moved-to-busy was removed: the URL now redirects to") {
		t.Errorf("/moved-to-busy: detail %q; want the 503 and the removal of /moved-to-busy", p.Detail)
	}

	for path, id := range ids {
		if code, _, data := c.Fetch(f.url, "GET", "/api/v1/documents/"+id, ""); code != http.StatusNotFound {
			t.Errorf("GET the removed document of %s: %d %s", path, code, data)
		}
	}
	if _, err := f.st.DocumentByURL(t.Context(), site.URL+"/target"); err != nil {
		t.Errorf("the redirect target: %v", err)
	}
	_, _, metrics := c.Fetch(f.url, "GET", "/metrics", "")
	for _, series := range []string{`pages_deleted_total{reason="http_404"} 1`, `pages_deleted_total{reason="content_type"} 1`, `pages_deleted_total{reason="redirect"} 2`} {
		if !strings.Contains(string(metrics), series) {
			t.Errorf("metrics lack %s", series)
		}
	}
}
