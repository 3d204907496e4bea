package web

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
)

const (
	testJobID = "0b6c3a52-2f0e-4c1b-9d53-3d1f2a7c9e10"
	// shellJobID is a finished crawl of a site whose pages JavaScript renders:
	// its status carries the crawler's warning.
	shellJobID = "7d1e4b2a-0c9f-4e55-8a61-2b3c4d5e6f70"
)

// shellWarning is the crawler's warning about such a site, with markup in it.
const shellWarning = `3 of 4 pages are rendered by JavaScript in the browser (an empty <div id="app">); the crawler reads the HTML the server sends and found no text. Crawl the site's pre-rendered or static export, or its sources, instead.`

// fakeCrawler is the crawler's API as far as the pages use it, recording what it got.
type fakeCrawler struct {
	srv      *httptest.Server
	mu       sync.Mutex
	started  []map[string]any
	cancels  []string
	deletes  []string
	authSeen []string
	// finishAfter > 0 makes testJobID advance at each read of its status (one
	// more page stored) and end done at the finishAfter-th read; reads counts them.
	finishAfter, reads int
	// sites are the documents left per host for DELETE /api/v1/documents?domain=,
	// which deletes at most batch of them per call; domainCalls records the calls'
	// domain parameters. See deleteDomain for the hosts the fake refuses.
	sites       map[string]int
	batch       int
	domainCalls []string
	// added are crawls started after the page loaded (newest last): the list
	// shows them first. listQueries records the list calls' query strings.
	added       []map[string]any
	listQueries []string
	failList    bool // the list answers 503
}

// listCrawls answers GET /api/v1/crawls as the crawler does: newest first, of
// one status when asked, at most limit (1..1000, default 50); another
// parameter or value is a 400.
func (f *fakeCrawler) listCrawls(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	f.listQueries = append(f.listQueries, r.URL.RawQuery)
	if f.failList {
		f.mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	jobs := make([]map[string]any, 0, len(f.added)+2)
	for i := len(f.added) - 1; i >= 0; i-- {
		jobs = append(jobs, f.added[i])
	}
	f.mu.Unlock()
	jobs = append(jobs, fakeJob("running"), shellJob())
	limit, err := strconv.Atoi(q.Get("limit"))
	if q.Get("limit") == "" {
		limit, err = 50, nil
	}
	status := q.Get("status")
	for k := range q {
		if k != "status" && k != "limit" {
			err = fmt.Errorf("unknown parameter %s", k)
		}
	}
	if err != nil || limit < 1 || limit > 1000 || !slices.Contains([]string{"", "queued", "running", "done", "failed", "cancelled"}, status) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"title":"invalid request","status":400,"detail":"bad list parameters"}`))
		return
	}
	out := []any{}
	for _, j := range jobs {
		if (status == "" || j["status"] == status) && len(out) < limit {
			out = append(out, j)
		}
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"crawls": out})
}

// addCrawl makes a crawl started after the page loaded: the list shows it first.
func (f *fakeCrawler) addCrawl(id, status, startURL string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.added = append(f.added, map[string]any{"id": id, "status": status, "url": startURL, "spec": map[string]any{"url": startURL, "max_pages": 10},
		"counters": map[string]any{"stored": 1, "failed": 0, "chunks": 4}, "created_at": "2026-11-24T20:00:00Z", "warnings": []string{}})
}

// fakeJob is testJobID's status as the crawler answers it.
func fakeJob(status string) map[string]any {
	return map[string]any{"id": testJobID, "status": status, "url": "http://site.test/<b>", "spec": map[string]any{"url": "http://site.test/", "max_pages": 10},
		"counters": map[string]any{"discovered": 5, "queued": 2, "in_flight": 1, "fetched": 3, "stored": 2, "failed": 1,
			"failed_by_reason": map[string]int{"http_404": 1}, "skipped": map[string]int{"robots": 2}, "chunks": 7},
		"rates": map[string]any{"pages_per_sec": 1.5}, "created_at": "2026-11-23T20:00:00Z", "warnings": []string{}}
}

// shellJob is shellJobID's status: most pages were shells, one stored document was removed.
func shellJob() map[string]any {
	return map[string]any{"id": shellJobID, "status": "done", "url": "http://spa.test/", "spec": map[string]any{"url": "http://spa.test/", "max_pages": 10},
		"counters": map[string]any{"discovered": 4, "fetched": 4, "stored": 1, "empty": 3, "script_rendered": 3, "deleted": 1,
			"deleted_by_reason": map[string]int{"script_rendered": 1}, "chunks": 2},
		"created_at": "2026-11-23T19:00:00Z", "warnings": []string{shellWarning}}
}

// fakeEvents is testJobID's event stream: one page of each outcome, a progress
// event bringing the warning, and the summary.
func fakeEvents() string {
	running, done := fakeJob("running"), fakeJob("done")
	for _, j := range []map[string]any{running, done} {
		c := j["counters"].(map[string]any)
		c["empty"], c["script_rendered"], c["deleted"] = 2, 1, 2
		c["deleted_by_reason"] = map[string]int{"noindex": 1, "http_410": 1}
		j["warnings"] = []string{shellWarning}
	}
	var b strings.Builder
	for _, ev := range []map[string]any{
		{"type": "page", "url": "http://site.test/a", "outcome": "stored", "reason": "stored", "chunks": 1},
		{"type": "page", "url": "http://site.test/b", "outcome": "script_rendered", "reason": "script_rendered", "detail": `an empty <div id="app">`},
		{"type": "page", "url": "http://site.test/c", "outcome": "noindex", "reason": "noindex"},
		{"type": "page", "url": "http://site.test/d", "outcome": "deleted", "reason": "noindex",
			"detail": "the page now asks not to be indexed (robots noindex); its stored version was removed"},
		{"type": "page", "url": "http://site.test/g", "outcome": "deleted", "reason": "http_410"},
		{"type": "page", "url": "http://site.test/e", "outcome": "skipped", "reason": "robots"},
		{"type": "page", "url": "http://site.test/f", "outcome": "failed", "reason": "http_404", "error": "HTTP 404 Not Found"},
		{"type": "progress", "status": running},
		{"type": "summary", "status": done},
	} {
		d, _ := json.Marshal(ev)
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", ev["type"], d)
	}
	return b.String()
}

func newFakeCrawler(t testing.TB) *fakeCrawler {
	f := &fakeCrawler{sites: map[string]int{"site.test": 7, "late.test": 5}, batch: 3}
	job := fakeJob
	mux := http.NewServeMux()
	record := func(r *http.Request) {
		f.mu.Lock()
		f.authSeen = append(f.authSeen, r.Header.Get("Authorization"))
		f.mu.Unlock()
	}
	mux.HandleFunc("POST /api/v1/crawls", func(w http.ResponseWriter, r *http.Request) {
		record(r)
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		if body["url"] == "http://10.0.0.1/" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"title":"invalid request","field":"url","detail":"address not allowed (CRAWLER_ALLOW_HOSTS)"}`))
			return
		}
		if inc, _ := body["include"].([]any); len(inc) > 1 && inc[1] == "(" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"title":"invalid request","field":"include[1]","detail":"\"(\" is not a valid regular expression"}`))
			return
		}
		f.mu.Lock()
		f.started = append(f.started, body)
		f.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		_ = json.NewEncoder(w).Encode(job("queued"))
	})
	mux.HandleFunc("GET /api/v1/crawls", f.listCrawls)
	mux.HandleFunc("GET /api/v1/crawls/{id}", func(w http.ResponseWriter, r *http.Request) {
		switch r.PathValue("id") {
		case testJobID:
			_ = json.NewEncoder(w).Encode(f.read())
		case shellJobID:
			_ = json.NewEncoder(w).Encode(shellJob())
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"title":"not found","detail":"crawl job not found"}`))
		}
	})
	mux.HandleFunc("DELETE /api/v1/crawls/{id}", func(w http.ResponseWriter, r *http.Request) {
		record(r)
		f.mu.Lock()
		f.cancels = append(f.cancels, r.PathValue("id"))
		f.mu.Unlock()
		_ = json.NewEncoder(w).Encode(job("cancelled"))
	})
	mux.HandleFunc("GET /api/v1/crawls/{id}/events", func(w http.ResponseWriter, r *http.Request) {
		if id := r.PathValue("id"); id != testJobID && id != shellJobID {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"title":"not found","status":404,"detail":"crawl job ` + id + ` not found"}`))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, fakeEvents())
	})
	mux.HandleFunc("GET /api/v1/documents", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("domain") == "nothing.test" { // a host without documents
			_, _ = w.Write([]byte(`{"documents":[],"next_after":""}`))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"documents": []any{map[string]any{"id": "0123456789abcdef0123456789abcdef",
			"url": "http://site.test/x", "domain": "site.test", "title": "<script>window.__pwned=1</script>", "chunk_count": 3}}, "next_after": ""})
	})
	mux.HandleFunc("DELETE /api/v1/documents/{id}", func(w http.ResponseWriter, r *http.Request) {
		record(r)
		f.mu.Lock()
		f.deletes = append(f.deletes, r.PathValue("id"))
		f.mu.Unlock()
		_, _ = w.Write([]byte(`{"deleted":true}`))
	})
	mux.HandleFunc("DELETE /api/v1/documents", func(w http.ResponseWriter, r *http.Request) {
		record(r)
		f.deleteDomain(w, r)
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// deleteDomain answers DELETE /api/v1/documents?domain= as the crawler does: a
// batch of the host's documents deleted and whether more are left. It refuses
// busy.test (409, naming testJobID), docs.site.test (409, naming no crawl),
// other.test (409 naming a crawl not in the list), late.test after its first
// batch (409), a host with a space (400 naming domain), and answers down.test
// with a 503.
func (f *fakeCrawler) deleteDomain(w http.ResponseWriter, r *http.Request) {
	domain := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("domain")))
	f.mu.Lock()
	defer f.mu.Unlock()
	f.domainCalls = append(f.domainCalls, r.URL.Query().Get("domain"))
	refuse := func(status int, field, detail string) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"title": http.StatusText(status), "status": status, "field": field, "detail": detail})
	}
	conflict := func(id string) string {
		return fmt.Sprintf("crawl %s covers %s and would store its pages again: cancel it (DELETE /api/v1/crawls/%s) or let it finish, then delete", id, domain, id)
	}
	switch {
	case domain == "busy.test", domain == "late.test" && f.sites[domain] < 5:
		refuse(http.StatusConflict, "", conflict(testJobID))
		return
	case domain == "docs.site.test":
		refuse(http.StatusConflict, "", "a crawl covers "+domain)
		return
	case domain == "other.test":
		refuse(http.StatusConflict, "", conflict("9f0e1d2c-3b4a-4596-8877-665544332211"))
		return
	case strings.Contains(domain, " "):
		refuse(http.StatusBadRequest, "domain", "not a host name: "+strconv.Quote(domain)+" has a space")
		return
	case domain == "down.test":
		refuse(http.StatusServiceUnavailable, "", "database unavailable")
		return
	}
	n := min(f.batch, f.sites[domain])
	f.sites[domain] -= n
	_ = json.NewEncoder(w).Encode(map[string]any{"domain": domain, "deleted": n, "more": f.sites[domain] > 0})
}

// read is testJobID's status at one more read: running, or advancing to done
// when finishAfter is set.
func (f *fakeCrawler) read() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.finishAfter == 0 {
		return fakeJob("running")
	}
	f.reads++
	j := fakeJob("running")
	if f.reads >= f.finishAfter {
		j = fakeJob("done")
		j["warnings"] = []string{shellWarning}
	}
	j["counters"].(map[string]any)["stored"] = 2 + f.reads
	return j
}

func TestCrawlsNeedLoginAndCSRF(t *testing.T) {
	const key = "web-test-key-0123456789"
	r := newRig(t, []string{key})
	c := r.client(t)
	_, page := get(t, c, r.srv.URL+"/crawls")
	if strings.Contains(page, `id="crawl-form"`) {
		t.Errorf("the start form is shown before logging in")
	}
	_, login := get(t, c, r.srv.URL+"/login")
	tok := csrfOf(t, login)
	if !strings.Contains(login, "Searching needs none") {
		t.Errorf("the login page of a server with public reads does not say searching needs no key")
	}
	form := url.Values{"url": {"http://site.test/"}, "max_pages": {"5"}, "csrf": {tok}}

	// No CSRF token → 403; a token but no login → 401; nothing reaches the crawler.
	if resp, _ := post(t, c, r.srv.URL+"/crawls", url.Values{"url": {"http://site.test/"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("without CSRF: %d, want 403", resp.StatusCode)
	}
	if resp, _ := post(t, c, r.srv.URL+"/crawls", form); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without login: %d, want 401", resp.StatusCode)
	}
	if resp, _ := post(t, c, r.srv.URL+"/documents/0123456789abcdef0123456789abcdef/delete", url.Values{"csrf": {tok}}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("delete without login: %d, want 401", resp.StatusCode)
	}
	// Another browser (no CSRF cookie) replaying the token is refused too.
	if resp, _ := post(t, r.client(t), r.srv.URL+"/crawls", form); resp.StatusCode != http.StatusForbidden {
		t.Errorf("token without its cookie: %d, want 403", resp.StatusCode)
	}
	if resp, _ := post(t, c, r.srv.URL+"/login", url.Values{"key": {"wrong-key-0123456789"}, "csrf": {tok}}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong key: %d, want 401", resp.StatusCode)
	}
	resp, _ := post(t, c, r.srv.URL+"/login", url.Values{"key": {key}, "csrf": {tok}, "next": {"https://evil.test/"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/crawls" {
		t.Fatalf("login: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if ck := resp.Header.Get("Set-Cookie"); !strings.Contains(ck, "HttpOnly") || !strings.Contains(ck, "SameSite=Strict") {
		t.Errorf("session cookie %q must be HttpOnly and SameSite=Strict", ck)
	}
	// A cross-site Origin is refused even with the cookies.
	req, _ := http.NewRequest(http.MethodPost, r.srv.URL+"/crawls", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.test")
	if resp, err := c.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site origin: %v %v", resp.StatusCode, err)
	}
	resp, body := post(t, c, r.srv.URL+"/crawls", url.Values{"url": {"http://site.test/"}, "max_pages": {"5"}, "max_depth": {"1"},
		"exclude": {"/private/\n\n/tmp/"}, "tags": {"a, b"}, "respect_robots": {"1"}, "prune": {"1"}, "csrf": {tok}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/crawls/"+testJobID {
		t.Fatalf("start: %d %q %s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	r.crawler.mu.Lock()
	got := r.crawler.started
	auth := r.crawler.authSeen
	r.crawler.mu.Unlock()
	if len(got) != 1 || got[0]["max_pages"] != 5.0 || got[0]["use_sitemap"] != false || got[0]["prune"] != true || len(got[0]["exclude"].([]any)) != 2 || len(got[0]["tags"].([]any)) != 2 {
		t.Errorf("crawler got %v", got)
	}
	for _, a := range auth {
		if a != "Bearer crawler-key-0123456789" {
			t.Errorf("crawler saw Authorization %q, want the server's key", a)
		}
	}
	if resp, _ := post(t, c, r.srv.URL+"/crawls/"+testJobID+"/cancel", url.Values{"csrf": {tok}}); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("cancel: %d", resp.StatusCode)
	}
	if resp, _ := post(t, c, r.srv.URL+"/documents/0123456789abcdef0123456789abcdef/delete", url.Values{"csrf": {tok}, "back": {"/documents?domain=site.test"}}); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/documents?deleted=1&domain=site.test" {
		t.Errorf("delete: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	// The page the delete returns to says it happened (the row only vanished).
	if _, body := get(t, c, r.srv.URL+"/documents?deleted=1&domain=site.test"); !strings.Contains(body, `id="deleted"`) {
		t.Errorf("the documents page after a delete does not say the document was deleted")
	}
	if _, body := get(t, c, r.srv.URL+"/documents"); strings.Contains(body, `id="deleted"`) {
		t.Errorf("the documents page says a document was deleted when none was")
	}
	r.crawler.mu.Lock()
	defer r.crawler.mu.Unlock()
	if len(r.crawler.cancels) != 1 || len(r.crawler.deletes) != 1 {
		t.Errorf("cancels %v deletes %v", r.crawler.cancels, r.crawler.deletes)
	}
}

func TestCrawlPagesBadInputAndEscaping(t *testing.T) {
	r := newRig(t, nil)
	c := r.client(t)
	_, page := get(t, c, r.srv.URL+"/crawls")
	tok := csrfOf(t, page)
	// Each refusal names the control by its label (and the line of a list), links to
	// it, marks it invalid and keeps what the user typed.
	tests := []struct {
		form            url.Values
		id, label, says string // says: part of the message (the bounds, for a number too large)
		kept            string
	}{
		{url.Values{"url": {""}}, "url", "Start page", "", ""},
		{url.Values{"url": {"http://site.test/"}, "max_pages": {"lots"}}, "max_pages", "Max pages", "", `value="lots"`},
		{url.Values{"url": {"http://site.test/"}, "max_pages": {"999999999"}}, "max_pages", "Max pages", "from 1 to 1000000", `value="999999999"`},
		{url.Values{"url": {"http://site.test/"}, "max_depth": {"-1"}}, "max_depth", "Max depth", "", `value="-1"`},
		{url.Values{"url": {"http://site.test/"}, "max_depth": {"101"}}, "max_depth", "Max depth", "from 0 to 100", `value="101"`},
		// refused by the crawler (its SSRF guard / CRAWLER_ALLOW_HOSTS), passed on
		{url.Values{"url": {"http://10.0.0.1/"}, "tags": {"mine"}}, "url", "Start page", "CRAWLER_ALLOW_HOSTS", `value="mine"`},
		{url.Values{"url": {"http://site.test/"}, "include": {"/docs/\n("}}, "include", "Include (pattern 2)", "not a valid regular expression", "/docs/\n(</textarea>"},
	}
	for _, tt := range tests {
		tt.form.Set("csrf", tok)
		resp, body := post(t, c, r.srv.URL+"/crawls", tt.form)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `id="crawl-error" data-field="`+tt.id+`"`) ||
			!strings.Contains(body, `Please fix <a href="#`+tt.id+`">`+tt.label+`</a>:`) || !strings.Contains(body, tt.says) {
			t.Errorf("%v: %d, want 400 naming %q and saying %q", tt.form, resp.StatusCode, tt.label, tt.says)
		}
		if !regexp.MustCompile(`id="`+tt.id+`"[^>]*aria-invalid="true"`).MatchString(body) || !strings.Contains(body, tt.kept) {
			t.Errorf("%v: #%s not marked invalid, or the form lost %s", tt.form, tt.id, tt.kept)
		}
	}
	// Every page names its icon, which is served (browsers asked for /favicon.ico, a
	// 404, and then showed a blank tab icon).
	if !strings.Contains(page, `<link rel="icon" href="/static/icon.svg" type="image/svg+xml">`) {
		t.Error(`the layout has no <link rel="icon">: browsers request /favicon.ico, a 404`)
	}
	icon, err := c.Get(r.srv.URL + "/static/icon.svg")
	if err != nil {
		t.Fatal(err)
	}
	icon.Body.Close()
	if icon.StatusCode != http.StatusOK || icon.Header.Get("Content-Type") != "image/svg+xml" {
		t.Errorf("the icon: %d %q, want 200 image/svg+xml", icon.StatusCode, icon.Header.Get("Content-Type"))
	}
	if status, _ := get(t, c, r.srv.URL+"/crawls/not-a-job"); status != http.StatusNotFound {
		t.Errorf("unknown job: %d, want 404", status)
	}
	if status, _ := get(t, c, r.srv.URL+"/crawls/bad%20id"); status != http.StatusBadRequest {
		t.Errorf("malformed job id: %d, want 400", status)
	}
	status, body := get(t, c, r.srv.URL+"/crawls/"+testJobID)
	if status != http.StatusOK || !strings.Contains(body, "http_404: 1") || !strings.Contains(body, `data-events="/crawls/`+testJobID+`/events"`) ||
		strings.Contains(body, "site.test/<b>") {
		t.Errorf("job page: %d", status)
	}
	// A running job shows a progress bar: 2 pages processed (stored) of 2 + min(10-2
	// allowed, 2 queued + 1 in flight) = 5 known so far.
	if !strings.Contains(body, `<progress id="c-progress" max="5" value="2">`) || !strings.Contains(body, "2 of 5 known so far, at most 10") {
		t.Errorf("the running job's page shows no progress bar of 2 pages of 5")
	}
	if status, body := get(t, c, r.srv.URL+"/documents"); status != http.StatusOK || strings.Contains(body, "<script>window") {
		t.Errorf("documents page: %d, or the title was not escaped", status)
	}
	if status, body := get(t, c, r.srv.URL+"/documents?after=%27%20OR%201"); status != http.StatusBadRequest ||
		!strings.Contains(body, `data-param="after"`) || strings.Contains(body, `data-param="domain"`) {
		t.Errorf("bad after: %d, want 400 naming the field after (not domain)", status)
	}
	// The event stream is relayed as it comes.
	resp, err := c.Get(r.srv.URL + "/crawls/" + testJobID + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := new(strings.Builder)
	_, _ = fmt.Fprint(buf, readAll(resp))
	if resp.Header.Get("Content-Type") != "text/event-stream" || !strings.Contains(buf.String(), "event: summary") {
		t.Errorf("events: %q %q", resp.Header.Get("Content-Type"), buf.String())
	}
	// A crawl the crawler does not know, or an id that is none, is a problem
	// document (as /crawls/{id}/status answers), with the pages' security headers.
	for _, tc := range []struct{ path, field, detail string }{
		{"/crawls/9f0e1d2c-3b4a-4596-8877-665544332211/events", "", "crawl job 9f0e1d2c-3b4a-4596-8877-665544332211 not found"},
		{"/crawls/bad.id/events", "id", `There is no crawl "bad.id"`},
	} {
		resp, err := c.Get(r.srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Status        int
			Field, Detail string
		}
		err = json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") != "application/problem+json" || err != nil ||
			p.Status != http.StatusNotFound || p.Field != tc.field || !strings.Contains(p.Detail, tc.detail) ||
			resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: %d %q %+v (%v), want a 404 problem document saying %q", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), p, err, tc.detail)
		}
	}
}

func readAll(resp *http.Response) string {
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

func TestETA(t *testing.T) {
	j := &apiclient.CrawlStatus{Status: "running"}
	j.Spec.MaxPages = 100
	j.Counters.Stored, j.Counters.Queued, j.Counters.InFlight = 40, 20, 2
	j.Rates.PagesPerSec = 2
	if got := eta(j, 40); got != "11s" { // min(100-40, 22) = 22 pages at 2/s
		t.Errorf("eta %q, want 11s", got)
	}
	j.Counters.Queued = 200
	if got := eta(j, 40); got != "30s" { // the budget (60) is smaller than the queue
		t.Errorf("eta %q, want 30s", got)
	}
	j.Status = "done"
	if got := eta(j, 40); got != "finished" {
		t.Errorf("eta %q", got)
	}
}

// The crawler's 4xx answers are passed on (detail, or title when it gave none; a
// refused key named as such); 429 and 5xx, like no answer, mean "unavailable".
func TestCrawlerRefusal(t *testing.T) {
	cases := []struct {
		err    error
		ok     bool
		detail string
	}{
		{&apiclient.Error{Service: "crawler", Status: 400, Title: "invalid request", Detail: "bad url", Field: "url"}, true, "bad url"},
		{fmt.Errorf("wrapped: %w", &apiclient.Error{Status: 404, Title: "not found"}), true, "not found"},
		{&apiclient.Error{Status: 401, Detail: "missing bearer"}, true, "the crawler refused this server's API key (KGS_CRAWLER_API_KEY)"},
		{&apiclient.Error{Status: 429, Detail: "slow down"}, false, ""},
		{&apiclient.Error{Status: 502, Detail: "bad gateway"}, false, ""},
		{fmt.Errorf("%w: crawler", apiclient.ErrUnreachable), false, ""},
	}
	for _, tc := range cases {
		got, ok := crawlerRefusal(tc.err)
		if ok != tc.ok || (ok && got.Detail != tc.detail) {
			t.Errorf("%v: got %+v %v", tc.err, got, ok)
		}
	}
	if got, _ := crawlerRefusal(cases[0].err); got.Field != "url" || got.Status != 400 {
		t.Errorf("field/status not kept: %+v", got)
	}
}

// The crawl page shows the crawler's warnings in a status callout, escaped, with
// the counters of pages rendered by JavaScript and of deleted documents; a
// crawl without warnings has the (empty) live region its script fills.
func TestCrawlPageWarningsAndCounters(t *testing.T) {
	r := newRig(t, nil)
	c := r.client(t)
	status, body := get(t, c, r.srv.URL+"/crawls/"+shellJobID)
	if status != http.StatusOK {
		t.Fatalf("shell crawl page: %d", status)
	}
	box := regexp.MustCompile(`(?s)<div id="c-warnings" role="status">(.*?)</div></div>`).FindStringSubmatch(body)
	if box == nil {
		t.Fatalf("the crawl page has no warnings callout with role=status")
	}
	escaped := `(an empty &lt;div id=&#34;app&#34;&gt;); the crawler reads the HTML the server sends and found no text.`
	if !strings.Contains(box[1], `class="notice warn warnings"`) || !strings.Contains(box[1], "<strong>Warning</strong>") ||
		!strings.Contains(box[1], "<li>3 of 4 pages are rendered by JavaScript in the browser "+escaped) {
		t.Errorf("the callout does not say the warning in words, escaped: %s", box[1])
	}
	if strings.Contains(body, `<div id="app">`) {
		t.Errorf("the warning's markup reached the page unescaped")
	}
	for _, want := range []string{`<dd id="c-script_rendered">3</dd>`, `<dd id="c-deleted">1</dd>`, `<dd id="c-empty">3</dd>`,
		`<ul id="c-deleted-by" class="plain"><li>script_rendered: 1</li></ul>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the crawl page lacks the counter %s", want)
		}
	}
	_, body = get(t, c, r.srv.URL+"/crawls/"+testJobID)
	if !strings.Contains(body, `<div id="c-warnings" role="status"></div>`) || !strings.Contains(body, `<dd id="c-script_rendered">0</dd>`) {
		t.Errorf("a crawl without warnings lacks the empty live region or the zero counters")
	}
}

// The list of finished pages says each outcome the crawler sends in words: the
// page's legend holds them (app.js takes its labels from it) and the reasons'
// words ride in data-reasons.
func TestCrawlPageOutcomeWords(t *testing.T) {
	r := newRig(t, nil)
	_, body := get(t, r.client(t), r.srv.URL+"/crawls/"+testJobID)
	legend := regexp.MustCompile(`<div data-outcome="([a-z_]+)"><dt>([^<]+)</dt><dd>([^<]+)</dd></div>`).FindAllStringSubmatch(body, -1)
	got := map[string][2]string{}
	for _, m := range legend {
		got[m[1]] = [2]string{m[2], m[3]}
	}
	// The outcomes of the crawler's page events (services/crawler/README.md).
	for _, key := range []string{"stored", "unchanged", "deleted", "empty", "noindex", "script_rendered", "skipped", "failed"} {
		if got[key][0] == "" || got[key][1] == "" {
			t.Errorf("the legend does not say what %q means", key)
		}
	}
	if l := got["script_rendered"][0]; !strings.Contains(l, "JavaScript") || !strings.Contains(l, "browser") {
		t.Errorf("script_rendered is labelled %q; it must say JavaScript renders it in a browser", l)
	}
	if l := got["noindex"][0]; !strings.Contains(l, "not indexed") {
		t.Errorf("noindex is labelled %q", l)
	}
	if l := got["deleted"][0]; !strings.Contains(l, "removed") {
		t.Errorf("deleted is labelled %q", l)
	}
	m := regexp.MustCompile(`<ol id="c-pages"[^>]* data-reasons="([^"]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("the list of pages has no data-reasons")
	}
	var words map[string]string
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &words); err != nil || !strings.Contains(words["robots"], "robots.txt") {
		t.Errorf("data-reasons %q: %v", m[1], err)
	}
}

// The crawls list marks each row for app.js (job, status, the status URL, the
// cells it refreshes) and says, for the page without the script, when its
// counts were read; it never reloads itself.
func TestCrawlsListLiveHooks(t *testing.T) {
	r := newRig(t, nil)
	c := r.client(t)
	_, body := get(t, c, r.srv.URL+"/crawls")
	row := regexp.MustCompile(`(?s)<tr data-job="` + testJobID + `" data-status="running" data-status-url="/crawls/` + testJobID + `/status">(.*?)</tr>`).FindStringSubmatch(body)
	if row == nil {
		t.Fatalf("the running crawl's row has no live-update hooks")
	}
	for _, want := range []string{`data-k="status">running</span>`, `data-k="stored">2</td>`, `data-k="failed">1</td>`, `data-k="chunks">7</td>`, `data-k="warn" hidden>`} {
		if !strings.Contains(row[1], want) {
			t.Errorf("the running row lacks %s", want)
		}
	}
	if !regexp.MustCompile(`(?s)<tr data-job="` + shellJobID + `" data-status="done"[^>]*>.*?<div class="jwarn" data-k="warn">`).MatchString(body) {
		t.Errorf("the row of a crawl with a warning does not show it")
	}
	if !regexp.MustCompile(`<p id="jobs-live" class="hint" role="status">Counts as of \d\d:\d\d:\d\d UTC; reload the page for newer numbers.</p>`).MatchString(body) ||
		!strings.Contains(body, `<table class="jobs" id="jobs" data-poll-ms="2000" data-list-url="/crawls.json" data-list-poll-ms="5000">`) {
		t.Errorf("the list lacks its note for the page without script, or the table's hooks")
	}
	if strings.Contains(strings.ToLower(body), "http-equiv") {
		t.Errorf("the list reloads itself (meta refresh)")
	}
	_, js := get(t, c, r.srv.URL+"/static/app.js")
	for _, want := range []string{"followRows(jobs)", "data-status-url", "'data-live', 'off'"} {
		if !strings.Contains(js, want) {
			t.Errorf("app.js lacks %q", want)
		}
	}
}

// GET /crawls/{id}/status answers the crawler's status as JSON for app.js; bad
// ids, unknown crawls and a missing crawler are problem documents.
func TestCrawlStatusJSON(t *testing.T) {
	r := newRig(t, nil)
	c := r.client(t)
	resp, err := c.Get(r.srv.URL + "/crawls/" + shellJobID + "/status")
	if err != nil {
		t.Fatal(err)
	}
	var st apiclient.CrawlStatus
	err = json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
		resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("status: %d %q %v", resp.StatusCode, resp.Header.Get("Content-Type"), err)
	}
	if st.Status != "done" || st.Counters.Stored != 1 || st.Counters.ScriptRendered != 3 || st.Counters.Deleted != 1 || len(st.Warnings) != 1 {
		t.Errorf("status relayed as %+v", st)
	}
	for _, tc := range []struct {
		path  string
		code  int
		field string
	}{
		{"/crawls/bad%20id/status", http.StatusBadRequest, `"field":"id"`},
		{"/crawls/not-a-job/status", http.StatusNotFound, `"detail":"crawl job not found"`},
		{"/crawls/" + testJobID + "/status?limit=5", http.StatusBadRequest, `"field":"limit"`},
	} {
		resp, err := c.Get(r.srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		b := readAll(resp)
		resp.Body.Close()
		if resp.StatusCode != tc.code || resp.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(b, tc.field) {
			t.Errorf("%s: %d %q %s", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	}
	w, err := New(Deps{Search: &fakeSearch{resp: sampleResponse()}})
	if err != nil {
		t.Fatal(err)
	}
	e := gin.New()
	w.Register(e)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/crawls/"+testJobID+"/status", nil))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "no crawler configured") {
		t.Errorf("without a crawler: %d %s", rec.Code, rec.Body.String())
	}
}

// TestCookiesSecureBehindTLSProxy: behind a reverse proxy that terminates TLS
// (X-Forwarded-Proto or Forwarded proto=https), the CSRF and session cookies
// are Secure, so the browser never sends them over plain HTTP; served plainly
// (loopback, no proxy) they are not, or the browser would drop them.
func TestCookiesSecureBehindTLSProxy(t *testing.T) {
	const key = "web-test-key-0123456789"
	r := newRig(t, []string{key})
	do := func(method, path string, hdr map[string]string, form url.Values) *http.Response {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, _ := http.NewRequest(method, r.srv.URL+path, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp
	}
	cookie := func(resp *http.Response, name string) *http.Cookie {
		for _, c := range resp.Cookies() {
			if c.Name == name {
				return c
			}
		}
		t.Fatalf("no %s cookie in %v", name, resp.Header["Set-Cookie"])
		return nil
	}
	for _, tc := range []struct {
		name   string
		hdr    map[string]string
		secure bool
	}{
		{"plain HTTP", nil, false},
		{"X-Forwarded-Proto https", map[string]string{"X-Forwarded-Proto": "https"}, true},
		{"X-Forwarded-Proto of two proxies", map[string]string{"X-Forwarded-Proto": "HTTPS, http"}, true},
		{"Forwarded proto=https", map[string]string{"Forwarded": `for=192.0.2.60;proto="https";by=203.0.113.43`}, true},
		{"X-Forwarded-Proto http", map[string]string{"X-Forwarded-Proto": "http"}, false},
	} {
		csrf := cookie(do(http.MethodGet, "/login", tc.hdr, nil), csrfCookie)
		if csrf.Secure != tc.secure {
			t.Errorf("%s: CSRF cookie Secure %v, want %v", tc.name, csrf.Secure, tc.secure)
		}
		hdr := map[string]string{"Cookie": csrfCookie + "=" + csrf.Value}
		for k, v := range tc.hdr {
			hdr[k] = v
		}
		form := url.Values{"key": {key}, "csrf": {r.web.mac("csrf", csrf.Value)}}
		resp := do(http.MethodPost, "/login", hdr, form)
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: login got %d, want 303", tc.name, resp.StatusCode)
		}
		if s := cookie(resp, sessionCookie); s.Secure != tc.secure || !s.HttpOnly || s.SameSite != http.SameSiteStrictMode {
			t.Errorf("%s: session cookie Secure %v HttpOnly %v SameSite %v, want Secure %v, HttpOnly, Strict", tc.name, s.Secure, s.HttpOnly, s.SameSite, tc.secure)
		}
	}
}
