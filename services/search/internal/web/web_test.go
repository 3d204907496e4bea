package web

import (
	"context"
	"fmt"
	"html"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/search/internal/indexer"
	"github.com/kgsearch/kgsearch/services/search/internal/pipeline"
)

// fakeSearch answers every search with resp (or err) and records the request.
type fakeSearch struct {
	mu    sync.Mutex
	last  pipeline.Request
	resp  *pipeline.Response
	err   error
	calls int
}

func (f *fakeSearch) Search(_ context.Context, req pipeline.Request) (*pipeline.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last = req
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	r := *f.resp
	return &r, nil
}

type fakeChunks struct{}

func (fakeChunks) ChunksByIDs(_ context.Context, ids []int64) ([]store.Chunk, error) {
	out := make([]store.Chunk, 0, len(ids))
	for _, id := range ids {
		out = append(out, store.Chunk{ID: id, HeadingPath: []string{"Guide", "Install <b>"}})
	}
	return out, nil
}

type fakeDocs map[string]indexer.Doc

func (d fakeDocs) Doc(id string) (indexer.Doc, bool) { x, ok := d[id]; return x, ok }

type fakeGraph struct{}

func (fakeGraph) Entity(_ context.Context, id string) (*kgapi.Entity, error) {
	if id != "python" {
		return nil, &kgapi.StatusError{Status: http.StatusNotFound, Detail: "no such entity"}
	}
	return &kgapi.Entity{EntityRef: kgapi.EntityRef{ID: "python", Name: "Python", Type: "programming_language"},
		Aliases: []string{"py", "python3"}, Mentions: 9, Documents: 2,
		Relations: []kgapi.Relation{
			{Type: "WRITTEN_IN", Direction: "out", Other: kgapi.EntityRef{ID: "c", Name: "C", Type: "programming_language"}, Weight: 2, Confidence: 0.9},
			{Type: "USES", Direction: "in", Other: kgapi.EntityRef{ID: "django", Name: "Django <x>", Type: "framework"}, Weight: 1, Confidence: 0.8},
		}}, nil
}

func (fakeGraph) Match(_ context.Context, req kgapi.MatchRequest) (*kgapi.MatchResponse, error) {
	return &kgapi.MatchResponse{Chunks: []kgapi.ChunkMatch{
		{ChunkID: "1", DocumentID: "d1", Score: 0.9}, {ChunkID: "2", DocumentID: "d1", Score: 0.5},
		{ChunkID: "3", DocumentID: "elsewhere", Score: 0.4}}}, nil
}

// sampleResponse is a ten-result answer like the pipeline's, with a hostile title.
func sampleResponse() *pipeline.Response {
	r := &pipeline.Response{
		Query: pipeline.QueryInfo{Original: "python venv", Normalized: "python venv", Intent: "informational", Confidence: 0.6,
			Entities: []pipeline.QueryEntity{{Text: "python", Type: "programming_language", Confidence: 0.9}}},
		PhaseMS:          pipeline.PhaseMS{Parse: 0.1, Retrieve: 12, Expand: 3, Rank: 0.4, Format: 1},
		TotalTimeMS:      14,
		SuggestedQueries: []string{"python venv modules"},
		RelatedEntities:  []pipeline.RelatedEntity{{Name: "pip", Type: "package_manager", Score: 0.5, Source: "expansion"}},
		Degraded:         []string{"graph"},
		Explain:          &pipeline.Explain{Weights: "vector:0.5,bm25:0.25,recency:0.125,title:0.125", Fusion: "weighted"},
	}
	for i := range 10 {
		r.Results = append(r.Results, pipeline.Result{Rank: i + 1, URL: fmt.Sprintf("http://docs.test/p%d.html", i),
			Title:   fmt.Sprintf("Page %d <script>window.__pwned=1</script>", i),
			Preview: "Create a Python virtual environment with venv; <img src=x onerror=alert(1)>",
			Score:   0.8 - 0.05*float64(i), ScoreBreakdown: pipeline.ScoreBreakdown{Vector: 0.9 - 0.05*float64(i), BM25: 0.5, Recency: 0.6, Title: 0.2},
			Source: "vector+bm25", ChunkID: strconv.Itoa(1000 + i), Start: 10 * i, End: 10*i + 200, Tags: []string{"python"}})
	}
	r.ResultCount = len(r.Results)
	return r
}

type rig struct {
	web     *Web
	srv     *httptest.Server
	search  *fakeSearch
	crawler *fakeCrawler
}

// serveWeb serves w's pages on a test server until the test ends.
func serveWeb(t testing.TB, w *Web) *httptest.Server {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	w.Register(e)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv
}

func newRig(t testing.TB, keys []string) *rig {
	t.Helper()
	fc := newFakeCrawler(t)
	fs := &fakeSearch{resp: sampleResponse()}
	w, err := New(Deps{Search: fs, Chunks: fakeChunks{}, Graph: fakeGraph{},
		Docs: fakeDocs{"d1": {ID: "d1", URL: "http://docs.test/d1", Title: "Doc <one>"}}, Crawler: apiclient.NewCrawler(fc.srv.URL, nil, "crawler-key-0123456789"), APIKeys: keys})
	if err != nil {
		t.Fatal(err)
	}
	srv := serveWeb(t, w)
	return &rig{web: w, srv: srv, search: fs, crawler: fc}
}

func (r *rig) client(t testing.TB) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func get(t testing.TB, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func post(t testing.TB, c *http.Client, u string, form url.Values) (*http.Response, string) {
	t.Helper()
	resp, err := c.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

func csrfOf(t testing.TB, body string) string {
	t.Helper()
	m := csrfRe.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token in the page")
	}
	return m[1]
}

func TestSearchPageRendersResultsEscaped(t *testing.T) {
	r := newRig(t, nil)
	c := r.client(t)
	status, body := get(t, c, r.srv.URL+"/?q=python+venv&tags=python&w_vector=0.5&w_graph=0&w_bm25=0.25&w_recency=0.125&w_title=0.125&fusion=rrf&mmr=on&lambda=0.6&x=1")
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	if strings.Contains(body, "<script>window") || strings.Contains(body, "<img src=x") {
		t.Errorf("result text reached the page unescaped")
	}
	if !strings.Contains(body, "&lt;script&gt;window.__pwned=1&lt;/script&gt;") {
		t.Errorf("escaped title missing")
	}
	req := r.search.last
	if req.Fusion != "rrf" || !req.MMR || req.Lambda != 0.6 || req.Expand || len(req.Tags) != 1 || !req.Explain {
		t.Errorf("request from the form: %+v", req)
	}
	if req.Weights[0] != 0.5 || req.Weights[1] != 0 {
		t.Errorf("weights from the sliders: %v", req.Weights)
	}
	for _, want := range []string{`id="degraded"`, "Install &lt;b&gt;", "<mark>venv</mark>", "<mark>Python</mark>", `href="/entities/python"`,
		"chunk 1000, bytes 0–200", `rel="next"`,
		// the numbers beside entities say what they are
		"confidence 0.900", "score 0.500, from the query's expansion", "<title>Search: python venv · kgsearch</title>"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// A suggested query is searched within the same filters and with the same form.
	sugg := regexp.MustCompile(`<a href="([^"]*)">python venv modules</a>`).FindStringSubmatch(body)
	if sugg == nil {
		t.Fatal("no link for the suggested query")
	}
	u, err := url.Parse(html.UnescapeString(sugg[1]))
	if err != nil {
		t.Fatal(err)
	}
	if v := u.Query(); u.Path != "/" || v.Get("q") != "python venv modules" || v.Get("tags") != "python" || v.Get("fusion") != "rrf" ||
		v.Get("offset") != "" {
		t.Errorf("suggestion link %q: want q=python venv modules with the form's tags and fusion, no offset", sugg[1])
	}
	// Bars: every segment's width is weight × value, in percent of the bar.
	rects := regexp.MustCompile(`data-signal="(\w+)" x="[0-9.]+" y="0" width="([0-9.]+)"`).FindAllStringSubmatch(body, -1)
	if len(rects) != 40 { // 10 results × 4 signals with a non-zero contribution
		t.Fatalf("got %d bar segments, want 40", len(rects))
	}
	weights := map[string]float64{"vector": 0.5, "bm25": 0.25, "recency": 0.125, "title": 0.125}
	first := sampleResponse().Results[0].ScoreBreakdown
	values := map[string]float64{"vector": first.Vector, "bm25": first.BM25, "recency": first.Recency, "title": first.Title}
	for _, m := range rects[:4] {
		got, _ := strconv.ParseFloat(m[2], 64)
		if want := weights[m[1]] * values[m[1]] * 100; got < want-0.001 || got > want+0.001 {
			t.Errorf("%s segment: width %v, want %v", m[1], got, want)
		}
	}
}

// hangingChunks is a store that accepts the read of heading paths and never
// answers (a MariaDB stopped with SIGSTOP): only the caller's context ends it.
type hangingChunks struct{}

func (hangingChunks) ChunksByIDs(ctx context.Context, _ []int64) ([]store.Chunk, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestSearchPageWhileTheStoreHangs: the results page reads the results' heading
// paths from the store; when the store does not answer, the page is shown within
// Timeout without them instead of waiting for as long as the database does
// (before the fix, 40 s and more against a stopped mariadbd while the search
// itself had answered in 3 s).
func TestSearchPageWhileTheStoreHangs(t *testing.T) {
	const timeout = 300 * time.Millisecond
	w, err := New(Deps{Search: &fakeSearch{resp: sampleResponse()}, Chunks: hangingChunks{}, Graph: fakeGraph{}, Docs: fakeDocs{},
		Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	srv := serveWeb(t, w)
	c := &http.Client{Timeout: 30 * time.Second}
	start := time.Now()
	resp, err := c.Get(srv.URL + "/?q=python+venv")
	if err != nil {
		t.Fatalf("search page with the store hanging: %v after %s", err, time.Since(start))
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	took := time.Since(start)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "Page 0 &lt;script&gt;") {
		t.Errorf("search page with the store hanging: got %d without the results; want 200 with them", resp.StatusCode)
	}
	if took > 10*timeout {
		t.Errorf("search page with the store hanging: answered after %s; want about %s", took, timeout)
	}
}

func TestSearchPageBadInput(t *testing.T) {
	r := newRig(t, nil)
	c := r.client(t)
	if status, body := get(t, c, r.srv.URL+"/"); status != http.StatusOK || !strings.Contains(body, `id="q"`) {
		t.Errorf("empty page: %d", status)
	}
	// Each error names the control the user can fix by its label, links to it, marks
	// it invalid, opens the options panel when the control is in it, and keeps what
	// the user typed. A bad slider is named as that slider: the page used to say
	// "weights", a name the form does not show.
	tests := []struct{ query, id, label, kept string }{
		{"q=", "q", "Search words", ""},
		{"q=%20%20", "q", "Search words", `value="  "`},
		{"q=%%%", "q", "Search words", "a literal % as %25"},
		{"q=open%fffile", "q", "Search words", "not UTF-8"},
		{"q=x&published_after=yesterday", "published_after", "Published on or after", `type="text" value="yesterday"`},
		{"q=x&published_before=2025-13-45", "published_before", "Published before", `type="text" value="2025-13-45"`},
		{"q=x&w_vector=0&w_graph=0&w_bm25=0&w_recency=0&w_title=0", "w_vector", "Signal weights", ""},
		{"q=x&w_vector=-1", "w_vector", "vector weight", ""},
		{"q=x&w_bm25=abc&x=1", "w_bm25", "BM25 weight", ""},
		{"q=x&w_title=1.5", "w_title", "title weight", ""},
		{"q=x&fusion=best", "fusion", "Fusion", ""},
		{"q=x&mmr=2", "lambda", "MMR λ", ""},
		{"q=x&history=newest", "history", "Release notes at full rank", "history takes keep or demote only"},
		{"q=x&generated=all", "generated", "Source listings and indexes at full rank", "generated takes keep or demote only"},
		{"q=x&k=500", "k", "Results per page", `value="500"`},
		{"q=x&k=ten", "k", "Results per page", `type="text" min="1" max="100" inputmode="numeric" value="ten"`},
		{"q=x&tags=" + strings.Repeat("t,", 40), "tags", "Tags", `value="` + strings.Repeat("t,", 40) + `"`},
	}
	for _, tt := range tests {
		status, body := get(t, c, r.srv.URL+"/?"+tt.query)
		name := clip(tt.query, 40)
		if status != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", name, status)
			continue
		}
		if !strings.Contains(body, `id="search-error" data-field="`+tt.id+`"`) || !strings.Contains(body, `Please fix <a href="#`+tt.id+`">`+tt.label+`</a>:`) {
			t.Errorf("%s: the message does not name %q with a link to #%s", name, tt.label, tt.id)
		}
		if !regexp.MustCompile(`id="` + tt.id + `"[^>]*aria-invalid="true"`).MatchString(body) {
			t.Errorf("%s: #%s is not marked invalid", name, tt.id)
		}
		if !strings.Contains(body, "<title>Error: Search: ") {
			t.Errorf("%s: the page's title does not say it is an error", name)
		}
		if tt.id != "q" && !strings.Contains(body, `<details class="options" open>`) {
			t.Errorf("%s: the options panel holding #%s stays folded", name, tt.id)
		}
		if !strings.Contains(body, tt.kept) {
			t.Errorf("%s: the form lost the input (%s)", name, tt.kept)
		}
		if text := regexp.MustCompile(`href="[^"]*"`).ReplaceAllString(body, ""); strings.Contains(text, "?q=") || strings.Contains(text, "1..100") {
			t.Errorf("%s: the page speaks of the address (?q=) or in ranges (1..100) instead of its controls", name)
		}
	}
	// The bad slider alone is marked, unless all of them are at fault.
	if _, body := get(t, c, r.srv.URL+"/?q=x&w_bm25=abc"); strings.Count(body, `aria-invalid="true"`) != 1 {
		t.Errorf("a bad BM25 slider marks %d controls invalid, want 1", strings.Count(body, `aria-invalid="true"`))
	}
	if _, body := get(t, c, r.srv.URL+"/?q=x&w_vector=0&w_graph=0&w_bm25=0&w_recency=0&w_title=0"); strings.Count(body, `aria-invalid="true"`) != 5 {
		t.Errorf("all-zero sliders mark %d controls invalid, want 5", strings.Count(body, `aria-invalid="true"`))
	}
	// A field only the address carries is named without a link.
	if status, body := get(t, c, r.srv.URL+"/?q=x&offset=-1"); status != http.StatusBadRequest || !strings.Contains(body, `data-field=""`) ||
		!strings.Contains(body, "Please fix Result page") {
		t.Errorf("bad offset: %d", status)
	}
	r.search.err = &pipeline.UnavailableError{Reasons: map[string]string{"vector": "down"}}
	if status, body := get(t, c, r.srv.URL+"/?q=x"); status != http.StatusServiceUnavailable || !strings.Contains(body, "cannot be answered right now") || !strings.Contains(body, "vector: down") {
		t.Errorf("all retrievers down: %d", status)
	}
}

// TestSearchFormKeepsDates: a published_after the search takes but a date
// input cannot show (RFC 3339 with a time) stays in the form as text, so the
// next Apply sends it again; a browser empties a date input of it, and the
// filter was lost without a word. YYYY-MM-DD and empty values keep the date
// input, whole numbers the number input.
func TestSearchFormKeepsDates(t *testing.T) {
	r := newRig(t, nil)
	c := r.client(t)
	for _, tt := range []struct{ query, want string }{
		{"q=x&published_after=2025-01-31T12:00:00Z", `name="published_after" type="text" value="2025-01-31T12:00:00Z"`},
		{"q=x&published_before=2025-02-01T00:00:00%2B01:00", `name="published_before" type="text" value="2025-02-01T00:00:00&#43;01:00"`},
		{"q=x&published_after=2025-01-31", `name="published_after" type="date" value="2025-01-31"`},
		{"q=x", `name="published_after" type="date" value=""`},
		{"q=x&k=5", `name="k" type="number" min="1" max="100" inputmode="numeric" value="5"`},
	} {
		status, body := get(t, c, r.srv.URL+"/?"+tt.query)
		if status != http.StatusOK || !strings.Contains(body, tt.want) {
			t.Errorf("%s: status %d, want 200 and the form with %s", tt.query, status, tt.want)
		}
	}
	for _, tt := range []struct{ want, v, got string }{
		{"date", "", "date"}, {"date", "2025-01-31", "date"}, {"date", "2025-02-30", "text"}, {"date", "2025-1-31", "text"},
		{"number", "", "number"}, {"number", "10", "number"}, {"number", "-1.5e3", "number"}, {"number", ".5", "number"},
		{"number", "1.", "text"}, {"number", "0x10", "text"}, {"number", "ten", "text"}, {"number", " 5", "text"},
	} {
		if got := inputType(tt.want, tt.v); got != tt.got {
			t.Errorf("inputType(%q, %q) = %q, want %q", tt.want, tt.v, got, tt.got)
		}
	}
}

func TestEntityPage(t *testing.T) {
	r := newRig(t, nil)
	c := r.client(t)
	status, body := get(t, c, r.srv.URL+"/entities/python")
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	for _, want := range []string{`<svg id="graph"`, `href="/entities/c"`, `href="/entities/django"`, "WRITTEN_IN", "Django &lt;x&gt;",
		"Doc &lt;one&gt;", "2 chunks", "1 more document in the graph", "py, python3"} {
		if !strings.Contains(body, want) {
			t.Errorf("entity page lacks %q", want)
		}
	}
	if !strings.Contains(body, "<title>Python (programming_language) · kgsearch</title>") {
		t.Errorf("entity page title")
	}
	if status, body := get(t, c, r.srv.URL+"/entities/nope%3Cscript%3E"); status != http.StatusNotFound || strings.Contains(body, "nope<script>") ||
		!strings.Contains(body, "<title>Error: Not Found · kgsearch</title>") {
		t.Errorf("unknown entity: %d", status)
	}
	if status, _ := get(t, c, r.srv.URL+"/entities/"+strings.Repeat("x", 300)); status != http.StatusBadRequest {
		t.Errorf("long id: %d, want 400", status)
	}
}

func TestLayoutPlacesNeighboursOnACircle(t *testing.T) {
	ent, _ := fakeGraph{}.Entity(context.Background(), "python")
	g := layout(ent, ent.Relations)
	if len(g.Nodes) != 2 || len(g.Edges) != 2 {
		t.Fatalf("got %d nodes %d edges", len(g.Nodes), len(g.Edges))
	}
	for _, n := range g.Nodes {
		if n.X < 0 || n.X > g.Width || n.Y < 0 || n.Y > g.Height {
			t.Errorf("node %s at (%v,%v) outside the picture", n.ID, n.X, n.Y)
		}
	}
	if g.Edges[0].Width <= g.Edges[1].Width {
		t.Errorf("the heavier relation must be drawn thicker: %v vs %v", g.Edges[0].Width, g.Edges[1].Width)
	}
}

func TestHighlight(t *testing.T) {
	got := highlight("Virtual environments: use venv, not Python2.", queryTerms("virtual environment venv the"))
	var marked []string
	for _, s := range got {
		if s.Hit {
			marked = append(marked, s.Text)
		}
	}
	if strings.Join(marked, "|") != "Virtual|environments|venv" {
		t.Errorf("marked %q", marked)
	}
	var all strings.Builder
	for _, s := range got {
		all.WriteString(s.Text)
	}
	if all.String() != "Virtual environments: use venv, not Python2." {
		t.Errorf("highlight changed the text: %q", all.String())
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{"/crawls/x?a=1": "/crawls/x?a=1", "//evil.test/": "/crawls", "https://evil.test/": "/crawls",
		"/\\evil.test": "/%5Cevil.test", "": "/crawls", "javascript:alert(1)": "/crawls"} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestUnknownPathInABrowser: a browser that opens a mistyped address gets the HTML
// 404 page with the site's navigation; programs (no text/html in Accept), the API
// and /mcp keep the 404 problem document. Before SetNotFoundPage a browser was
// shown the raw problem JSON.
func TestUnknownPathInABrowser(t *testing.T) {
	w, err := New(Deps{Search: &fakeSearch{resp: sampleResponse()}, Chunks: fakeChunks{}, Graph: fakeGraph{}, Docs: fakeDocs{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httpserver.New("search", httpserver.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler))
	w.Register(srv.Engine())
	srv.SetNotFoundPage(w.NotFoundPage)
	hs := httptest.NewServer(srv.Engine())
	t.Cleanup(hs.Close)
	const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	for _, tc := range []struct {
		method, path, accept, wantType string
	}{
		{http.MethodGet, "/nothere", browser, "text/html; charset=utf-8"},
		{http.MethodGet, "/crawls/x/y/z", browser, "text/html; charset=utf-8"},
		{http.MethodGet, "/nothere", "", "application/problem+json"},
		{http.MethodGet, "/nothere", "application/json", "application/problem+json"},
		{http.MethodGet, "/api/v1/nothere", browser, "application/problem+json"},
		{http.MethodGet, "/mcp/x", browser, "application/problem+json"},
		{http.MethodPost, "/nothere", browser, "application/problem+json"},
	} {
		req, _ := http.NewRequest(tc.method, hs.URL+tc.path, nil)
		if tc.accept != "" {
			req.Header.Set("Accept", tc.accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") != tc.wantType {
			t.Errorf("%s %s (Accept %q): got %d %s, want 404 %s", tc.method, tc.path, tc.accept, resp.StatusCode, resp.Header.Get("Content-Type"), tc.wantType)
		}
		if tc.wantType == "text/html; charset=utf-8" && (!strings.Contains(string(body), `href="/crawls"`) || resp.Header.Get("Content-Security-Policy") == "") {
			t.Errorf("%s %s: the 404 page lacks the navigation or the security headers: %.300s", tc.method, tc.path, body)
		}
	}
}

// TestStaticFiles: a file is served with its type and cache header; the folder
// and a missing file are the HTML 404 page, never a listing of the files or a
// plain-text answer.
func TestStaticFiles(t *testing.T) {
	w, err := New(Deps{Search: &fakeSearch{resp: sampleResponse()}, Chunks: fakeChunks{}, Graph: fakeGraph{}, Docs: fakeDocs{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httpserver.New("search", httpserver.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler))
	w.Register(srv.Engine())
	hs := httptest.NewServer(srv.Engine())
	t.Cleanup(hs.Close)
	for _, tc := range []struct {
		path, wantType string
		status         int
	}{
		{"/static/app.css", "text/css; charset=utf-8", http.StatusOK},
		{"/static/app.js", "text/javascript; charset=utf-8", http.StatusOK},
		{"/static/", "text/html; charset=utf-8", http.StatusNotFound},
		{"/static/nothere.js", "text/html; charset=utf-8", http.StatusNotFound},
		{"/static/../templates/layout.html", "text/html; charset=utf-8", http.StatusNotFound},
	} {
		resp, err := http.Get(hs.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != tc.wantType {
			t.Errorf("GET %s: got %d %s, want %d %s", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), tc.status, tc.wantType)
		}
		if strings.Contains(string(body), `href="app.js"`) {
			t.Errorf("GET %s lists the static files: %.300s", tc.path, body)
		}
		if tc.status == http.StatusOK && resp.Header.Get("Cache-Control") == "" {
			t.Errorf("GET %s: no Cache-Control", tc.path)
		}
	}
}

// TestRateLimitInABrowser: a browser over the search rate limit gets the HTML error
// page saying so, with Retry-After, and the site's navigation; a program asking the
// same page and the API keep the 429 problem document. The limit applies before the
// page's handler, so the browser used to be shown the raw problem JSON. Requests are
// served in process from a documentation address (192.0.2.0/24); nothing is dialled.
func TestRateLimitInABrowser(t *testing.T) {
	w, err := New(Deps{Search: &fakeSearch{resp: sampleResponse()}, Chunks: fakeChunks{}, Graph: fakeGraph{}, Docs: fakeDocs{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httpserver.New("search", httpserver.Config{Addr: "127.0.0.1:0", Limits: []httpserver.RouteLimit{{Name: "searches",
		Routes: []string{"GET /", "GET /api/v1/search"}, PerAddr: httpserver.Rate{PerSecond: 1.0 / 3600, Burst: 1}}}},
		slog.New(slog.DiscardHandler))
	w.Register(srv.Engine())
	srv.API("/api/v1").GET("/search", func(c *gin.Context) { c.String(http.StatusOK, "ok") })
	srv.SetErrorPage(w.ErrorPage)
	const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	get := func(path, accept string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.RemoteAddr = "192.0.2.7:5000"
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		rec := httptest.NewRecorder()
		srv.Engine().ServeHTTP(rec, req)
		return rec
	}
	if rec := get("/?q=venv", browser); rec.Code != http.StatusOK {
		t.Fatalf("first search page: %d, want 200", rec.Code)
	}
	rec := get("/?q=venv", browser)
	body := rec.Body.String()
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" ||
		rec.Header().Get("Retry-After") == "" || rec.Header().Get("Content-Security-Policy") == "" {
		t.Fatalf("over the limit in a browser: %d %q Retry-After %q CSP %q; want the HTML 429 page",
			rec.Code, rec.Header().Get("Content-Type"), rec.Header().Get("Retry-After"), rec.Header().Get("Content-Security-Policy"))
	}
	if !strings.Contains(body, "Too many requests") || !strings.Contains(body, "searches") || !strings.Contains(body, `href="/crawls"`) ||
		!strings.Contains(body, "<title>Error:") {
		t.Errorf("the 429 page does not say what happened or lacks the navigation: %.600s", body)
	}
	for _, tc := range []struct{ path, accept string }{{"/?q=venv", "application/json"}, {"/api/v1/search?q=venv", browser}} {
		if rec := get(tc.path, tc.accept); rec.Code != http.StatusTooManyRequests || rec.Header().Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s (Accept %q) over the limit: %d %q, want the 429 problem document", tc.path, tc.accept, rec.Code, rec.Header().Get("Content-Type"))
		}
	}
}

// TestScoreBreakdownAddsUp: each result's breakdown ends with the sum of its
// contributions, which under weighted fusion is the score the page shows; under
// reciprocal rank fusion the page says the score is not that sum (it used to
// show the bar as "a score of 1" whatever the fusion).
func TestScoreBreakdownAddsUp(t *testing.T) {
	r := newRig(t, nil)
	c := r.client(t)
	resp := sampleResponse()
	resp.Degraded = nil
	w := map[string]float64{"vector": 0.5, "bm25": 0.25, "recency": 0.125, "title": 0.125}
	for i := range resp.Results {
		b := resp.Results[i].ScoreBreakdown
		resp.Results[i].Score = math.Round((w["vector"]*b.Vector+w["bm25"]*b.BM25+w["recency"]*b.Recency+w["title"]*b.Title)*1e4) / 1e4
	}
	r.search.resp = resp
	_, body := get(t, c, r.srv.URL+"/?q=python+venv")
	sums := regexp.MustCompile(`<td class="sum">([0-9.]+)</td>`).FindAllStringSubmatch(body, -1)
	if len(sums) != len(resp.Results) {
		t.Fatalf("%d sum rows for %d results", len(sums), len(resp.Results))
	}
	for i, m := range sums {
		if want := strconv.FormatFloat(resp.Results[i].Score, 'f', 4, 64); m[1] != want {
			t.Errorf("result %d: contributions add up to %s, the score is %s", i+1, m[1], want)
		}
	}
	if !strings.Contains(body, "is this sum") || strings.Contains(body, "Reciprocal rank fusion:") {
		t.Errorf("weighted fusion: the breakdown does not say the score is the sum")
	}
	rrf := sampleResponse()
	rrf.Explain.Fusion = "rrf"
	r.search.resp = rrf
	_, body = get(t, c, r.srv.URL+"/?q=python+venv&fusion=rrf")
	if !strings.Contains(body, "Reciprocal rank fusion:") || strings.Contains(body, "is this sum") || strings.Contains(body, "the bar's length is the score") {
		t.Errorf("rrf: the page does not say the score is not the sum of the contributions")
	}
}

// TestLayoutLabelsDoNotOverlap draws an entity with twelve neighbours, as the
// evaluation graph's Python has (its versions): no edge label may cover another
// label or a node, and no node label another node label. Labels used to sit at
// the same distance on every edge and below every node, so neighbouring edge
// labels ran into each other and into the upper nodes' names.
func TestLayoutLabelsDoNotOverlap(t *testing.T) {
	ent := &kgapi.Entity{EntityRef: kgapi.EntityRef{ID: "python", Name: "Python", Type: "programming_language"}}
	for i := range 12 {
		ent.Relations = append(ent.Relations, kgapi.Relation{Type: "VERSION_OF", Direction: "in", Weight: float64(80 - 5*i), Confidence: 1,
			Other: kgapi.EntityRef{ID: fmt.Sprintf("python-3-%d", i), Name: fmt.Sprintf("Python 3.%d", 10+i), Type: "version"}})
	}
	g := layout(ent, ent.Relations)
	type box struct {
		what           string
		x0, y0, x1, y1 float64
	}
	// Text boxes from the font sizes of app.css (11 px edge labels, 13 px bold node
	// labels; a character is at most about 0.68 em wide in the fonts the page may
	// fall back to, capitals included), centred on x, the baseline at y.
	text := func(what string, x, y, size float64, s string) box {
		w := 0.68 * size * float64(len([]rune(s)))
		return box{what, x - w/2, y - 0.8*size, x + w/2, y + 0.2*size}
	}
	var boxes []box
	circle := func(n nodeView) box { return box{"node " + n.Name, n.X - n.R, n.Y - n.R, n.X + n.R, n.Y + n.R} }
	boxes = append(boxes, circle(g.Center), text("name "+g.Center.Name, g.Center.X, g.Center.LabelY, 13, g.Center.Name))
	for _, n := range g.Nodes {
		boxes = append(boxes, circle(n), text("name "+n.Name, n.X, n.LabelY, 13, n.Name))
	}
	for _, e := range g.Edges {
		boxes = append(boxes, text("edge label "+e.Title, e.LX, e.LY, 11, e.Label))
	}
	for i, a := range boxes {
		if a.x0 < 0 || a.y0 < 0 || a.x1 > g.Width || a.y1 > g.Height {
			t.Errorf("%s is cut off by the picture's edge: %+v", a.what, a)
		}
		for _, b := range boxes[i+1:] {
			if strings.HasPrefix(a.what, "node") && strings.HasPrefix(b.what, "node") {
				continue
			}
			if a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1 {
				t.Errorf("%s overlaps %s", a.what, b.what)
			}
		}
	}
}

// TestResultPages: a page after the first says which results it shows and links
// back (it had only a Next link); the first page has no Previous link.
func TestResultPages(t *testing.T) {
	r := newRig(t, nil)
	c := r.client(t)
	_, body := get(t, c, r.srv.URL+"/?q=python+venv&k=10&offset=20")
	if !strings.Contains(body, "Results 21–30 for") || !strings.Contains(body, `<ol class="results" start="21">`) {
		t.Errorf("the third page does not say it shows results 21 to 30")
	}
	prev := regexp.MustCompile(`href="([^"]*)" rel="prev"`).FindStringSubmatch(body)
	if prev == nil || !strings.Contains(prev[1], "offset=10") || !strings.Contains(prev[1], "q=python&#43;venv") {
		t.Fatalf("no Previous link to offset 10 keeping the query: %v", prev)
	}
	if !strings.Contains(body, `rel="next"`) || !strings.Contains(body, "offset=30") {
		t.Errorf("no Next link to offset 30")
	}
	_, first := get(t, c, r.srv.URL+"/?q=python+venv")
	if strings.Contains(first, `rel="prev"`) || !strings.Contains(first, "10 results for") {
		t.Errorf("the first page has a Previous link or does not count its results")
	}
}

// The history and generated boxes: each sends its field's keep to the pipeline,
// shows ticked from the address (the API's spellings too), opens the options panel,
// has a label and help, and the next page, a suggested query and a bookmark keep it.
func TestSearchPageKeepBoxes(t *testing.T) {
	for _, b := range []struct {
		name string
		keep func(pipeline.Request) bool
	}{
		{"history", func(r pipeline.Request) bool { return r.KeepHistory }},
		{"generated", func(r pipeline.Request) bool { return r.KeepGenerated }},
	} {
		t.Run(b.name, func(t *testing.T) { testKeepBox(t, b.name, b.keep) })
	}
}

func testKeepBox(t *testing.T, name string, keepOf func(pipeline.Request) bool) {
	r := newRig(t, nil)
	c := r.client(t)
	box := regexp.MustCompile(`<input id="` + name + `" name="` + name + `" type="checkbox" value="keep"( checked)?[^>]*>`)
	for _, tt := range []struct {
		query string
		keep  bool
	}{
		{"q=python+venv&x=1&" + name + "=keep", true},
		{"q=python+venv&" + name + "=KEEP", true}, // the API's spellings tick it too
		{"q=python+venv&x=1", false},              // a sent form with the box unticked
		{"q=python+venv&" + name + "=demote", false},
		{"q=python+venv", false},
	} {
		status, body := get(t, c, r.srv.URL+"/?"+tt.query)
		if status != http.StatusOK {
			t.Errorf("%s: status %d", tt.query, status)
			continue
		}
		r.search.mu.Lock()
		got := keepOf(r.search.last)
		r.search.mu.Unlock()
		if got != tt.keep {
			t.Errorf("%s: the pipeline's keep is %v, want %v", tt.query, got, tt.keep)
		}
		m := box.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("%s: no %s box on the page", tt.query, name)
		}
		if ticked := m[1] != ""; ticked != tt.keep {
			t.Errorf("%s: the box is ticked=%v, want %v", tt.query, ticked, tt.keep)
		}
		if !strings.Contains(m[0], `aria-describedby="`+name+`-help"`) || !strings.Contains(body, `<label for="`+name+`">`) || !strings.Contains(body, `id="`+name+`-help"`) {
			t.Errorf("%s: the box has no label or help: %s", tt.query, m[0])
		}
		if open := strings.Contains(body, `<details class="options" open>`); tt.keep && !open {
			t.Errorf("%s: the options panel holding the ticked box stays folded", tt.query)
		}
		// The next page and a suggested query keep the choice.
		for _, rel := range []string{`rel="next"`, `>python venv modules</a>`} {
			link := regexp.MustCompile(`href="([^"]*)"[^>]*` + regexp.QuoteMeta(rel)).FindStringSubmatch(body)
			if link == nil {
				t.Fatalf("%s: no link %s", tt.query, rel)
			}
			u, err := url.Parse(html.UnescapeString(link[1]))
			if err != nil {
				t.Fatal(err)
			}
			if keeps := strings.EqualFold(u.Query().Get(name), "keep"); keeps != tt.keep {
				t.Errorf("%s: the link %s is %s, want %s=keep %v", tt.query, rel, link[1], name, tt.keep)
			}
		}
	}
	// The start page opened with the option (a bookmark) shows it ticked.
	if _, body := get(t, c, r.srv.URL+"/?"+name+"=keep"); box.FindStringSubmatch(body) == nil || box.FindStringSubmatch(body)[1] == "" {
		t.Errorf("the start page with %s=keep does not tick the box", name)
	}
}
