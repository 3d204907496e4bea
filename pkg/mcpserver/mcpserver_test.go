package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/toon"
)

// connect serves d over an in-memory transport and returns a connected client.
func connect(t *testing.T, d Deps, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := New(d).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// fakeServices is a REST fake of search, crawler and kg that counts requests.
type fakeServices struct {
	srv      *httptest.Server
	requests atomic.Int64
	mu       sync.Mutex
	bodies   []string
}

func newFake(t *testing.T, mux *http.ServeMux) *fakeServices {
	f := &fakeServices{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.bodies = append(f.bodies, r.Method+" "+r.URL.Path+" "+string(b))
		f.mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeServices) deps() Deps {
	return Deps{
		Search:  apiclient.NewSearch(f.srv.URL, nil, ""),
		Crawler: apiclient.NewCrawler(f.srv.URL, nil, ""),
		Graph:   kgapi.NewClient(f.srv.URL, nil, ""),
	}
}

func problem(w http.ResponseWriter, status int, field, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"title":"invalid request","status":%d,"detail":%q,"field":%q}`, status, detail, field)
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: protocol error %v", name, err)
	}
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return res, sb.String()
}

func TestToolsHaveUsableSchemas(t *testing.T) {
	cs := connect(t, Deps{}, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	required := map[string][]string{
		"search": {"q"}, "crawl": {"url"}, "crawl_status": {"id"}, "get_document": {"id"},
		"find_entities": {"prefix"}, "related_entities": {"entities"},
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		raw, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("%s: schema does not parse: %v", tool.Name, err)
		}
		if _, err := s.Resolve(nil); err != nil {
			t.Errorf("%s: schema does not resolve: %v", tool.Name, err)
		}
		if s.Type != "object" || !slices.Equal(s.Required, required[tool.Name]) {
			t.Errorf("%s: type %q required %v, want object with %v", tool.Name, s.Type, s.Required, required[tool.Name])
		}
		if tool.Description == "" {
			t.Errorf("%s: no description", tool.Name)
		}
		// An agent reads the states from the description: every state the
		// crawler answers (stalled was missing).
		if tool.Name == "crawl_status" {
			for _, st := range []string{"queued", "running", "stalled", "done", "failed", "cancelled"} {
				if !strings.Contains(tool.Description, st) {
					t.Errorf("crawl_status: the description %q does not name the state %s", tool.Description, st)
				}
			}
		}
		for name, p := range s.Properties {
			if len(p.Description) < 10 {
				t.Errorf("%s.%s: description %q is too thin for an agent", tool.Name, name, p.Description)
			}
		}
		if f := s.Properties["format"]; f == nil || len(f.Enum) != 2 {
			t.Errorf("%s: format must be an enum of toon and json, got %+v", tool.Name, f)
		}
	}
	slices.Sort(names)
	want := []string{"crawl", "crawl_status", "find_entities", "get_document", "related_entities", "search"}
	if !slices.Equal(names, want) {
		t.Errorf("tools: got %v, want %v", names, want)
	}
}

func TestSearchForwardsFieldsAndAnswersTOON(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/search", func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		_ = json.NewDecoder(r.Body).Decode(&req)
		req["format"] = r.URL.Query().Get("format")
		if req["weights"] == "vector:2" {
			problem(w, 400, "weights", "weights must be at most 1")
			return
		}
		type row struct {
			Rank int    `json:"rank"`
			URL  string `json:"url"`
		}
		out := map[string]any{"query": req["q"], "k": req["k"], "format": req["format"], "fusion": req["fusion"],
			"results": []row{{1, "https://a.example/x"}, {2, "https://a.example/y"}}}
		if req["format"] == "json" {
			_ = json.NewEncoder(w).Encode(out)
			return
		}
		b, _ := toon.Marshal(out)
		w.Header().Set("Content-Type", "text/toon; charset=utf-8")
		_, _ = w.Write(b)
	})
	f := newFake(t, mux)
	cs := connect(t, f.deps(), nil)

	res, body := call(t, cs, "search", map[string]any{"q": "venv", "k": 2, "fusion": "rrf"})
	if res.IsError {
		t.Fatalf("search: tool error %s", body)
	}
	var got struct {
		Query   string `json:"query"`
		K       int    `json:"k"`
		Format  string `json:"format"`
		Fusion  string `json:"fusion"`
		Results []struct {
			Rank int    `json:"rank"`
			URL  string `json:"url"`
		} `json:"results"`
	}
	if err := toon.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("the default answer is not TOON: %v\n%s", err, body)
	}
	if got.Query != "venv" || got.K != 2 || got.Format != "toon" || got.Fusion != "rrf" || len(got.Results) != 2 || got.Results[1].URL != "https://a.example/y" {
		t.Errorf("search answer: got %+v", got)
	}

	_, body = call(t, cs, "search", map[string]any{"q": "venv", "format": "json"})
	if err := json.Unmarshal([]byte(body), &got); err != nil || got.Format != "json" {
		t.Errorf("format=json: got %q (%v), want JSON", body, err)
	}

	res, body = call(t, cs, "search", map[string]any{"q": "venv", "weights": "vector:2"})
	if !res.IsError || !strings.Contains(body, `invalid argument "weights"`) || !strings.Contains(body, "at most 1") {
		t.Errorf("a 400 naming weights: got IsError=%v %q, want a tool error naming weights", res.IsError, body)
	}
}

// TestSearchForwardsEveryField: each search argument reaches the search API's
// body under the API's name and with its value, history and generated among them.
func TestSearchForwardsEveryField(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/search", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"query":"venv","results":[]}`)
	})
	f := newFake(t, mux)
	cs := connect(t, f.deps(), nil)
	args := map[string]any{"q": "venv", "k": 3, "offset": 2, "tags": []any{"a", "b"}, "domain": "docs.example",
		"published_after": "2024-01-01", "published_before": "2025-01-01", "weights": "bm25:1", "fusion": "rrf",
		"mmr": 0.5, "expand": false, "history": "keep", "generated": "keep", "explain": true}
	if res, body := call(t, cs, "search", args); res.IsError {
		t.Fatalf("search: tool error %s", body)
	}
	f.mu.Lock()
	bodies := slices.Clone(f.bodies)
	f.mu.Unlock()
	if len(bodies) != 1 {
		t.Fatalf("requests %q, want one search", bodies)
	}
	_, raw, _ := strings.Cut(bodies[0], "/api/v1/search ")
	var got map[string]any
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatalf("search body %q: %v", raw, err)
	}
	want, _ := json.Marshal(args)
	var wantMap map[string]any
	_ = json.Unmarshal(want, &wantMap)
	if diff := cmp.Diff(wantMap, got); diff != "" {
		t.Errorf("the search body differs from the tool's arguments (-arguments +body):\n%s", diff)
	}
}

// TestBadArgumentsAreToolErrors checks that invalid arguments come back as tool
// errors that name the argument, before any service is called.
func TestBadArgumentsAreToolErrors(t *testing.T) {
	f := newFake(t, http.NewServeMux())
	cs := connect(t, f.deps(), nil)
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"search", map[string]any{}, "q"},
		{"search", map[string]any{"q": ""}, "q"},
		{"search", map[string]any{"q": "x", "k": 0}, "k"},
		{"search", map[string]any{"q": "x", "k": 101}, "k"},
		{"search", map[string]any{"q": "x", "format": "xml"}, "format"},
		{"search", map[string]any{"q": "x", "fusion": "max"}, "fusion"},
		{"search", map[string]any{"q": "x", "k": "ten"}, "k"},
		{"search", map[string]any{"q": "x", "mmr": 2}, "mmr"},
		{"search", map[string]any{"q": "   "}, "q"},
		{"crawl", map[string]any{"url": "https://a.example", "max_pages": 0}, "max_pages"},
		{"crawl", map[string]any{"max_pages": 3}, "url"},
		{"crawl", map[string]any{"url": "https://a.example", "wait_seconds": 0}, "wait_seconds"},
		{"crawl_status", map[string]any{}, "id"},
		{"get_document", map[string]any{"id": "../etc/passwd"}, "id"},
		{"get_document", map[string]any{"id": "12", "max_chunks": 0}, "max_chunks"},
		{"find_entities", map[string]any{"prefix": ""}, "prefix"},
		{"related_entities", map[string]any{"entities": []string{}}, "entities"},
		{"related_entities", map[string]any{"entities": []string{"x"}, "max_hops": 3}, "max_hops"},
		{"related_entities", map[string]any{"entities": []string{" "}}, "entities[0]"},
	}
	for _, c := range cases {
		res, body := call(t, cs, c.tool, c.args)
		if !res.IsError || !strings.Contains(body, c.want) {
			t.Errorf("%s %v: got IsError=%v %q, want a tool error naming %s", c.tool, c.args, res.IsError, body, c.want)
		}
	}
	if n := f.requests.Load(); n != 0 {
		t.Errorf("bad arguments reached the services: %d requests: %v", n, f.bodies)
	}
}

func TestServiceErrorsSayWhatToDo(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/crawls/{id}", func(w http.ResponseWriter, r *http.Request) {
		problem(w, 404, "", "no crawl job "+r.PathValue("id"))
	})
	mux.HandleFunc("GET /api/v1/chunks/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(401)
	})
	mux.HandleFunc("POST /api/v1/expand/entities", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(503)
	})
	f := newFake(t, mux)
	cs := connect(t, f.deps(), nil)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"crawl_status", map[string]any{"id": "nope"}, "not found: no crawl job nope"},
		{"get_document", map[string]any{"id": "42"}, "refused the API key"},
		{"related_entities", map[string]any{"entities": []string{"x"}}, "retry later"},
	} {
		res, body := call(t, cs, c.tool, c.args)
		if !res.IsError || !strings.Contains(body, c.want) {
			t.Errorf("%s: got IsError=%v %q, want %q", c.tool, res.IsError, body, c.want)
		}
	}
	// Without a crawler configured the tool says which setting is missing.
	cs = connect(t, Deps{}, nil)
	res, body := call(t, cs, "crawl", map[string]any{"url": "https://a.example/"})
	if !res.IsError || !strings.Contains(body, "KGS_CRAWLER_URL") {
		t.Errorf("crawl without a crawler: got %q", body)
	}
}

// sse writes one server-sent event.
func sse(w http.ResponseWriter, ev apiclient.Event) {
	b, _ := json.Marshal(ev)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Type, b)
	w.(http.Flusher).Flush()
}

func TestCrawlReportsProgressAndSummary(t *testing.T) {
	status := func(state string, stored, failed int64) *apiclient.CrawlStatus {
		s := &apiclient.CrawlStatus{ID: "job1", Status: state, URL: "https://a.example/"}
		s.Spec.MaxPages = 5
		s.Counters = apiclient.Counters{Stored: stored, Failed: failed, Chunks: stored * 3}
		return s
	}
	mux := http.NewServeMux()
	var spec apiclient.CrawlSpec
	mux.HandleFunc("POST /api/v1/crawls", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&spec)
		w.WriteHeader(202)
		_ = json.NewEncoder(w).Encode(status("queued", 0, 0))
	})
	mux.HandleFunc("GET /api/v1/crawls/job1/events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, apiclient.Event{Type: "progress", JobID: "job1", Status: status("running", 0, 0)})
		for i := range 4 {
			sse(w, apiclient.Event{Type: "page", JobID: "job1", URL: fmt.Sprintf("https://a.example/%d", i), Outcome: "stored", Chunks: 3})
		}
		sse(w, apiclient.Event{Type: "page", JobID: "job1", URL: "https://a.example/x", Outcome: "failed", Reason: "http_500"})
		sse(w, apiclient.Event{Type: "summary", JobID: "job1", Status: status("done", 4, 1)})
	})
	f := newFake(t, mux)
	var mu sync.Mutex
	var notes []*mcp.ProgressNotificationParams
	final := make(chan struct{})
	cs := connect(t, f.deps(), &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		notes = append(notes, r.Params)
		mu.Unlock()
		if r.Params.Progress == 5 {
			close(final)
		}
	}})
	params := &mcp.CallToolParams{Name: "crawl", Arguments: map[string]any{"url": "https://a.example/", "max_pages": 5, "tags": []string{"t"}, "format": "json"}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("crawl: %v %+v", err, res)
	}
	var out struct {
		Job apiclient.CrawlStatus `json:"job"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out); err != nil {
		t.Fatal(err)
	}
	if out.Job.Status != "done" || out.Job.Counters.Stored != 4 || out.Job.Counters.Failed != 1 {
		t.Errorf("summary: got %+v", out.Job)
	}
	if spec.URL != "https://a.example/" || spec.MaxPages != 5 || !slices.Equal(spec.Tags, []string{"t"}) {
		t.Errorf("spec sent to the crawler: %+v", spec)
	}
	// Notifications are delivered asynchronously; the last one may follow the result.
	select {
	case <-final:
	case <-time.After(10 * time.Second):
		t.Error("no notification reached the final 5 pages")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notes) == 0 {
		t.Fatal("no progress notifications")
	}
	lastP := 0.0
	for _, n := range notes {
		if n.ProgressToken != "tok-1" || n.Progress <= lastP || n.Total < n.Progress {
			t.Errorf("notification %+v: want token tok-1, growing progress, total >= progress", n)
		}
		lastP = n.Progress
	}
	if last := notes[len(notes)-1]; last.Progress != 5 || last.Total != 6 || !strings.Contains(last.Message, "4 stored") {
		t.Errorf("last notification: got %+v, want 5 pages done of 6 (5 budget + 1 failure), 4 stored", last)
	}
}

func TestHTTPHandlerNeedsTheKey(t *testing.T) {
	key := "0123456789abcdef-key"
	srv := httptest.NewServer(HTTPHandler(Deps{}, []string{key}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)

	_, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, nil)
	if err == nil {
		t.Fatal("connect without a key: want an error")
	}
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("POST without a key: got %d, want 401 with WWW-Authenticate", resp.StatusCode)
	}
	// The scheme is case-insensitive (RFC 9110 11.1), as on the REST API.
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{}`))
	req.Header.Set("Authorization", "bearer "+key)
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode == 401 {
		t.Errorf(`POST with "bearer <key>": got 401, want the key accepted`)
	}

	hc := &http.Client{Transport: bearer{key: key, next: http.DefaultTransport}}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect with the key: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 6 {
		t.Errorf("tools over HTTP: %v, %d tools", err, len(tools.Tools))
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

func TestSchemaErrorsReadPlainly(t *testing.T) {
	f := newFake(t, http.NewServeMux())
	cs := connect(t, f.deps(), nil)
	for _, c := range []struct {
		args      any
		want, not string
	}{
		{map[string]any{"q": "x", "k": 0}, `argument "k": must be at least 1, got 0`, "1.000000"},
		{map[string]any{"q": "x", "k": 101}, `argument "k": must be at most 100, got 101`, "/1"},
		{"not an object", "the arguments must be a JSON object", "map[string]interface"},
	} {
		res, body := call(t, cs, "search", c.args)
		if !res.IsError || !strings.Contains(body, c.want) || strings.Contains(body, c.not) {
			t.Errorf("search %v: got %q, want a tool error saying %q without %q", c.args, body, c.want, c.not)
		}
	}
	for in, want := range map[string]string{
		"minimum: -3/1 is less than 0.000000":     "must be at least 0, got -3",
		"maximum: 20/1 is greater than 10.500000": "must be at most 10.5, got 20",
		"type: string is not integer":             "type: string is not integer",
	} {
		if got := plainBound(in); got != want {
			t.Errorf("plainBound(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClientMistakesAreNotErrors(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	srv := httptest.NewServer(HTTPHandler(Deps{Logger: logger}, nil))
	t.Cleanup(srv.Close)
	// tools/list before initialize: the client gets an error, the log no ERROR.
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "error") {
		t.Fatalf("tools/list before initialize: %d %s, want a JSON-RPC error", resp.StatusCode, body)
	}
	if strings.Contains(buf.String(), `"level":"ERROR"`) {
		t.Errorf("a client's protocol mistake was logged at ERROR:\n%s", buf.String())
	}
	// Other records still pass.
	sdkLogger(logger).Error("server connect failed")
	if !strings.Contains(buf.String(), "server connect failed") {
		t.Errorf("an SDK error of its own was dropped:\n%s", buf.String())
	}
}

// TestCrawlPrune: the crawl tool's prune argument reaches the crawler's request
// as the REST API's prune (kgs crawl --prune, the web form's box), is left out
// when not asked for (the crawler's default, false), and a value that is not a
// boolean is a tool error naming prune before any crawl starts.
func TestCrawlPrune(t *testing.T) {
	mux := http.NewServeMux()
	var mu sync.Mutex
	var specs []map[string]any
	mux.HandleFunc("POST /api/v1/crawls", func(w http.ResponseWriter, r *http.Request) {
		var spec map[string]any
		_ = json.NewDecoder(r.Body).Decode(&spec)
		mu.Lock()
		specs = append(specs, spec)
		mu.Unlock()
		w.WriteHeader(202)
		_ = json.NewEncoder(w).Encode(apiclient.CrawlStatus{ID: "job1", Status: "queued", URL: "https://a.example/"})
	})
	f := newFake(t, mux)
	cs := connect(t, f.deps(), nil)
	for _, c := range []struct {
		args map[string]any
		want any // the crawl request's prune (nil: left out)
	}{
		{map[string]any{"url": "https://a.example/", "prune": true, "wait": false}, true},
		{map[string]any{"url": "https://a.example/", "prune": false, "wait": false}, nil},
		{map[string]any{"url": "https://a.example/", "wait": false}, nil},
	} {
		mu.Lock()
		specs = nil
		mu.Unlock()
		if res, body := call(t, cs, "crawl", c.args); res.IsError {
			t.Fatalf("crawl %v: tool error %q", c.args, body)
		}
		mu.Lock()
		got := specs
		mu.Unlock()
		if len(got) != 1 || got[0]["prune"] != c.want {
			t.Errorf("crawl %v: the crawler got %v, want prune %v", c.args, got, c.want)
		}
	}
	n := f.requests.Load()
	for _, bad := range []any{"yes", 1, []any{true}} {
		res, body := call(t, cs, "crawl", map[string]any{"url": "https://a.example/", "prune": bad, "wait": false})
		if !res.IsError || !strings.Contains(body, `invalid arguments for crawl: argument "prune"`) || !strings.Contains(body, `want "boolean"`) {
			t.Errorf("prune=%v: got IsError=%v %q, want a tool error naming prune and saying it is a boolean", bad, res.IsError, body)
		}
	}
	if f.requests.Load() != n {
		t.Errorf("a crawl with a bad prune reached the crawler: %d requests", f.requests.Load()-n)
	}
	// The schema tells an agent what it does.
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name != "crawl" {
			continue
		}
		raw, _ := json.Marshal(tool.InputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		p := s.Properties["prune"]
		if p == nil || p.Type != "boolean" || !strings.Contains(p.Description, "deletes nothing") || !strings.Contains(tool.Description, "prune") {
			t.Errorf("the crawl tool's schema has prune %+v and description %q", p, tool.Description)
		}
	}
}

// TestHTTPSessionsExpire: a session that sends nothing for the idle time is
// forgotten (its next request is a 404, the transport's sign to initialize
// again); one in use stays. Before, every abandoned session stayed in memory.
func TestHTTPSessionsExpire(t *testing.T) {
	// Requests come idle/4 apart, so a request may take 1.5 s on a loaded
	// machine before the session expires under it (at 300 ms idle, 100 ms apart,
	// a request slower than 200 ms under -race failed the test).
	const idle = 2 * time.Second
	srv := httptest.NewServer(httpHandler(Deps{}, nil, idle, MaxSessions))
	t.Cleanup(srv.Close)
	post := func(session, body string) *http.Response {
		t.Helper()
		resp, err := sendMCP(srv.URL, http.MethodPost, session, body)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post("", initializeMessage)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: got %d, session %q", resp.StatusCode, id)
	}
	post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	// Requests closer together than the idle time keep the session.
	for i := range 4 {
		time.Sleep(idle / 4)
		if resp := post(id, list); resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d within the idle time: got %d, want 200", i+1, resp.StatusCode)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		time.Sleep(2 * idle)
		resp := post(id, list)
		if resp.StatusCode == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("idle session: still answered %d after 30 s, want 404 once %v passed without a request", resp.StatusCode, idle)
		}
	}
	if got := SessionIdle; got < time.Minute {
		t.Errorf("SessionIdle %v: clients pausing between calls would lose their sessions", got)
	}
}

// TestHTTPSessionsBounded: while the most sessions are open, a request that
// would open another is refused with 503 and Retry-After; open sessions go on,
// and closing one makes room.
func TestHTTPSessionsBounded(t *testing.T) {
	srv := httptest.NewServer(httpHandler(Deps{}, nil, time.Hour, 3))
	t.Cleanup(srv.Close)
	send := func(method, session, body string) *http.Response {
		t.Helper()
		resp, err := sendMCP(srv.URL, method, session, body)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	var ids []string
	for i := range 3 {
		resp := send(http.MethodPost, "", initializeMessage)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("session %d of 3: got %d", i+1, resp.StatusCode)
		}
		ids = append(ids, resp.Header.Get("Mcp-Session-Id"))
		send(http.MethodPost, ids[i], `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	if resp := send(http.MethodPost, "", initializeMessage); resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a fourth session: got %d (Retry-After %q), want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if resp := send(http.MethodPost, ids[0], `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); resp.StatusCode != http.StatusOK {
		t.Errorf("an open session at the bound: got %d, want 200", resp.StatusCode)
	}
	send(http.MethodDelete, ids[1], "")
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp := send(http.MethodPost, "", initializeMessage)
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after closing a session: still %d, want room for a new one", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHTTPSessionsBoundedConcurrently: requests that open sessions at the same
// time cannot together pass the bound. Each was checked against the sessions
// already open, and the SDK adds the session only when the request reaches it,
// after the whole body has been read: initializes that arrived together, or
// whose bodies came slowly, all saw room and all opened a session. Here every request that
// passes the check waits at a gate until the others have been answered or
// have passed too; before the fix all ten passed a bound of three.
func TestHTTPSessionsBoundedConcurrently(t *testing.T) {
	const bound, clients = 3, 10
	srv := New(Deps{})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var passed, refused atomic.Int64
	gate := make(chan struct{})
	gated := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		passed.Add(1)
		<-gate
		sdk.ServeHTTP(w, r)
	})
	ts := httptest.NewServer(limitSessions(srv, bound, gated))
	t.Cleanup(ts.Close)
	var opened atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := sendMCP(ts.URL, http.MethodPost, "", initializeMessage)
			if err != nil {
				t.Error(err)
				return
			}
			switch {
			case resp.StatusCode == http.StatusOK && resp.Header.Get("Mcp-Session-Id") != "":
				opened.Add(1)
			case resp.StatusCode == http.StatusServiceUnavailable:
				refused.Add(1)
			default:
				t.Errorf("initialize: got %d", resp.StatusCode)
			}
		}()
	}
	deadline := time.Now().Add(30 * time.Second)
	for passed.Load()+refused.Load() < clients && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	close(gate)
	wg.Wait()
	if opened.Load() > bound || opened.Load() == 0 || opened.Load()+refused.Load() != clients {
		t.Errorf("%d initializes at once with a bound of %d: %d sessions opened, %d refused; want at most %d opened and the rest refused",
			clients, bound, opened.Load(), refused.Load(), bound)
	}
}

// initializeMessage opens an MCP session over HTTP.
const initializeMessage = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// sendMCP sends body to the MCP endpoint at url as a client of the streamable
// HTTP transport does, in the session when one is given, and returns the
// answer with its body read and closed.
func sendMCP(url, method, session, body string) (*http.Response, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp, resp.Body.Close()
}
