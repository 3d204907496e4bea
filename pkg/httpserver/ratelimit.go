package httpserver

import (
	"container/list"
	"crypto/subtle"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/time/rate"
)

// Rate is a token bucket: PerSecond tokens refill per second up to Burst. A zero
// PerSecond disables the limit.
type Rate struct {
	PerSecond float64
	Burst     int
}

// Enabled reports whether the rate limits anything.
func (r Rate) Enabled() bool { return r.PerSecond > 0 }

// String writes the rate the way ParseRate reads it.
func (r Rate) String() string {
	if !r.Enabled() {
		return "0"
	}
	n, unit := r.PerSecond, "s"
	if n < 1 {
		n, unit = n*60, "m"
	}
	if n < 1 {
		n, unit = n*60, "h"
	}
	return strconv.FormatFloat(n, 'f', -1, 64) + "/" + unit + " burst " + strconv.Itoa(r.Burst)
}

// ParseRate reads "N/s", "N/m" or "N/h", optionally followed by " burst B" (the
// bucket size; default N rounded up, at least 1). "0" and "off" disable the limit.
func ParseRate(s string) (Rate, error) {
	s = strings.TrimSpace(s)
	if s == "0" || strings.EqualFold(s, "off") {
		return Rate{}, nil
	}
	spec, burstText, hasBurst := strings.Cut(s, " burst ")
	num, unit, ok := strings.Cut(strings.TrimSpace(spec), "/")
	if !ok {
		return Rate{}, fmt.Errorf("want N/s, N/m or N/h, optionally with \" burst B\" (e.g. \"5/s burst 20\"), or 0 to disable")
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || n <= 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return Rate{}, fmt.Errorf("%q is not a positive number of requests", num)
	}
	var per float64
	switch strings.TrimSpace(unit) {
	case "s":
		per = 1
	case "m":
		per = 60
	case "h":
		per = 3600
	default:
		return Rate{}, fmt.Errorf("unit %q is not s, m or h", unit)
	}
	r := Rate{PerSecond: n / per, Burst: max(1, int(math.Ceil(n)))}
	if hasBurst {
		b, err := strconv.Atoi(strings.TrimSpace(burstText))
		if err != nil || b < 1 || b > 1_000_000 {
			return Rate{}, fmt.Errorf("burst %q is not a whole number in 1..1000000", burstText)
		}
		r.Burst = b
	}
	return r, nil
}

// RouteLimit rate-limits a set of routes ("METHOD /route/:pattern", as registered)
// with one bucket per API key (requests carrying a valid key) and one per client
// address (requests without one). The two kinds are independent: a key's requests
// never spend its address's tokens, and an exhausted address does not block a key.
type RouteLimit struct {
	Name    string // what is limited, for the 429 detail ("searches", "crawl creation")
	Routes  []string
	PerKey  Rate
	PerAddr Rate
}

// maxBuckets bounds the buckets kept per limit and kind; idle full buckets are
// dropped first, then the least recently used.
const maxBuckets = 10_000

type bucket struct {
	id   string
	lim  *rate.Limiter
	last time.Time
}

// buckets is a bounded map of token buckets keyed by API key index or address,
// with the buckets in a list from the most to the least recently used: idle
// buckets and, when the map is full, the least recently used one are dropped
// from the list's end, so no request scans the map (with 10,000 buckets, a flood
// from fresh addresses made every request scan them all, twice, under the lock).
type buckets struct {
	rate  Rate
	mu    sync.Mutex
	m     map[string]*list.Element // of *bucket
	lru   list.List                // front: most recently used
	swept time.Time
	max   int
	// visited counts the buckets the sweeps and evictions looked at (tests).
	visited int
}

func newBuckets(r Rate) *buckets {
	return &buckets{rate: r, m: map[string]*list.Element{}, max: maxBuckets}
}

// take spends one token for id, or returns how long to wait for one.
func (b *buckets) take(id string, now time.Time) (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Sub(b.swept) > time.Minute {
		b.sweep(now)
	}
	el, ok := b.m[id]
	if ok {
		b.lru.MoveToFront(el)
	} else {
		if len(b.m) >= b.max {
			b.sweep(now)
		}
		for len(b.m) >= b.max {
			b.drop(b.lru.Back())
		}
		el = b.lru.PushFront(&bucket{id: id, lim: rate.NewLimiter(rate.Limit(b.rate.PerSecond), b.rate.Burst)})
		b.m[id] = el
	}
	e := el.Value.(*bucket)
	e.last = now
	res := e.lim.ReserveN(now, 1)
	if !res.OK() {
		return time.Duration(float64(time.Second) / b.rate.PerSecond), false
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, false
	}
	return 0, true
}

// sweep drops buckets idle long enough to have refilled: forgetting them changes
// nothing, since a new bucket starts full. They are at the list's end.
func (b *buckets) sweep(now time.Time) {
	b.swept = now
	refill := time.Duration(float64(b.rate.Burst) / b.rate.PerSecond * float64(time.Second))
	for el := b.lru.Back(); el != nil; el = b.lru.Back() {
		b.visited++
		if now.Sub(el.Value.(*bucket).last) < refill {
			return
		}
		b.drop(el)
	}
}

func (b *buckets) drop(el *list.Element) {
	b.visited++
	delete(b.m, el.Value.(*bucket).id)
	b.lru.Remove(el)
}

func (b *buckets) size() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}

type routeLimiter struct {
	name          string
	perKey, perIP *buckets
}

type limiters struct {
	byRoute map[string]*routeLimiter // "METHOD /route"
	all     []*routeLimiter
	now     func() time.Time
}

func newLimiters(ls []RouteLimit) *limiters {
	out := &limiters{byRoute: map[string]*routeLimiter{}, now: time.Now}
	for _, l := range ls {
		if !l.PerKey.Enabled() && !l.PerAddr.Enabled() {
			continue
		}
		rl := &routeLimiter{name: l.Name}
		if l.PerKey.Enabled() {
			rl.perKey = newBuckets(l.PerKey)
		}
		if l.PerAddr.Enabled() {
			rl.perIP = newBuckets(l.PerAddr)
		}
		out.all = append(out.all, rl)
		for _, r := range l.Routes {
			out.byRoute[r] = rl
		}
	}
	return out
}

// rateLimit answers 429 with Retry-After when the request's bucket is empty. A
// request without a peer address (an in-process call, apiclient.InProcess, made by a
// handler that was limited itself) is not limited, and neither is a request without
// a valid key from a loopback client: that is this machine (scripts/run.sh, kgs, the
// evaluation tools). A reverse proxy on the same host must therefore be listed in
// TrustedProxies, so that the forwarded client is limited instead.
func (s *Server) rateLimit(c *gin.Context) {
	rl := s.limits.byRoute[c.Request.Method+" "+c.FullPath()]
	if rl == nil || c.Request.RemoteAddr == "" {
		c.Next()
		return
	}
	var b *buckets
	var id, who string
	if k, ok := s.keyIndex(c.Request); ok {
		b, id, who = rl.perKey, "key"+strconv.Itoa(k), "API key"
	} else {
		b, id, who = rl.perIP, s.clientAddr(c.Request), "client address"
		if a, err := netip.ParseAddr(id); err == nil {
			if a.IsLoopback() {
				b = nil
			}
			id = addrBucket(a)
		}
	}
	if b == nil {
		c.Next()
		return
	}
	if wait, ok := b.take(id, s.limits.now()); !ok {
		secs := max(1, int(math.Ceil(wait.Seconds())))
		s.writeError(c, &Error{Status: http.StatusTooManyRequests, Title: "too many requests", Retry: secs,
			Detail: fmt.Sprintf("rate limit for %s per %s reached (%s); retry after %d s", rl.name, who, b.rate, secs)})
		return
	}
	c.Next()
}

// addrBucket names the bucket of a client address: the address itself for IPv4,
// its /64 network for IPv6. A host on IPv6 holds a whole /64 (its interface id is
// its own to choose, and privacy addresses change it at will), so a bucket per
// address would give a client a fresh bucket for every request it sends from a
// new address, and its flood would push everyone else's buckets out.
func addrBucket(a netip.Addr) string {
	if a.Is4() {
		return a.String()
	}
	p, err := a.WithZone("").Prefix(64)
	if err != nil {
		return a.String()
	}
	return p.String()
}

// BearerToken returns the token of an "Authorization: Bearer <token>" header. The
// scheme is matched without regard to case and may be followed by several spaces,
// as RFC 9110 (section 11) allows: clients that send "bearer" were refused before.
func BearerToken(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimLeft(tok, " ")
	return tok, tok != ""
}

// keyIndex returns which configured API key the request's bearer token is.
func (s *Server) keyIndex(r *http.Request) (int, bool) { return keyIndex(s.cfg.APIKeys, r) }

// keyIndex returns which of keys the request's bearer token is, comparing in
// constant time.
func keyIndex(keys []string, r *http.Request) (int, bool) {
	tok, ok := BearerToken(r)
	if !ok {
		return 0, false
	}
	for i, k := range keys {
		if subtle.ConstantTimeCompare([]byte(tok), []byte(k)) == 1 {
			return i, true
		}
	}
	return 0, false
}

// clientAddr is the TCP peer's IP. Only when the peer is a trusted proxy
// (TrustedProxies) is X-Forwarded-For read: from the right, the first address that
// is not itself a trusted proxy is the client.
func (s *Server) clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	peer = peer.Unmap()
	if !s.trusted(peer) {
		return peer.String()
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // a malformed hop: stop at the last address we could trust
		}
		a = a.Unmap()
		if !s.trusted(a) {
			return a.String()
		}
		peer = a
	}
	return peer.String()
}

func (s *Server) trusted(a netip.Addr) bool {
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ParseProxies reads a comma-separated list of CIDR prefixes or single addresses
// (KGS_TRUSTED_PROXIES).
func ParseProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not an address or CIDR prefix such as 10.0.0.0/8", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}
