package app

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/kgsearch/kgsearch/internal/testenv"
	"github.com/kgsearch/kgsearch/pkg/openapi/openapitest"
	"github.com/kgsearch/kgsearch/services/kg/internal/api"
)

// TestOpenAPIContract runs every route of the kg service on the real Neo4j with
// good and bad requests, in JSON and TOON, and checks each answer against the
// OpenAPI document, problem documents included. Every served route must be in
// the document and covered by a success and an error.
func TestOpenAPIContract(t *testing.T) {
	uri, user, password := testenv.Neo4j(t)
	s := start(t, testConfig(t, uri, user, password), true)
	c := openapitest.New(t, api.OpenAPI)
	word := randomWord(10)
	prefix := "kgoapi-" + word + "-"
	docA := prefix + "a"
	t.Cleanup(func() { _ = s.client.DeleteDocument(context.Background(), docA) })
	call := func(method, path, body string, want int, hdr ...string) string {
		t.Helper()
		code, _, data := c.Fetch(s.ts.URL, method, path, body, hdr...)
		if code != want {
			t.Errorf("%s %s: got %d, want %d: %.300s", method, path, code, want, data)
		}
		return string(data)
	}

	ingest := fmt.Sprintf(`{"document":{"id":%q,"url":"https://kgoapi.example/%s/a","title":"Zorp%s Engine internals",
		"chunks":[{"id":%q,"ordinal":0,"text":"The Zorp%s Engine uses PostgreSQL for storage and depends on Redis. Django supports PostgreSQL."},
		{"id":%q,"ordinal":1,"text":"PostgreSQL uses a Write-Ahead Log (WAL). Django is written in Python."}],
		"links":[{"url":"https://kgoapi.example/%s/b","anchor":"b"}]}}`, docA, word, word, docA+"-0", word, docA+"-1", word)
	call("POST", "/api/v1/ingest", ingest, 200)
	call("POST", "/api/v1/ingest?format=toon", ingest, 200)
	call("POST", "/api/v1/ingest", `{"document":{"id":"","url":"https://x.example/","chunks":[]}}`, 400)
	call("POST", "/api/v1/ingest", `{"document":`+strings.Repeat(" ", 9<<20)+`}`, 413)

	call("POST", "/api/v1/entities/match", `{"entities":["postgres","nosuch`+word+`"],"limit":5}`, 200)
	call("POST", "/api/v1/entities/match", `{"entities":["PostgreSQL"]}`, 200, "Accept", "text/toon")
	call("POST", "/api/v1/entities/match", `{"entities":[],"limit":5000}`, 400)
	call("POST", "/api/v1/expand/entities", `{"entities":["PostgreSQL"],"max_hops":2,"limit":5}`, 200)
	call("POST", "/api/v1/expand/entities?format=toon", `{"entities":["PostgreSQL","nosuch`+word+`"],"min_confidence":0.1}`, 200)
	call("POST", "/api/v1/expand/entities", `{"entities":["x"],"max_hops":9}`, 400)
	call("POST", "/api/v1/retrieve", `{"entities":["PostgreSQL"],"limit":5,"expand":{"max_hops":1,"limit":5,"use":3}}`, 200)
	call("POST", "/api/v1/retrieve?format=toon", `{"entities":["postgres","nosuch`+word+`"]}`, 200)
	call("POST", "/api/v1/retrieve", `{"entities":[]}`, 400)
	call("POST", "/api/v1/feedback", fmt.Sprintf(`{"seeds":[{"document_id":%q,"weight":1}],"candidates":[%q,"nosuch"],"entities":3}`, docA, docA), 200)
	call("POST", "/api/v1/feedback?format=toon", fmt.Sprintf(`{"seeds":[{"document_id":%q,"weight":0.5}],"candidates":[]}`, docA), 200)
	call("POST", "/api/v1/feedback", `{"seeds":[],"candidates":["x"]}`, 400)
	call("POST", "/api/v1/parse", `{"text":"postgres wal tuning with django"}`, 200)
	call("POST", "/api/v1/parse?format=toon", `{"text":"redis"}`, 200)
	call("POST", "/api/v1/parse", `{"text":1}`, 400)

	call("GET", "/api/v1/entities?prefix=postg&limit=3", "", 200)
	call("GET", "/api/v1/entities?prefix=zorp"+word+"&format=toon", "", 200)
	call("GET", "/api/v1/entities?limit=many", "", 400)
	call("GET", "/api/v1/entities/postgresql", "", 200)
	call("GET", "/api/v1/entities/PostgreSQL?format=toon", "", 200)
	call("GET", "/api/v1/entities/nosuch"+word, "", 404)
	call("GET", "/api/v1/stats", "", 200)
	call("GET", "/api/v1/stats?format=toon", "", 200)
	call("GET", "/api/v1/stats?format=yaml", "", 400)
	call("GET", "/api/v1/stats", "", 406, "Accept", "application/xml")
	call("GET", "/api/v1/entities?prefix=po&q=x", "", 400)

	call("DELETE", "/api/v1/documents/"+url.PathEscape(docA), "", 204)
	call("DELETE", "/api/v1/documents/"+url.PathEscape(docA), "", 404)

	call("GET", "/healthz", "", 200)
	call("GET", "/readyz", "", 200)
	call("GET", "/metrics", "", 200)
	call("GET", "/openapi.json", "", 200)
	call("GET", "/docs", "", 200)

	// With API keys: writes and POST queries without a key are refused.
	cfg := testConfig(t, uri, user, password)
	cfg.APIKeys = []string{"contract-key-0123456789"}
	keyed := start(t, cfg, false)
	for _, r := range [][2]string{{"POST", "/api/v1/ingest"}, {"POST", "/api/v1/entities/match"}, {"POST", "/api/v1/expand/entities"},
		{"POST", "/api/v1/parse"}, {"POST", "/api/v1/feedback"}, {"POST", "/api/v1/retrieve"}, {"DELETE", "/api/v1/documents/x"}} {
		if code, _, data := c.Fetch(keyed.ts.URL, r[0], r[1], `{"text":"x"}`); code != 401 {
			t.Errorf("%s %s without a key: got %d: %s", r[0], r[1], code, data)
		}
	}

	// The documented entity types are the taxonomy's.
	var types []string
	for _, ty := range s.parts.Extractor.Types() {
		types = append(types, ty.Name)
	}
	var enum []string
	for _, v := range c.Doc().Paths.Find("/api/v1/entities").Get.Parameters.GetByInAndName("query", "type").Schema.Value.Enum {
		enum = append(enum, fmt.Sprint(v))
	}
	slices.Sort(types)
	slices.Sort(enum)
	if !slices.Equal(types, enum) {
		t.Errorf("the type enum of GET /api/v1/entities is not the taxonomy:\n doc  %v\n code %v", enum, types)
	}
	call("GET", "/api/v1/entities?type=database&limit=2", "", 200)
	call("GET", "/api/v1/entities?type=nosuchtype", "", 400)

	var routes []string
	for _, r := range s.parts.Server.Engine().Routes() {
		routes = append(routes, r.Method+" "+r.Path)
	}
	c.Routes(routes, "/docs/")
	c.Covered("GET /healthz", "GET /readyz", "GET /metrics", "GET /openapi.json", "GET /docs", "GET /api/v1/stats")
}
