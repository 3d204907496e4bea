package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/services/crawler/internal/netguard"
)

// server counts requests per path and records their arrival times.
type server struct {
	*httptest.Server
	mu    sync.Mutex
	hits  map[string]int
	times map[string][]time.Time
	hdrs  map[string]http.Header
}

func newServer(t *testing.T, routes map[string]http.HandlerFunc) *server {
	s := &server{hits: map[string]int{}, times: map[string][]time.Time{}, hdrs: map[string]http.Header{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.times[r.URL.Path] = append(s.times[r.URL.Path], time.Now())
		s.hdrs[r.URL.Path] = r.Header.Clone()
		s.mu.Unlock()
		if h, ok := routes[r.URL.Path]; ok {
			h(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) hit(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// guard is an SSRF guard allowing the given exceptions.
func guard(t *testing.T, allow ...string) *netguard.Guard {
	t.Helper()
	g, err := netguard.New(netguard.Options{Allow: allow, ResponseHeaderTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func newFetcher(t *testing.T, cfg Config) (*Fetcher, *[]time.Duration) {
	t.Helper()
	if cfg.UserAgent == "" {
		cfg.UserAgent = "kgsearch-test/1.0 (+https://example.com)"
	}
	if cfg.Guard == nil {
		cfg.Guard = guard(t, "127.0.0.1")
	}
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var sleeps []time.Duration
	f.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		sleeps = append(sleeps, d)
		mu.Unlock()
		return ctx.Err()
	}
	return f, &sleeps
}

func html(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}
}

func TestRetries(t *testing.T) {
	calls := map[string]int{}
	var mu sync.Mutex
	failFirst := func(n, status int, retryAfter string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			calls[r.URL.Path]++
			c := calls[r.URL.Path]
			mu.Unlock()
			if c <= n {
				if retryAfter != "" {
					w.Header().Set("Retry-After", retryAfter)
				}
				w.WriteHeader(status)
				return
			}
			html("<p>ok</p>")(w, r)
		}
	}
	s := newServer(t, map[string]http.HandlerFunc{
		"/flaky":   failFirst(2, http.StatusServiceUnavailable, ""),
		"/limited": failFirst(1, http.StatusTooManyRequests, "2"),
		"/broken":  failFirst(100, http.StatusInternalServerError, ""),
		"/gone":    failFirst(100, http.StatusNotFound, ""),
		"/slow": func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(400 * time.Millisecond)
			html("<p>late</p>")(w, r)
		},
	})
	f, sleeps := newFetcher(t, Config{Retries: 3, RetryBackoff: 100 * time.Millisecond, Timeout: 150 * time.Millisecond})
	for _, tc := range []struct {
		path         string
		wantStatus   int
		wantAttempts int
		wantHits     int
		wantTimeout  bool
	}{
		{"/flaky", 200, 3, 3, false},
		{"/limited", 200, 2, 2, false},
		{"/broken", 500, 4, 4, false},
		{"/gone", 404, 1, 1, false}, // a 404 is an answer, not retried
		{"/slow", 0, 0, 4, true},
	} {
		t.Run(tc.path, func(t *testing.T) {
			*sleeps = nil
			resp, err := f.Fetch(context.Background(), Request{URL: s.URL + tc.path, IgnoreRobots: true})
			if tc.wantTimeout {
				if err == nil || !IsTimeout(err) {
					t.Fatalf("got err %v, want a timeout", err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if resp.Status != tc.wantStatus || resp.Attempts != tc.wantAttempts {
					t.Errorf("got status %d after %d attempts, want %d after %d", resp.Status, resp.Attempts, tc.wantStatus, tc.wantAttempts)
				}
			}
			if got := s.hit(tc.path); got != tc.wantHits {
				t.Errorf("requests: got %d, want %d", got, tc.wantHits)
			}
			if tc.path == "/limited" && (len(*sleeps) != 1 || (*sleeps)[0] < 2*time.Second) {
				t.Errorf("backoff after 429 with Retry-After: 2: got %v, want one wait of at least 2s", *sleeps)
			}
			if tc.path == "/broken" {
				for i := 1; i < len(*sleeps); i++ {
					if (*sleeps)[i] <= (*sleeps)[i-1] {
						t.Errorf("backoff not growing: %v", *sleeps)
					}
				}
			}
		})
	}
}

func TestBodyLimitAndContentType(t *testing.T) {
	big := strings.Repeat("x", 5000)
	s := newServer(t, map[string]http.HandlerFunc{
		"/big": html(big),
		"/big-chunked": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			for i := 0; i < 5; i++ {
				fmt.Fprint(w, strings.Repeat("y", 1000))
				w.(http.Flusher).Flush()
			}
		},
		"/small": html("<p>fits</p>"),
		"/pic": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write([]byte("\x89PNG"))
		},
		"/text": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
			_, _ = w.Write([]byte("caf\xe9"))
		},
	})
	f, _ := newFetcher(t, Config{MaxBodyBytes: 4096})
	for _, tc := range []struct {
		path, wantReason string
	}{
		{"/big", ReasonTooLarge},
		{"/big-chunked", ReasonTooLarge},
		{"/pic", ReasonContentType},
		{"/small", ""},
		{"/text", ""},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, err := f.Fetch(context.Background(), Request{URL: s.URL + tc.path, IgnoreRobots: true})
			var se *SkipError
			if tc.wantReason == "" {
				if err != nil {
					t.Fatalf("got %v, want the page", err)
				}
				return
			}
			if !errors.As(err, &se) || se.Reason != tc.wantReason {
				t.Fatalf("got resp %v err %v, want a skip for %s", resp, err, tc.wantReason)
			}
		})
	}
	// colly converts declared charsets to UTF-8; the content type must say so.
	resp, err := f.Fetch(context.Background(), Request{URL: s.URL + "/text", IgnoreRobots: true})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != "café" || !strings.Contains(resp.ContentType, "utf-8") {
		t.Errorf("latin-1 text: got body %q with %q, want café as utf-8", resp.Body, resp.ContentType)
	}
}

func TestRobots(t *testing.T) {
	var robots string
	var robotsStatus int
	routes := map[string]http.HandlerFunc{
		"/robots.txt": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(robotsStatus)
			fmt.Fprint(w, robots)
		},
		"/open":          html("<p>open</p>"),
		"/private/x":     html("<p>private</p>"),
		"/only-others/x": html("<p>others</p>"),
	}
	for _, tc := range []struct {
		name   string
		status int
		robots string
		path   string
		want   bool // allowed
	}{
		{"disallowed for all", 200, "User-agent: *\nDisallow: /private/\n", "/private/x", false},
		{"allowed path", 200, "User-agent: *\nDisallow: /private/\n", "/open", true},
		{"our agent group wins", 200, "User-agent: *\nDisallow: /\n\nUser-agent: kgsearch-test\nDisallow: /private/\n", "/open", true},
		{"our agent group disallows", 200, "User-agent: *\nAllow: /\n\nUser-agent: kgsearch-test\nDisallow: /\n", "/open", false},
		{"other agent only", 200, "User-agent: otherbot\nDisallow: /\n", "/only-others/x", true},
		{"no robots.txt", 404, "", "/private/x", true},
		{"server error: crawl nothing", 503, "", "/open", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			robots, robotsStatus = tc.robots, tc.status
			s := newServer(t, routes)
			f, _ := newFetcher(t, Config{})
			_, err := f.Fetch(context.Background(), Request{URL: s.URL + tc.path})
			var se *SkipError
			blocked := errors.As(err, &se) && se.Reason == ReasonRobots
			if blocked == tc.want {
				t.Fatalf("allowed: got %v (err %v), want %v", !blocked, err, tc.want)
			}
			if !tc.want && s.hit(tc.path) != 0 {
				t.Errorf("disallowed page was requested %d times", s.hit(tc.path))
			}
			// Two fetches read robots.txt once.
			_, _ = f.Fetch(context.Background(), Request{URL: s.URL + tc.path})
			if n := s.hit("/robots.txt"); n != 1 {
				t.Errorf("robots.txt requests: got %d, want 1 (cached)", n)
			}
		})
	}
}

func TestCrawlDelayAndSitemaps(t *testing.T) {
	var s *server
	s = newServer(t, map[string]http.HandlerFunc{
		"/robots.txt": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "User-agent: *\nCrawl-delay: 0.3\nSitemap: %s/sitemap-index.xml\n", s.URL)
		},
		"/p": html("<p>page</p>"),
		"/sitemap-index.xml": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>%s/sitemap-1.xml</loc></sitemap></sitemapindex>`, s.URL)
		},
		"/sitemap-1.xml": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc> %s/a </loc></url><url><loc>%s/b</loc></url></urlset>`, s.URL, s.URL)
		},
	})
	f, _ := newFetcher(t, Config{})
	// The host limiter's clock is a fake that moves only by the waits it asks for, so
	// the request starts it schedules are checked exactly (timing the requests as the
	// server sees them measured the machine's load too: a slow first request shrank
	// the gap the server saw).
	var mu sync.Mutex
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var starts []time.Time
	f.hosts.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	f.hosts.wait = func(_ context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(max(d, 0))
		starts = append(starts, clock)
		return nil
	}
	for i := 0; i < 3; i++ {
		if _, err := f.Fetch(context.Background(), Request{URL: s.URL + "/p"}); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	served := len(s.times["/p"])
	s.mu.Unlock()
	if served != 3 || len(starts) != 4 { // robots.txt, then the three pages
		t.Fatalf("got %d page requests and %d limiter starts, want 3 and 4 (robots.txt first)", served, len(starts))
	}
	for i := 2; i < len(starts); i++ {
		if gap := starts[i].Sub(starts[i-1]); gap < 300*time.Millisecond {
			t.Errorf("gap between page requests %d and %d: got %s, want >= Crawl-delay 0.3s", i-2, i-1, gap)
		}
	}
	if ua := s.hdrs["/p"].Get("User-Agent"); ua != "kgsearch-test/1.0 (+https://example.com)" {
		t.Errorf("User-Agent: got %q", ua)
	}

	u := mustURL(t, s.URL+"/")
	maps, err := f.RobotsSitemaps(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	pages, errs := f.Sitemap(context.Background(), maps, true, 10, 100)
	if len(errs) != 0 {
		t.Errorf("sitemap errors: %v", errs)
	}
	if diff := cmp.Diff([]string{s.URL + "/a", s.URL + "/b"}, pages); diff != "" {
		t.Errorf("sitemap pages (-want +got):\n%s", diff)
	}
}

func TestRedirectsAreReturnedNotFollowed(t *testing.T) {
	s := newServer(t, map[string]http.HandlerFunc{
		"/old": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/new?x=1", http.StatusMovedPermanently)
		},
		"/new": html("<p>new</p>"),
		"/etag": func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("If-None-Match") == `"v1"` && r.Header.Get("If-Modified-Since") != "" {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			html("<p>x</p>")(w, r)
		},
	})
	f, _ := newFetcher(t, Config{})
	resp, err := f.Fetch(context.Background(), Request{URL: s.URL + "/old", IgnoreRobots: true})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Redirect() || resp.Location != s.URL+"/new?x=1" {
		t.Errorf("redirect: got status %d location %q, want 301 to %s/new?x=1", resp.Status, resp.Location, s.URL)
	}
	if n := s.hit("/new"); n != 0 {
		t.Errorf("redirect target fetched %d times by the client, want 0 (the crawler queues it)", n)
	}
	resp, err = f.Fetch(context.Background(), Request{URL: s.URL + "/etag", IgnoreRobots: true, ETag: `"v1"`, LastModified: "Mon, 02 Jan 2006 15:04:05 GMT"})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.NotModified() {
		t.Errorf("conditional GET: got %d, want 304", resp.Status)
	}
}

func TestGuardRefusesAtDial(t *testing.T) {
	s := newServer(t, map[string]http.HandlerFunc{"/": html("<p>x</p>")})
	other := newServer(t, map[string]http.HandlerFunc{"/": html("<p>y</p>")})
	// Only the first server's port is allowed.
	f, _ := newFetcher(t, Config{Guard: guard(t, strings.TrimPrefix(s.URL, "http://"))})
	if _, err := f.Fetch(context.Background(), Request{URL: s.URL + "/", IgnoreRobots: true}); err != nil {
		t.Fatalf("allowed host: %v", err)
	}
	for _, u := range []string{other.URL + "/", "http://localhost:" + strings.Split(other.URL, ":")[2] + "/"} {
		_, err := f.Fetch(context.Background(), Request{URL: u, IgnoreRobots: true})
		if !errors.Is(err, netguard.ErrBlocked) {
			t.Errorf("fetch %s: got %v, want a netguard refusal", u, err)
		}
	}
	if n := other.hit("/"); n != 0 {
		t.Errorf("refused server got %d requests", n)
	}
}

func TestParseSitemap(t *testing.T) {
	for _, tc := range []struct {
		name, body    string
		pages, nested []string
		wantErr       bool
	}{
		{"urlset", `<urlset><url><loc>https://a/1</loc></url><url><loc> https://a/2 </loc></url></urlset>`, []string{"https://a/1", "https://a/2"}, nil, false},
		{"index", `<sitemapindex><sitemap><loc>https://a/s1.xml</loc></sitemap></sitemapindex>`, nil, []string{"https://a/s1.xml"}, false},
		{"html", `<html><body>no</body></html>`, nil, nil, true},
		{"garbage", `not xml at all`, nil, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pages, nested, err := ParseSitemap([]byte(tc.body))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err: got %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.pages, pages); diff != "" {
				t.Errorf("pages (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.nested, nested); diff != "" {
				t.Errorf("nested (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAgentToken(t *testing.T) {
	for in, want := range map[string]string{
		"kgsearch-crawler/1.0 (+https://x)": "kgsearch-crawler",
		"Bot":                               "Bot",
		"":                                  "*",
	} {
		if got := AgentToken(in); got != want {
			t.Errorf("AgentToken(%q): got %q, want %q", in, got, want)
		}
	}
}
