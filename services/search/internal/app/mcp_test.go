package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgsearch/kgsearch/internal/kgscli"
	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/mcpserver"
	"github.com/kgsearch/kgsearch/pkg/toon"
	"github.com/kgsearch/kgsearch/services/search/internal/api"
	"github.com/kgsearch/kgsearch/services/search/internal/searchtest"
)

const mcpKey = "mcp-test-key-0123456789"

// mcpEnv is a search service on the real store and Bleve index (fake kg) with /mcp
// mounted behind an API key, and documents to find.
func mcpEnv(t *testing.T) (*searchtest.Env, mcpserver.Graph) {
	t.Helper()
	env := searchtest.New(t, searchtest.Options{})
	env.Add(t,
		searchtest.Doc{URL: "https://docs.example.org/postgres/replication", Title: "PostgreSQL streaming replication",
			Tags: []string{"postgres"}, Chunks: []searchtest.Chunk{
				{Heading: "Overview", Text: "Streaming replication in PostgreSQL ships WAL records from the primary server to standby servers."},
				{Heading: "Standby", Text: "Configure the standby with primary_conninfo; it connects to the primary and replays WAL."},
			}},
		searchtest.Doc{URL: "https://docs.example.org/redis/persistence", Title: "Redis persistence",
			Tags: []string{"redis"}, Chunks: []searchtest.Chunk{
				{Heading: "RDB", Text: "Redis writes point-in-time snapshots of the dataset to RDB files at intervals."},
			}},
	)
	graph := kgapi.NewClient(env.KG.URL, nil, "")
	MountMCP(env.Server, graph, nil, []string{mcpKey}, slog.New(slog.DiscardHandler))
	return env, graph
}

// searchResults is the part of the search answer the test reads.
type searchResults struct {
	Results []struct {
		Rank    int     `json:"rank"`
		URL     string  `json:"url"`
		Title   string  `json:"title"`
		Score   float64 `json:"score"`
		ChunkID string  `json:"chunk_id"`
		Start   int     `json:"start"`
		End     int     `json:"end"`
	} `json:"results"`
	ResultCount int `json:"result_count"`
}

func toolText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// checkSearchTools runs the tools an agent uses on a real search service.
func checkSearchTools(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != 6 {
		t.Fatalf("list tools: %v (%d tools)", err, len(tools.Tools))
	}
	for _, tool := range tools.Tools {
		raw, _ := json.Marshal(tool.InputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("%s schema: %v", tool.Name, err)
		}
		if _, err := s.Resolve(nil); err != nil || len(s.Required) == 0 {
			t.Errorf("%s schema: %v, required %v", tool.Name, err, s.Required)
		}
	}

	body, isErr := toolText(t, cs, "search", map[string]any{"q": "postgresql streaming replication standby", "k": 5})
	if isErr {
		t.Fatalf("search: tool error %s", body)
	}
	var got searchResults
	if err := toon.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("search answer is not TOON: %v\n%s", err, body)
	}
	if got.ResultCount == 0 || len(got.Results) != got.ResultCount {
		t.Fatalf("search: %d results, result_count %d\n%s", len(got.Results), got.ResultCount, body)
	}
	top := got.Results[0]
	if top.URL != "https://docs.example.org/postgres/replication" || top.ChunkID == "" || top.End <= top.Start || top.Rank != 1 {
		t.Errorf("top result: got %+v, want the replication page with a chunk id and offsets", top)
	}

	body, isErr = toolText(t, cs, "search", map[string]any{"q": "redis snapshots", "format": "json", "tags": []string{"redis"}})
	var gotJSON searchResults
	if err := json.Unmarshal([]byte(body), &gotJSON); isErr || err != nil || len(gotJSON.Results) != 1 ||
		gotJSON.Results[0].URL != "https://docs.example.org/redis/persistence" {
		t.Errorf("search format=json tags=redis: got %v %v %q", isErr, err, body)
	}

	// A value only the service can judge comes back as a tool error naming it.
	body, isErr = toolText(t, cs, "search", map[string]any{"q": "x", "published_after": "last tuesday"})
	if !isErr || !strings.Contains(body, `"published_after"`) {
		t.Errorf("bad published_after: got %v %q, want a tool error naming it", isErr, body)
	}
	body, isErr = toolText(t, cs, "search", map[string]any{"q": "x", "k": 1000})
	if !isErr || !strings.Contains(body, `"k"`) {
		t.Errorf("k=1000: got %v %q, want a tool error naming k", isErr, body)
	}
	// The crawler is not configured here: the tool says what to set.
	body, isErr = toolText(t, cs, "get_document", map[string]any{"id": top.ChunkID})
	if !isErr || !strings.Contains(body, "KGS_CRAWLER_URL") {
		t.Errorf("get_document without a crawler: got %v %q", isErr, body)
	}
}

func TestMCPInMemoryOnTheRealSearchService(t *testing.T) {
	env, graph := mcpEnv(t)
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(mcpDeps(env.Server, graph, nil, slog.New(slog.DiscardHandler))).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	checkSearchTools(t, cs)
}

func TestMCPOverStreamableHTTPAtSlashMCP(t *testing.T) {
	env, _ := mcpEnv(t)
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	endpoint := env.HTTP.URL + "/mcp"

	if _, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, nil); err == nil {
		t.Fatal("connect without the API key: want an error")
	}
	bad := &http.Client{Transport: bearer{key: "wrong-key-0123456789", next: http.DefaultTransport}}
	if _, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: bad, MaxRetries: -1}, nil); err == nil {
		t.Fatal("connect with a wrong API key: want an error")
	}
	hc := &http.Client{Transport: bearer{key: mcpKey, next: http.DefaultTransport}}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect with the API key: %v", err)
	}
	defer cs.Close()
	checkSearchTools(t, cs)

	// find_entities reaches kg (the fake kg service holds the entities it extracted).
	body, isErr := toolText(t, cs, "find_entities", map[string]any{"prefix": "postg", "format": "json"})
	var list kgapi.EntityList
	if err := json.Unmarshal([]byte(body), &list); isErr || err != nil || len(list.Entities) == 0 || list.Entities[0].ID != "postgresql" {
		t.Errorf("find_entities postg: got %v %v %q", isErr, err, body)
	}

	// A message naming a key twice is refused before the SDK reads it, as the
	// REST routes refuse such bodies; the service's body limit still applies.
	for _, c := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"a","q":"b"}}}`,
			http.StatusBadRequest, `"message":"params.arguments.q is given twice in one object; send it once"`},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"q":"` +
			strings.Repeat("a", 2<<20) + `"}}}`, http.StatusRequestEntityTooLarge, "exceeds"},
	} {
		req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(b), `"id":null`) ||
			!strings.Contains(string(b), `"code":-32600`) || !strings.Contains(string(b), c.want) {
			t.Errorf("POST /mcp %.60s...: got %d %s, want %d with a JSON-RPC Invalid Request saying %s", c.body, resp.StatusCode, b, c.status, c.want)
		}
	}
}

// bearer adds an Authorization header to every request.
type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

// TestCLISearchOnTheRealSearchService runs `kgs search` against the service.
func TestCLISearchOnTheRealSearchService(t *testing.T) {
	env, _ := mcpEnv(t)
	run := func(args ...string) (int, string, string) {
		var out, errb strings.Builder
		code := kgscli.Main(context.Background(), args, kgscli.IO{In: strings.NewReader(""), Out: &out, Err: &errb,
			Getenv: func(k string) string { return map[string]string{"KGS_SEARCH_URL": env.HTTP.URL}[k] }})
		return code, out.String(), errb.String()
	}
	code, out, errs := run("search", "postgresql streaming replication", "--format", "json", "--k", "2")
	var got searchResults
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || len(got.Results) == 0 ||
		got.Results[0].URL != "https://docs.example.org/postgres/replication" {
		t.Fatalf("kgs search --format json: exit %d %v %q %q", code, err, out, errs)
	}
	code, out, _ = run("search", "postgresql streaming replication", "--explain")
	for _, want := range []string{"SCORE", "VECTOR", "BM25", "PostgreSQL streaming replication", "https://docs.example.org/postgres/replication", "explain: weights"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("kgs search table: exit %d, missing %q in\n%s", code, want, out)
		}
	}
	code, out, _ = run("search", "redis", "--format", "toon")
	if err := toon.Unmarshal([]byte(out), &got); code != 0 || err != nil || got.ResultCount == 0 {
		t.Errorf("kgs search --format toon: exit %d %v", code, err)
	}
	// A value only the service can judge: exit 2 with the service's reason.
	code, _, errs = run("search", "x", "--after", "last tuesday")
	if code != kgscli.ExitUsage || !strings.Contains(errs, "published_after") {
		t.Errorf("bad --after: exit %d %q", code, errs)
	}
}

// TestMCPSearchWithKeysOnTheAPI: when the service has API keys its REST API asks
// for one too, and the search tool's in-process call must carry it.
func TestMCPSearchWithKeysOnTheAPI(t *testing.T) {
	env, graph := mcpEnv(t)
	logger := slog.New(slog.DiscardHandler)
	keyed := httpserver.New("search", httpserver.Config{Addr: "127.0.0.1:0", APIKeys: []string{mcpKey}}, logger)
	api.New(keyed, api.Deps{Search: env.Pipeline, Index: env.Indexer}).Register()
	MountMCP(keyed, graph, nil, []string{mcpKey}, logger)
	ts := httptest.NewServer(keyed.Engine())
	defer ts.Close()
	hc := &http.Client{Transport: bearer{key: mcpKey, next: http.DefaultTransport}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	body, isErr := toolText(t, cs, "search", map[string]any{"q": "redis snapshots", "format": "json"})
	var got searchResults
	if err := json.Unmarshal([]byte(body), &got); isErr || err != nil || len(got.Results) == 0 {
		t.Errorf("search through /mcp on a keyed service: %v %v %q", isErr, err, body)
	}
}
