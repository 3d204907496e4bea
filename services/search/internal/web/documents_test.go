package web

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// calls is what the fake crawler's DELETE /api/v1/documents?domain= got.
func (f *fakeCrawler) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.domainCalls...)
}

func TestDeleteDomainButton(t *testing.T) {
	r := newRig(t, nil) // no keys: every browser may delete
	c := r.client(t)
	if _, page := get(t, c, r.srv.URL+"/documents"); strings.Contains(page, `id="delete-domain"`) {
		t.Error("the unfiltered list offers to delete a whole site")
	}
	_, page := get(t, c, r.srv.URL+"/documents?domain=site.test")
	form := regexp.MustCompile(`(?s)<form method="post" action="/documents/delete-domain" class="confirm" id="delete-domain" data-confirm="([^"]*)">(.*?)</form>`).FindStringSubmatch(page)
	if form == nil {
		t.Fatalf("the list filtered by site.test has no delete-all form:\n%s", page)
	}
	if ask := html.UnescapeString(form[1]); !strings.Contains(ask, "all documents of site.test") || !strings.Contains(ask, "cannot be undone") {
		t.Errorf("the confirm dialog asks %q: it must name the host and say it cannot be undone", ask)
	}
	for _, want := range []string{`name="csrf" value="` + csrfOf(t, page) + `"`, `name="domain" value="site.test"`,
		`<button type="submit" class="danger">Delete all documents of site.test</button>`} {
		if !strings.Contains(form[2], want) {
			t.Errorf("the delete-all form lacks %s", want)
		}
	}
	// A domain that is no host name is refused, escaped wherever the page repeats it.
	status, page := get(t, c, r.srv.URL+"/documents?domain="+url.QueryEscape(`<b>x"y`))
	if status != http.StatusBadRequest || strings.Contains(page, `<b>x`) || !strings.Contains(page, `value="&lt;b&gt;x&#34;y"`) ||
		strings.Contains(page, `id="delete-domain"`) {
		t.Errorf("the bad host reached the page unescaped, or was used: %d", status)
	}

	// With keys, a browser without a login sees no such form.
	k := newRig(t, []string{"web-test-key-0123456789"})
	if _, page := get(t, k.client(t), k.srv.URL+"/documents?domain=site.test"); strings.Contains(page, `id="delete-domain"`) {
		t.Error("the delete-all form is shown before logging in")
	}
}

func TestDeleteDomainNeedsCSRFAndLogin(t *testing.T) {
	r := newRig(t, []string{"web-test-key-0123456789"})
	c := r.client(t)
	_, page := get(t, c, r.srv.URL+"/login") // the only form of a browser without a login
	tok := csrfOf(t, page)
	// The refusal links back to the documents page, not to the form's address (no page).
	if resp, body := post(t, c, r.srv.URL+"/documents/delete-domain", url.Values{"domain": {"site.test"}}); resp.StatusCode != http.StatusForbidden ||
		!strings.Contains(body, `<a href="/documents">Back to the documents</a>`) {
		t.Errorf("without CSRF: %d, want 403 linking back to /documents", resp.StatusCode)
	}
	if _, body := post(t, c, r.srv.URL+"/crawls/"+testJobID+"/cancel", nil); !strings.Contains(body, `<a href="/crawls/`+testJobID+`">Back to the crawl</a>`) {
		t.Error("a cancel refused for its CSRF token does not link back to the crawl")
	}
	if resp, _ := post(t, r.client(t), r.srv.URL+"/documents/delete-domain", url.Values{"domain": {"site.test"}, "csrf": {tok}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a token without its cookie: %d, want 403", resp.StatusCode)
	}
	if resp, body := post(t, c, r.srv.URL+"/documents/delete-domain", url.Values{"domain": {"site.test"}, "csrf": {tok}}); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "Log in") {
		t.Errorf("without login: %d, want 401 with a way to log in", resp.StatusCode)
	}
	if got := r.crawler.calls(); len(got) != 0 {
		t.Errorf("refused requests reached the crawler: %v", got)
	}
}

func TestDeleteDomainDeletesEveryBatch(t *testing.T) {
	r := newRig(t, nil)
	c := r.client(t)
	_, page := get(t, c, r.srv.URL+"/documents?domain=site.test")
	tok := csrfOf(t, page)
	// 7 documents, 3 a call: three calls, the last saying none are left; the host
	// as the crawler names it (lower case) is the page's filter.
	resp, body := post(t, c, r.srv.URL+"/documents/delete-domain", url.Values{"domain": {" Site.Test "}, "csrf": {tok}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/documents?domain=site.test&removed=7" {
		t.Fatalf("delete: %d to %q: %s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	if got := r.crawler.calls(); strings.Join(got, ",") != "Site.Test,Site.Test,Site.Test" {
		t.Errorf("crawler calls %q, want three for the host (it stops when more is false)", got)
	}
	_, page = get(t, c, r.srv.URL+resp.Header.Get("Location"))
	if !strings.Contains(page, `id="domain-deleted">Deleted 7 documents of site.test, with their chunks and their entries in the graph.`) {
		t.Errorf("the page after the delete does not report the count:\n%s", page)
	}
	if strings.Contains(page, `id="delete-next"`) {
		t.Error("the page offers a next batch when none is left")
	}
	// Nothing left: the next delete says so.
	resp, _ = post(t, c, r.srv.URL+"/documents/delete-domain", url.Values{"domain": {"site.test"}, "csrf": {tok}})
	if _, page = get(t, c, r.srv.URL+resp.Header.Get("Location")); !strings.Contains(page, "site.test had no stored documents; nothing was deleted.") {
		t.Errorf("deleting a host without documents: %q", resp.Header.Get("Location"))
	}
	// A notice in a hand-made address that is not a count is refused, not shown.
	if status, page := get(t, c, r.srv.URL+"/documents?domain=site.test&removed=lots"); status != http.StatusBadRequest ||
		strings.Contains(page, `id="domain-deleted"`) || !strings.Contains(page, `data-param="removed"`) {
		t.Errorf("removed=lots: %d, a notice or no error naming removed", status)
	}
}

func TestDeleteDomainTimeBound(t *testing.T) {
	r := newRig(t, nil)
	r.web.d.DeleteBudget = time.Nanosecond // over after the first batch (no request is that fast)
	c := r.client(t)
	_, page := get(t, c, r.srv.URL+"/documents?domain=site.test")
	tok := csrfOf(t, page)
	resp, _ := post(t, c, r.srv.URL+"/documents/delete-domain", url.Values{"domain": {"site.test"}, "csrf": {tok}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/documents?domain=site.test&more=1&removed=3" {
		t.Fatalf("delete: %d to %q, want one batch and more=1", resp.StatusCode, resp.Header.Get("Location"))
	}
	_, page = get(t, c, r.srv.URL+resp.Header.Get("Location"))
	// The fake lists one document of the host on one page: that is all the page knows.
	if !strings.Contains(page, `Deleted 3 documents of site.test so far; 1 more remains.`) {
		t.Errorf("the page after a bounded delete does not say more remain:\n%s", page)
	}
	next := regexp.MustCompile(`(?s)<form method="post" action="/documents/delete-domain" class="inline" id="delete-next">(.*?)</form>`).FindStringSubmatch(page)
	if next == nil || !strings.Contains(next[1], `name="domain" value="site.test"`) || !strings.Contains(next[1], `name="csrf" value="`+tok+`"`) ||
		!strings.Contains(next[1], "Delete the next batch") {
		t.Fatalf("no form for the next batch: %v", next)
	}
	// The next batches: 3 more, then the last one.
	for i, want := range []string{"more=1&removed=3", "removed=1"} {
		resp, _ := post(t, c, r.srv.URL+"/documents/delete-domain", url.Values{"domain": {"site.test"}, "csrf": {tok}})
		if got := resp.Header.Get("Location"); got != "/documents?domain=site.test&"+want {
			t.Errorf("batch %d: to %q, want %s", i+2, got, want)
		}
	}
	if got := r.crawler.calls(); len(got) != 3 {
		t.Errorf("crawler calls %q, want one per POST", got)
	}
	// A later page of the list knows nothing of the first: no count is claimed.
	if _, page = get(t, c, r.srv.URL+"/documents?domain=site.test&removed=3&more=1&after=0123456789abcdef0123456789abcdee"); !strings.Contains(page, "so far; more remain.") {
		t.Error("a later page of the list claims a count of what remains")
	}
}

func TestDeleteDomainRefusals(t *testing.T) {
	r := newRig(t, nil)
	c := r.client(t)
	_, page := get(t, c, r.srv.URL+"/documents?domain=busy.test")
	tok := csrfOf(t, page)
	crawlLink := `of <a href="/crawls/` + testJobID + `">http://site.test/&lt;b&gt;</a> would store the site's pages again.`
	tests := []struct {
		domain string
		status int
		says   []string
	}{
		// A crawl covers the host: named by the crawler's detail, found in the crawls list.
		{"busy.test", http.StatusConflict, []string{"<strong>A crawl covers busy.test:</strong> the running crawl " + crawlLink, "Cancel that crawl or let it finish"}},
		// The detail names no crawl: the running crawl of the parent domain is the one.
		{"docs.site.test", http.StatusConflict, []string{"the running crawl " + crawlLink}},
		// The detail names a crawl the list does not hold: linked by its id.
		{"other.test", http.StatusConflict, []string{`the crawl <a href="/crawls/9f0e1d2c-3b4a-4596-8877-665544332211">9f0e1d2c-3b4a-4596-8877-665544332211</a> would store`}},
		// A crawl started after the first batch: what was deleted is said too.
		{"late.test", http.StatusConflict, []string{"the running crawl " + crawlLink, "3 documents of late.test were deleted before this."}},
		{"bad host", http.StatusBadRequest, []string{`<strong>Please fix <a href="#domain">Domain</a>:</strong> not a host name:`}},
		{"", http.StatusBadRequest, []string{`<strong>Please fix <a href="#domain">Domain</a>:</strong> name the host`}},
		{"down.test", http.StatusServiceUnavailable, []string{"The crawler cannot be reached right now"}},
	}
	for _, tt := range tests {
		resp, body := post(t, c, r.srv.URL+"/documents/delete-domain", url.Values{"domain": {tt.domain}, "csrf": {tok}})
		if resp.StatusCode != tt.status || !strings.Contains(body, `id="delete-error"`) {
			t.Errorf("%q: %d, want %d with the documents page's error notice:\n%s", tt.domain, resp.StatusCode, tt.status, body)
			continue
		}
		for _, s := range tt.says {
			if !strings.Contains(body, s) {
				t.Errorf("%q: the notice lacks %q:\n%s", tt.domain, s, regexp.MustCompile(`(?s)<div class="notice bad".*?</div>`).FindString(body))
			}
		}
		// The filter keeps the host as typed, marked invalid when it is at fault.
		input := regexp.MustCompile(`<input id="domain" name="domain" value="([^"]*)"[^>]*>`).FindStringSubmatch(body)
		if input == nil || html.UnescapeString(input[1]) != tt.domain {
			t.Errorf("%q: the filter holds %v", tt.domain, input)
		} else if invalid := strings.Contains(input[0], `aria-invalid="true" aria-describedby="delete-error"`); invalid != (tt.status == http.StatusBadRequest) {
			t.Errorf("%q: the filter marked invalid: %v", tt.domain, invalid)
		}
	}
	if got := r.crawler.calls(); strings.Count(strings.Join(got, ","), "late.test") != 2 || len(got) != 7 {
		t.Errorf("crawler calls %q: want one per host (none for the empty one), two for late.test", got)
	}
}

func TestHostCovers(t *testing.T) {
	for _, tt := range []struct {
		start, domain string
		want          bool
	}{
		{"https://docs.python.org/3/", "docs.python.org", true},
		{"https://www.python.org/", "python.org", true},
		{"https://python.org/", "docs.python.org", true},
		{"https://docs.python.org/", "python.org", false},
		{"https://notpython.org/", "python.org", false},
		{"https://python.org/", "mypython.org", false},
		{"not a url", "python.org", false},
	} {
		if got := hostCovers(tt.start, tt.domain); got != tt.want {
			t.Errorf("hostCovers(%q, %q) = %v, want %v", tt.start, tt.domain, got, tt.want)
		}
	}
}
