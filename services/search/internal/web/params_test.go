package web

import (
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// paramNotice is the page's notice of a URL parameter it cannot use.
var paramNotice = regexp.MustCompile(`(?s)<div class="notice bad" role="alert" id="param-error" data-param="([^"]*)">(.*?)</div>`)

// Every page answers a known URL parameter with a value it cannot use with 400
// and itself (layout, navigation, its forms), saying above its content which
// parameter, what it takes, and linking to the page without it. Unknown
// parameters (tracking) are ignored.
func TestPagesRefuseBadParameters(t *testing.T) {
	r := newRig(t, nil)
	c := r.client(t)
	tests := []struct {
		path    string
		param   string // the parameter named (data-param)
		says    string // part of the notice: the values it takes
		without string // the link to the page without it
		instead string // the link to a value that works, "" when none
		nav     string // the navigation entry marked current
		content string // a part of the page that must render all the same
	}{
		{"/crawls?status=bogus", "status", "queued, running, done, failed or cancelled", "/crawls", "", "/crawls", `id="crawl-filter"`},
		{"/crawls?status=bogus", "status", "queued, running, done, failed or cancelled", "/crawls", "", "/crawls", `id="crawl-form"`},
		{"/crawls?limit=abc", "limit", "from 1 to 100", "/crawls", "", "/crawls", `id="crawl-form"`},
		{"/crawls?limit=-1", "limit", "from 1 to 100", "/crawls", "", "/crawls", `id="crawl-filter"`},
		{"/crawls?limit=100000000000000000000", "limit", "from 1 to 100", "/crawls", "", "/crawls", `id="crawl-filter"`},
		{"/crawls?status=done&limit=0&utm_source=x", "limit", "from 1 to 100", "/crawls?status=done", "", "/crawls", `id="crawl-filter"`},
		{"/crawls?status=done&status=failed", "status", "Give it once", "/crawls", "", "/crawls", `id="crawl-form"`},
		{"/crawls?status=%zz", "", "navigation link", "/crawls", "", "/crawls", `id="crawl-form"`},
		{"/documents?limit=abc", "limit", "from 1 to 200", "/documents", "", "/documents", `<form method="get" action="/documents" class="rowform">`},
		{"/documents?limit=-5&domain=site.test", "limit", "from 1 to 200", "/documents?domain=site.test", "", "/documents", `id="domain"`},
		{"/documents?limit=100000", "limit", "from 1 to 200", "/documents", "", "/documents", `id="domain"`},
		{"/documents?after=abc", "after", "Next page link", "/documents", "", "/documents", `id="domain"`},
		{"/documents?after=0123456789ABCDEF0123456789ABCDEF", "after", "32 hexadecimal digits", "/documents", "", "/documents", `id="domain"`},
		{"/documents?domain=" + url.QueryEscape("https://docs.python.org/3/"), "domain", "host name such as docs.python.org", "/documents", "/documents?domain=docs.python.org", "/documents", `id="domain"`},
		{"/documents?domain=site.test:8080&limit=10", "domain", "no scheme (https://), port", "/documents?limit=10", "/documents?domain=site.test&limit=10", "/documents", `id="domain"`},
		{"/documents?domain=" + url.QueryEscape("two words"), "domain", "host name", "/documents", "", "/documents", `id="domain"`},
		{"/documents?domain=b%C3%BCcher.test", "domain", "xn-- form", "/documents", "", "/documents", `id="domain"`},
		{"/documents?deleted=yes", "deleted", "takes no other value", "/documents", "", "/documents", `id="domain"`},
		{"/documents?removed=3", "removed", "with the domain", "/documents", "", "/documents", `id="domain"`},
		{"/documents?domain=site.test&more=1", "more", "goes with removed", "/documents?domain=site.test", "", "/documents", `id="domain"`},
		{"/documents?domain=a.test&domain=b.test", "domain", "Give it once", "/documents", "", "/documents", `id="domain"`},
	}
	for _, tt := range tests {
		status, body := get(t, c, r.srv.URL+tt.path)
		if status != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", tt.path, status)
			continue
		}
		m := paramNotice.FindStringSubmatch(body)
		if m == nil {
			t.Errorf("%s: no notice of the parameter", tt.path)
			continue
		}
		text := html.UnescapeString(m[2])
		if m[1] != tt.param || !strings.Contains(text, tt.says) {
			t.Errorf("%s: the notice names %q and says %q; want %q and %q", tt.path, m[1], text, tt.param, tt.says)
		}
		if tt.param != "" && !strings.Contains(text, tt.param+"=") && !strings.Contains(text, "gives "+tt.param) {
			t.Errorf("%s: the notice does not name the parameter %s: %q", tt.path, tt.param, text)
		}
		if !strings.Contains(m[2], `<a href="`+html.EscapeString(tt.without)+`">Open the page without`) {
			t.Errorf("%s: no link to %s in %q", tt.path, tt.without, m[2])
		}
		if tt.instead != "" && !strings.Contains(m[2], `<a href="`+html.EscapeString(tt.instead)+`">`) {
			t.Errorf("%s: no link to %s in %q", tt.path, tt.instead, m[2])
		}
		// The rest of the page: its title says error, the navigation marks it, its forms are there.
		for _, want := range []string{"<title>Error: ", `<nav aria-label="Main">`, `href="` + tt.nav + `" aria-current="page"`, tt.content} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: the page lacks %s", tt.path, want)
			}
		}
		// Nothing is listed as if the parameter had not been given.
		if strings.Contains(body, `<tr data-job=`) || strings.Contains(body, `<tr data-doc=`) || strings.Contains(body, `id="docs-empty"`) || strings.Contains(body, `id="jobs-empty"`) {
			t.Errorf("%s: the page lists as if the parameter were not there", tt.path)
		}
	}
	// A control named by the notice is marked invalid.
	if _, body := get(t, c, r.srv.URL+"/crawls?status=bogus"); !regexp.MustCompile(`id="filter-status"[^>]*aria-invalid="true" aria-describedby="param-error"`).MatchString(body) {
		t.Error("the status filter is not marked invalid")
	}
	if _, body := get(t, c, r.srv.URL+"/documents?domain=http://x.test/"); !regexp.MustCompile(`id="domain"[^>]*aria-invalid="true" aria-describedby="param-error"`).MatchString(body) {
		t.Error("the domain filter is not marked invalid")
	}
}

// Good values and unknown (tracking) parameters are used and ignored: the pages
// answer 200 and pass the filter on to the crawler.
func TestPagesUseGoodParameters(t *testing.T) {
	r := newRig(t, nil)
	c := r.client(t)
	for _, tt := range []struct{ path, want string }{
		{"/crawls?utm_source=newsletter&fbclid=x", `<tr data-job="` + testJobID + `"`},
		{"/crawls?status=done", `<tr data-job="` + shellJobID + `"`},
		{"/crawls?status=all&limit=100", `<tr data-job="` + testJobID + `"`},
		{"/crawls?status=queued", `<p id="jobs-empty">No queued crawls.`},
		{"/documents?domain=Site.Test.&utm_campaign=x", `<tr data-doc=`},
		{"/documents?limit=200&after=0123456789abcdef0123456789abcdef", `<tr data-doc=`},
		{"/documents?domain=%5B::1%5D", `<tr data-doc=`},
		{"/?utm_source=x", `id="q"`},
	} {
		status, body := get(t, c, r.srv.URL+tt.path)
		if status != http.StatusOK || !strings.Contains(body, tt.want) || strings.Contains(body, `id="param-error"`) {
			t.Errorf("%s: %d, want 200 with %s", tt.path, status, tt.want)
		}
	}
	if _, body := get(t, c, r.srv.URL+"/crawls?status=done"); strings.Contains(body, `<tr data-job="`+testJobID+`"`) ||
		!strings.Contains(body, `<option value="done" selected>`) || !strings.Contains(body, `data-list-url="/crawls.json?status=done"`) {
		t.Error("the list of done crawls shows the running one, or forgets its filter")
	}
	r.crawler.mu.Lock()
	q := strings.Join(r.crawler.listQueries, " ")
	r.crawler.mu.Unlock()
	for _, want := range []string{"limit=20", "limit=20&status=done", "limit=100", "limit=20&status=queued"} {
		if !strings.Contains(" "+q+" ", " "+want+" ") {
			t.Errorf("the crawler was asked %q, not %s", q, want)
		}
	}
}

// The search page reads its options even without search words, refuses a
// repeated parameter and a bad MMR λ, and links to the page without the
// parameter at fault.
func TestSearchPageParameters(t *testing.T) {
	r := newRig(t, nil)
	c := r.client(t)
	tests := []struct{ query, id, says, without string }{
		{"k=abc", "k", "whole number from 1 to", "/"},
		{"fusion=best&tags=a", "fusion", "", "/?tags=a"},
		{"q=a&q=b", "q", "gives q 2 times", ""},
		{"q=x&mmr=on&lambda=abc", "lambda", "not a number from 0 to 1", "/?q=x"},
		{"q=x&lambda=2", "lambda", "not a number from 0 to 1", "/?q=x"},
		{"q=x&weights=vector:1&w_bm25=abc", "w_bm25", "not a number from 0 to 1", "/?q=x&weights=vector%3A1"},
		{"q=x&k=5&x=2", "", "x=1 marks a search sent from the form", "/?k=5&q=x"},
		{"q=x&expand=maybe&utm_source=y", "expand", "true or false", "/?q=x"},
	}
	for _, tt := range tests {
		status, body := get(t, c, r.srv.URL+"/?"+tt.query)
		m := regexp.MustCompile(`(?s)<div class="notice bad" role="alert" id="search-error" data-field="([^"]*)">(.*?)</div>`).FindStringSubmatch(body)
		if status != http.StatusBadRequest || m == nil {
			t.Errorf("%s: %d, want 400 with the error", tt.query, status)
			continue
		}
		if m[1] != tt.id || !strings.Contains(html.UnescapeString(m[2]), tt.says) {
			t.Errorf("%s: the error names %q and says %q", tt.query, m[1], html.UnescapeString(m[2]))
		}
		link := regexp.MustCompile(`<a href="([^"]*)" id="search-without">`).FindStringSubmatch(m[2])
		switch {
		case tt.without == "" && link != nil:
			t.Errorf("%s: a link without the search words", tt.query)
		case tt.without != "" && (link == nil || html.UnescapeString(link[1]) != tt.without):
			t.Errorf("%s: the link without the parameter is %v, want %s", tt.query, link, tt.without)
		}
		if !strings.Contains(body, `href="/" aria-current="page"`) || !strings.Contains(body, `id="q"`) {
			t.Errorf("%s: the search page around the error is missing", tt.query)
		}
	}
	r.search.mu.Lock()
	defer r.search.mu.Unlock()
	if r.search.calls != 0 {
		t.Errorf("a refused address was searched %d times", r.search.calls)
	}
}

// GET /crawls.json lists the crawls of the page's filter for app.js: the
// crawler's statuses, newest first; its parameters are read strictly, errors
// are problem documents.
func TestCrawlsJSON(t *testing.T) {
	r := newRig(t, nil)
	c := r.client(t)
	r.crawler.addCrawl("1f2e3d4c-0000-4000-8000-000000000001", "queued", "http://new.test/")
	var out struct {
		Crawls []struct{ ID, Status, URL string } `json:"crawls"`
	}
	resp, err := c.Get(r.srv.URL + "/crawls.json")
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != "no-store" || len(out.Crawls) != 3 ||
		out.Crawls[0].ID != "1f2e3d4c-0000-4000-8000-000000000001" || out.Crawls[1].ID != testJobID {
		t.Fatalf("/crawls.json: %d %v %+v", resp.StatusCode, err, out)
	}
	resp, err = c.Get(r.srv.URL + "/crawls.json?status=done&limit=5")
	if err != nil {
		t.Fatal(err)
	}
	out.Crawls = nil
	err = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if err != nil || len(out.Crawls) != 1 || out.Crawls[0].ID != shellJobID {
		t.Errorf("/crawls.json?status=done: %v %+v", err, out)
	}
	for _, tc := range []struct{ query, field, says string }{
		{"status=bogus", "status", "queued, running"},
		{"limit=0", "limit", "from 1 to 100"},
		{"limit=abc", "limit", "from 1 to 100"},
		{"state=done", "state", `did you mean \"status\"`},
		{"utm_source=x", "utm_source", "unknown parameter"},
		{"status=done&status=failed", "status", "give it once"},
	} {
		resp, err := c.Get(r.srv.URL + "/crawls.json?" + tc.query)
		if err != nil {
			t.Fatal(err)
		}
		b := readAll(resp)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/problem+json" ||
			!strings.Contains(b, `"field":"`+tc.field+`"`) || !strings.Contains(b, tc.says) {
			t.Errorf("%s: %d %s", tc.query, resp.StatusCode, b)
		}
	}
}

// An empty list says why and what to do, with a link.
func TestEmptyListsSayWhatToDo(t *testing.T) {
	r := newRig(t, nil)
	c := r.client(t)
	for _, tt := range []struct{ path, want string }{
		{"/documents?domain=nothing.test", `<p id="docs-empty">No stored documents for nothing.test. The filter takes the exact host a page was crawled from (docs.python.org is not www.docs.python.org). <a href="/documents">Show the documents of every host</a>.</p>`},
		{"/documents?domain=nothing.test&limit=10&after=0123456789abcdef0123456789abcdef", `<p id="docs-empty">No more documents on this page of the list. <a href="/documents?domain=nothing.test&amp;limit=10">Back to the first page</a>.</p>`},
		{"/crawls?status=cancelled", `<p id="jobs-empty">No cancelled crawls. <a href="/crawls">Show crawls of every status</a>.</p>`},
	} {
		status, body := get(t, c, r.srv.URL+tt.path)
		if status != http.StatusOK || !strings.Contains(body, tt.want) {
			t.Errorf("%s: %d, want %s", tt.path, status, tt.want)
		}
	}
	// A crawl page's list of pages, empty once the crawl has ended, says so and
	// links what the crawl stored.
	for id, want := range map[string]string{
		shellJobID: `<p class="hint" id="pages-note">This crawl has ended: its pages are listed here only while it runs and this page is open. What it stored is in <a href="/documents?domain=spa.test">the stored documents of spa.test</a>.</p>`,
		testJobID:  `<p class="hint" id="pages-note">Pages appear here while this page is open and the crawl runs. <a href="/documents?domain=site.test">the stored documents of site.test</a>.</p>`,
	} {
		if _, body := get(t, c, r.srv.URL+"/crawls/"+id); !strings.Contains(body, want) {
			t.Errorf("the page of crawl %s lacks %s", id, want)
		}
	}
	// The empty crawls list's table is there (hidden) for the crawls app.js adds.
	if _, body := get(t, c, r.srv.URL+"/crawls?status=cancelled"); !strings.Contains(body, `data-list-url="/crawls.json?status=cancelled" data-list-poll-ms="5000" hidden>`) {
		t.Error("the empty list has no hidden table to add new crawls to")
	}
}

// The login page's next must be a page of this site: another site's address is
// said (400, the login form still there, going to the crawls page), not silently
// replaced. A refused form sends to the login with the page it came from as a
// path, which the login page accepts.
func TestLoginNext(t *testing.T) {
	r := newRig(t, []string{"web-test-key-0123456789"})
	c := r.client(t)
	for _, tt := range []struct {
		next   string
		status int
		hidden string
	}{
		{"https://evil.test/", http.StatusBadRequest, "/crawls"},
		{"//evil.test/x", http.StatusBadRequest, "/crawls"},
		{"/documents?domain=site.test", http.StatusOK, "/documents?domain=site.test"},
		{"", http.StatusOK, "/crawls"},
	} {
		status, body := get(t, c, r.srv.URL+"/login?utm_source=x&next="+url.QueryEscape(tt.next))
		m := paramNotice.FindStringSubmatch(body)
		if status != tt.status || (m != nil) != (tt.status == http.StatusBadRequest) ||
			!strings.Contains(body, `<input type="hidden" name="next" value="`+html.EscapeString(tt.hidden)+`">`) || !strings.Contains(body, `id="key"`) {
			t.Errorf("next=%q: %d, notice %v; want %d and the form going to %s", tt.next, status, m != nil, tt.status, tt.hidden)
			continue
		}
		if m != nil && (m[1] != "next" || !strings.Contains(m[2], `<a href="/login?utm_source=x">`) && !strings.Contains(m[2], `<a href="/login">`)) {
			t.Errorf("next=%q: the notice %q", tt.next, m[2])
		}
	}
	_, page := get(t, c, r.srv.URL+"/login")
	req, _ := http.NewRequest(http.MethodPost, r.srv.URL+"/crawls", strings.NewReader(url.Values{"csrf": {csrfOf(t, page)}, "url": {"http://site.test/"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Referer", r.srv.URL+"/crawls?status=done")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(resp)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, `href="/login?next=%2Fcrawls%3Fstatus%3Ddone"`) {
		t.Errorf("a refused form links the login as %q", regexp.MustCompile(`href="/login[^"]*"`).FindString(body))
	}
}
