package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/extract"
	"github.com/kgsearch/kgsearch/pkg/graph"
	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/services/kg/internal/entitygraph"
	"github.com/kgsearch/kgsearch/services/kg/internal/projection"
)

// fakeGraph is a graph store (entitygraph Writer, Reader and Lookup) that records what it is asked and answers from fields.
type fakeGraph struct {
	err      error // returned by every method when set
	upserted []graph.Doc
	deleted  []string
	matchIDs []string
	matchLim int
	match    graph.MatchResult
	expandQ  graph.ExpandQuery
	expand   graph.ExpandResult
	entities map[string]graph.EntityDetail
	listArgs []any
}

func (f *fakeGraph) UpsertDocument(_ context.Context, d graph.Doc) (graph.UpsertResult, error) {
	if f.err != nil {
		return graph.UpsertResult{}, f.err
	}
	f.upserted = append(f.upserted, d)
	return graph.UpsertResult{Chunks: len(d.Chunks), Entities: len(d.Entities), Mentions: len(d.Mentions), Relations: len(d.Relations), Links: len(d.Links)}, nil
}

func (f *fakeGraph) DeleteDocument(_ context.Context, id string) error {
	if f.err != nil {
		return f.err
	}
	for _, d := range f.upserted {
		if d.ID == id {
			f.deleted = append(f.deleted, id)
			return nil
		}
	}
	return fmt.Errorf("delete document %s: %w", id, graph.ErrNotFound)
}

func (f *fakeGraph) MatchEntities(_ context.Context, ids []string, limit int) (graph.MatchResult, error) {
	f.matchIDs, f.matchLim = ids, limit
	return f.match, f.err
}

func (f *fakeGraph) Expand(_ context.Context, q graph.ExpandQuery) (graph.ExpandResult, error) {
	f.expandQ = q
	return f.expand, f.err
}

func (f *fakeGraph) EntitiesByPrefix(_ context.Context, prefix, typ string, limit int) ([]graph.EntityStats, error) {
	f.listArgs = []any{prefix, typ, limit}
	return nil, f.err
}

func (f *fakeGraph) Entity(_ context.Context, id string) (graph.EntityDetail, error) {
	if f.err != nil {
		return graph.EntityDetail{}, f.err
	}
	d, ok := f.entities[id]
	if !ok {
		return d, fmt.Errorf("get entity %s: %w", id, graph.ErrNotFound)
	}
	return d, nil
}

func (f *fakeGraph) Stats(context.Context) (graph.Stats, error) { return graph.Stats{}, f.err }

var testLimits = entitygraph.Limits{MaxChunkBytes: 1000, MaxChunks: 3, MaxLinks: 2, MaxQueryBytes: 100}

// newTestAPI mounts the API over the real logic (entitygraph) and a fake graph on
// a server with the given config; ready says whether the graph schema is in place.
func newTestAPI(t *testing.T, g *fakeGraph, cfg httpserver.Config, ready bool) *httptest.Server {
	t.Helper()
	x, err := extract.New()
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.Addr = "127.0.0.1:0"
	srv := httpserver.New("kg", cfg, logger)
	svc := entitygraph.New(testLimits, entitygraph.Deps{Extractor: x, Writer: g, Reader: g, Lookup: g, Logger: logger})
	svc.SetReady(ready)
	New(srv, Deps{Ingest: svc, Query: svc, Browse: svc}).Register()
	ts := httptest.NewServer(srv.Engine())
	t.Cleanup(ts.Close)
	return ts
}

func newTestServer(t *testing.T, g *fakeGraph) *httptest.Server {
	t.Helper()
	return newTestAPI(t, g, httpserver.Config{MaxBodyBytes: 4096}, true)
}

// call sends body (a string or a value to encode) and returns status and the
// decoded body.
func call(t *testing.T, ts *httptest.Server, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, ts.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(data) > 0 {
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatalf("%s %s: body %q is not JSON: %v", method, path, data, err)
		}
	}
	return resp.StatusCode, out
}

func doc(chunks ...kgapi.Chunk) kgapi.IngestRequest {
	return kgapi.IngestRequest{Document: kgapi.Document{ID: "d1", URL: "https://example.org/a", Chunks: chunks}}
}

func TestValidation(t *testing.T) {
	good := kgapi.Chunk{ID: "c1", Text: "PostgreSQL uses a write-ahead log."}
	long := kgapi.Chunk{ID: "c1", Text: strings.Repeat("a", testLimits.MaxChunkBytes+1)}
	many := doc(good, kgapi.Chunk{ID: "c2", Text: "x"}, kgapi.Chunk{ID: "c3", Text: "y"}, kgapi.Chunk{ID: "c4", Text: "z"})
	links := doc(good)
	links.Document.Links = []kgapi.Link{{URL: "https://a.org/"}, {URL: "https://b.org/"}, {URL: "https://c.org/"}}
	badLink := doc(good)
	badLink.Document.Links = []kgapi.Link{{URL: "/relative"}}
	tests := []struct {
		name, method, path string
		body               any
		status             int
		field              string
	}{
		{"empty body", "POST", "/api/v1/ingest", "", 400, "body"},
		{"not json", "POST", "/api/v1/ingest", "{", 400, "body"},
		{"unknown field", "POST", "/api/v1/entities/match", `{"entities":["go"],"limt":5}`, 400, "limt"},
		{"unknown nested field", "POST", "/api/v1/ingest", `{"document":{"id":"d","chunks":[{"id":"c","text":"t","txet":"u"}]}}`, 400, "document.chunks[0].txet"},
		{"unknown field in a list", "POST", "/api/v1/feedback", `{"seeds":[{"id":"x","weight":1}]}`, 400, "seeds[0].id"},
		{"two bodies", "POST", "/api/v1/parse", `{"text":"go"}{"text":"rust"}`, 400, "body"},
		{"wrong type", "POST", "/api/v1/ingest", `{"document":{"id":"d","chunks":[{"id":"c","ordinal":"one","text":"t"}]}}`, 400, "document.chunks.ordinal"},
		{"oversized body", "POST", "/api/v1/ingest", `{"document":{"id":"d","chunks":[{"id":"c","text":"` + strings.Repeat("a", 5000) + `"}]}}`, 413, ""},
		{"no document id", "POST", "/api/v1/ingest", kgapi.IngestRequest{Document: kgapi.Document{Chunks: []kgapi.Chunk{good}}}, 400, "document.id"},
		{"no chunks", "POST", "/api/v1/ingest", doc(), 400, "document.chunks"},
		{"too many chunks", "POST", "/api/v1/ingest", many, 400, "document.chunks"},
		{"empty text", "POST", "/api/v1/ingest", doc(good, kgapi.Chunk{ID: "c2", Text: "  \n"}), 400, "document.chunks[1].text"},
		{"oversized text", "POST", "/api/v1/ingest", doc(long), 400, "document.chunks[0].text"},
		{"duplicate chunk id", "POST", "/api/v1/ingest", doc(good, good), 400, "document.chunks[1].id"},
		{"negative ordinal", "POST", "/api/v1/ingest", doc(kgapi.Chunk{ID: "c", Ordinal: -1, Text: "t"}), 400, "document.chunks[0].ordinal"},
		{"too many links", "POST", "/api/v1/ingest", links, 400, "document.links"},
		{"relative link", "POST", "/api/v1/ingest", badLink, 400, "document.links[0].url"},
		{"match without entities", "POST", "/api/v1/entities/match", kgapi.MatchRequest{}, 400, "entities"},
		{"match empty name", "POST", "/api/v1/entities/match", kgapi.MatchRequest{Entities: []string{"go", " "}}, 400, "entities[1]"},
		{"match negative limit", "POST", "/api/v1/entities/match", kgapi.MatchRequest{Entities: []string{"go"}, Limit: -1}, 400, "limit"},
		{"match huge limit", "POST", "/api/v1/entities/match", kgapi.MatchRequest{Entities: []string{"go"}, Limit: 100000}, 400, "limit"},
		{"match too many names", "POST", "/api/v1/entities/match", kgapi.MatchRequest{Entities: make([]string, 300)}, 400, "entities"},
		{"expand hops 3", "POST", "/api/v1/expand/entities", kgapi.ExpandRequest{Entities: []string{"go"}, MaxHops: 3}, 400, "max_hops"},
		{"expand hops negative", "POST", "/api/v1/expand/entities", kgapi.ExpandRequest{Entities: []string{"go"}, MaxHops: -1}, 400, "max_hops"},
		{"expand negative limit", "POST", "/api/v1/expand/entities", kgapi.ExpandRequest{Entities: []string{"go"}, Limit: -5}, 400, "limit"},
		{"expand confidence", "POST", "/api/v1/expand/entities", kgapi.ExpandRequest{Entities: []string{"go"}, MinConfidence: 1.5}, 400, "min_confidence"},
		{"expand relation type", "POST", "/api/v1/expand/entities", kgapi.ExpandRequest{Entities: []string{"go"}, RelationTypes: []string{"USES", "LIKES"}}, 400, "relation_types[1]"},
		{"expand no entities", "POST", "/api/v1/expand/entities", kgapi.ExpandRequest{MaxHops: 1}, 400, "entities"},
		{"list bad limit", "GET", "/api/v1/entities?limit=ten", nil, 400, "limit"},
		{"list negative limit", "GET", "/api/v1/entities?limit=-1", nil, 400, "limit"},
		{"list unknown type", "GET", "/api/v1/entities?type=spaceship", nil, 400, "type"},
		{"unknown entity", "GET", "/api/v1/entities/no-such-entity", nil, 404, ""},
		{"unknown document", "DELETE", "/api/v1/documents/no-such-doc", nil, 404, ""},
		{"parse empty", "POST", "/api/v1/parse", kgapi.ParseRequest{Text: " "}, 400, "text"},
		{"parse too long", "POST", "/api/v1/parse", kgapi.ParseRequest{Text: strings.Repeat("go ", 40)}, 400, "text"},
		{"list format", "GET", "/api/v1/entities?format=xml", nil, 400, "format"},
		{"list unknown parameter", "GET", "/api/v1/entities?q=py", nil, 400, "q"},
		{"list limit twice", "GET", "/api/v1/entities?limit=1&limit=2", nil, 400, "limit"},
		{"list bad escape", "GET", "/api/v1/entities?prefix=%%", nil, 400, "query"},
		{"stats format", "GET", "/api/v1/stats?format=yaml", nil, 400, "format"},
		{"parse text in the URL", "POST", "/api/v1/parse?text=go", kgapi.ParseRequest{Text: "go"}, 400, "text"},
	}
	f := &fakeGraph{}
	ts := newTestServer(t, f)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := call(t, ts, tt.method, tt.path, tt.body)
			if status != tt.status {
				t.Fatalf("status: got %d, want %d (body %v)", status, tt.status, body)
			}
			if got, _ := body["field"].(string); got != tt.field {
				t.Errorf("field: got %q, want %q (detail %q)", got, tt.field, body["detail"])
			}
			if d, _ := body["detail"].(string); d == "" {
				t.Errorf("detail: got empty, want a message saying what to fix")
			}
		})
	}
	if len(f.upserted) != 0 {
		t.Errorf("rejected ingests reached the graph: %d upserts", len(f.upserted))
	}
}

func TestGraphUnavailable(t *testing.T) {
	down := fmt.Errorf("match entities: %w: connection refused", graph.ErrUnavailable)
	ts := newTestServer(t, &fakeGraph{err: down})
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/api/v1/ingest", doc(kgapi.Chunk{ID: "c1", Text: "Django is written in Python."})},
		{"POST", "/api/v1/entities/match", kgapi.MatchRequest{Entities: []string{"python"}}},
		{"POST", "/api/v1/expand/entities", kgapi.ExpandRequest{Entities: []string{"python"}}},
		{"GET", "/api/v1/entities?prefix=py", nil},
		{"GET", "/api/v1/entities/python", nil},
		{"GET", "/api/v1/stats", nil},
		{"DELETE", "/api/v1/documents/d1", nil},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			status, body := call(t, ts, tc.method, tc.path, tc.body)
			if status != http.StatusServiceUnavailable {
				t.Fatalf("status: got %d, want 503 (body %v)", status, body)
			}
			if d, _ := body["detail"].(string); !strings.Contains(d, "Neo4j") {
				t.Errorf("detail: got %q, want a reason naming Neo4j", d)
			}
			if d, _ := body["detail"].(string); strings.Contains(d, "connection refused") {
				t.Errorf("detail: got %q, internal error text must not reach the client", d)
			}
		})
	}
	// Parsing needs no graph.
	if status, _ := call(t, ts, "POST", "/api/v1/parse", kgapi.ParseRequest{Text: "django"}); status != 200 {
		t.Errorf("parse with the graph down: got %d, want 200", status)
	}
}

func TestNotReady(t *testing.T) {
	f := &fakeGraph{}
	ts := newTestAPI(t, f, httpserver.Config{}, false)
	status, body := call(t, ts, "POST", "/api/v1/entities/match", kgapi.MatchRequest{Entities: []string{"python"}})
	if status != http.StatusServiceUnavailable {
		t.Errorf("match before the schema is ready: got %d, want 503 (%v)", status, body)
	}
	if f.matchIDs != nil {
		t.Errorf("the graph was queried before it was ready")
	}
}

func TestMatchResolvesAndReportsUnknown(t *testing.T) {
	f := &fakeGraph{match: graph.MatchResult{
		TotalChunks: 100,
		Entities: []graph.EntityStats{
			{EntityRef: graph.EntityRef{ID: "postgresql", Name: "PostgreSQL", Type: "database"}, ChunkFreq: 1},
		},
		Missing: []string{"write-ahead-log", "custom-id-1", "custom:id-1"},
		Chunks: []graph.ChunkMatch{{ChunkID: "c1", DocumentID: "d1", Ordinal: 2,
			Mentions: []graph.ChunkMention{{EntityID: "postgresql", Count: 2, Confidence: 0.9}}}},
	}}
	ts := newTestServer(t, f)
	var got kgapi.MatchResponse
	status, body := call(t, ts, "POST", "/api/v1/entities/match", kgapi.MatchRequest{Entities: []string{"Postgres", "postgresql", "Write-Ahead Log", "!!!", "custom:id-1"}, Limit: 5})
	if status != 200 {
		t.Fatalf("status: got %d, want 200 (%v)", status, body)
	}
	remarshal(t, body, &got)
	// An id-like name is also tried as given: ids need not be keys the extractor makes.
	if diff := cmp.Diff([]string{"postgresql", "write-ahead-log", "custom-id-1", "custom:id-1"}, f.matchIDs); diff != "" {
		t.Errorf("ids sent to the graph (-want +got):\n%s", diff)
	}
	if f.matchLim < 5 {
		t.Errorf("match window: got %d, want at least the limit 5", f.matchLim)
	}
	want := kgapi.MatchResponse{
		Chunks:   []kgapi.ChunkMatch{{ChunkID: "c1", DocumentID: "d1", Ordinal: 2, Score: 0.9, Matched: []string{"postgresql"}}},
		Resolved: []kgapi.EntityRef{{ID: "postgresql", Name: "PostgreSQL", Type: "database"}},
		Unknown:  []string{"Write-Ahead Log", "!!!", "custom:id-1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
}

func TestExpandRequestMapping(t *testing.T) {
	f := &fakeGraph{expand: graph.ExpandResult{
		Found:   []graph.EntityRef{{ID: "flask", Name: "Flask", Type: "framework"}},
		Missing: []string{"nosuchthing"},
		Related: []graph.Related{{
			Entity: graph.EntityRef{ID: "python", Name: "Python", Type: "programming_language"}, Hops: 2, Score: 0.72,
			Path: []graph.Edge{
				{From: "flask", To: "django", Type: "ALTERNATIVE_TO", Confidence: 0.9, Weight: 2, Support: 2, Evidence: []string{"c1", "c2"}},
				{From: "django", To: "python", Type: "WRITTEN_IN", Confidence: 0.8, Weight: 1, Support: 1, Evidence: []string{"c2", "c3"}},
			},
		}},
	}}
	ts := newTestServer(t, f)
	status, body := call(t, ts, "POST", "/api/v1/expand/entities", kgapi.ExpandRequest{
		Entities: []string{"Flask", "nosuchthing"}, MaxHops: 2, Limit: 7, MinConfidence: 0.3, RelationTypes: []string{"written_in", "ALTERNATIVE_TO", "WRITTEN_IN"},
	})
	if status != 200 {
		t.Fatalf("status: got %d, want 200 (%v)", status, body)
	}
	wantQ := graph.ExpandQuery{EntityIDs: []string{"flask", "nosuchthing"}, MaxHops: 2, Limit: 7, MinConfidence: 0.3, RelationTypes: []string{"WRITTEN_IN", "ALTERNATIVE_TO"}}
	if diff := cmp.Diff(wantQ, f.expandQ); diff != "" {
		t.Errorf("graph query (-want +got):\n%s", diff)
	}
	var got kgapi.ExpandResponse
	remarshal(t, body, &got)
	want := kgapi.ExpandResponse{
		Resolved: []kgapi.EntityRef{{ID: "flask", Name: "Flask", Type: "framework"}},
		Unknown:  []string{"nosuchthing"},
		Related: []kgapi.RelatedEntity{{
			EntityRef: kgapi.EntityRef{ID: "python", Name: "Python", Type: "programming_language"}, Confidence: 0.72, Hops: 2,
			Path: []kgapi.PathStep{
				{From: "flask", Relation: "ALTERNATIVE_TO", To: "django", Confidence: 0.9, Weight: 2, Support: 2},
				{From: "django", Relation: "WRITTEN_IN", To: "python", Confidence: 0.8, Weight: 1, Support: 1},
			},
			Evidence: []string{"c1", "c2", "c3"},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
}

func TestDefaults(t *testing.T) {
	f := &fakeGraph{}
	ts := newTestServer(t, f)
	if status, body := call(t, ts, "POST", "/api/v1/expand/entities", kgapi.ExpandRequest{Entities: []string{"go"}}); status != 200 {
		t.Fatalf("expand: got %d, want 200 (%v)", status, body)
	}
	if f.expandQ.MaxHops != 1 || f.expandQ.Limit != entitygraph.DefaultLimit {
		t.Errorf("expand defaults: got hops %d limit %d, want 1 and %d", f.expandQ.MaxHops, f.expandQ.Limit, entitygraph.DefaultLimit)
	}
	if status, body := call(t, ts, "GET", "/api/v1/entities?prefix=Post&type=database", nil); status != 200 {
		t.Fatalf("list: got %d, want 200 (%v)", status, body)
	}
	if diff := cmp.Diff([]any{"Post", "database", entitygraph.DefaultLimit}, f.listArgs); diff != "" {
		t.Errorf("list arguments (-want +got):\n%s", diff)
	}
}

func TestEntityByName(t *testing.T) {
	f := &fakeGraph{entities: map[string]graph.EntityDetail{
		"postgresql": {
			EntityStats: graph.EntityStats{EntityRef: graph.EntityRef{ID: "postgresql", Name: "PostgreSQL", Type: "database"}, DocFreq: 3, MentionCount: 7},
			Aliases:     []string{"Postgres"},
			Relations: []graph.RelatedEdge{
				{Edge: graph.Edge{From: "postgresql", To: "c", Type: "WRITTEN_IN", Confidence: 0.8, Weight: 1}, Other: graph.EntityRef{ID: "c", Name: "C", Type: "programming_language"}},
				{Edge: graph.Edge{From: "django", To: "postgresql", Type: "SUPPORTS", Confidence: 0.7, Weight: 2}, Other: graph.EntityRef{ID: "django", Name: "Django", Type: "framework"}},
			},
		},
	}}
	ts := newTestServer(t, f)
	status, body := call(t, ts, "GET", "/api/v1/entities/Postgres", nil)
	if status != 200 {
		t.Fatalf("status: got %d, want 200 (%v)", status, body)
	}
	var got kgapi.Entity
	remarshal(t, body, &got)
	want := kgapi.Entity{
		EntityRef: kgapi.EntityRef{ID: "postgresql", Name: "PostgreSQL", Type: "database"},
		Aliases:   []string{"Postgres"}, Mentions: 7, Documents: 3,
		Relations: []kgapi.Relation{
			{Type: "WRITTEN_IN", Direction: "out", Other: kgapi.EntityRef{ID: "c", Name: "C", Type: "programming_language"}, Weight: 1, Confidence: 0.8},
			{Type: "SUPPORTS", Direction: "in", Other: kgapi.EntityRef{ID: "django", Name: "Django", Type: "framework"}, Weight: 2, Confidence: 0.7},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entity (-want +got):\n%s", diff)
	}
}

func TestEscapedIDs(t *testing.T) {
	id := "docs/a b#1?x=%"
	f := &fakeGraph{upserted: []graph.Doc{{ID: id}}, entities: map[string]graph.EntityDetail{
		"os.path": {EntityStats: graph.EntityStats{EntityRef: graph.EntityRef{ID: "os.path", Name: "os.path", Type: "module"}}},
	}}
	ts := newTestServer(t, f)
	if err := kgapi.NewClient(ts.URL, nil, "").DeleteDocument(context.Background(), id); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if diff := cmp.Diff([]string{id}, f.deleted); diff != "" {
		t.Errorf("deleted ids (-want +got):\n%s", diff)
	}
	if status, body := call(t, ts, "GET", "/api/v1/entities/os%2Epath", nil); status != 200 || body["id"] != "os.path" {
		t.Errorf("escaped entity id: got %d %v, want 200 os.path", status, body)
	}
}

func TestTOON(t *testing.T) {
	ts := newTestServer(t, &fakeGraph{})
	req, _ := http.NewRequest("POST", ts.URL+"/api/v1/parse", strings.NewReader(`{"text":"django on postgres"}`))
	req.Header.Set("Accept", "text/toon")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/toon") {
		t.Fatalf("got %d %s, want 200 text/toon", resp.StatusCode, ct)
	}
	if !strings.Contains(string(body), "postgresql") || strings.HasPrefix(string(body), "{") {
		t.Errorf("body: got %q, want TOON naming postgresql", body)
	}
}

func TestNotAcceptable(t *testing.T) {
	ts := newTestServer(t, &fakeGraph{})
	for accept, want := range map[string]int{"application/xml": 406, "text/html": 406, "*/*": 200, "application/json": 200, "text/toon": 200} {
		req, _ := http.NewRequest("GET", ts.URL+"/api/v1/entities?prefix=go", nil)
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Accept %s: got %d, want %d (%s)", accept, resp.StatusCode, want, body)
		}
	}
}

func TestAPIKeys(t *testing.T) {
	ts := newTestAPI(t, &fakeGraph{}, httpserver.Config{APIKeys: []string{"0123456789abcdef"}}, true)
	if status, _ := call(t, ts, "POST", "/api/v1/parse", kgapi.ParseRequest{Text: "go"}); status != 401 {
		t.Errorf("POST without a key: got %d, want 401", status)
	}
	c := kgapi.NewClient(ts.URL, nil, "0123456789abcdef")
	if _, err := c.Parse(context.Background(), "django"); err != nil {
		t.Errorf("parse with the key: %v", err)
	}
	var se *kgapi.StatusError
	if _, err := kgapi.NewClient(ts.URL, nil, "wrong-key-wrong-key").Parse(context.Background(), "django"); !errors.As(err, &se) || se.Status != 401 {
		t.Errorf("parse with a wrong key: got %v, want a 401 StatusError", err)
	}
}

func remarshal(t *testing.T, in, out any) {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}

// retrieveGraph is a small graph in an in-memory projection: flask uses jinja,
// is written in python, which django is written in too.
func retrieveGraph() *projection.Projection {
	ent := func(id, name, typ string, cf int64) graph.EntityState {
		return graph.EntityState{EntityStats: graph.EntityStats{EntityRef: graph.EntityRef{ID: id, Name: name, Type: typ},
			DocFreq: 1, ChunkFreq: cf, MentionCount: cf}, NameLower: strings.ToLower(name)}
	}
	m := func(e string, conf float64) graph.ChunkMention {
		return graph.ChunkMention{EntityID: e, Count: 1, Confidence: conf}
	}
	rel := func(from, typ, to string, conf float64) graph.RelationState {
		return graph.RelationState{From: from, To: to, Type: typ, Source: graph.SourcePattern, Weight: 1, Confidence: conf, Evidence: []string{"c1"}}
	}
	p := projection.New()
	p.Load(graph.State{Seq: 1, Docs: []graph.DocState{{ID: "d1", Ingested: true,
		Chunks: []graph.ChunkState{
			{ID: "c1", Ordinal: 0, Mentions: []graph.ChunkMention{m("flask", 0.9), m("jinja", 0.8)}},
			{ID: "c2", Ordinal: 1, Mentions: []graph.ChunkMention{m("python", 1), m("django", 0.7)}},
			{ID: "c3", Ordinal: 2, Mentions: []graph.ChunkMention{m("jinja", 0.6)}},
		},
		Relations: []graph.RelationState{rel("flask", "USES", "jinja", 0.9), rel("flask", "WRITTEN_IN", "python", 0.8),
			rel("django", "WRITTEN_IN", "python", 0.5)},
	}}, Entities: []graph.EntityState{ent("flask", "Flask", "framework", 1), ent("jinja", "Jinja", "library", 2),
		ent("python", "Python", "programming_language", 1), ent("django", "Django", "framework", 1)}})
	return p
}

// TestRetrieveIsMatchExpandMatch: the one-round-trip endpoint answers what a
// match, an expand and a match of the related entities used answer.
func TestRetrieveIsMatchExpandMatch(t *testing.T) {
	x, err := extract.New()
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httpserver.New("kg", httpserver.Config{Addr: "127.0.0.1:0", MaxBodyBytes: 4096}, logger)
	f := &fakeGraph{}
	svc := entitygraph.New(testLimits, entitygraph.Deps{Extractor: x, Writer: f, Reader: retrieveGraph(), Lookup: f, Logger: logger})
	svc.SetReady(true)
	New(srv, Deps{Ingest: svc, Query: svc, Browse: svc}).Register()
	ts := httptest.NewServer(srv.Engine())
	t.Cleanup(ts.Close)

	for _, use := range []int{0, 1, 2, 10} {
		names := []string{"flask", "nosuchthing"}
		status, body := call(t, ts, "POST", "/api/v1/retrieve", kgapi.RetrieveRequest{Entities: names, Limit: 10,
			Expand: &kgapi.RetrieveExpand{MaxHops: 2, Limit: 8, MinConfidence: 0.45, Use: use}})
		if status != 200 {
			t.Fatalf("use %d: status %d (%v)", use, status, body)
		}
		var got kgapi.RetrieveResponse
		remarshal(t, body, &got)

		var want kgapi.RetrieveResponse
		_, mb := call(t, ts, "POST", "/api/v1/entities/match", kgapi.MatchRequest{Entities: names, Limit: 10})
		remarshal(t, mb, &want.Match)
		_, eb := call(t, ts, "POST", "/api/v1/expand/entities", kgapi.ExpandRequest{Entities: names, MaxHops: 2, Limit: 8, MinConfidence: 0.45})
		want.Expand = &kgapi.ExpandResponse{}
		remarshal(t, eb, want.Expand)
		for _, r := range want.Expand.Related {
			if len(want.Used) < use && r.Confidence >= 0.45 {
				want.Used = append(want.Used, r.ID)
			}
		}
		if len(want.Used) > 0 {
			_, ub := call(t, ts, "POST", "/api/v1/entities/match", kgapi.MatchRequest{Entities: want.Used, Limit: 10})
			want.ExpandMatch = &kgapi.MatchResponse{}
			remarshal(t, ub, want.ExpandMatch)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("use %d: retrieve (-match, expand, match +retrieve):\n%s", use, diff)
		}
		if use == 2 && (len(got.Used) != 2 || len(got.ExpandMatch.Chunks) == 0 || len(got.Match.Chunks) == 0) {
			t.Errorf("use 2: used %v, %d expanded chunks, %d matched; want 2 used and chunks", got.Used, len(got.ExpandMatch.Chunks), len(got.Match.Chunks))
		}
	}

	// Without expand: the match alone.
	status, body := call(t, ts, "POST", "/api/v1/retrieve", kgapi.RetrieveRequest{Entities: []string{"jinja"}})
	if status != 200 || body["expand"] != nil || body["expand_match"] != nil || body["match"] == nil {
		t.Errorf("retrieve without expand: %d %v", status, body)
	}
	for _, tc := range []struct {
		req   kgapi.RetrieveRequest
		field string
	}{
		{kgapi.RetrieveRequest{Entities: []string{"flask"}, Expand: &kgapi.RetrieveExpand{MaxHops: 3}}, "expand.max_hops"},
		{kgapi.RetrieveRequest{Entities: []string{"flask"}, Expand: &kgapi.RetrieveExpand{Use: -1}}, "expand.use"},
		{kgapi.RetrieveRequest{Entities: []string{"flask"}, Limit: -1}, "limit"},
		{kgapi.RetrieveRequest{}, "entities"},
	} {
		status, body := call(t, ts, "POST", "/api/v1/retrieve", tc.req)
		if status != 400 || fmt.Sprint(body["field"]) != tc.field {
			t.Errorf("retrieve %+v: got %d field %v, want 400 naming %s (%v)", tc.req, status, body["field"], tc.field, body)
		}
	}
}
