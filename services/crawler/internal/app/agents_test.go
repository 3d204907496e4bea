package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgsearch/kgsearch/internal/kgscli"
	"github.com/kgsearch/kgsearch/pkg/apiclient"
	"github.com/kgsearch/kgsearch/pkg/mcpserver"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
	"github.com/kgsearch/kgsearch/services/crawler/internal/testsite"
)

const agentKey = "agents-test-key-0123456789"

// startCrawler runs the whole crawler service (real MariaDB, the embeddings API
// faked, kg answering every ingest) with KGS_API_KEYS set, and returns its URL.
func startCrawler(t *testing.T, site *testsite.Site) string {
	t.Helper()
	kg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"document_id":"x"}`))
	}))
	t.Cleanup(kg.Close)
	return runService(t, map[string]string{
		"KGS_MARIADB_DSN": freshDatabase(t), "KGS_KG_URL": kg.URL, "CRAWLER_ALLOW_HOSTS": site.Addr(),
		"KGS_API_KEYS": agentKey,
	})
}

// TestMCPCrawlOnTheRealCrawler crawls the test site through the MCP crawl tool,
// receiving progress notifications driven by the crawl's events, then reads a
// stored chunk back with get_document.
func TestMCPCrawlOnTheRealCrawler(t *testing.T) {
	site := testsite.New(testsite.Options{})
	t.Cleanup(site.Close)
	base := startCrawler(t, site)
	crawler := apiclient.NewCrawler(base, nil, agentKey)
	ctx := context.Background()

	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(mcpserver.Deps{Crawler: crawler}).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	var mu sync.Mutex
	var notes []*mcp.ProgressNotificationParams
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			notes = append(notes, r.Params)
			mu.Unlock()
		}}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	// Bad arguments: a tool error naming the argument, and no job created.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "crawl", Arguments: map[string]any{
		"url": site.SeedURL(), "include": []string{"(unclosed"}}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "include") {
		t.Fatalf("crawl with a bad include: got %v %+v, want a tool error naming include", err, res)
	}
	t.Logf("bad include: %s", res.Content[0].(*mcp.TextContent).Text)
	if n := countJobs(t, base); n != 0 {
		t.Fatalf("a rejected crawl created %d jobs", n)
	}

	params := &mcp.CallToolParams{Name: "crawl", Arguments: map[string]any{
		"url": site.SeedURL(), "max_depth": 1, "use_sitemap": false, "tags": []string{"site"}, "format": "json"}}
	params.SetProgressToken(7)
	res, err = cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("crawl: %v %+v", err, res)
	}
	var out struct {
		Job apiclient.CrawlStatus `json:"job"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out); err != nil {
		t.Fatal(err)
	}
	want := site.CanonicalPages(testsite.Crawl{MaxDepth: 1, RespectRobots: true, Canon: canon.DefaultOptions()})
	if out.Job.Status != "done" || out.Job.Counters.Stored != int64(len(want)) || out.Job.Counters.Chunks == 0 {
		t.Fatalf("crawl summary: %s, %d stored, %d chunks; want done with %d stored", out.Job.Status, out.Job.Counters.Stored, out.Job.Counters.Chunks, len(want))
	}
	final := float64(out.Job.Counters.Processed())
	waitFor(t, 10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(notes) > 0 && notes[len(notes)-1].Progress == final
	})
	mu.Lock()
	t.Logf("%d progress notifications, last %+v", len(notes), *notes[len(notes)-1])
	for i, n := range notes {
		if n.ProgressToken != float64(7) || (i > 0 && n.Progress <= notes[i-1].Progress) {
			t.Errorf("notification %d: %+v, want token 7 and growing progress", i, n)
		}
	}
	mu.Unlock()

	// crawl_status agrees; get_document reads a chunk back with its offsets.
	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "crawl_status", Arguments: map[string]any{"id": out.Job.ID, "format": "json"}})
	var status apiclient.CrawlStatus
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &status); err != nil || status.Counters.Stored != out.Job.Counters.Stored {
		t.Errorf("crawl_status: %v %+v", err, status)
	}
	t.Logf("chunks: summary %d, crawl_status %d", out.Job.Counters.Chunks, status.Counters.Chunks)
	page, err := crawler.Documents(ctx, "", "", 1)
	if err != nil || len(page.Documents) != 1 {
		t.Fatalf("documents: %v", err)
	}
	doc, err := crawler.Document(ctx, page.Documents[0].ID, true)
	if err != nil || len(doc.Chunks) == 0 {
		t.Fatalf("document: %v", err)
	}
	c0 := doc.Chunks[0]
	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_document", Arguments: map[string]any{"id": c0.ID, "format": "json"}})
	var chunk apiclient.Chunk
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &chunk); err != nil || res.IsError ||
		chunk.Text != c0.Text || chunk.StartOffset != c0.StartOffset || chunk.EndOffset != c0.EndOffset || chunk.URL != doc.URL {
		t.Errorf("get_document chunk %s: got %+v (%v), want chunk 0 of %s", c0.ID, chunk, err, doc.URL)
	}
	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_document", Arguments: map[string]any{"id": doc.ID, "max_chunks": 1, "format": "json"}})
	var gotDoc apiclient.Document
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &gotDoc); err != nil || gotDoc.URL != doc.URL || len(gotDoc.Chunks) != 1 {
		t.Errorf("get_document document: %v %+v", err, gotDoc)
	}
	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_document", Arguments: map[string]any{"id": "123456789"}})
	if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.Contains(text, "not found") {
		t.Errorf("get_document of an unknown chunk: got %q, want a not-found tool error", text)
	}
}

// countJobs counts the crawler's jobs.
func countJobs(t *testing.T, base string) int {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/crawls")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Crawls []json.RawMessage `json:"crawls"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return len(out.Crawls)
}

// kgs runs the command line in process against base (the crawler) with key.
func kgs(t *testing.T, base, key string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb strings.Builder
	env := map[string]string{"KGS_CRAWLER_URL": base, "KGS_API_KEY": key}
	code := kgscli.Main(context.Background(), args, kgscli.IO{In: strings.NewReader(""), Out: &out, Err: &errb,
		Getenv: func(k string) string { return env[k] }})
	return code, out.String(), errb.String()
}

// TestCLIOnTheRealCrawler crawls the test site with `kgs crawl --wait`: the
// progress lines (fed by the crawl's events) end at the job's final counts;
// then documents are listed, read and deleted; a wrong key changes nothing.
func TestCLIOnTheRealCrawler(t *testing.T) {
	site := testsite.New(testsite.Options{})
	t.Cleanup(site.Close)
	base := startCrawler(t, site)

	code, _, errs := kgs(t, base, "wrong-key-0123456789", "crawl", site.SeedURL(), "--wait")
	if code != kgscli.ExitAuth || !strings.Contains(errs, "401") {
		t.Fatalf("wrong key: exit %d %q, want 3 with the crawler's 401", code, errs)
	}
	if n := countJobs(t, base); n != 0 {
		t.Fatalf("a refused crawl created %d jobs", n)
	}

	code, out, errs := kgs(t, base, agentKey, "crawl", site.SeedURL(), "--depth", "1", "--no-sitemap", "--tags", "site",
		"--wait", "--format", "json")
	if code != 0 {
		t.Fatalf("kgs crawl: exit %d: %s", code, errs)
	}
	var st apiclient.CrawlStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("kgs crawl --format json: %v\n%s", err, out)
	}
	want := site.CanonicalPages(testsite.Crawl{MaxDepth: 1, RespectRobots: true, Canon: canon.DefaultOptions()})
	if st.Status != "done" || st.Counters.Stored != int64(len(want)) {
		t.Fatalf("crawl: %s with %d stored, want done with %d", st.Status, st.Counters.Stored, len(want))
	}
	var last string
	for _, l := range strings.Split(errs, "\n") {
		if strings.HasPrefix(l, "progress: ") {
			last = l
		}
	}
	c := st.Counters
	wantLast := fmt.Sprintf("progress: %d pages: %d stored, %d unchanged, %d failed, %d skipped; %d chunks;",
		c.Processed(), c.Stored, c.Unchanged, c.Failed, c.SkippedTotal(), c.Chunks)
	if !strings.HasPrefix(last, wantLast) {
		t.Errorf("last progress line %q, want it to start %q", last, wantLast)
	}
	t.Logf("last progress line: %s", last)

	// With keys configured, reads need one too.
	if code, _, errs := kgs(t, base, "", "docs", "list"); code != kgscli.ExitAuth || !strings.Contains(errs, "401") {
		t.Errorf("docs list without a key: exit %d %q, want 3 with the crawler's 401", code, errs)
	}
	code, out, errs = kgs(t, base, agentKey, "docs", "list", "--format", "json", "--limit", "1000")
	var page apiclient.DocumentPage
	if err := json.Unmarshal([]byte(out), &page); code != 0 || err != nil || len(page.Documents) != len(want) {
		t.Fatalf("docs list: exit %d %v, %d documents, want %d (%s)", code, err, len(page.Documents), len(want), errs)
	}
	id := page.Documents[0].ID
	if code, out, _ := kgs(t, base, agentKey, "docs", "get", id, "--chunks"); code != 0 || !strings.Contains(out, `"start_offset"`) {
		t.Errorf("docs get --chunks: exit %d %q", code, out)
	}
	if code, _, errs := kgs(t, base, "", "docs", "delete", id); code != kgscli.ExitAuth {
		t.Errorf("docs delete without a key: exit %d %q, want 3", code, errs)
	}
	if code, out, errs := kgs(t, base, agentKey, "docs", "delete", id); code != 0 || !strings.Contains(out, "deleted "+id) {
		t.Errorf("docs delete: exit %d %q %q", code, out, errs)
	}
	if code, _, errs := kgs(t, base, agentKey, "docs", "get", id); code != kgscli.ExitNotFound || !strings.Contains(errs, "not found") {
		t.Errorf("docs get after delete: exit %d %q, want 4", code, errs)
	}
}
