package testsite

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
)

// Crawl describes the crawler settings CanonicalPages assumes.
type Crawl struct {
	// MaxDepth is the link distance limit from the seed (depth 0).
	MaxDepth int
	// RespectRobots keeps /private/ out.
	RespectRobots bool
	// UseSitemap seeds the sitemap's URLs at depth 1 (when MaxDepth ≥ 1).
	UseSitemap bool
	// Canon is the crawler's canonicalisation (e.g. canon.DefaultOptions()).
	Canon canon.Options
}

// CanonicalPages returns, sorted, the canonical URLs of the pages a correct
// crawler stores when it crawls the site from SeedURL with settings c and no
// page limit. Stored pages are HTML or plain-text answers with status 200
// (/flaky and /busy count: a correct crawler retries them), inside the
// site's hosts, reached within MaxDepth; redirect targets are reached at the
// depth of the redirecting URL; /huge is left out (too large), as are
// binaries, 404s, pages removed with Remove and everything out of scope.
func (s *Site) CanonicalPages(c Crawl) []string {
	seed, err := canon.Canonicalize(s.SeedURL(), c.Canon)
	if err != nil {
		panic("testsite: seed does not canonicalise: " + err.Error())
	}
	if c.MaxDepth < 0 {
		c.MaxDepth = 0
	}
	buckets := make([][]string, c.MaxDepth+1)
	buckets[0] = []string{seed}
	if c.UseSitemap && c.MaxDepth >= 1 {
		for _, p := range s.sitemapPaths() {
			if u, err := canon.Canonicalize(s.base+p, c.Canon); err == nil {
				buckets[1] = append(buckets[1], u)
			}
		}
	}
	s.mu.Lock()
	gone := make(map[string]bool, len(s.gone))
	for k, v := range s.gone {
		gone[k] = v
	}
	s.mu.Unlock()

	seen := map[string]bool{}
	stored := map[string]bool{}
	for d := 0; d <= c.MaxDepth; d++ {
		for i := 0; i < len(buckets[d]); i++ {
			raw := buckets[d][i]
			if seen[raw] {
				continue
			}
			seen[raw] = true
			u, err := url.Parse(raw)
			if err != nil || !s.inScope(u) {
				continue
			}
			if c.RespectRobots && strings.HasPrefix(u.Path, "/private/") {
				continue
			}
			if gone[u.Path] {
				continue
			}
			res := s.resolve(u)
			switch res.kind {
			case kindRedirect:
				if t, err := canon.Resolve(u, res.location, c.Canon); err == nil {
					buckets[d] = append(buckets[d], t)
				}
			case kindText:
				stored[raw] = true
			case kindPage:
				stored[raw] = true
				if d == c.MaxDepth {
					continue
				}
				for _, l := range s.allLinks(res) {
					if t, err := canon.Resolve(u, l, c.Canon); err == nil {
						buckets[d+1] = append(buckets[d+1], t)
					}
				}
			}
		}
	}
	return sortedKeys(stored)
}

// allLinks returns every href of a rendered page: navigation, sidebar,
// banner and footer links as well as the body's.
func (s *Site) allLinks(res resource) []string {
	var out []string
	for _, l := range s.navLinks() {
		out = append(out, l.href)
	}
	out = append(out, "/articles/2#popular", "/privacy", "/about#team")
	for _, l := range res.links {
		out = append(out, l.href)
	}
	return out
}

func (s *Site) inScope(u *url.URL) bool {
	if u.Port() != s.port {
		return false
	}
	h := strings.ToLower(u.Hostname())
	for _, name := range s.Hosts() {
		if h == name {
			return true
		}
	}
	return false
}

// Resolver returns a resolver that answers 127.0.0.1 for the site's host
// names (Options.Host and its www. variant) and nothing for other names, by
// running a small DNS server on 127.0.0.1 for the life of the site. Pass it to
// netguard.Options.Resolver and allow Addr().
func (s *Site) Resolver() *net.Resolver {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dns == nil {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			panic("testsite: start DNS server: " + err.Error())
		}
		s.dns = pc
		known := map[string]bool{}
		for _, n := range s.Hosts() {
			known[strings.ToLower(n)] = true
		}
		loopback := netip.MustParseAddr("127.0.0.1")
		go ServeDNS(pc, func(name string) (netip.Addr, bool) { return loopback, known[name] })
	}
	addr := s.dns.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
}

// ServeDNS answers the DNS queries that reach pc until it is closed: a name that
// answer knows (given lower-case, without the final dot) gets its address for an
// A query and no records for other types; any other name is NXDOMAIN. The
// crawler's tests use it to give test host names (or an attacker's name) an
// address.
func ServeDNS(pc net.PacketConn, answer func(name string) (netip.Addr, bool)) {
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		var p dnsmessage.Parser
		h, err := p.Start(buf[:n])
		if err != nil {
			continue
		}
		q, err := p.Question()
		if err != nil {
			continue
		}
		addr, hit := answer(strings.TrimSuffix(strings.ToLower(q.Name.String()), "."))
		rcode := dnsmessage.RCodeSuccess
		if !hit {
			rcode = dnsmessage.RCodeNameError
		}
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RCode: rcode})
		_ = b.StartQuestions()
		_ = b.Question(q)
		_ = b.StartAnswers()
		if hit && q.Type == dnsmessage.TypeA {
			_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}, dnsmessage.AResource{A: addr.As4()})
		}
		msg, err := b.Finish()
		if err != nil {
			continue
		}
		_, _ = pc.WriteTo(msg, from)
	}
}
