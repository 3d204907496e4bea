package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// robotsTransport answers every host's /robots.txt with body and counts the
// requests per host; it stands for many hosts without a network.
type robotsTransport struct {
	body string
	mu   sync.Mutex
	hits map[string]int
}

func (rt *robotsTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.mu.Lock()
	if rt.hits == nil {
		rt.hits = map[string]int{}
	}
	rt.hits[r.URL.Host]++
	rt.mu.Unlock()
	if r.URL.Path != "/robots.txt" {
		return &http.Response{StatusCode: http.StatusNotFound, Body: io.NopCloser(strings.NewReader("")), Header: http.Header{}, Request: r}, nil
	}
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(rt.body)),
		Header: http.Header{"Content-Type": {"text/plain"}}, Request: r}, nil
}

// TestRobotsPatternRules: a robots.txt with more rules holding * or $ than
// maxRobotsPatterns (each is compiled to a regular expression and tried on
// every URL: 512 KiB of them took 30 MB and 140 ms a URL) is not parsed, and
// its host is not crawled, saying why; up to the bound the rules are obeyed.
func TestRobotsPatternRules(t *testing.T) {
	rules := func(n int) string {
		var b strings.Builder
		b.WriteString("User-agent: *\nDisallow: /private/\n")
		for i := range n {
			fmt.Fprintf(&b, "Disallow: /*q%d=*$ # a comment with * in it\n", i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		n       int
		path    string
		allowed bool
		detail  string
	}{
		{maxRobotsPatterns, "/open", true, ""},
		{maxRobotsPatterns, "/private/x", false, "disallows"},
		{maxRobotsPatterns, "/a?q7=1", false, "disallows"},
		{maxRobotsPatterns + 1, "/open", false, fmt.Sprintf("robots.txt has %d rules with * or $, more than the %d", maxRobotsPatterns+1, maxRobotsPatterns)},
	} {
		f, _ := newFetcher(t, Config{Transport: &robotsTransport{body: rules(tc.n)}})
		err := f.Allowed(context.Background(), mustURL(t, "http://site.test"+tc.path))
		var se *SkipError
		switch {
		case tc.allowed && err != nil:
			t.Errorf("%d pattern rules, %s: got %v, want allowed", tc.n, tc.path, err)
		case !tc.allowed && (!errors.As(err, &se) || se.Reason != ReasonRobots || !strings.Contains(se.Detail, tc.detail)):
			t.Errorf("%d pattern rules, %s: got %v, want a robots skip saying %q", tc.n, tc.path, err, tc.detail)
		}
	}
	if n := patternRules([]byte("User-agent: *\nDISALLOW : /a*\nAllow: /b$\nDisallow: /c\n# Disallow: /*\nSitemap: https://x/*.xml\n")); n != 2 {
		t.Errorf("patternRules: got %d, want 2", n)
	}
}

// TestRobotsCacheBounded: the robots.txt cache drops expired entries even for
// hosts never asked for again, and holds at most its bound, the soonest to
// expire leaving first; before, every host the crawler ever met stayed.
func TestRobotsCacheBounded(t *testing.T) {
	rt := &robotsTransport{body: "User-agent: *\nDisallow: /private/\n"}
	f, _ := newFetcher(t, Config{Transport: rt})
	f.robots.max = 10
	ctx := context.Background()
	for i := range 50 {
		if err := f.Allowed(ctx, mustURL(t, fmt.Sprintf("http://h%d.test/open", i))); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.robots.size(); n > 10 {
		t.Fatalf("robots.txt cache after 50 hosts with a bound of 10: %d entries", n)
	}
	// The newest hosts are still cached: no second robots.txt request.
	if err := f.Allowed(ctx, &url.URL{Scheme: "http", Host: "h49.test", Path: "/open"}); err != nil || rt.hits["h49.test"] != 1 {
		t.Errorf("newest host: %v, %d robots.txt requests, want 1 (cached)", err, rt.hits["h49.test"])
	}
	// Expired entries go at the next sweep, whatever host is asked for.
	f.robots.mu.Lock()
	for _, e := range f.robots.entries {
		e.rules.expires = time.Now().Add(-time.Second)
	}
	f.robots.swept = time.Time{}
	f.robots.mu.Unlock()
	if err := f.Allowed(ctx, mustURL(t, "http://fresh.test/open")); err != nil {
		t.Fatal(err)
	}
	if n := f.robots.size(); n != 1 {
		t.Errorf("robots.txt cache after its entries expired: %d entries, want 1 (the fresh host)", n)
	}
}

// TestHostStatesDropped: the per-host politeness state of a host nobody used
// for the idle time is dropped; a host in use, or one whose next request
// start is still ahead, is kept.
func TestHostStatesDropped(t *testing.T) {
	l := newHostLimiter(2, time.Second, time.Hour)
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l.now = func() time.Time { return clock }
	l.wait = func(context.Context, time.Duration) error { return nil }
	ctx := context.Background()
	for i := range 100 {
		release, err := l.acquire(ctx, fmt.Sprintf("h%d.test", i))
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	busy, err := l.acquire(ctx, "busy.test")
	if err != nil {
		t.Fatal(err)
	}
	l.setDelay("slow.test", 3*time.Hour)
	slow, _ := l.acquire(ctx, "slow.test")
	slow()
	slow, _ = l.acquire(ctx, "slow.test") // next start is three hours ahead
	slow()
	clock = clock.Add(2 * time.Hour)
	release, err := l.acquire(ctx, "new.test")
	if err != nil {
		t.Fatal(err)
	}
	release()
	if n := l.size(); n != 3 {
		t.Errorf("hosts after two idle hours: %d, want 3 (busy, slow, new)", n)
	}
	busy()
	clock = clock.Add(2 * time.Hour)
	release, _ = l.acquire(ctx, "another.test")
	release()
	if n := l.size(); n != 2 {
		t.Errorf("hosts after two more hours: %d, want 2 (slow, whose next start is still ahead, and another)", n)
	}
}
