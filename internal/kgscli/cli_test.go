package kgscli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
)

const key = "cli-test-key-0123456789"

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ with the current output")

// golden compares got with testdata/name, or rewrites the file with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (go test -run %s -update creates it): %v", t.Name(), err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the output (go test -run %s -update rewrites it after a deliberate change)\ngot:\n%s\nwant:\n%s",
			path, t.Name(), got, want)
	}
}

// fake is one httptest server answering as search, crawler and kg, checking the
// API key on every request.
type fake struct {
	srv      *httptest.Server
	requests atomic.Int64
	// search is the last search request's body, decoded.
	search atomic.Pointer[map[string]any]
}

func newFake(t *testing.T) *fake {
	f := &fake{}
	mux := http.NewServeMux()
	status := func(state string, stored, failed, chunks int64) *apiclient.CrawlStatus {
		s := &apiclient.CrawlStatus{ID: "job1", Status: state, URL: "https://a.example/", RunningMS: 1500}
		s.Spec.MaxPages = 10
		s.Counters = apiclient.Counters{Stored: stored, Failed: failed, Chunks: chunks,
			FailedBy: map[string]int64{"http_500": failed}, Skipped: map[string]int64{"robots": 2}}
		return s
	}
	mux.HandleFunc("POST /api/v1/crawls", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(202)
		_ = json.NewEncoder(w).Encode(status("queued", 0, 0, 0))
	})
	mux.HandleFunc("GET /api/v1/crawls/job1/events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(ev apiclient.Event) {
			b, _ := json.Marshal(ev)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Type, b)
			w.(http.Flusher).Flush()
		}
		send(apiclient.Event{Type: "progress", JobID: "job1", Status: status("running", 0, 0, 0)})
		for i := range 6 {
			send(apiclient.Event{Type: "page", JobID: "job1", URL: fmt.Sprint(i), Outcome: "stored", Chunks: 2})
		}
		send(apiclient.Event{Type: "progress", JobID: "job1", Status: status("running", 6, 0, 12)})
		send(apiclient.Event{Type: "page", JobID: "job1", Outcome: "failed", Reason: "http_500"})
		send(apiclient.Event{Type: "summary", JobID: "job1", Status: status("done", 7, 1, 15)})
	})
	mux.HandleFunc("DELETE /api/v1/crawls/job1", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(status("cancelled", 3, 0, 6))
	})
	mux.HandleFunc("GET /api/v1/crawls/job1", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(status("running", 3, 0, 6))
	})
	mux.HandleFunc("POST /api/v1/search", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.search.Store(&body)
		if r.URL.Query().Get("format") == "toon" {
			w.Header().Set("Content-Type", "text/toon")
			fmt.Fprint(w, "results[1]{rank,url}:\n  1,\"https://a.example/x\"\nresult_count: 1")
			return
		}
		fmt.Fprint(w, `{"query":{"normalized":"venv","entities":[{"text":"venv","type":"module"}]},"result_count":1,"total_time_ms":3.5,
			"results":[{"rank":1,"url":"https://a.example/x","title":"Virtual environments","preview":"venv creates environments",
			"score":0.8,"score_breakdown":{"vector":0.9,"graph":0.4,"bm25":1,"recency":0.6,"title":0.7},"source":"vector+bm25","chunk_id":"42","start":10,"end":90}],
			"suggested_queries":["venv activate"],"degraded":[],"explain":{"weights":"vector:1","fusion":"weighted","candidates":100,"retrievers":{"bm25":{"hits":3,"took_ms":1.5}}}}`)
	})
	var left atomic.Int64
	left.Store(5)
	mux.HandleFunc("DELETE /api/v1/documents", func(w http.ResponseWriter, r *http.Request) {
		n := min(left.Load(), 2)
		left.Add(-n)
		fmt.Fprintf(w, `{"domain":%q,"deleted":%d,"more":%t}`, strings.ToLower(r.URL.Query().Get("domain")), n, left.Load() > 0)
	})
	mux.HandleFunc("GET /api/v1/chunks/42", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"id":"42","ordinal":3,"text":"venv creates environments","start_offset":10,"end_offset":90,"document_id":"d1","url":"https://a.example/x"}`)
	})
	mux.HandleFunc("GET /api/v1/documents/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(404)
		fmt.Fprintf(w, `{"title":"not found","status":404,"detail":"document %s not found"}`, r.PathValue("id"))
	})
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(401)
			fmt.Fprint(w, `{"title":"unauthorized","status":401,"detail":"this endpoint needs the header Authorization: Bearer <api key>"}`)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// run runs kgs with the fake's URLs in the environment.
func run(t *testing.T, f *fake, terminal bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{"KGS_SEARCH_URL": f.srv.URL, "KGS_CRAWLER_URL": f.srv.URL, "KGS_KG_URL": f.srv.URL, "KGS_API_KEY": key}
	code = Main(context.Background(), args, IO{In: strings.NewReader(""), Out: &out, Err: &errb, IsTerminal: terminal,
		Getenv: func(k string) string { return env[k] }})
	return code, out.String(), errb.String()
}

func TestCrawlWaitShowsProgressToTheFinalCounts(t *testing.T) {
	f := newFake(t)
	code, out, errs := run(t, f, false, "crawl", "https://a.example/", "--max-pages", "10", "--wait")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var progress []string
	for _, l := range lines {
		if strings.HasPrefix(l, "progress: ") {
			progress = append(progress, l)
		}
	}
	if len(progress) == 0 {
		t.Fatalf("no progress lines:\n%s", out)
	}
	// 7 stored + 1 failed + 2 skipped, 15 chunks: the summary's counts.
	if last := progress[len(progress)-1]; !strings.HasPrefix(last, "progress: 10 pages: 7 stored, 0 unchanged, 1 failed, 2 skipped; 15 chunks") {
		t.Errorf("last progress line: %q, want the final counts", last)
	}
	if sum := lines[len(lines)-1]; !strings.Contains(sum, "crawl job1 done") || !strings.Contains(sum, "7 stored") ||
		!strings.Contains(sum, "1 failed (http_500: 1)") || !strings.Contains(sum, "2 skipped (robots: 2)") {
		t.Errorf("summary: %q", sum)
	}

	// On a terminal: a bar redrawn in place, ending full with the final counts.
	code, out, _ = run(t, f, true, "crawl", "https://a.example/", "--wait")
	last := out[strings.LastIndex(out, "\r"):]
	if code != 0 || !strings.Contains(last, "[========================] 7/10 10 pages: 7 stored") || !strings.Contains(last, "15 chunks") {
		t.Errorf("bar: exit %d, last frame %q", code, last)
	}

	// --format json: the final status on stdout parses; progress went to stderr.
	code, out, errs = run(t, f, false, "crawl", "https://a.example/", "--wait", "--format", "json")
	var st apiclient.CrawlStatus
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || st.Counters.Stored != 7 || !strings.Contains(errs, "progress: ") {
		t.Errorf("json: exit %d, %v, %+v, stderr %q", code, err, st, errs)
	}
}

func TestJob(t *testing.T) {
	f := newFake(t)
	code, out, _ := run(t, f, false, "job", "job1")
	if code != 0 || !strings.HasPrefix(out, "crawl job1 running in 1.5s: 3 stored") {
		t.Errorf("job: exit %d %q", code, out)
	}
	code, out, _ = run(t, f, false, "job", "job1", "--wait")
	if code != 0 || !strings.Contains(out, "crawl job1 done in 1.5s: 7 stored") {
		t.Errorf("job --wait: exit %d %q", code, out)
	}
	code, out, _ = run(t, f, false, "job", "job1", "--cancel")
	if code != 0 || !strings.HasPrefix(out, "crawl job1 cancelled in 1.5s: 3 stored") {
		t.Errorf("job --cancel: exit %d %q", code, out)
	}
	code, _, errs := run(t, f, false, "job", "job1", "--cancel", "--wait")
	if code != ExitUsage || !strings.Contains(errs, "not both") {
		t.Errorf("job --cancel --wait: exit %d %q", code, errs)
	}
}

func TestSearchFormats(t *testing.T) {
	f := newFake(t)
	code, out, errs := run(t, f, false, "search", "venv", "--k", "3", "--explain")
	golden(t, "search-explain.golden", out)
	if code != 0 {
		t.Errorf("table: exit %d %s", code, errs)
	}
	code, out, _ = run(t, f, false, "search", "venv", "--format", "json")
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil || v["result_count"] != float64(1) {
		t.Errorf("--format json: exit %d, %v: %q", code, err, out)
	}
	code, out, _ = run(t, f, false, "search", "venv", "--format", "toon")
	if code != 0 || !strings.HasPrefix(out, "results[1]{rank,url}:") {
		t.Errorf("--format toon: exit %d %q", code, out)
	}
}

// --keep-history and --keep-generated ask for history=keep and generated=keep, each
// only its own field; without them the fields are left to the service's default
// (demote).
func TestSearchKeepFlags(t *testing.T) {
	f := newFake(t)
	for _, c := range []struct {
		args               []string
		history, generated any
	}{
		{[]string{"search", "venv", "--keep-history"}, "keep", nil},
		{[]string{"search", "venv", "--keep-history", "--format", "toon"}, "keep", nil},
		{[]string{"search", "venv", "--keep-generated"}, nil, "keep"},
		{[]string{"search", "venv", "--keep-generated", "--keep-history"}, "keep", "keep"},
		{[]string{"search", "venv"}, nil, nil},
	} {
		if code, _, errs := run(t, f, false, c.args...); code != 0 {
			t.Fatalf("%v: exit %d %s", c.args, code, errs)
		}
		body := f.search.Load()
		if body == nil || (*body)["history"] != c.history || (*body)["generated"] != c.generated {
			t.Errorf("%v: search body %v, want history %v and generated %v", c.args, body, c.history, c.generated)
		}
	}
}

func TestExitCodesAndMessages(t *testing.T) {
	f := newFake(t)
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"search"}, ExitUsage, "want the query"},
		{[]string{"search", "x", "--k", "0x"}, ExitUsage, "invalid argument"},
		{[]string{"search", "x", "--k", "500"}, ExitUsage, "--k: want 1..100"},
		{[]string{"search", "x", "--k", "0"}, ExitUsage, "--k: want 1..100, got 0"},
		{[]string{"search", "x", "--format", "yaml"}, ExitUsage, "--format"},
		{[]string{"search", "x", "--mmr", "3"}, ExitUsage, "--mmr"},
		{[]string{"search", "  "}, ExitUsage, "empty"},
		{[]string{"crawl", "ftp://a.example/"}, ExitUsage, "not an http(s) URL"},
		{[]string{"crawl", "https://a.example/", "--max-pages", "-5"}, ExitUsage, "--max-pages"},
		{[]string{"crawl", "https://a.example/", "--include", "("}, ExitUsage, "not a regular expression"},
		{[]string{"crawl", "https://a.example/", "--progress", "fancy"}, ExitUsage, "--progress"},
		{[]string{"crawl", "https://a.example/", "--nope"}, ExitUsage, "unknown flag: --nope"},
		{[]string{"docs", "list", "--limit", "0"}, ExitUsage, "--limit"},
		{[]string{"docs", "delete"}, ExitUsage, "document ids"},
		{[]string{"docs", "delete", "abc", "--domain", "a.example"}, ExitUsage, "not both"},
		{[]string{"docs", "list", "--domain", "127.0.0.1:8099"}, ExitUsage, "give --domain 127.0.0.1"},
		{[]string{"docs", "delete", "--domain", "http://127.0.0.1:8099/library/"}, ExitUsage, "give --domain 127.0.0.1"},
		{[]string{"docs", "delete", "--domain", "[::1]:8099"}, ExitUsage, "give --domain ::1"},
		{[]string{"status", "--search-url", "localhost:8080"}, ExitUsage, "--search-url"},
		{[]string{"search", "x", "--search-url", "http://127.0.0.1:8080/api/v1/"}, ExitUsage, "base URL, without /api/..., e.g. http://127.0.0.1:8080"},
		{[]string{"status", "--kg-url", "http://127.0.0.1:8088/api"}, ExitUsage, "e.g. http://127.0.0.1:8088"},
		{[]string{"status", "--crawler-url", "https://api.example.com/kgs/api/v1/crawls"}, ExitUsage, "e.g. https://api.example.com/kgs (see"},
		{[]string{"nosuchcommand"}, ExitUsage, "unknown command"},
	}
	for _, c := range cases {
		code, _, errs := run(t, f, false, c.args...)
		if code != c.code || !strings.Contains(errs, c.msg) {
			t.Errorf("kgs %v: exit %d %q, want %d with %q", c.args, code, errs, c.code, c.msg)
		}
	}
	if n := f.requests.Load(); n != 0 {
		t.Errorf("bad command lines sent %d requests", n)
	}

	// The chunk id a search result shows reads that chunk.
	code, out, errs := run(t, f, false, "docs", "get", "42")
	var ch apiclient.Chunk
	if err := json.Unmarshal([]byte(out), &ch); code != 0 || err != nil || ch.URL != "https://a.example/x" || ch.StartOffset != 10 {
		t.Errorf("docs get CHUNK: exit %d, %v, %q %s", code, err, out, errs)
	}
	code, _, errs = run(t, f, false, "docs", "get", "nosuch")
	if code != ExitNotFound || !strings.Contains(errs, "document nosuch not found") {
		t.Errorf("docs get unknown: exit %d %q", code, errs)
	}
	code, _, errs = run(t, f, false, "crawl", "https://a.example/", "--api-key", "wrong-key-0123456789")
	if code != ExitAuth || !strings.Contains(errs, "401") || !strings.Contains(errs, "Authorization: Bearer") {
		t.Errorf("wrong key: exit %d %q, want 3 with the service's message", code, errs)
	}
	f.srv.Close()
	code, _, errs = run(t, f, false, "search", "x")
	if code != ExitUnreachable || !strings.Contains(errs, "unreachable") || !strings.Contains(errs, "KGS_SEARCH_URL") {
		t.Errorf("service down: exit %d %q", code, errs)
	}
}

// TestDocsDeleteDomain: kgs asks again while documents are left and prints
// the running count.
func TestDocsDeleteDomain(t *testing.T) {
	code, out, errs := run(t, newFake(t), false, "docs", "delete", "--domain", "A.example")
	want := "deleted 2 documents of a.example so far\ndeleted 4 documents of a.example so far\ndeleted 5 documents of a.example\n"
	if code != 0 || out != want {
		t.Errorf("docs delete --domain: exit %d, out %q, err %q; want out %q", code, out, errs, want)
	}
}

func TestCompletion(t *testing.T) {
	f := newFake(t)
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		code, out, errs := run(t, f, false, "completion", shell)
		if code != 0 || !strings.Contains(out, "kgs") || len(out) < 500 {
			t.Errorf("completion %s: exit %d, %d bytes, %s", shell, code, len(out), errs)
		}
	}
}

// TestMCPOnStdio speaks MCP to `kgs mcp` through its stdin and stdout.
func TestMCPOnStdio(t *testing.T) {
	f := newFake(t)
	ctx, inW, outR, stop := startMCP(t, f)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"q": "venv"}})
	if err != nil || res.IsError || !strings.HasPrefix(res.Content[0].(*mcp.TextContent).Text, "results[1]{rank,url}:") {
		t.Errorf("search over stdio: %v %+v", err, res)
	}
	cs.Close()
	stop()
}

// startMCP runs `kgs mcp` against f with pipes for its stdin (inW) and stdout
// (outR); stop closes its input, cancels ctx and checks how it ended.
func startMCP(t *testing.T, f *fake) (ctx context.Context, inW *io.PipeWriter, outR *io.PipeReader, stop func()) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	env := map[string]string{"KGS_SEARCH_URL": f.srv.URL, "KGS_API_KEY": key}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"mcp"}, IO{In: inR, Out: outW, Err: io.Discard, Getenv: func(k string) string { return env[k] }})
		outW.Close()
	}()
	return ctx, inW, outR, func() {
		t.Helper()
		inW.Close()
		cancel()
		if code := <-done; code != 0 && code != ExitError {
			t.Errorf("kgs mcp exit %d", code)
		}
	}
}

// TestMCPOnStdioRefusesDuplicateKeys: `kgs mcp` answers a message that gives a
// key twice with the JSON-RPC Invalid Request error of the HTTP endpoint (here
// with the call's id, so the client's call ends) instead of searching for the
// last value, and answers the next message.
func TestMCPOnStdioRefusesDuplicateKeys(t *testing.T) {
	f := newFake(t)
	_, inW, outR, stop := startMCP(t, f)
	out := bufio.NewReader(outR)
	exchange := func(msg string) string {
		t.Helper()
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(msg, `"method":"notifications/`) {
			return ""
		}
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("after %s: %v", msg, err)
		}
		return line
	}
	exchange(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	exchange(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	got := exchange(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"venv","q":"rm -rf"}}}`)
	want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"params.arguments.q is given twice in one object; send it once","data":{"field":"params.arguments.q"}}}` + "\n"
	if got != want {
		t.Errorf("a call giving q twice: got %s want %s", got, want)
	}
	if f.search.Load() != nil {
		t.Errorf("the refused call searched for %v", *f.search.Load())
	}
	if got := exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"q":"venv"}}}`); !strings.Contains(got, `"id":2,"result"`) ||
		f.search.Load() == nil || (*f.search.Load())["q"] != "venv" {
		t.Errorf("the call after the refusal: %s", got)
	}
	stop()
}

// TestSummaryNamesWhyPagesWereDeleted: the summary line says why stored
// versions were removed, as it does for failures.
func TestSummaryNamesWhyPagesWereDeleted(t *testing.T) {
	st := &apiclient.CrawlStatus{ID: "j", Status: "done"}
	st.Counters = apiclient.Counters{Stored: 3, Deleted: 3, DeletedBy: map[string]int64{"noindex": 1, "http_404": 2}}
	if got := summaryLine(st); !strings.Contains(got, "3 deleted (http_404: 2, noindex: 1), 0 empty") {
		t.Errorf("summary: %q", got)
	}
	var c apiclient.Counters
	c.Add(apiclient.Event{Type: "page", Outcome: "deleted", Reason: "redirect"})
	if c.Deleted != 1 || c.DeletedBy["redirect"] != 1 {
		t.Errorf("a deleted page event: got %+v", c)
	}
}

// TestDocsListNextPageKeepsTheFilter: the "more:" line of a filtered list is a
// command that lists the next page of the same host with the same page size.
func TestDocsListNextPageKeepsTheFilter(t *testing.T) {
	var queries []string
	docs := []string{"d1", "d2", "d3", "d4", "d5"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/documents", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		queries = append(queries, q.Encode())
		if q.Get("domain") != "a.example" {
			fmt.Fprint(w, `{"documents":[],"next_after":""}`)
			return
		}
		var page []apiclient.Document
		for _, id := range docs {
			if id > q.Get("after") && len(page) < 2 {
				page = append(page, apiclient.Document{ID: id, URL: "https://a.example/" + id, Domain: "a.example"})
			}
		}
		next := ""
		if len(page) == 2 && page[1].ID != docs[len(docs)-1] {
			next = page[1].ID
		}
		_ = json.NewEncoder(w).Encode(apiclient.DocumentPage{Documents: page, NextAfter: next})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f := &fake{srv: srv}

	args := []string{"docs", "list", "--domain", "a.example", "--limit", "2"}
	var seen []string
	for range len(docs) {
		code, out, errs := run(t, f, false, args...)
		if code != 0 {
			t.Fatalf("kgs %v: exit %d %s", args, code, errs)
		}
		for _, l := range strings.Split(out, "\n") {
			if fs := strings.Fields(l); len(fs) > 0 && strings.HasPrefix(fs[0], "d") && len(fs[0]) == 2 {
				seen = append(seen, fs[0])
			}
		}
		i := strings.Index(out, "more: kgs ")
		if i < 0 {
			break
		}
		args = strings.Fields(strings.TrimSpace(out[i+len("more: kgs "):]))
	}
	if got := strings.Join(seen, ","); got != "d1,d2,d3,d4,d5" {
		t.Errorf("following the more: lines listed %s, want d1..d5 (requests %q)", got, queries)
	}
	if got := nextPageCommand("a b", 50, "x'y"); got != `kgs docs list --domain 'a b' --after 'x'\''y'` {
		t.Errorf("quoting: %s", got)
	}
}

// TestServiceRefusalIsNotSentToTheHelp: a request the service refuses with a
// 400 exits 2 with the service's reason, without pointing at kgs --help (which
// knows nothing of blocklists or crawl limits); a bad flag still does.
func TestServiceRefusalIsNotSentToTheHelp(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(400)
		fmt.Fprint(w, `{"title":"invalid request","status":400,"detail":"a.example is on the blocklist","field":"url"}`)
	}))
	t.Cleanup(srv.Close)
	f := &fake{srv: srv}
	code, _, errs := run(t, f, false, "crawl", "https://a.example/")
	if code != ExitUsage || !strings.Contains(errs, "a.example is on the blocklist") || strings.Contains(errs, "--help") {
		t.Errorf("service 400: exit %d %q, want 2 with the reason and no pointer to --help", code, errs)
	}
	code, _, errs = run(t, f, false, "crawl", "https://a.example/", "--max-pages", "-1")
	if code != ExitUsage || !strings.Contains(errs, "(see kgs --help)") {
		t.Errorf("bad flag: exit %d %q, want 2 pointing at --help", code, errs)
	}
}

// TestIdenticalCrawlConflict: the crawler's 409 for a crawl identical to
// one queued or running is printed with the job it names and the commands
// that follow or cancel it; kgs exits 1.
func TestIdenticalCrawlConflict(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.Header().Set("Location", "/api/v1/crawls/job7")
		w.WriteHeader(409)
		fmt.Fprint(w, `{"title":"conflict","status":409,"detail":"an identical crawl is already running: job job7 (status at /api/v1/crawls/job7) has the same start URL"}`)
	}))
	t.Cleanup(srv.Close)
	code, out, errs := run(t, &fake{srv: srv}, false, "crawl", "https://a.example/", "--wait")
	want := "kgs: crawler: 409: an identical crawl is already running: job job7 (status at /api/v1/crawls/job7) has the same start URL\n" +
		"follow it: kgs job job7 --wait; or cancel it (kgs job job7 --cancel) and start the crawl again\n"
	if code != ExitError || errs != want || out != "" {
		t.Errorf("got exit %d, stdout %q, stderr %q; want exit %d and stderr %q", code, out, errs, ExitError, want)
	}
}

// TestCrawlPruneFlag: --prune asks the crawler for a prune crawl; without
// it the request has no prune.
func TestCrawlPruneFlag(t *testing.T) {
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		_ = json.NewDecoder(r.Body).Decode(&b)
		bodies = append(bodies, b)
		w.WriteHeader(202)
		fmt.Fprint(w, `{"id":"job1","status":"queued","url":"https://a.example/"}`)
	}))
	t.Cleanup(srv.Close)
	for _, args := range [][]string{{"crawl", "https://a.example/", "--prune"}, {"crawl", "https://a.example/"}} {
		if code, _, errs := run(t, &fake{srv: srv}, false, args...); code != 0 {
			t.Fatalf("kgs %v: exit %d %s", args, code, errs)
		}
	}
	if len(bodies) != 2 || bodies[0]["prune"] != true || bodies[1]["prune"] != nil {
		t.Errorf("requests: %v, want prune true, then no prune", bodies)
	}
}

// TestProgressDoesNotAddEventsToAStatus: a page finished just before a status
// was read has its event arrive after that status; the line must not count
// it twice, nor show a mix of the two (the line once said 1 stored, 39
// unchanged where the job counted 2 stored, 38 unchanged).
func TestProgressDoesNotAddEventsToAStatus(t *testing.T) {
	var out strings.Builder
	v := &progressView{w: &out, mode: "none", start: time.Now()}
	status := func(stored, unchanged int64) apiclient.Event {
		return apiclient.Event{Type: "progress", Status: &apiclient.CrawlStatus{Counters: apiclient.Counters{Stored: stored, Unchanged: unchanged}}}
	}
	page := func(outcome string) apiclient.Event { return apiclient.Event{Type: "page", Outcome: outcome} }

	v.event(status(0, 1)) // page U finished; its event is on its way
	v.event(page("unchanged"))
	if c := v.c; c.Processed() != 1 || c.Unchanged != 1 {
		t.Errorf("after the status and U's event: %+v, want 1 page (U once)", c)
	}
	v.event(page("stored"))
	v.event(page("unchanged"))
	if c := v.c; c.Processed() != 3 || c.Stored != 1 || c.Unchanged != 2 {
		t.Errorf("after two more events: %+v, want 3 pages: 1 stored, 2 unchanged", c)
	}
	v.event(status(2, 2)) // the job's exact counters, ahead of the events
	if c := v.c; c.Stored != 2 || c.Unchanged != 2 {
		t.Errorf("after a status ahead of the events: %+v, want the status's 2 stored, 2 unchanged", c)
	}
}

// TestProgressETA: the progress line's ETA is an upper bound in whole seconds,
// "<1s" under a second (it read "<=0s"), "finishing" once the page budget is
// used up while the job still runs, and "?" before any page.
func TestProgressETA(t *testing.T) {
	for _, tc := range []struct {
		stored, maxPages int64
		elapsed          time.Duration
		want             string
	}{
		{0, 10, time.Second, "ETA ?"},
		{4, 10, 2 * time.Second, "ETA <=3s"},     // 2 pages/s, 6 left
		{4, 5, time.Second, "ETA <1s"},           // 4 pages/s, 1 left: 0.25 s
		{5, 5, 4 * time.Second, "ETA finishing"}, // budget used, still running
	} {
		v := &progressView{start: time.Now().Add(-tc.elapsed), maxPages: tc.maxPages, c: apiclient.Counters{Stored: tc.stored}}
		if got := v.line(false); !strings.HasSuffix(got, tc.want) {
			t.Errorf("%d of %d pages after %s: %q, want it to end with %q", tc.stored, tc.maxPages, tc.elapsed, got, tc.want)
		}
	}
	v := &progressView{start: time.Now().Add(-time.Second), maxPages: 5, c: apiclient.Counters{Stored: 5}}
	if got := v.line(true); !strings.HasSuffix(got, "ETA 0s") {
		t.Errorf("the final line: %q, want ETA 0s", got)
	}
}
