package httpserver

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want Rate
		bad  bool
	}{
		{in: "5/s", want: Rate{PerSecond: 5, Burst: 5}},
		{in: "5/s burst 20", want: Rate{PerSecond: 5, Burst: 20}},
		{in: "30/m", want: Rate{PerSecond: 0.5, Burst: 30}},
		{in: "36/h burst 2", want: Rate{PerSecond: 0.01, Burst: 2}},
		{in: "0.5/s", want: Rate{PerSecond: 0.5, Burst: 1}},
		{in: "0", want: Rate{}},
		{in: "off", want: Rate{}},
		{in: "5", bad: true},
		{in: "5/d", bad: true},
		{in: "-1/s", bad: true},
		{in: "x/s", bad: true},
		{in: "5/s burst 0", bad: true},
		{in: "5/s burst many", bad: true},
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("ParseRate(%q) = %+v, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseRate(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
		if back, err := ParseRate(got.String()); err != nil || (got.Enabled() && back.Burst != got.Burst) {
			t.Errorf("ParseRate(%q.String() = %q) = %+v, %v", tt.in, got.String(), back, err)
		}
	}
}

const limitKey = "0123456789abcdef-limit"

// limitedServer limits GET /api/v1/search to 2 requests per address and 3 per key,
// refilling at 1 per minute, with a clock the test moves.
func limitedServer(t *testing.T, trusted ...netip.Prefix) (*Server, *time.Time) {
	t.Helper()
	s := New("test", Config{Addr: "127.0.0.1:0", APIKeys: []string{limitKey}, PublicReads: true, TrustedProxies: trusted,
		Limits: []RouteLimit{{Name: "searches", Routes: []string{"GET /api/v1/search"},
			PerAddr: Rate{PerSecond: 1.0 / 60, Burst: 2}, PerKey: Rate{PerSecond: 1.0 / 60, Burst: 3}}},
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	s.API("/api/v1").GET("/search", func(c *gin.Context) { c.String(200, "ok") })
	s.API("/api/v1").GET("/other", func(c *gin.Context) { c.String(200, "ok") })
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.limits.now = func() time.Time { return now }
	return s, &now
}

func get(s *Server, path, peer, key string, hdr ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", path, nil)
	req.RemoteAddr = peer
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	s.Engine().ServeHTTP(rec, req)
	return rec
}

func TestRateLimitBurst(t *testing.T) {
	s, now := limitedServer(t)
	// Under the limit: every request is served.
	for i := range 2 {
		if rec := get(s, "/api/v1/search", "192.0.2.1:5000", ""); rec.Code != 200 {
			t.Fatalf("request %d under the limit: got %d", i+1, rec.Code)
		}
	}
	// Over it: 429 problem+json with Retry-After.
	rec := get(s, "/api/v1/search", "192.0.2.1:5001", "")
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("request over the limit: got %d, want 429", rec.Code)
	}
	p := problem(t, rec)
	ra, err := strconv.Atoi(rec.Header().Get("Retry-After"))
	if err != nil || ra < 1 || ra > 60 {
		t.Errorf("Retry-After %q: want 1..60 seconds", rec.Header().Get("Retry-After"))
	}
	if !strings.Contains(p.Detail, "searches") || !strings.Contains(p.Detail, "client address") {
		t.Errorf("detail %q does not say which limit", p.Detail)
	}
	// Unlimited routes are not affected.
	if rec := get(s, "/api/v1/other", "192.0.2.1:5000", ""); rec.Code != 200 {
		t.Errorf("unlimited route: got %d", rec.Code)
	}
	// After Retry-After the bucket has a token again.
	*now = now.Add(time.Duration(ra) * time.Second)
	if rec := get(s, "/api/v1/search", "192.0.2.1:5000", ""); rec.Code != 200 {
		t.Errorf("after Retry-After: got %d, want 200", rec.Code)
	}
}

func TestRateLimitUnderTheLimit(t *testing.T) {
	s, now := limitedServer(t)
	// One request a minute, the refill rate, is never refused.
	for i := range 50 {
		if rec := get(s, "/api/v1/search", "192.0.2.1:5000", ""); rec.Code != 200 {
			t.Fatalf("request %d at the refill rate: got %d", i+1, rec.Code)
		}
		*now = now.Add(time.Minute)
	}
}

func TestRateLimitKeysAndAddressesIndependent(t *testing.T) {
	s, _ := limitedServer(t)
	for range 2 {
		get(s, "/api/v1/search", "192.0.2.1:1", "")
	}
	if rec := get(s, "/api/v1/search", "192.0.2.1:1", ""); rec.Code != 429 {
		t.Fatalf("address A exhausted: got %d, want 429", rec.Code)
	}
	if rec := get(s, "/api/v1/search", "192.0.2.2:1", ""); rec.Code != 200 {
		t.Fatalf("address B: got %d, want 200", rec.Code)
	}
	// A key from the exhausted address has its own bucket (3 tokens).
	for i := range 3 {
		if rec := get(s, "/api/v1/search", "192.0.2.1:1", limitKey); rec.Code != 200 {
			t.Fatalf("key request %d from exhausted address: got %d, want 200", i+1, rec.Code)
		}
	}
	// The key is exhausted from any address; a fresh address without a key is not.
	rec := get(s, "/api/v1/search", "192.0.2.3:1", limitKey)
	if rec.Code != 429 || !strings.Contains(problem(t, rec).Detail, "API key") {
		t.Fatalf("key exhausted: got %d %s, want 429 naming the API key", rec.Code, rec.Body)
	}
	if rec := get(s, "/api/v1/search", "192.0.2.3:1", ""); rec.Code != 200 {
		t.Fatalf("fresh address without key: got %d, want 200", rec.Code)
	}
	// A wrong key counts as no key: address bucket.
	if rec := get(s, "/api/v1/search", "192.0.2.3:1", "wrong-key-wrong-key"); rec.Code != 200 {
		t.Fatalf("wrong key, address with a token left: got %d, want 200", rec.Code)
	}
	if rec := get(s, "/api/v1/search", "192.0.2.3:1", "wrong-key-wrong-key"); rec.Code != 429 {
		t.Fatalf("wrong key, address exhausted: got %d, want 429", rec.Code)
	}
}

func TestRateLimitForwardedFor(t *testing.T) {
	// Without trusted proxies X-Forwarded-For is ignored: a client cannot pick a
	// fresh bucket by sending a new header each time.
	s, _ := limitedServer(t)
	for i := range 3 {
		rec := get(s, "/api/v1/search", "192.0.2.1:1", "", "X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i))
		if want := map[bool]int{true: 429, false: 200}[i == 2]; rec.Code != want {
			t.Fatalf("spoofed X-Forwarded-For request %d: got %d, want %d", i+1, rec.Code, want)
		}
	}
	// Behind a trusted proxy each forwarded client has its own bucket; the
	// rightmost untrusted hop is the client, whatever the client put before it.
	s, _ = limitedServer(t, netip.MustParsePrefix("10.0.0.0/8"))
	for i := range 2 {
		rec := get(s, "/api/v1/search", "10.0.0.5:1", "", "X-Forwarded-For", fmt.Sprintf("198.51.100.%d, 203.0.113.7, 10.0.0.9", i))
		if rec.Code != 200 {
			t.Fatalf("forwarded request %d: got %d", i+1, rec.Code)
		}
	}
	if rec := get(s, "/api/v1/search", "10.0.0.5:1", "", "X-Forwarded-For", "203.0.113.7"); rec.Code != 429 {
		t.Fatalf("client 203.0.113.7 exhausted: got %d, want 429", rec.Code)
	}
	if rec := get(s, "/api/v1/search", "10.0.0.5:1", "", "X-Forwarded-For", "203.0.113.8"); rec.Code != 200 {
		t.Fatalf("another forwarded client: got %d, want 200", rec.Code)
	}
}

func TestRateLimitInProcessAndLoopbackNotLimited(t *testing.T) {
	s, _ := limitedServer(t)
	for _, peer := range []string{"", "127.0.0.1:4000", "[::1]:4000"} {
		for i := range 5 {
			if rec := get(s, "/api/v1/search", peer, ""); rec.Code != 200 {
				t.Fatalf("peer %q request %d: got %d", peer, i+1, rec.Code)
			}
		}
	}
	// A key is limited even from loopback.
	for range 3 {
		get(s, "/api/v1/search", "127.0.0.1:4000", limitKey)
	}
	if rec := get(s, "/api/v1/search", "127.0.0.1:4000", limitKey); rec.Code != 429 {
		t.Fatalf("key from loopback over its limit: got %d, want 429", rec.Code)
	}
	// Behind a trusted proxy on this host, the forwarded client is limited.
	s, _ = limitedServer(t, netip.MustParsePrefix("127.0.0.1/32"))
	for range 2 {
		get(s, "/api/v1/search", "127.0.0.1:4000", "", "X-Forwarded-For", "203.0.113.7")
	}
	if rec := get(s, "/api/v1/search", "127.0.0.1:4000", "", "X-Forwarded-For", "203.0.113.7"); rec.Code != 429 {
		t.Fatalf("forwarded client behind a local trusted proxy: got %d, want 429", rec.Code)
	}
}

func TestRateLimitBoundedMemory(t *testing.T) {
	b := newBuckets(Rate{PerSecond: 1, Burst: 2})
	b.max = 100
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 1000 {
		b.take(fmt.Sprintf("addr-%d", i), now)
	}
	if n := b.size(); n > 100 {
		t.Fatalf("buckets after 1000 addresses with max 100: %d", n)
	}
	// Idle buckets (refilled after 2 s) are swept within a minute of activity.
	now = now.Add(2 * time.Minute)
	b.take("fresh", now)
	if n := b.size(); n != 1 {
		t.Fatalf("buckets after the idle sweep: %d, want 1", n)
	}
	// A busy bucket is not forgotten by the sweep: it stays limited.
	b.take("busy", now)
	b.take("busy", now)
	if _, ok := b.take("busy", now); ok {
		t.Fatal("busy bucket: third request in the same instant allowed")
	}
}

func TestParseProxies(t *testing.T) {
	got, err := ParseProxies("10.0.0.0/8, 192.168.1.7 ,::1")
	if err != nil || len(got) != 3 || !got[1].Contains(netip.MustParseAddr("192.168.1.7")) || got[1].Contains(netip.MustParseAddr("192.168.1.8")) {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := ParseProxies("10.0.0.0/8,proxy.local"); err == nil {
		t.Fatal("a host name was accepted")
	}
}

// TestErrorPageAnswersFirst: an error page set with SetErrorPage answers the
// server's own errors when it says so (here for requests whose Accept names
// text/html), with Retry-After already set; otherwise the problem document follows.
func TestErrorPageAnswersFirst(t *testing.T) {
	s, _ := limitedServer(t)
	var seen Problem
	s.SetErrorPage(func(c *gin.Context, p Problem) bool {
		if !strings.Contains(c.GetHeader("Accept"), "text/html") {
			return false
		}
		seen = p
		c.Data(p.Status, "text/html; charset=utf-8", []byte("<p>"+p.Detail+"</p>"))
		return true
	})
	for range 2 {
		get(s, "/api/v1/search", "192.0.2.1:5000", "")
	}
	rec := get(s, "/api/v1/search", "192.0.2.1:5000", "", "Accept", "text/html")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Content-Type") != "text/html; charset=utf-8" ||
		rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), "searches") {
		t.Errorf("over the limit from a page: %d %q Retry-After %q body %q; want the page's 429 with Retry-After",
			rec.Code, rec.Header().Get("Content-Type"), rec.Header().Get("Retry-After"), rec.Body.String())
	}
	if seen.Status != http.StatusTooManyRequests || seen.Instance != "/api/v1/search" {
		t.Errorf("the page got %+v, want the 429 problem", seen)
	}
	rec = get(s, "/api/v1/search", "192.0.2.1:5000", "")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Content-Type") != "application/problem+json" {
		t.Errorf("over the limit from a program: %d %q, want the 429 problem document", rec.Code, rec.Header().Get("Content-Type"))
	}
}

// TestRateLimitIPv6Network: IPv6 clients share the bucket of their /64, since a
// host can send each request from another address of its /64; another /64 has
// its own bucket, and IPv4 addresses are still limited one by one.
func TestRateLimitIPv6Network(t *testing.T) {
	s, _ := limitedServer(t)
	for i := range 2 {
		if rec := get(s, "/api/v1/search", fmt.Sprintf("[2001:db8:1:2::%x]:1", i+1), ""); rec.Code != 200 {
			t.Fatalf("request %d from 2001:db8:1:2::/64: got %d, want 200", i+1, rec.Code)
		}
	}
	for _, peer := range []string{"[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:1", "[2001:db8:1:2::ffff]:7"} {
		if rec := get(s, "/api/v1/search", peer, ""); rec.Code != http.StatusTooManyRequests {
			t.Fatalf("another address of the exhausted /64 (%s): got %d, want 429", peer, rec.Code)
		}
	}
	if rec := get(s, "/api/v1/search", "[2001:db8:1:3::1]:1", ""); rec.Code != 200 {
		t.Fatalf("another /64: got %d, want 200", rec.Code)
	}
	for range 2 {
		get(s, "/api/v1/search", "192.0.2.10:1", "")
	}
	if rec := get(s, "/api/v1/search", "192.0.2.11:1", ""); rec.Code != 200 {
		t.Fatalf("the next IPv4 address: got %d, want 200", rec.Code)
	}
	// Forwarded IPv6 clients behind a trusted proxy are grouped the same way.
	s, _ = limitedServer(t, netip.MustParsePrefix("10.0.0.0/8"))
	for i := range 2 {
		get(s, "/api/v1/search", "10.0.0.5:1", "", "X-Forwarded-For", fmt.Sprintf("2001:db8:9:9::%x", i+1))
	}
	if rec := get(s, "/api/v1/search", "10.0.0.5:1", "", "X-Forwarded-For", "2001:db8:9:9::99"); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("forwarded address of an exhausted /64: got %d, want 429", rec.Code)
	}
}

// TestRateLimitFullMapNoScan: when the buckets are full, a request from a new
// address drops the least recently used bucket without looking at the others.
// Before, each such request swept and then searched all 10,000 buckets under
// the lock: a flood from fresh addresses made every limited request slow.
func TestRateLimitFullMapNoScan(t *testing.T) {
	b := newBuckets(Rate{PerSecond: 1, Burst: 2})
	b.max = 1000
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range b.max {
		b.take(fmt.Sprintf("old-%d", i), now)
	}
	b.take("old-0", now) // used again: now the most recent
	b.visited = 0
	for i := range 500 {
		b.take(fmt.Sprintf("new-%d", i), now)
	}
	if b.visited > 3*500 {
		t.Errorf("500 new addresses into a full map looked at %d buckets, want about one each", b.visited)
	}
	if n := b.size(); n != b.max {
		t.Errorf("buckets: got %d, want %d", n, b.max)
	}
	b.mu.Lock()
	_, recent := b.m["old-0"]
	_, oldest := b.m["old-1"]
	b.mu.Unlock()
	if !recent || oldest {
		t.Errorf("eviction order: old-0 (used again) kept %v, old-1 (least recently used) kept %v; want true, false", recent, oldest)
	}
}
