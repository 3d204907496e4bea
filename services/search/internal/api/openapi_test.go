package api_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/openapi"
	"github.com/kgsearch/kgsearch/pkg/openapi/openapitest"
	"github.com/kgsearch/kgsearch/services/search/internal/api"
	"github.com/kgsearch/kgsearch/services/search/internal/searchtest"
)

// TestOpenAPIContract runs every route of the real handlers (real MariaDB and
// Bleve, fake kg) with good and bad requests and checks each answer against the
// OpenAPI document: status, content type and body (TOON bodies decoded with
// pkg/toon), problem documents included. Every served route must be in the
// document and every operation must have been checked.
func TestOpenAPIContract(t *testing.T) {
	env := searchtest.New(t, searchtest.Options{})
	env.Add(t,
		searchtest.Doc{URL: "https://docs.example.org/postgres/replication", Title: "PostgreSQL streaming replication",
			Tags: []string{"postgres"}, Published: searchtest.Now.AddDate(0, -1, 0), Chunks: []searchtest.Chunk{
				{Heading: "Overview", Text: "Streaming replication in PostgreSQL ships WAL records from the primary server to standby servers."},
				{Heading: "Standby", Text: "Configure the standby with primary_conninfo; it connects to the primary and replays WAL."},
			}},
		searchtest.Doc{URL: "https://docs.example.org/redis/persistence", Title: "Redis persistence",
			Tags: []string{"redis"}, Chunks: []searchtest.Chunk{
				{Heading: "RDB", Text: "Redis writes point-in-time snapshots of the dataset to RDB files at intervals."},
			}},
	)
	e := env.Server.Engine()
	if err := openapi.Mount(e, "search", api.OpenAPI); err != nil {
		t.Fatal(err)
	}
	c := openapitest.New(t, api.OpenAPI)
	do := func(method, target, body string, hdr ...string) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest(method, target, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		return c.Do(e, req)
	}
	want := func(rec *httptest.ResponseRecorder, status int, ctype string) {
		t.Helper()
		if rec.Code != status || !strings.HasPrefix(rec.Header().Get("Content-Type"), ctype) {
			t.Errorf("got %d %s, want %d %s: %s", rec.Code, rec.Header().Get("Content-Type"), status, ctype, rec.Body.String())
		}
	}

	want(do("GET", "/api/v1/search?q=postgres+replication+standby&k=3", ""), 200, "text/toon")
	want(do("GET", "/api/v1/search?q=postgres+replication&format=json&explain=true&tags=postgres", ""), 200, "application/json")
	want(do("GET", "/api/v1/search?q=redis&fusion=rrf&mmr=0.5&weights=vector:1,bm25:1", "", "Accept", "application/json"), 200, "application/json")
	want(do("GET", "/api/v1/search?q=nothing+matches+zzzz&domain=none.example", ""), 200, "text/toon")
	// kg down: the answer reports what it left out in degraded, still documented.
	env.KG.SetDown(true)
	want(do("GET", "/api/v1/search?q=postgres+replication+standby&format=json", ""), 200, "application/json")
	want(do("POST", "/api/v1/search", `{"q":"redis persistence snapshots"}`), 200, "text/toon")
	env.KG.SetDown(false)
	want(do("GET", "/api/v1/search?q=x&k=0", ""), 400, "application/problem+json")
	want(do("GET", "/api/v1/search", ""), 400, "application/problem+json")
	want(do("GET", "/api/v1/search?q=x&format=xml", ""), 400, "application/problem+json")
	want(do("GET", "/api/v1/search?q=x&published_after=yesterday", ""), 400, "application/problem+json")
	want(do("POST", "/api/v1/search", `{"q":"streaming replication","k":2,"weights":{"vector":1,"bm25":1},"explain":true}`), 200, "text/toon")
	want(do("POST", "/api/v1/search?format=json", `{"q":"redis snapshots","tags":["redis"],"mmr":0.7}`), 200, "application/json")
	want(do("POST", "/api/v1/search", `{"q":"x","nope":1}`), 400, "application/problem+json")
	want(do("POST", "/api/v1/search", `not json`), 400, "application/problem+json")
	want(do("POST", "/api/v1/search", `{"q":"x"}`, "Content-Type", "text/plain"), 415, "application/problem+json")
	want(do("POST", "/api/v1/search", `{"q":"`+strings.Repeat("x", 2<<20)+`"}`), 413, "application/problem+json")
	want(do("GET", "/api/v1/suggest?prefix=postg", ""), 200, "text/toon")
	want(do("GET", "/api/v1/suggest?prefix=red&limit=2&format=json", ""), 200, "application/json")
	want(do("GET", "/api/v1/suggest?prefix=", ""), 400, "application/problem+json")
	want(do("GET", "/api/v1/suggest?prefix=a&limit=500", ""), 400, "application/problem+json")
	want(do("GET", "/api/v1/suggest?prefix=a&type=x", ""), 400, "application/problem+json")
	want(do("GET", "/api/v1/suggest?prefix=a", "", "Accept", "text/html"), 406, "application/problem+json")
	want(do("GET", "/api/v1/search?q=x&limit=5", ""), 400, "application/problem+json")
	want(do("GET", "/api/v1/search?q=x", "", "Accept", "application/xml"), 406, "application/problem+json")
	want(do("POST", "/api/v1/search?q=x", `{"q":"x"}`), 400, "application/problem+json")
	want(do("POST", "/api/v1/search", `{"q":"x"}`, "Accept", "text/csv"), 406, "application/problem+json")
	want(do("GET", "/api/v1/status", ""), 200, "application/json")
	want(do("POST", "/api/v1/admin/reindex", ""), 202, "application/json")
	want(do("GET", "/healthz", ""), 200, "application/json")
	want(do("GET", "/readyz", ""), 503, "application/json") // not marked ready yet
	env.Server.SetReady(true)
	want(do("GET", "/readyz", ""), 200, "application/json")
	want(do("GET", "/metrics", ""), 200, "text/plain")
	want(do("GET", "/openapi.json", ""), 200, "application/json")
	want(do("GET", "/docs", ""), 200, "text/html")
	for _, asset := range []string{"/docs/swagger-ui.css", "/docs/swagger-ui-bundle.js"} {
		if rec := httptest.NewRecorder(); true {
			e.ServeHTTP(rec, httptest.NewRequest("GET", asset, nil))
			if rec.Code != 200 || rec.Body.Len() < 1000 {
				t.Errorf("%s: %d, %d bytes", asset, rec.Code, rec.Body.Len())
			}
		}
	}

	// The admin route with API keys: 401 without one; 409 while a rebuild runs.
	keyed := httpserver.New("search", httpserver.Config{Addr: "127.0.0.1:0", APIKeys: []string{"contract-key-0123456789"}}, slog.New(slog.DiscardHandler))
	block := make(chan struct{})
	api.New(keyed, api.Deps{Search: env.Pipeline, Index: env.Indexer,
		Reindex: api.ReindexFunc(func(ctx context.Context) error { <-block; return nil })}).Register()
	ke := keyed.Engine()
	check := func(method, target string, status int, hdr ...string) {
		t.Helper()
		req := httptest.NewRequest(method, target, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		if rec := c.Do(ke, req); rec.Code != status {
			t.Errorf("%s %s: got %d, want %d", method, target, rec.Code, status)
		}
	}
	check("POST", "/api/v1/admin/reindex", 401)
	check("GET", "/api/v1/search?q=x", 401)
	check("GET", "/api/v1/search?q=redis", 200, "Authorization", "Bearer contract-key-0123456789")
	check("POST", "/api/v1/admin/reindex", 202, "Authorization", "Bearer contract-key-0123456789")
	check("POST", "/api/v1/admin/reindex", 409, "Authorization", "Bearer contract-key-0123456789")
	close(block)

	var routes []string
	for _, r := range e.Routes() {
		routes = append(routes, r.Method+" "+r.Path)
	}
	c.Routes(routes, "/docs/")
	c.Covered("GET /api/v1/status", "GET /healthz", "GET /readyz", "GET /metrics", "GET /openapi.json", "GET /docs")
}
