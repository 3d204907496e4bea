package api

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/openapi"
	"github.com/kgsearch/kgsearch/pkg/openapi/openapitest"
	"github.com/kgsearch/kgsearch/pkg/store"
)

// TestOpenAPIContract runs every route of the crawler's real handlers (real
// MariaDB, a real crawl of a small site) with good and bad requests and checks
// each answer against the OpenAPI document, problem documents included. Every
// served route must be in the document and covered by a success and an error.
func TestOpenAPIContract(t *testing.T) {
	site := docsSite(t)
	f := newFixture(t, []string{strings.TrimPrefix(site.URL, "http://")})
	if err := openapi.Mount(f.srv.Engine(), "crawler", OpenAPI); err != nil {
		t.Fatal(err)
	}
	c := openapitest.New(t, OpenAPI)
	call := func(method, path, body string, want int, hdr ...string) []byte {
		t.Helper()
		code, _, data := c.Fetch(f.url, method, path, body, hdr...)
		if code != want {
			t.Errorf("%s %s: got %d, want %d: %.300s", method, path, code, want, data)
		}
		return data
	}

	var job struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(call("POST", "/api/v1/crawls", fmt.Sprintf(`{"url":%q,"max_depth":1,"tags":["docs"],"use_sitemap":false}`, site.URL+"/"), 202), &job); err != nil {
		t.Fatal(err)
	}
	call("POST", "/api/v1/crawls", `{"max_depth":1}`, 400)
	call("POST", "/api/v1/crawls", `{"url":"http://x.example/","include":["("]}`, 400)
	call("POST", "/api/v1/crawls", `{"url":"http://x.example/","bogus":1}`, 400)
	call("POST", "/api/v1/crawls", `{"url":"http://10.0.0.1/"}`, 400)
	call("POST", "/api/v1/crawls", `{"url":"`+strings.Repeat("x", 2<<20)+`"}`, 413)
	body := string(call("GET", "/api/v1/crawls/"+job.ID+"/events", "", 200)) // ends with the summary
	if !strings.Contains(body, "event: summary") {
		t.Errorf("event stream without a summary: %.300s", body)
	}
	call("GET", "/api/v1/crawls/"+job.ID+"/events", "", 200) // a finished job: the summary at once
	call("GET", "/api/v1/crawls/no-such-job/events", "", 404)
	call("GET", "/api/v1/crawls", "", 200)
	call("GET", "/api/v1/crawls?status=done&limit=5", "", 200)
	call("GET", "/api/v1/crawls?status=sleeping", "", 400)
	call("GET", "/api/v1/crawls/"+job.ID, "", 200)
	call("GET", "/api/v1/crawls/no-such-job", "", 404)
	call("DELETE", "/api/v1/crawls/"+job.ID, "", 200)
	call("DELETE", "/api/v1/crawls/no-such-job", "", 404)

	call("POST", "/api/v1/pages", fmt.Sprintf(`{"url":%q,"tags":["one"]}`, site.URL+"/http"), 200)
	call("POST", "/api/v1/pages", fmt.Sprintf(`{"url":%q}`, site.URL+"/notfound"), 422)
	call("POST", "/api/v1/pages", `{"tags":["x"]}`, 400)

	// A page that scripts render in the browser: its outcome and the crawl's
	// warning say so, in the documented shapes.
	var shell struct{ Outcome, Detail string }
	if err := json.Unmarshal(call("POST", "/api/v1/pages", fmt.Sprintf(`{"url":%q}`, site.URL+"/app"), 200), &shell); err != nil {
		t.Fatal(err)
	}
	if shell.Outcome != "script_rendered" || shell.Detail != `an empty <div id="app">` {
		t.Errorf("POST /pages of a shell: got outcome %q, detail %q", shell.Outcome, shell.Detail)
	}
	if err := json.Unmarshal(call("POST", "/api/v1/crawls", fmt.Sprintf(`{"url":%q,"max_depth":0}`, site.URL+"/app"), 202), &job); err != nil {
		t.Fatal(err)
	}
	call("GET", "/api/v1/crawls/"+job.ID+"/events", "", 200) // ends with the summary
	var shellJob struct {
		Counters struct {
			ScriptRendered int `json:"script_rendered"`
		} `json:"counters"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal(call("GET", "/api/v1/crawls/"+job.ID, "", 200), &shellJob); err != nil {
		t.Fatal(err)
	}
	if shellJob.Counters.ScriptRendered != 1 || len(shellJob.Warnings) != 1 || !strings.Contains(shellJob.Warnings[0], "rendered by JavaScript") {
		t.Errorf("crawl of a shell: got script_rendered %d, warnings %q", shellJob.Counters.ScriptRendered, shellJob.Warnings)
	}

	var page struct {
		Documents []struct {
			ID string `json:"id"`
		} `json:"documents"`
	}
	if err := json.Unmarshal(call("GET", "/api/v1/documents?limit=2", "", 200), &page); err != nil || len(page.Documents) == 0 {
		t.Fatalf("documents: %v", err)
	}
	call("GET", "/api/v1/documents?limit=0", "", 400)
	id := store.DocumentID(site.URL + "/json")
	var doc struct {
		Chunks []struct {
			ID string `json:"id"`
		} `json:"chunks"`
	}
	if err := json.Unmarshal(call("GET", "/api/v1/documents/"+id+"?chunks=true", "", 200), &doc); err != nil || len(doc.Chunks) == 0 {
		t.Fatalf("document with chunks: %v", err)
	}
	call("GET", "/api/v1/documents/"+id, "", 200)
	call("GET", "/api/v1/documents/nosuch", "", 404)
	call("GET", "/api/v1/chunks/"+doc.Chunks[0].ID, "", 200)
	call("GET", "/api/v1/chunks/abc", "", 400)
	call("GET", "/api/v1/chunks/12345", "", 404)
	call("GET", "/api/v1/chunks/99999999999999999999", "", 404) // decimal, beyond int64: no such chunk
	call("DELETE", "/api/v1/documents/"+id, "", 200)
	call("DELETE", "/api/v1/documents/"+id, "", 404)
	call("DELETE", "/api/v1/documents", "", 400)
	call("DELETE", "/api/v1/documents?domain=no-such-host.example", "", 200)

	call("POST", "/api/v1/blocklist", `{"domain":"ads.example.com","reason":"ads"}`, 201)
	call("POST", "/api/v1/blocklist", `{"domain":"tracker.example.com"}`, 201)
	call("POST", "/api/v1/blocklist", `{"domain":"bad domain!"}`, 400)
	call("GET", "/api/v1/blocklist", "", 200)
	call("DELETE", "/api/v1/blocklist/ads.example.com", "", 204)
	call("DELETE", "/api/v1/blocklist/ads.example.com", "", 404)
	call("DELETE", "/api/v1/blocklist/bad%20domain!", "", 400)
	call("DELETE", "/api/v1/blocklist?domain=tracker.example.com", "", 204)
	call("DELETE", "/api/v1/blocklist", "", 400)

	call("GET", "/healthz", "", 200)
	call("GET", "/readyz", "", 503) // the fixture never marks itself ready
	f.srv.SetReady(true)
	call("GET", "/readyz", "", 200)
	call("GET", "/metrics", "", 200)
	call("GET", "/openapi.json", "", 200)
	call("GET", "/docs", "", 200)

	// With API keys: writes without a key are refused with a problem document.
	keyed := httpserver.New("crawler", httpserver.Config{Addr: "127.0.0.1:0", APIKeys: []string{"contract-key-0123456789"}}, slog.New(slog.DiscardHandler))
	New(keyed, Deps{Crawls: f.eng, Pages: f.eng, Jobs: f.st, Documents: f.st, Blocklist: f.st, BlocklistChanged: f.eng.InvalidateBlocklist}).Register()
	ks := httptest.NewServer(keyed.Engine())
	defer ks.Close()
	for _, r := range [][2]string{{"POST", "/api/v1/crawls"}, {"DELETE", "/api/v1/crawls/x"}, {"POST", "/api/v1/pages"},
		{"DELETE", "/api/v1/documents/x"}, {"DELETE", "/api/v1/documents?domain=x.example"}, {"POST", "/api/v1/blocklist"}, {"DELETE", "/api/v1/blocklist/x.example"}, {"DELETE", "/api/v1/blocklist"}} {
		if code, _, data := c.Fetch(ks.URL, r[0], r[1], `{"url":"http://x.example/"}`); code != 401 {
			t.Errorf("%s %s without a key: got %d: %s", r[0], r[1], code, data)
		}
	}

	var routes []string
	for _, r := range f.srv.Engine().Routes() {
		routes = append(routes, r.Method+" "+r.Path)
	}
	c.Routes(routes, "/docs/")
	c.Covered("GET /healthz", "GET /readyz", "GET /metrics", "GET /openapi.json", "GET /docs", "GET /api/v1/blocklist")
}
