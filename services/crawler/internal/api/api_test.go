package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/internal/testenv"
	"github.com/kgsearch/kgsearch/pkg/embed/embedtest"
	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
	"github.com/kgsearch/kgsearch/services/crawler/internal/chunk"
	"github.com/kgsearch/kgsearch/services/crawler/internal/engine"
	"github.com/kgsearch/kgsearch/services/crawler/internal/fetch"
	"github.com/kgsearch/kgsearch/services/crawler/internal/netguard"
	"github.com/kgsearch/kgsearch/services/crawler/internal/pipeline"
)

func freshDatabase(t *testing.T) string {
	t.Helper()
	return testenv.FreshMariaDB(t)
}

type fixture struct {
	srv *httpserver.Server
	st  *store.Store
	eng *engine.Engine
	url string // API base
}

// newFixture runs the API with an engine whose SSRF guard allows allow.
func newFixture(t *testing.T, allow []string) *fixture {
	t.Helper()
	return newFixtureOn(t, freshDatabase(t), allow)
}

// newFixtureOn is newFixture on the database dsn: two fixtures on one
// database are two crawler processes sharing their job table.
func newFixtureOn(t *testing.T, dsn string, allow []string) *fixture {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{DSN: dsn, Model: store.Model{Name: embedtest.ModelName, Dims: 32}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	g, err := netguard.New(netguard.Options{Allow: allow, ResponseHeaderTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	f, err := fetch.New(fetch.Config{UserAgent: "kgsearch-test/1.0", Guard: g, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := chunk.New(chunk.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	p := pipeline.New(st, embedtest.NewHash(32), pipeline.ChunkSplitter{S: sp}, "256/32")
	srv := httpserver.New("crawler", httpserver.Config{Addr: "127.0.0.1:0"}, slogDiscard())
	eng := engine.New(engine.Config{Poll: 50 * time.Millisecond, Limits: engine.Limits{MaxPages: 500, MaxDepth: 10}, Canon: canon.DefaultOptions()},
		engine.Deps{Store: st, Fetcher: f, Guard: g, Indexer: p}, nil, srv.Registry())
	a := New(srv, Deps{Crawls: eng, Pages: eng, Jobs: st, Documents: st, Blocklist: st, BlocklistChanged: eng.InvalidateBlocklist})
	a.EventPoll = 50 * time.Millisecond
	a.Register()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = eng.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	hs := httptest.NewServer(srv.Engine())
	t.Cleanup(hs.Close)
	return &fixture{srv: srv, st: st, eng: eng, url: hs.URL}
}

func (f *fixture) do(t *testing.T, method, path, body string) (int, map[string]any, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, f.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
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
			t.Fatalf("%s %s: response is not a JSON object: %s", method, path, data)
		}
	}
	return resp.StatusCode, out, resp.Header
}

func TestCreateCrawlRejectsBadBodies(t *testing.T) {
	f := newFixture(t, nil)
	for _, tc := range []struct {
		name, body, field string
	}{
		{"empty body", ``, "body"},
		{"not JSON", `{url:`, "body"},
		{"missing url", `{}`, "url"},
		{"blank url", `{"url":"  "}`, "url"},
		{"ftp url", `{"url":"ftp://example.com/"}`, "url"},
		{"relative url", `{"url":"/docs/"}`, "url"},
		{"url not a string", `{"url":42}`, "url"},
		{"unknown field", `{"url":"https://example.com/","maxpages":3}`, "maxpages"},
		{"max_pages negative", `{"url":"https://example.com/","max_pages":-1}`, "max_pages"},
		{"max_pages above cap", `{"url":"https://example.com/","max_pages":501}`, "max_pages"},
		{"max_pages not a number", `{"url":"https://example.com/","max_pages":"ten"}`, "max_pages"},
		{"max_depth negative", `{"url":"https://example.com/","max_depth":-1}`, "max_depth"},
		{"max_depth above cap", `{"url":"https://example.com/","max_depth":11}`, "max_depth"},
		{"bad include regexp", `{"url":"https://example.com/","include":["("]}`, "include[0]"},
		{"bad exclude regexp", `{"url":"https://example.com/","exclude":["ok","[z-a]"]}`, "exclude[1]"},
		{"empty tag", `{"url":"https://example.com/","tags":[""]}`, "tags[0]"},
		{"domain with path", `{"url":"https://example.com/","allowed_domains":["example.com/x"]}`, "allowed_domains[0]"},
		{"seed outside domains", `{"url":"https://example.com/","allowed_domains":["example.org"]}`, "allowed_domains"},
		{"respect_robots not bool", `{"url":"https://example.com/","respect_robots":"yes"}`, "respect_robots"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body, _ := f.do(t, http.MethodPost, "/api/v1/crawls", tc.body)
			if code != http.StatusBadRequest {
				t.Fatalf("status: got %d, want 400 (%v)", code, body)
			}
			if body["field"] != tc.field {
				t.Errorf("field: got %v, want %q (detail %q)", body["field"], tc.field, body["detail"])
			}
			if d, _ := body["detail"].(string); d == "" {
				t.Errorf("detail is empty; it must say what to fix")
			}
		})
	}
}

// TestCreateCrawlRefusesDuplicateKeys: a key given twice in the body of POST
// /api/v1/crawls is a 400 naming its path, not the last value crawled silently,
// and no job is created. The URLs are loopback ones the guard refuses, so a
// missed duplicate fails on the detail without fetching anything.
func TestCreateCrawlRefusesDuplicateKeys(t *testing.T) {
	f := newFixture(t, nil)
	for _, tc := range []struct{ name, body, field string }{
		{"url", `{"url":"http://127.0.0.1:1/a","url":"http://127.0.0.1:1/b"}`, "url"},
		{"tags", `{"url":"http://127.0.0.1:1/","tags":["a"],"max_pages":2,"tags":["b"]}`, "tags"},
		{"url in other case", `{"url":"http://127.0.0.1:1/a","URL":"http://127.0.0.1:1/b"}`, "url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body, _ := f.do(t, http.MethodPost, "/api/v1/crawls", tc.body)
			if code != http.StatusBadRequest || body["field"] != tc.field {
				t.Fatalf("got %d %v, want 400 naming %s", code, body, tc.field)
			}
			if d, _ := body["detail"].(string); !strings.Contains(d, "given twice") {
				t.Errorf("detail %q does not say the key is given twice", d)
			}
		})
	}
	code, list, _ := f.do(t, http.MethodGet, "/api/v1/crawls", "")
	if items, ok := list["crawls"].([]any); !ok || code != http.StatusOK || len(items) != 0 {
		t.Errorf("jobs after refused bodies: %d %v, want none", code, list)
	}
}

func TestSSRFRefusedThroughAPI(t *testing.T) {
	f := newFixture(t, nil) // nothing allowed
	targets := []string{
		"http://127.0.0.1:8099/", "http://127.1/", "http://2130706433/", "http://0x7f000001/", "http://0177.0.0.1/",
		"http://0x7f.1/", "http://localhost/", "http://LOCALHOST./", "http://sub.localhost/", "http://[::1]/",
		"http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/", "http://10.0.0.1/", "http://172.16.5.4/",
		"http://192.168.1.1/", "http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/", "http://[fd00::1]/",
		"http://0.0.0.0/", "http://[::]/", "http://100.64.0.1/", "http://224.0.0.1/", "http://[ff02::1]/",
		"http://017700000001/", "http://0x7f.0x0.0x0.0x1/", "https://127.0.0.1:443/",
	}
	for _, target := range targets {
		t.Run(target, func(t *testing.T) {
			for _, ep := range []string{"/api/v1/crawls", "/api/v1/pages"} {
				body, _ := json.Marshal(map[string]string{"url": target})
				code, resp, _ := f.do(t, http.MethodPost, ep, string(body))
				if code != http.StatusBadRequest || resp["field"] != "url" {
					t.Errorf("POST %s: got %d field %v, want 400 naming url (%v)", ep, code, resp["field"], resp["detail"])
					continue
				}
				if d, _ := resp["detail"].(string); !strings.Contains(d, "CRAWLER_ALLOW_HOSTS") || !strings.Contains(d, "an internal address: ") ||
					strings.Contains(d, "netguard") {
					t.Errorf("POST %s detail %q: want what is refused and why, and a hint at CRAWLER_ALLOW_HOSTS, without internal names", ep, d)
				}
			}
		})
	}
	jobs, err := f.st.ListJobs(context.Background(), "", 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 0 {
		t.Errorf("jobs created for refused targets: got %d, want 0", len(jobs))
	}
}

func docsSite(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	page := func(title, body string, links ...string) string {
		var l strings.Builder
		for _, x := range links {
			fmt.Fprintf(&l, `<li><a href="%s">%s</a></li>`, x, x)
		}
		return fmt.Sprintf(`<!doctype html><html lang="en"><head><title>%s</title></head><body><nav><a href="/">Home</a></nav>
<main><h1>%s</h1><p>%s The library reference explains every module in detail, with examples that show how the functions behave.</p>
<h2>Details</h2><p>More words about %s so that the extractor keeps this text as the main content of the page.</p><ul>%s</ul></main></body></html>`,
			title, title, body, title, l.String())
	}
	pages := map[string]string{
		"/":         page("Docs home", "Start here.", "/json", "/http"),
		"/json":     page("json module", "Encode and decode JSON.", "/"),
		"/http":     page("http module", "HTTP clients and servers.", "/"),
		"/notfound": "",
		// A page that JavaScript renders in the browser, linked from nowhere.
		"/app": `<!doctype html><html><head><title>App</title><script type="module" src="/main.js"></script></head><body><div id="app"></div></body></html>`,
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		p, ok := pages[r.URL.Path]
		if !ok || p == "" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, p)
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func TestCrawlLifecycleThroughAPI(t *testing.T) {
	site := docsSite(t)
	f := newFixture(t, []string{strings.TrimPrefix(site.URL, "http://")})

	code, job, hdr := f.do(t, http.MethodPost, "/api/v1/crawls", fmt.Sprintf(`{"url":%q,"max_depth":1,"tags":["docs"],"use_sitemap":false}`, site.URL+"/"))
	if code != http.StatusAccepted {
		t.Fatalf("POST /crawls: got %d, want 202 (%v)", code, job)
	}
	id, _ := job["id"].(string)
	if loc := hdr.Get("Location"); loc != "/api/v1/crawls/"+id {
		t.Errorf("Location: got %q, want /api/v1/crawls/%s", loc, id)
	}

	// The event stream ends with a summary of the finished job.
	resp, err := http.Get(f.url + "/api/v1/crawls/" + id + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("events Content-Type: got %q, want text/event-stream", ct)
	}
	var types []string
	var summary map[string]any
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "event: ") {
			types = append(types, strings.TrimPrefix(line, "event: "))
		}
		if strings.HasPrefix(line, "data: ") && types[len(types)-1] == "summary" {
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &summary); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(types) == 0 || types[len(types)-1] != "summary" {
		t.Fatalf("event types: got %v, want a stream ending with summary", types)
	}
	status := summary["status"].(map[string]any)
	counters := status["counters"].(map[string]any)
	if status["status"] != "done" || counters["stored"] != float64(3) {
		t.Errorf("summary: got status %v with %v stored, want done with 3", status["status"], counters["stored"])
	}

	mresp, err := http.Get(f.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	for _, want := range []string{"kgsearch_crawler_pages_stored_total 3", "kgsearch_crawler_pages_fetched_total 3", "kgsearch_crawler_fetch_duration_seconds_count 3", "kgsearch_crawler_embed_duration_seconds_count 3"} {
		if !strings.Contains(string(metrics), want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	code, got, _ := f.do(t, http.MethodGet, "/api/v1/crawls/"+id, "")
	if code != http.StatusOK || got["status"] != "done" {
		t.Errorf("GET /crawls/%s: got %d %v, want 200 done", id, code, got["status"])
	}
	code, list, _ := f.do(t, http.MethodGet, "/api/v1/crawls", "")
	if code != http.StatusOK || len(list["crawls"].([]any)) != 1 {
		t.Errorf("GET /crawls: got %d with %v, want one job", code, list["crawls"])
	}
	if code, _, _ := f.do(t, http.MethodGet, "/api/v1/crawls/no-such-job", ""); code != http.StatusNotFound {
		t.Errorf("GET unknown job: got %d, want 404", code)
	}

	// Documents: list, get with chunks, delete.
	code, docs, _ := f.do(t, http.MethodGet, "/api/v1/documents?limit=10", "")
	if code != http.StatusOK || len(docs["documents"].([]any)) != 3 {
		t.Fatalf("GET /documents: got %d with %v documents, want 3", code, len(docs["documents"].([]any)))
	}
	jsonID := store.DocumentID(site.URL + "/json")
	code, doc, _ := f.do(t, http.MethodGet, "/api/v1/documents/"+jsonID+"?chunks=true", "")
	if code != http.StatusOK || doc["title"] != "json module" || len(doc["chunks"].([]any)) != int(doc["chunk_count"].(float64)) {
		t.Fatalf("GET document: got %d %v", code, doc)
	}
	c0 := doc["chunks"].([]any)[0].(map[string]any)
	if c0["heading_path"] == nil || c0["end_offset"].(float64) <= c0["start_offset"].(float64) {
		t.Errorf("chunk 0: got %v, want a heading path and offsets", c0)
	}
	// One chunk by id, with its offsets and the document it cites.
	code, ch, _ := f.do(t, http.MethodGet, "/api/v1/chunks/"+c0["id"].(string), "")
	if code != http.StatusOK || ch["text"] != c0["text"] || ch["start_offset"] != c0["start_offset"] ||
		ch["end_offset"] != c0["end_offset"] || ch["document_id"] != jsonID || ch["title"] != "json module" {
		t.Errorf("GET chunk %v: got %d %v, want chunk 0 of %s", c0["id"], code, ch, jsonID)
	}
	if code, p, _ := f.do(t, http.MethodGet, "/api/v1/chunks/abc", ""); code != http.StatusBadRequest || p["field"] != "id" {
		t.Errorf("GET chunk abc: got %d %v, want 400 naming id", code, p)
	}
	if code, _, _ := f.do(t, http.MethodGet, "/api/v1/chunks/12345", ""); code != http.StatusNotFound {
		t.Errorf("GET unknown chunk: got %d, want 404", code)
	}
	if code, _, _ := f.do(t, http.MethodDelete, "/api/v1/documents/"+jsonID, ""); code != http.StatusOK {
		t.Errorf("DELETE document: got %d, want 200", code)
	}
	if code, _, _ := f.do(t, http.MethodGet, "/api/v1/documents/"+jsonID, ""); code != http.StatusNotFound {
		t.Errorf("GET deleted document: got %d, want 404", code)
	}
	if code, _, _ := f.do(t, http.MethodDelete, "/api/v1/documents/"+jsonID, ""); code != http.StatusNotFound {
		t.Errorf("DELETE deleted document: got %d, want 404", code)
	}
	items, err := f.st.OutboxItems(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	deletes := 0
	for _, it := range items {
		if it.DocumentID == jsonID && it.Kind == store.OutboxDelete {
			deletes++
		}
	}
	if deletes != 1 {
		t.Errorf("outbox delete rows for the deleted document: got %d, want 1 (kg must drop its part)", deletes)
	}
}

func TestPageAndBlocklist(t *testing.T) {
	site := docsSite(t)
	f := newFixture(t, []string{"127.0.0.1"})

	// A tag given twice is stored once.
	code, res, _ := f.do(t, http.MethodPost, "/api/v1/pages", fmt.Sprintf(`{"url":%q,"tags":["one","two","one"]}`, site.URL+"/http?utm_source=x#frag"))
	if code != http.StatusOK {
		t.Fatalf("POST /pages: got %d %v, want 200", code, res)
	}
	if res["url"] != site.URL+"/http" || res["title"] != "http module" || res["chunks"].(float64) < 1 || res["id"] != store.DocumentID(site.URL+"/http") {
		t.Errorf("POST /pages: got %v, want the canonical URL, title, id and >= 1 chunk", res)
	}
	// A new page's document is answered with the times it was stored with.
	stored, err := f.st.DocumentByURL(context.Background(), site.URL+"/http")
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := res["document"].(map[string]any)
	if !slices.Equal(stored.Tags, []string{"one", "two"}) || fmt.Sprint(doc["tags"]) != "[one two]" {
		t.Errorf("POST /pages with tags one, two, one: stored %q, answered %v; want [one two]", stored.Tags, doc["tags"])
	}
	for k, want := range map[string]time.Time{"created_at": stored.CreatedAt, "updated_at": stored.UpdatedAt} {
		got, err := time.Parse(time.RFC3339Nano, fmt.Sprint(doc[k]))
		if err != nil || !got.Equal(want) || got.Year() < 2000 {
			t.Errorf("POST /pages on a new page: document.%s = %v, want the stored %s", k, doc[k], want)
		}
	}
	if code, res, _ := f.do(t, http.MethodPost, "/api/v1/pages", fmt.Sprintf(`{"url":%q}`, site.URL+"/notfound")); code != http.StatusUnprocessableEntity {
		t.Errorf("POST /pages for a 404: got %d %v, want 422", code, res)
	}
	if code, res, _ := f.do(t, http.MethodPost, "/api/v1/pages", `{"tags":["x"]}`); code != http.StatusBadRequest || res["field"] != "url" {
		t.Errorf("POST /pages without url: got %d %v, want 400 naming url", code, res)
	}

	if code, res, _ := f.do(t, http.MethodPost, "/api/v1/blocklist", `{"domain":"127.0.0.1","reason":"test"}`); code != http.StatusCreated {
		t.Fatalf("POST /blocklist: got %d %v, want 201", code, res)
	}
	if code, res, _ := f.do(t, http.MethodPost, "/api/v1/blocklist", `{"domain":"bad domain!"}`); code != http.StatusBadRequest || res["field"] != "domain" {
		t.Errorf("POST /blocklist with a bad domain: got %d %v, want 400 naming domain", code, res)
	}
	_, list, _ := f.do(t, http.MethodGet, "/api/v1/blocklist", "")
	if n := len(list["blocklist"].([]any)); n != 1 {
		t.Errorf("GET /blocklist: got %d entries, want 1", n)
	}
	for _, ep := range []string{"/api/v1/pages", "/api/v1/crawls"} {
		code, res, _ := f.do(t, http.MethodPost, ep, fmt.Sprintf(`{"url":%q}`, site.URL+"/json"))
		if code != http.StatusBadRequest || res["field"] != "url" || !strings.Contains(res["detail"].(string), "blocklist") {
			t.Errorf("POST %s to a blocked domain: got %d %v, want 400 naming url and the blocklist", ep, code, res)
		}
	}
	if code, _, _ := f.do(t, http.MethodDelete, "/api/v1/blocklist/127.0.0.1", ""); code != http.StatusNoContent {
		t.Errorf("DELETE /blocklist/127.0.0.1: got %d, want 204", code)
	}
	if code, _, _ := f.do(t, http.MethodDelete, "/api/v1/blocklist/127.0.0.1", ""); code != http.StatusNotFound {
		t.Errorf("DELETE an absent entry: got %d, want 404", code)
	}
	if code, res, _ := f.do(t, http.MethodPost, "/api/v1/pages", fmt.Sprintf(`{"url":%q}`, site.URL+"/json")); code != http.StatusOK {
		t.Errorf("POST /pages after unblocking: got %d %v, want 200", code, res)
	}
}

// TestStartURLMistakes: a start URL (POST /crawls) or page (POST /pages) with
// credentials, a control character, another scheme, no scheme or too many
// characters is a 400 naming url whose detail says what to do, without the
// password, the URL's 5,000 characters or the name of an internal step.
func TestStartURLMistakes(t *testing.T) {
	site := docsSite(t) // a regression would crawl this server, nothing else
	hostPort := strings.TrimPrefix(site.URL, "http://")
	f := newFixture(t, []string{hostPort})
	long := site.URL + "/" + strings.Repeat("x", 5000)
	for _, tc := range []struct{ url, want string }{
		{"http://user:s3cret@" + hostPort + "/json", "URLs with a user name or password are not supported"},
		{"http://s3cret@" + hostPort + "/", "user name or password"},
		{site.URL + "/\u0000", "control character U+0000"},
		{site.URL + "/a\u0007b", "control character U+0007"},
		{"file:///etc/passwd", "use an http:// or https:// URL"},
		{"javascript:alert(1)", "use an http:// or https:// URL"},
		{"data:text/html,hi", "use an http:// or https:// URL"},
		{"ftp://127.0.0.1/", "use an http:// or https:// URL"},
		{hostPort + "/x", "add http:// or https:// in front"},
		{"docs.example.com/guide", "add http:// or https:// in front"},
		{long, fmt.Sprintf("the URL is %d characters long; at most 2048", len(long))},
	} {
		for _, ep := range []string{"/api/v1/crawls", "/api/v1/pages"} {
			body, _ := json.Marshal(map[string]string{"url": tc.url})
			code, res, _ := f.do(t, http.MethodPost, ep, string(body))
			detail, _ := res["detail"].(string)
			if code != http.StatusBadRequest || res["field"] != "url" || !strings.Contains(detail, tc.want) {
				t.Errorf("POST %s %.50q: got %d field %v %q, want 400 naming url saying %q", ep, tc.url, code, res["field"], detail, tc.want)
			}
			for _, bad := range []string{"s3cret", "canonicalize", "first path segment", "xxxxxxxxxx"} {
				if strings.Contains(detail, bad) {
					t.Errorf("POST %s %.50q: detail %q contains %q", ep, tc.url, detail, bad)
				}
			}
		}
	}
	if jobs, err := f.st.ListJobs(context.Background(), "", 100); err != nil || len(jobs) != 0 {
		t.Errorf("jobs created for refused start URLs: %d (%v), want 0", len(jobs), err)
	}
}

// TestIdenticalCrawlRefused: while a crawl is queued or running, POSTing the
// same crawl again (any spelling of its start URL, to either of two crawler
// processes on one database, many at once) answers 409 naming the job;
// exactly one is created. A crawl that differs is created, and once the job
// is cancelled the same crawl may start again.
func TestIdenticalCrawlRefused(t *testing.T) {
	release := make(chan struct{})
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		select { // the crawl stays running until the test ends
		case <-release:
		case <-r.Context().Done():
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(site.Close)
	allow := []string{strings.TrimPrefix(site.URL, "http://")}
	dsn := freshDatabase(t)
	procs := []*fixture{newFixtureOn(t, dsn, allow), newFixtureOn(t, dsn, allow)}
	t.Cleanup(func() { close(release) })

	spec := func(u string, extra string) string {
		return fmt.Sprintf(`{"url":%q,"max_pages":20,"use_sitemap":false%s}`, u, extra)
	}
	spellings := []string{site.URL + "/", site.URL, strings.Replace(site.URL, "http://", "HTTP://", 1) + "/#top", site.URL + "/?utm_source=x"}
	const n = 8
	codes := make([]int, n)
	bodies := make([]map[string]any, n)
	hdrs := make([]http.Header, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			codes[i], bodies[i], hdrs[i] = procs[i%2].do(t, http.MethodPost, "/api/v1/crawls", spec(spellings[i%len(spellings)], ""))
		}()
	}
	close(start)
	wg.Wait()
	winner := ""
	for i, code := range codes {
		if code == http.StatusAccepted {
			if winner != "" {
				t.Fatalf("two identical crawls created: %s and %v", winner, bodies[i]["id"])
			}
			winner, _ = bodies[i]["id"].(string)
		}
	}
	if winner == "" {
		t.Fatalf("no crawl created: %v %v", codes, bodies)
	}
	for i, code := range codes {
		if code == http.StatusAccepted {
			continue
		}
		d, _ := bodies[i]["detail"].(string)
		if code != http.StatusConflict || !strings.Contains(d, "job "+winner) || !strings.Contains(d, "/api/v1/crawls/"+winner) ||
			hdrs[i].Get("Location") != "/api/v1/crawls/"+winner {
			t.Errorf("identical POST %d: got %d %q (Location %q), want 409 naming job %s and its status URL", i, code, d, hdrs[i].Get("Location"), winner)
		}
		// The detail lists every field that makes a different crawl (engine.Spec.Key).
		for _, field := range []string{"url", "max_depth", "max_pages", "allowed_domains", "include", "exclude", "tags",
			"respect_robots", "use_sitemap", "recrawl", "prune"} {
			if !strings.Contains(d, field) {
				t.Errorf("identical POST %d: detail %q does not name %s among the fields that make a different crawl", i, d, field)
			}
		}
	}

	// A crawl that differs in what it crawls is not refused.
	for _, extra := range []string{`,"max_pages":21`, `,"tags":["x"]`, `,"exclude":["/old/"]`, `,"recrawl":true`, `,"prune":true`} {
		body := strings.Replace(spec(site.URL+"/", extra), `"max_pages":20,`, "", strings.Count(extra, "max_pages"))
		if code, resp, _ := procs[0].do(t, http.MethodPost, "/api/v1/crawls", body); code != http.StatusAccepted {
			t.Errorf("POST %s: got %d %v, want 202", body, code, resp["detail"])
		}
	}
	// Cancelled jobs do not block.
	if code, _, _ := procs[1].do(t, http.MethodDelete, "/api/v1/crawls/"+winner, ""); code != http.StatusOK {
		t.Fatalf("cancel: got %d", code)
	}
	if code, resp, _ := procs[0].do(t, http.MethodPost, "/api/v1/crawls", spec(site.URL+"/", "")); code != http.StatusAccepted {
		t.Errorf("the same crawl after the first was cancelled: got %d %v, want 202", code, resp["detail"])
	}
}
