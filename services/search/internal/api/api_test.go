package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/kgsearch/kgsearch/internal/testenv"
	"github.com/kgsearch/kgsearch/pkg/toon"
	"github.com/kgsearch/kgsearch/services/search/internal/pipeline"
	"github.com/kgsearch/kgsearch/services/search/internal/searchtest"
)

func docs() []searchtest.Doc {
	now := searchtest.Now
	return []searchtest.Doc{
		{URL: "https://docs.example.org/postgres/replication", Title: "PostgreSQL streaming replication",
			Tags: []string{"postgres", "database"}, Published: now.AddDate(0, 0, -3), Chunks: []searchtest.Chunk{
				{Heading: "Overview", Text: "Streaming replication in PostgreSQL ships WAL records from the primary server to standby servers."},
				{Heading: "Standby", Text: "Configure the standby with primary_conninfo; it connects to the primary and replays WAL."},
			}},
		{URL: "https://docs.example.org/redis/persistence", Title: "Redis persistence",
			Tags: []string{"redis", "database"}, Published: now.AddDate(0, 0, -200), Chunks: []searchtest.Chunk{
				{Heading: "Snapshots", Text: "Redis writes point-in-time snapshots of the dataset (RDB files) at intervals."},
			}},
		{URL: "https://blog.example.com/python/asyncio", Title: "Python asyncio tutorial",
			Tags: []string{"python"}, Chunks: []searchtest.Chunk{
				{Heading: "Event loop", Text: "The asyncio module in Python runs coroutines on an event loop, with tags \"a,b\" and commas, colons: too."},
			}},
	}
}

func get(t *testing.T, e *searchtest.Env, path string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.HTTP.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return do(t, req)
}

func post(t *testing.T, e *searchtest.Env, path, body string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.HTTP.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (int, http.Header, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

func TestSearchTOONIsTabular(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	e.Add(t, docs()...)
	code, h, body := get(t, e, "/api/v1/search?q=postgresql+replication&k=5")
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	if ct := h.Get("Content-Type"); ct != "text/toon; charset=utf-8" {
		t.Errorf("content type: got %q, want text/toon; charset=utf-8", ct)
	}
	header := regexp.MustCompile(`(?m)^results\[(\d+)\]\{rank,url,title,preview,score,vector,graph,bm25,recency,title_score,timestamp,tags,source,entity_mentions,chunk_id,start,end\}:$`)
	m := header.FindSubmatch(body)
	if m == nil {
		t.Fatalf("no tabular results header in:\n%s", body)
	}
	if string(m[1]) == "0" {
		t.Errorf("results[0]: want results")
	}
	if !regexp.MustCompile(`(?m)^  entities\[\d+\]\{text,type,confidence\}:$`).Match(body) {
		t.Errorf("query entities are not a table:\n%s", body)
	}
	// It decodes back to the same data as the JSON form.
	var tr pipeline.TOONResponse
	if err := toon.Unmarshal(body, &tr); err != nil {
		t.Fatalf("decode TOON: %v\n%s", err, body)
	}
	if tr.ResultCount == 0 || tr.Results[0].URL != "https://docs.example.org/postgres/replication" || tr.Results[0].Tags != "postgres; database" {
		t.Errorf("decoded TOON: got %+v", tr.Results)
	}
}

func TestSearchJSONNegotiation(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	e.Add(t, docs()...)
	for _, tc := range []struct {
		name   string
		path   string
		header []string
	}{
		{"accept", "/api/v1/search?q=redis", []string{"Accept", "application/json"}},
		{"format", "/api/v1/search?q=redis&format=json", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, h, body := get(t, e, tc.path, tc.header...)
			if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
				t.Fatalf("got %d %s: %s", code, h.Get("Content-Type"), body)
			}
			var r pipeline.Response
			if err := json.Unmarshal(body, &r); err != nil {
				t.Fatal(err)
			}
			if r.ResultCount == 0 || r.Results[0].URL != "https://docs.example.org/redis/persistence" || len(r.Results[0].Tags) != 2 {
				t.Errorf("got %+v", r.Results)
			}
			for _, key := range []string{`"query"`, `"exploration"`, `"results"`, `"score_breakdown"`, `"result_count"`, `"total_time_ms"`,
				`"phase_ms"`, `"suggested_queries"`, `"related_entities"`, `"degraded"`, `"tokens"`, `"saved_pct"`, `"entity_mentions"`} {
				if !bytes.Contains(body, []byte(key)) {
					t.Errorf("JSON lacks %s", key)
				}
			}
		})
	}
}

func TestSearchPOST(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	e.Add(t, docs()...)
	code, _, body := post(t, e, "/api/v1/search?format=json",
		`{"q":"database","k":1,"offset":1,"tags":["database"],"weights":{"bm25":1,"vector":1},"fusion":"rrf","mmr":0.7,"expand":false,"history":"keep","explain":true,"published_after":"2026-01-01"}`)
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	var r pipeline.Response
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 1 || r.Results[0].Rank != 2 || r.Explain == nil || r.Explain.Fusion != "rrf" || !r.Explain.MMR {
		t.Errorf("got %s", body)
	}
	if r.Explain.Weights != "vector:0.5,bm25:0.5" {
		t.Errorf("weights: got %s, want vector:0.5,bm25:0.5", r.Explain.Weights)
	}
}

// TestSearchPOSTBodyFormat: the body's "format" chooses the answer's format, a
// ?format= in the URL wins over it, and a bad one is a 400 naming the field.
func TestSearchPOSTBodyFormat(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	e.Add(t, docs()...)
	tests := []struct {
		name, path, body, wantType string
	}{
		{"body json", "/api/v1/search", `{"q":"database","format":"json"}`, "application/json"},
		{"body toon", "/api/v1/search", `{"q":"database","format":"toon"}`, "text/toon"},
		{"url wins", "/api/v1/search?format=json", `{"q":"database","format":"toon"}`, "application/json"},
		{"neither: toon", "/api/v1/search", `{"q":"database"}`, "text/toon"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, h, body := post(t, e, tt.path, tt.body)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
			if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, tt.wantType) {
				t.Errorf("Content-Type %q, want %s", ct, tt.wantType)
			}
			if tt.wantType == "application/json" && !json.Valid(body) {
				t.Errorf("not JSON: %.200s", body)
			}
		})
	}
	code, _, body := post(t, e, "/api/v1/search", `{"q":"database","format":"xml"}`)
	var p problem
	if err := json.Unmarshal(body, &p); err != nil || code != http.StatusBadRequest || p.Field != "format" {
		t.Errorf("bad body format: status %d, %s", code, body)
	}
}

// problem decodes an RFC 9457 error.
type problem struct {
	Status int    `json:"status"`
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

func TestBadInput(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	e.Add(t, docs()...)
	long := strings.Repeat("replication ", 900) // ~10 KB
	tests := []struct {
		name  string
		get   string // query string
		post  string // or a body
		field string
	}{
		{name: "missing q", get: "", field: "q"},
		{name: "empty q", get: "q=", field: "q"},
		{name: "blank q", get: "q=%20%20", field: "q"},
		{name: "punctuation q", get: "q=" + url.QueryEscape("?!;"), field: "q"},
		{name: "10 KB q", get: "q=" + url.QueryEscape(long), field: "q"},
		{name: "k 0", get: "q=x&k=0", field: "k"},
		{name: "k 101", get: "q=x&k=101", field: "k"},
		{name: "k text", get: "q=x&k=ten", field: "k"},
		{name: "offset", get: "q=x&offset=-3", field: "offset"},
		{name: "unknown weight", get: "q=x&weights=vector:0.5,pagerank:0.5", field: "weights"},
		{name: "negative weight", get: "q=x&weights=vector:-1", field: "weights"},
		{name: "zero weights", get: "q=x&weights=vector:0", field: "weights"},
		{name: "fusion", get: "q=x&fusion=borda", field: "fusion"},
		{name: "mmr", get: "q=x&mmr=2", field: "mmr"},
		{name: "expand", get: "q=x&expand=maybe", field: "expand"},
		{name: "history", get: "q=x&history=hide", field: "history"},
		{name: "history in body", post: `{"q":"x","history":"drop"}`, field: "history"},
		{name: "generated", get: "q=x&generated=hide", field: "generated"},
		{name: "generated in body", post: `{"q":"x","generated":true}`, field: "generated"},
		{name: "published_after", get: "q=x&published_after=yesterday", field: "published_after"},
		{name: "published_before", get: "q=x&published_before=2025-13-45", field: "published_before"},
		{name: "dates reversed", get: "q=x&published_after=2025-02-01&published_before=2025-01-01", field: "published_after"},
		{name: "format", get: "q=x&format=xml", field: "format"},
		{name: "domain injection", get: "q=x&domain=" + url.QueryEscape("a.com' OR '1'='1"), field: "domain"},
		{name: "body not json", post: `q=x`, field: "body"},
		{name: "unknown field", post: `{"q":"x","limit":5}`, field: "limit"},
		{name: "k as string", post: `{"q":"x","k":"5"}`, field: "k"},
		{name: "tags as number", post: `{"q":"x","tags":5}`, field: "tags"},
		{name: "body q missing", post: `{"k":5}`, field: "q"},
		{name: "two objects", post: `{"q":"x"}{"q":"y"}`, field: "body"},
		{name: "q twice", get: "q=a&q=b", field: "q"},
		{name: "k twice", get: "q=a&k=5&k=6", field: "k"},
		{name: "unknown parameter", get: "q=x&limit=5", field: "limit"},
		{name: "bad escape", get: "q=%%%", field: "query"},
		{name: "semicolon", get: "q=a;b", field: "query"},
		{name: "invalid utf-8 q", get: "q=open%fffile", field: "q"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var code int
			var body []byte
			if tt.post != "" {
				code, _, body = post(t, e, "/api/v1/search", tt.post)
			} else {
				code, _, body = get(t, e, "/api/v1/search?"+tt.get)
			}
			if code != http.StatusBadRequest {
				t.Fatalf("status: got %d, want 400: %s", code, body)
			}
			var p problem
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatalf("not a problem document: %s", body)
			}
			if p.Field != tt.field || p.Detail == "" {
				t.Errorf("got field %q detail %q, want field %q with a detail", p.Field, p.Detail, tt.field)
			}
		})
	}
}

// TestInjectionStrings sends SQL, Cypher and query-syntax injection strings in every
// field: each request gets a 4xx or a normal answer, never a 5xx, and the documents
// table is intact afterwards.
func TestURLOfAPOSTSearch(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	e.Add(t, docs()...)
	// The URL's q is not read by a POST: it is refused, not silently dropped.
	code, _, body := post(t, e, "/api/v1/search?q=redis", `{"k":2}`)
	var p problem
	if err := json.Unmarshal(body, &p); err != nil || code != http.StatusBadRequest || p.Field != "q" || !strings.Contains(p.Detail, "JSON body") {
		t.Fatalf("POST with q in the URL: %d %s; want 400 on q saying the body carries it", code, body)
	}
	code, _, body = post(t, e, "/api/v1/search?format=json", `{"k":2}`)
	if err := json.Unmarshal(body, &p); err != nil || code != http.StatusBadRequest || p.Field != "q" || !strings.Contains(p.Detail, `{"q"`) {
		t.Fatalf("POST without q: %d %s; want 400 on q showing the body form", code, body)
	}
	if code, _, body = post(t, e, "/api/v1/search?format=json", `{"q":"redis"}`); code != http.StatusOK {
		t.Fatalf("POST with format in the URL: %d %s", code, body)
	}
}

func TestAcceptNotServed406(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	e.Add(t, docs()...)
	for _, accept := range []string{"application/xml", "text/html", "text/csv, application/pdf"} {
		code, h, body := get(t, e, "/api/v1/search?q=redis", "Accept", accept)
		if code != http.StatusNotAcceptable || h.Get("Content-Type") != "application/problem+json" || !bytes.Contains(body, []byte("application/json")) {
			t.Errorf("Accept %q: %d %s %s; want 406 naming what is served", accept, code, h.Get("Content-Type"), body)
		}
	}
	for _, accept := range []string{"*/*", "text/*", "application/json", "text/toon", "text/html, */*;q=0.8", "garbage;;;"} {
		if code, _, body := get(t, e, "/api/v1/search?q=redis", "Accept", accept); code != http.StatusOK {
			t.Errorf("Accept %q: %d %s; want 200", accept, code, body)
		}
	}
	if code, _, body := get(t, e, "/api/v1/search?q=redis&format=json", "Accept", "text/html"); code != http.StatusOK {
		t.Errorf("format=json overrides Accept: %d %s", code, body)
	}
}

func TestInjectionStrings(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	e.Add(t, docs()...)
	attacks := []string{
		"'; DROP TABLE documents; --",
		"\" OR 1=1 --",
		"x') UNION SELECT id, url FROM documents --",
		"MATCH (n) DETACH DELETE n",
		"}) MATCH (n) DETACH DELETE n //",
		"title:redis OR *:*",
		"<script>alert(1)</script>",
		"\x00\x01\x02",
		"%27%20OR%201%3D1",
		"postgres\n\r\tsleep(5)",
		strings.Repeat("(", 500),
		"\xff\xfe invalid utf-8",
	}
	fields := []string{"q", "k", "offset", "tags", "domain", "published_after", "published_before", "weights", "fusion", "mmr", "expand", "history", "generated", "explain", "format"}
	for _, a := range attacks {
		for _, f := range fields {
			v := url.Values{"q": {"replication"}}
			v.Set(f, a)
			code, _, body := get(t, e, "/api/v1/search?"+v.Encode())
			if code >= 500 || (code != 200 && (code < 400 || code >= 500)) {
				t.Errorf("GET %s=%q: status %d: %s", f, a, code, body)
			}
			js, _ := json.Marshal(map[string]string{f: a})
			if f != "q" {
				js, _ = json.Marshal(map[string]string{"q": "replication", f: a})
			}
			code, _, body = post(t, e, "/api/v1/search", string(js))
			if code >= 500 {
				t.Errorf("POST %s=%q: status %d: %s", f, a, code, body)
			}
		}
		code, _, body := get(t, e, "/api/v1/suggest?prefix="+url.QueryEscape(a))
		if code >= 500 {
			t.Errorf("suggest %q: status %d: %s", a, code, body)
		}
	}
	var n int
	if err := e.Store.DB().QueryRowContext(context.Background(), "SELECT COUNT(*) FROM documents").Scan(&n); err != nil || n != len(docs()) {
		t.Fatalf("documents table after the attacks: %d rows, err %v; want %d", n, err, len(docs()))
	}
	// And search still works.
	code, _, body := get(t, e, "/api/v1/search?q=redis&format=json")
	if code != 200 || !bytes.Contains(body, []byte("redis/persistence")) {
		t.Errorf("search after the attacks: %d %s", code, body)
	}
}

// TestDegradedNever5xx stops the kg service in the middle of a run of requests:
// every request is answered, and those after the stop report graph as degraded.
func TestDegradedNever5xx(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	e.Add(t, docs()...)
	for i := 0; i < 30; i++ {
		switch i {
		case 10:
			e.KG.SetDown(true) // 503s
		case 20:
			e.KG.Close() // connection refused
		}
		code, _, body := get(t, e, "/api/v1/search?q=postgresql+replication&format=json")
		if code != http.StatusOK {
			t.Fatalf("request %d: status %d: %s", i, code, body)
		}
		var r pipeline.Response
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatal(err)
		}
		degraded := strings.Join(r.Degraded, ",")
		if i >= 10 && degraded != "graph" {
			t.Errorf("request %d: degraded %q, want graph", i, degraded)
		}
		if i < 10 && degraded != "" {
			t.Errorf("request %d: degraded %q, want none", i, degraded)
		}
		if r.ResultCount == 0 {
			t.Errorf("request %d: no results", i)
		}
	}
}

func TestAllDown503(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	e.Add(t, docs()...)
	e.KG.SetDown(true)
	e.Embedder.Close()
	e.Index.Close()
	code, h, body := get(t, e, "/api/v1/search?q=postgresql+replication")
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Fatalf("got %d (Retry-After %q): %s", code, h.Get("Retry-After"), body)
	}
	for _, s := range []string{"vector", "graph", "bm25"} {
		if !bytes.Contains(body, []byte(s+":")) {
			t.Errorf("503 detail does not give the reason for %s: %s", s, body)
		}
	}
}

func TestStatusAndSuggest(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	e.Add(t, docs()...)
	code, _, body := get(t, e, "/api/v1/status")
	if code != 200 {
		t.Fatalf("status: %d %s", code, body)
	}
	var st map[string]any
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatal(err)
	}
	if st["index_lag"] != float64(0) || st["store_seq"] != float64(3) || st["index_watermark"] != float64(3) || st["indexed_chunks"] != float64(4) {
		t.Errorf("status: got %s, want lag 0, seq 3, watermark 3, 4 chunks", body)
	}
	code, _, body = get(t, e, "/api/v1/suggest?prefix=pyth&format=json")
	if code != 200 {
		t.Fatalf("suggest: %d %s", code, body)
	}
	var s struct {
		Entities []struct{ Name string }  `json:"entities"`
		Titles   []struct{ Title string } `json:"titles"`
		Degraded []string                 `json:"degraded"`
	}
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Titles) != 1 || s.Titles[0].Title != "Python asyncio tutorial" {
		t.Errorf("title completions: got %+v", s.Titles)
	}
	if len(s.Entities) == 0 || s.Entities[0].Name != "Python" {
		t.Errorf("entity completions: got %+v, want Python", s.Entities)
	}
	// A later word of a title completes too; kg down degrades only the entities.
	e.KG.SetDown(true)
	code, _, body = get(t, e, "/api/v1/suggest?prefix=stream&format=json")
	if code != 200 || !bytes.Contains(body, []byte("PostgreSQL streaming replication")) || !bytes.Contains(body, []byte(`"degraded":["entities"]`)) {
		t.Errorf("suggest with kg down: %d %s", code, body)
	}
	for _, bad := range []string{"/api/v1/suggest", "/api/v1/suggest?prefix=", "/api/v1/suggest?prefix=a&limit=0"} {
		if code, _, body := get(t, e, bad); code != 400 {
			t.Errorf("%s: got %d, want 400: %s", bad, code, body)
		}
	}
	// Mistakes that used to be answered as if they were not there.
	for _, tc := range []struct{ path, field, says string }{
		{"/api/v1/suggest?prefix=%ff", "prefix", "UTF-8"},
		{"/api/v1/suggest?q=pyth", "q", `did you mean "prefix"`},
		{"/api/v1/suggest?prefix=a&prefix=b", "prefix", "give it once"},
		{"/api/v1/suggest?prefix=a&type=function", "type", "unknown parameter"},
	} {
		code, _, body := get(t, e, tc.path)
		var p problem
		if err := json.Unmarshal(body, &p); err != nil || code != 400 || p.Field != tc.field || !strings.Contains(p.Detail, tc.says) {
			t.Errorf("%s: %d %s; want 400 on %s saying %q", tc.path, code, body, tc.field, tc.says)
		}
	}
}

func TestReindexEndpoint(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	e.Add(t, docs()...)
	code, _, body := post(t, e, "/api/v1/admin/reindex", "")
	if code != http.StatusAccepted {
		t.Fatalf("reindex: %d %s", code, body)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, _, body = get(t, e, "/api/v1/status")
		if bytes.Contains(body, []byte(`"finished"`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reindex did not finish: %s", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if bytes.Contains(body, []byte(`"error"`)) || !bytes.Contains(body, []byte(`"indexed_chunks":4`)) {
		t.Errorf("after reindex: %s", body)
	}
	code, _, body = get(t, e, "/api/v1/search?q=redis+snapshots&format=json")
	if code != 200 || !bytes.Contains(body, []byte("redis/persistence")) {
		t.Errorf("search after reindex: %d %s", code, body)
	}
}

// TestStoreUnreachable503: with MariaDB unreachable (connections refused) and no
// chunk text cached, a search is a 503 with Retry-After whose detail names
// MariaDB and not its address (the driver's "dial tcp 127.0.0.1:PORT: connect:
// connection refused" was the detail before, on a port only the operator should
// know). The store is the real MariaDB behind a loopback proxy that is closed.
func TestStoreUnreachable503(t *testing.T) {
	mc, err := mysql.ParseDSN(searchtest.FreshDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewFaultProxy(t, mc.Addr)
	mc.Addr = proxy.Addr()
	e := searchtest.New(t, searchtest.Options{DSN: mc.FormatDSN()})
	e.Add(t, docs()...)
	if code, _, body := get(t, e, "/api/v1/search?q=postgresql+replication"); code != http.StatusOK {
		t.Fatalf("before the outage: got %d %s", code, body)
	}
	proxy.Down()
	e.Chunks.Clear()
	code, h, body := get(t, e, "/api/v1/search?q=postgresql+replication+standby")
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || !bytes.Contains(body, []byte("MariaDB")) {
		t.Errorf("MariaDB unreachable: got %d (Retry-After %q) %s; want 503 with Retry-After naming MariaDB", code, h.Get("Retry-After"), body)
	}
	if bytes.Contains(body, []byte(proxy.Addr())) || bytes.Contains(body, []byte("dial tcp")) {
		t.Errorf("MariaDB unreachable: the answer shows the driver's error with the database's address: %s", body)
	}
}
