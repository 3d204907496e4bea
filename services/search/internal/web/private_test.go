package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
)

// With PrivateReads (KGS_PUBLIC_SEARCH unset) and keys, the read pages redirect to the
// login until the browser logs in; the login page itself stays reachable.
func TestPrivateReadsNeedLogin(t *testing.T) {
	const key = "web-private-key-0123456789"
	fc := newFakeCrawler(t)
	w, err := New(Deps{Search: &fakeSearch{resp: sampleResponse()}, Chunks: fakeChunks{}, Graph: fakeGraph{},
		Docs: fakeDocs{}, Crawler: apiclient.NewCrawler(fc.srv.URL, nil, "crawler-key-0123456789"), APIKeys: []string{key}, PrivateReads: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := serveWeb(t, w)
	r := &rig{web: w, srv: srv}
	c := r.client(t)
	for _, p := range []string{"/?q=python", "/crawls", "/documents", "/entities/e1"} {
		resp, err := c.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?next="+url.QueryEscape(p) {
			t.Errorf("%s without login: %d to %q, want 303 to the login", p, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	status, login := get(t, c, srv.URL+"/login")
	if status != http.StatusOK {
		t.Fatalf("login page: %d", status)
	}
	// The login page must not tell a user of a private server that searching needs no key.
	if strings.Contains(login, "Searching needs none") || !strings.Contains(login, "before anything can be searched") {
		t.Errorf("the login page misstates what needs the key when reads are private")
	}
	resp, _ := post(t, c, srv.URL+"/login", url.Values{"key": {key}, "csrf": {csrfOf(t, login)}, "next": {"/?q=python"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/?q=python" {
		t.Fatalf("login: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if status, body := get(t, c, srv.URL+"/?q=python"); status != http.StatusOK {
		t.Errorf("search after login: %d %s", status, body)
	}
}

// GET /crawls.json needs what /crawls needs: with PrivateReads and keys an
// anonymous request gets a 401 problem document and no crawl (the crawler is not
// even asked); after the login it lists them. With keys but public reads it is as
// open as the page.
func TestCrawlsJSONNeedsTheLoginOfThePage(t *testing.T) {
	const key = "web-private-key-0123456789"
	for _, private := range []bool{true, false} {
		fc := newFakeCrawler(t)
		w, err := New(Deps{Search: &fakeSearch{resp: sampleResponse()}, Crawler: apiclient.NewCrawler(fc.srv.URL, nil, "crawler-key-0123456789"),
			APIKeys: []string{key}, PrivateReads: private})
		if err != nil {
			t.Fatal(err)
		}
		srv := serveWeb(t, w)
		r := &rig{web: w, srv: srv}
		c := r.client(t)
		pageStatus, _ := get(t, c, srv.URL+"/crawls")
		status, body := get(t, c, srv.URL+"/crawls.json")
		fc.mu.Lock()
		asked := len(fc.listQueries)
		fc.mu.Unlock()
		if private {
			if pageStatus != http.StatusSeeOther || status != http.StatusUnauthorized || strings.Contains(body, testJobID) ||
				!strings.Contains(body, `"status":401`) || asked != 0 {
				t.Errorf("private, anonymous: page %d, JSON %d %s, crawler asked %d times; want 303, 401 without crawls, not asked", pageStatus, status, body, asked)
			}
			_, login := get(t, c, srv.URL+"/login")
			if resp, _ := post(t, c, srv.URL+"/login", url.Values{"key": {key}, "csrf": {csrfOf(t, login)}}); resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("login: %d", resp.StatusCode)
			}
			status, body = get(t, c, srv.URL+"/crawls.json")
		} else if pageStatus != http.StatusOK {
			t.Errorf("public reads: the page answers %d", pageStatus)
		}
		if status != http.StatusOK || !strings.Contains(body, testJobID) {
			t.Errorf("private=%v, with access: %d %s", private, status, body)
		}
	}
	// A forged or expired session cookie is no login.
	fc := newFakeCrawler(t)
	w, err := New(Deps{Search: &fakeSearch{resp: sampleResponse()}, Crawler: apiclient.NewCrawler(fc.srv.URL, nil, "k"), APIKeys: []string{key}, PrivateReads: true})
	if err != nil {
		t.Fatal(err)
	}
	e := gin.New()
	w.Register(e)
	for _, ck := range []string{"9999999999.0000", "1.abcd", "garbage"} {
		req := httptest.NewRequest(http.MethodGet, "/crawls.json", nil)
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: ck})
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized || strings.Contains(rec.Body.String(), testJobID) {
			t.Errorf("session cookie %q: %d %s", ck, rec.Code, rec.Body.String())
		}
	}
}
