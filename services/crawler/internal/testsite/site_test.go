package testsite

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
	"github.com/kgsearch/kgsearch/services/crawler/internal/htmltext"
	"github.com/kgsearch/kgsearch/services/crawler/internal/netguard"
)

func newSite(t *testing.T, o Options) *Site {
	t.Helper()
	s := New(o)
	t.Cleanup(s.Close)
	return s
}

var noRedirect = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func get(t *testing.T, rawURL string, hdr http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", rawURL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", rawURL, err)
	}
	return resp, string(b)
}

func TestServes(t *testing.T) {
	s := newSite(t, Options{Articles: 3})
	tests := []struct {
		path       string
		status     int
		ctype      string
		location   string
		bodyHas    []string
		headerHave map[string]string
	}{
		{path: "/", status: 200, ctype: "text/html; charset=utf-8", bodyHas: []string{s.Marker("/"), "cookie-banner", "<nav", "<footer", "/calendar/2026/01"}},
		{path: "/articles/2", status: 200, bodyHas: []string{s.Marker("/articles/2"), `href="3"`}},
		{path: "/articles/2/", status: 301, location: "/articles/2"},
		{path: "/articles", status: 301, location: "/articles/"},
		{path: "/articles/4", status: 404},
		{path: "/old/guide", status: 301, location: "/docs/guide"},
		{path: "/chain/1", status: 302, location: "/chain/2"},
		{path: "/chain/2", status: 307, location: "/chain/3"},
		{path: "/chain/3", status: 301, location: "/docs/chain-end"},
		{path: PathLeave, status: 302, location: OutsideTarget},
		{path: PathMissing, status: 404},
		{path: PathPDF, status: 200, ctype: "application/pdf"},
		{path: PathPNG, status: 200, ctype: "image/png"},
		{path: PathText, status: 200, ctype: "text/plain; charset=utf-8", bodyHas: []string{s.Marker(PathText)}},
		{path: "/search?b=2&a=1&utm_source=x", status: 200, bodyHas: []string{"Search results"}},
		{path: "/search?a=3", status: 404},
		{path: "/calendar/2026/12", status: 200, bodyHas: []string{`href="/calendar/2027/01"`, `href="/calendar/2026/11"`}},
		{path: "/calendar/2026/13", status: 404},
		{path: PathRobots, status: 200, bodyHas: []string{"User-agent: *\nDisallow: /private/\nCrawl-delay: 0.05\n", "Sitemap: " + s.URL() + "/sitemap.xml"}},
		{path: PathSitemap, status: 200, bodyHas: []string{"<loc>" + s.URL() + PathOrphan + "</loc>", "<loc>" + s.URL() + "/articles/3</loc>"}},
		{path: PathOrphan, status: 200, bodyHas: []string{s.Marker(PathOrphan)}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, body := get(t, s.URL()+tt.path, nil)
			if resp.StatusCode != tt.status {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.ctype != "" && resp.Header.Get("Content-Type") != tt.ctype {
				t.Errorf("Content-Type = %q, want %q", resp.Header.Get("Content-Type"), tt.ctype)
			}
			if tt.location != "" && resp.Header.Get("Location") != tt.location {
				t.Errorf("Location = %q, want %q", resp.Header.Get("Location"), tt.location)
			}
			for _, want := range tt.bodyHas {
				if !strings.Contains(body, want) {
					t.Errorf("body lacks %q", want)
				}
			}
		})
	}
	if got := s.Hits("/chain/1"); got != 1 {
		t.Errorf("Hits(/chain/1) = %d, want 1", got)
	}
	if got := s.Hits("/search"); got != 2 {
		t.Errorf("Hits(/search) = %d, want 2 (any query)", got)
	}
}

func TestFailuresThenSuccess(t *testing.T) {
	s := newSite(t, Options{FlakyFailures: 3, RetryAfter: 7})
	for i, want := range []int{500, 500, 500, 200, 200} {
		if resp, _ := get(t, s.URL()+PathFlaky, nil); resp.StatusCode != want {
			t.Errorf("flaky request %d: status %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	resp, _ := get(t, s.URL()+PathBusy, nil)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" {
		t.Errorf("first /busy: %d Retry-After %q, want 429 and 7", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if resp, _ := get(t, s.URL()+PathBusy, nil); resp.StatusCode != 200 {
		t.Errorf("second /busy: %d, want 200", resp.StatusCode)
	}
	s.ResetCounts()
	if resp, _ := get(t, s.URL()+PathFlaky, nil); resp.StatusCode != 500 {
		t.Errorf("flaky after ResetCounts: %d, want 500", resp.StatusCode)
	}
	if got := s.Hits(PathFlaky); got != 1 {
		t.Errorf("Hits after ResetCounts = %d, want 1", got)
	}
}

func TestSlowPage(t *testing.T) {
	s := newSite(t, Options{SlowDelay: 150 * time.Millisecond})
	client := &http.Client{Timeout: 50 * time.Millisecond}
	_, err := client.Get(s.URL() + PathSlow)
	var ne interface{ Timeout() bool }
	if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("GET /slow with a 50ms timeout: err = %v, want a timeout", err)
	}
}

func TestConditionalGetAndChanges(t *testing.T) {
	s := newSite(t, Options{})
	const p = "/articles/1"
	resp, body := get(t, s.URL()+p, nil)
	etag, lm := resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if etag == "" || lm == "" {
		t.Fatalf("ETag %q, Last-Modified %q: want both", etag, lm)
	}
	old := s.Marker(p)
	if !strings.Contains(body, old) {
		t.Fatalf("body lacks marker %s", old)
	}
	if resp, _ := get(t, s.URL()+p, http.Header{"If-None-Match": {etag}}); resp.StatusCode != 304 {
		t.Errorf("If-None-Match: status %d, want 304", resp.StatusCode)
	}
	if resp, _ := get(t, s.URL()+p, http.Header{"If-Modified-Since": {lm}}); resp.StatusCode != 304 {
		t.Errorf("If-Modified-Since: status %d, want 304", resp.StatusCode)
	}
	if got := s.NotModified(p); got != 2 {
		t.Errorf("NotModified = %d, want 2", got)
	}

	s.Update(p)
	resp, body = get(t, s.URL()+p, http.Header{"If-None-Match": {etag}, "If-Modified-Since": {lm}})
	if resp.StatusCode != 200 {
		t.Fatalf("after Update: status %d, want 200", resp.StatusCode)
	}
	if s.Marker(p) == old || !strings.Contains(body, s.Marker(p)) || strings.Contains(body, old) {
		t.Errorf("after Update the body should carry the new marker %s and not %s", s.Marker(p), old)
	}
	if resp.Header.Get("ETag") == etag || resp.Header.Get("Last-Modified") == lm {
		t.Errorf("after Update ETag/Last-Modified unchanged")
	}
	if resp, _ := get(t, s.URL()+p, http.Header{"If-Modified-Since": {lm}}); resp.StatusCode != 200 {
		t.Errorf("If-Modified-Since older than the update: status %d, want 200", resp.StatusCode)
	}

	s.Remove(p)
	if resp, _ := get(t, s.URL()+p, nil); resp.StatusCode != 410 {
		t.Errorf("after Remove: status %d, want 410", resp.StatusCode)
	}
}

func TestHuge(t *testing.T) {
	s := newSite(t, Options{HugeBytes: 300_000})
	resp, body := get(t, s.URL()+PathHuge, nil)
	if resp.ContentLength != 300_000 || len(body) != 300_000 {
		t.Errorf("Content-Length %d, body %d bytes; want 300000", resp.ContentLength, len(body))
	}
}

func TestResolver(t *testing.T) {
	s := newSite(t, Options{Host: "site.test"})
	if got, want := s.URL(), "http://site.test:"+strings.Split(s.Addr(), ":")[1]; got != want {
		t.Fatalf("URL() = %q, want %q", got, want)
	}
	tr, err := netguard.NewTransport(netguard.Options{Allow: []string{s.Addr()}, Resolver: s.Resolver()})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	for _, u := range []string{s.URL() + "/", strings.Replace(s.URL(), "site.test", "www.site.test", 1) + "/about", strings.Replace(s.URL(), "site.test", "SITE.TEST", 1) + "/privacy"} {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatalf("GET %s through netguard with the site resolver: %v", u, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %d, want 200", u, resp.StatusCode)
		}
	}
	if _, err := client.Get(strings.Replace(s.URL(), "site.test", "other.test", 1) + "/"); err == nil {
		t.Errorf("GET other.test resolved; want a lookup failure")
	}
}

// TestCanonicalPagesByHand pins the ground truth to a hand-computed list.
func TestCanonicalPagesByHand(t *testing.T) {
	s := newSite(t, Options{Articles: 3, DeepChain: 3})
	full := []string{
		"/", "/about", "/articles/", "/articles/1", "/articles/2", "/articles/3", "/busy",
		"/calendar/2025/12", "/calendar/2026/01", "/calendar/2026/02", "/deep/1", "/deep/2",
		"/docs/api", "/docs/chain-end", "/docs/guide", "/flaky", "/notes.txt", "/orphan",
		"/privacy", "/search?a=1&b=2", "/slow",
	}
	without := func(list []string, drop ...string) []string {
		var out []string
		for _, p := range list {
			if !slices.Contains(drop, p) {
				out = append(out, p)
			}
		}
		return out
	}
	tests := []struct {
		name  string
		crawl Crawl
		want  []string
	}{
		{"depth 2 robots sitemap", Crawl{MaxDepth: 2, RespectRobots: true, UseSitemap: true, Canon: canon.DefaultOptions()}, full},
		{"no sitemap loses the orphan", Crawl{MaxDepth: 2, RespectRobots: true, Canon: canon.DefaultOptions()}, without(full, "/orphan")},
		{"ignoring robots adds the private page", Crawl{MaxDepth: 2, UseSitemap: true, Canon: canon.DefaultOptions()}, append(append([]string{}, full...), "/private/secret")},
		{"depth 1", Crawl{MaxDepth: 1, RespectRobots: true, UseSitemap: true, Canon: canon.DefaultOptions()},
			without(full, "/docs/api", "/deep/2", "/calendar/2026/02", "/calendar/2025/12")},
		{"depth 0", Crawl{MaxDepth: 0, RespectRobots: true, UseSitemap: true, Canon: canon.DefaultOptions()}, []string{"/"}},
		{"tracking parameters kept", Crawl{MaxDepth: 1, RespectRobots: true, Canon: canon.Options{}},
			append(without(full, "/docs/api", "/deep/2", "/calendar/2026/02", "/calendar/2025/12", "/orphan", "/articles/3"),
				"/articles/1?fbclid=IwAR0abc", "/articles/1?utm_medium=email&utm_source=newsletter", "/search?a=1&b=2&utm_campaign=spring")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []string
			for _, p := range tt.want {
				want = append(want, s.URL()+p)
			}
			slices.Sort(want)
			if d := cmp.Diff(want, s.CanonicalPages(tt.crawl)); d != "" {
				t.Errorf("CanonicalPages (-want +got):\n%s", d)
			}
		})
	}
}

// TestCanonicalPagesMatchARealCrawl crawls the site over HTTP with a small
// breadth-first crawler built from canon and htmltext, and checks that it
// stores exactly CanonicalPages: the rendered links and the ground truth
// agree.
func TestCanonicalPagesMatchARealCrawl(t *testing.T) {
	for _, o := range []Options{{Articles: 4, DeepChain: 4}, {Articles: 3, Host: "site.test"}} {
		for _, c := range []Crawl{
			{MaxDepth: 3, RespectRobots: true, UseSitemap: true, Canon: canon.DefaultOptions()},
			{MaxDepth: 2, Canon: func() canon.Options { co := canon.DefaultOptions(); co.StripWWW = true; return co }()},
		} {
			t.Run(fmt.Sprintf("host=%q depth=%d", o.Host, c.MaxDepth), func(t *testing.T) {
				s := newSite(t, Options{Articles: o.Articles, DeepChain: o.DeepChain, Host: o.Host, HugeBytes: 64 << 10, SlowDelay: time.Millisecond})
				got := miniCrawl(t, s, c, 32<<10)
				if d := cmp.Diff(s.CanonicalPages(c), got); d != "" {
					t.Errorf("real crawl vs CanonicalPages (-truth +crawl):\n%s", d)
				}
				// Without www equivalence www.site.test is another site: count
				// fetches per host and path.
				perHost := map[string]int{}
				for _, r := range s.Requests() {
					perHost[strings.ToLower(r.Host)+r.Path]++
				}
				for p, n := range perHost {
					if n > 1 && !strings.HasSuffix(p, PathFlaky) && !strings.HasSuffix(p, PathBusy) {
						t.Errorf("the mini crawler fetched %s %d times", p, n)
					}
				}
			})
		}
	}
}

func miniCrawl(t *testing.T, s *Site, c Crawl, maxBody int) []string {
	t.Helper()
	gopts := netguard.Options{Allow: []string{s.Addr()}}
	if s.opts.Host != "" {
		gopts.Resolver = s.Resolver()
	}
	tr, err := netguard.NewTransport(gopts)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	seed, _ := canon.Canonicalize(s.SeedURL(), c.Canon)
	seedURL, _ := url.Parse(seed)
	scope := []string{seedURL.Hostname()}
	type item struct {
		u string
		d int
	}
	queue := []item{{seed, 0}}
	if c.UseSitemap && c.MaxDepth >= 1 {
		for _, p := range s.sitemapPaths() {
			u, _ := canon.Canonicalize(s.URL()+p, c.Canon)
			queue = append(queue, item{u, 1})
		}
	}
	seen := map[string]bool{}
	var stored []string
	for len(queue) > 0 {
		// Breadth first: always take the shallowest item.
		best := 0
		for i, it := range queue {
			if it.d < queue[best].d {
				best = i
			}
		}
		it := queue[best]
		queue = append(queue[:best], queue[best+1:]...)
		if seen[it.u] {
			continue
		}
		seen[it.u] = true
		u, _ := url.Parse(it.u)
		if !canon.InScope(u, scope) || (c.RespectRobots && strings.HasPrefix(u.Path, "/private/")) {
			continue
		}
		var resp *http.Response
		for attempt := 0; attempt < 5; attempt++ {
			resp, err = client.Get(it.u)
			if err != nil {
				t.Fatalf("GET %s: %v", it.u, err)
			}
			if resp.StatusCode != 500 && resp.StatusCode != 429 {
				break
			}
			resp.Body.Close()
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, int64(maxBody)+1))
		resp.Body.Close()
		switch {
		case resp.StatusCode >= 300 && resp.StatusCode < 400:
			if next, err := canon.Resolve(u, resp.Header.Get("Location"), c.Canon); err == nil {
				queue = append(queue, item{next, it.d})
			}
			continue
		case resp.StatusCode != 200 || len(body) > maxBody:
			continue
		}
		page, err := htmltext.Extract(body, u, resp.Header.Get("Content-Type"), resp.Header)
		if err != nil {
			continue
		}
		stored = append(stored, it.u)
		if it.d >= c.MaxDepth {
			continue
		}
		for _, l := range page.Links {
			if next, err := canon.Resolve(u, l.URL, c.Canon); err == nil {
				queue = append(queue, item{next, it.d + 1})
			}
		}
	}
	slices.Sort(stored)
	return stored
}

// TestUnlink: an unlinked page still answers, but no page's own links and
// not the sitemap lead to it, and the ground truth leaves it out; Link
// brings it back.
func TestUnlink(t *testing.T) {
	s := newSite(t, Options{})
	c := Crawl{MaxDepth: 3, RespectRobots: true, UseSitemap: true, Canon: canon.DefaultOptions()}
	target := s.URL() + "/articles/8"
	if !slices.Contains(s.CanonicalPages(c), target) {
		t.Fatalf("%s is not a page of the site before Unlink", target)
	}
	s.Unlink("/articles/8")
	for _, p := range []string{"/articles/", "/articles/7", PathSitemap} {
		if _, body := get(t, s.URL()+p, nil); strings.Contains(body, "articles/8") || strings.Contains(body, `"8"`) {
			t.Errorf("%s still links to /articles/8 after Unlink", p)
		}
	}
	if resp, _ := get(t, target, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("unlinked page: got %d, want 200", resp.StatusCode)
	}
	if slices.Contains(s.CanonicalPages(c), target) {
		t.Errorf("CanonicalPages still has %s after Unlink", target)
	}
	s.Link("/articles/8")
	if !slices.Contains(s.CanonicalPages(c), target) {
		t.Errorf("CanonicalPages lacks %s after Link", target)
	}
}
