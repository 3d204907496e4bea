package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
)

// ErrBlocked matches every *BlockedError with errors.Is.
var ErrBlocked = errors.New("address not allowed")

// BlockedError says which host and address were refused and why.
type BlockedError struct {
	// Host is the host as requested (a name or an IP literal).
	Host string
	// IP is the refused address.
	IP netip.Addr
	// Reason names the address class, e.g. "loopback (127.0.0.0/8)".
	Reason string
}

// Error says what was refused and why, in words for the user who asked for
// the URL (it reaches API answers and job errors). For a name that DNS
// resolved, the address it resolved to is left out (IP keeps it): the message
// would otherwise tell whoever may submit URLs which internal address each
// internal name has ("mariadb resolves to 172.18.0.2"), a map of the network.
// The names localhost stands for are no secret and are shown.
func (e *BlockedError) Error() string {
	switch {
	case !e.IP.IsValid() || e.IP.String() == strings.Trim(e.Host, "[]"):
		return fmt.Sprintf("%s is an internal address: %s", e.Host, e.Reason)
	case e.IP.IsLoopback() && isLocalhostName(strings.TrimSuffix(strings.ToLower(e.Host), ".")):
		return fmt.Sprintf("%s resolves to %s, an internal address: %s", e.Host, e.IP, e.Reason)
	case !isName(e.Host):
		// Another spelling of an IP literal (0x7f.1, 2130706433): the address
		// is the user's own input.
		return fmt.Sprintf("%s resolves to %s, an internal address: %s", e.Host, e.IP, e.Reason)
	}
	return fmt.Sprintf("%s resolves to an internal address: %s", e.Host, e.Reason)
}

// isName reports whether host is a DNS name rather than a spelling of an IP
// address.
func isName(host string) bool {
	_, _, isIP := hostIP(host)
	return !isIP
}

// Is makes errors.Is(err, ErrBlocked) true.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

// Options configures a Guard. The zero value refuses every internal address
// and uses the system resolver.
type Options struct {
	// Allow lists exceptions: "ip:port", "[ipv6]:port", "ip", "cidr",
	// "name:port" or "name". Names match the host as written in the URL.
	Allow []string
	// Resolver looks host names up; nil means net.DefaultResolver.
	Resolver *net.Resolver
	// DialTimeout bounds one connection attempt; 0 means 10s.
	DialTimeout time.Duration
	// ResponseHeaderTimeout is set on transports made by Transport; 0 means 30s.
	ResponseHeaderTimeout time.Duration
}

// Guard decides which addresses may be contacted and dials only those.
// It is safe for concurrent use.
type Guard struct {
	// lookup resolves a name (the resolver's LookupNetIP; tests put a fake here).
	lookup        func(ctx context.Context, network, host string) ([]netip.Addr, error)
	dialer        *net.Dialer
	headerTimeout time.Duration

	allowAddrPort map[netip.AddrPort]bool
	allowPrefix   []netip.Prefix
	allowNamePort map[string]bool // "name:port"
	allowName     map[string]bool
}

// SplitList splits a comma- or space-separated list such as the value of
// CRAWLER_ALLOW_HOSTS into entries for Options.Allow.
func SplitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}

// New returns a Guard, or an error naming the first Allow entry it cannot
// parse.
func New(opts Options) (*Guard, error) {
	g := &Guard{
		headerTimeout: opts.ResponseHeaderTimeout,
		allowAddrPort: map[netip.AddrPort]bool{},
		allowNamePort: map[string]bool{},
		allowName:     map[string]bool{},
	}
	resolver := opts.Resolver
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	g.lookup = resolver.LookupNetIP
	if g.headerTimeout == 0 {
		g.headerTimeout = 30 * time.Second
	}
	timeout := opts.DialTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	g.dialer = &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, ControlContext: g.controlContext}
	for _, e := range opts.Allow {
		if err := g.addAllow(strings.TrimSpace(e)); err != nil {
			return nil, fmt.Errorf("netguard: allow entry %q: %w", e, err)
		}
	}
	return g, nil
}

func (g *Guard) addAllow(e string) error {
	if e == "" {
		return errors.New("empty entry")
	}
	if strings.Contains(e, "/") {
		p, err := netip.ParsePrefix(e)
		if err != nil {
			return fmt.Errorf("want a CIDR such as 10.0.0.0/8: %w", err)
		}
		g.allowPrefix = append(g.allowPrefix, p.Masked())
		return nil
	}
	if ap, err := netip.ParseAddrPort(e); err == nil {
		g.allowAddrPort[netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())] = true
		return nil
	}
	if a, err := netip.ParseAddr(strings.Trim(e, "[]")); err == nil {
		a = a.Unmap()
		g.allowPrefix = append(g.allowPrefix, netip.PrefixFrom(a, a.BitLen()))
		return nil
	}
	if host, port, err := net.SplitHostPort(e); err == nil {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return fmt.Errorf("bad port %q", port)
		}
		name, err := canon.NormalizeHost(host)
		if err != nil {
			return err
		}
		g.allowNamePort[net.JoinHostPort(name, port)] = true
		return nil
	}
	name, err := canon.NormalizeHost(e)
	if err != nil {
		return err
	}
	g.allowName[name] = true
	return nil
}

func (g *Guard) nameAllowed(host, port string) bool {
	if len(g.allowName) == 0 && len(g.allowNamePort) == 0 {
		return false
	}
	name, err := canon.NormalizeHost(host)
	if err != nil {
		return false
	}
	return g.allowName[name] || g.allowNamePort[net.JoinHostPort(name, port)]
}

func (g *Guard) ipAllowed(ip netip.Addr, port uint16) bool {
	ip = ip.WithZone("").Unmap()
	if g.allowAddrPort[netip.AddrPortFrom(ip, port)] {
		return true
	}
	for _, p := range g.allowPrefix {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// check returns a *BlockedError when ip:port may not be contacted.
func (g *Guard) check(host string, ip netip.Addr, port uint16) error {
	if g.ipAllowed(ip, port) {
		return nil
	}
	if r := Classify(ip); r != "" {
		return &BlockedError{Host: host, IP: ip, Reason: r}
	}
	return nil
}

func isLocalhostName(name string) bool {
	return name == "localhost" || strings.HasSuffix(name, ".localhost") ||
		name == "localhost.localdomain" || name == "ip6-localhost" || name == "ip6-loopback"
}

// CheckURL refuses, without any DNS lookup, a URL whose host is an internal
// address in any spelling (decimal, octal, hex or shortened IPv4, IPv6
// literals including IPv4-mapped ones) or a localhost name, unless allowed.
// A nil result does not make the URL safe: names are checked when dialled.
func (g *Guard) CheckURL(u *url.URL) error {
	host := u.Hostname()
	port := u.Port()
	if port == "" {
		port = "80"
		if strings.EqualFold(u.Scheme, "https") {
			port = "443"
		}
	}
	if g.nameAllowed(host, port) {
		return nil
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return fmt.Errorf("bad port %q in %s", port, u.Redacted())
	}
	ip, name, isIP := hostIP(host)
	if isIP {
		return g.check(host, ip, uint16(p))
	}
	if isLocalhostName(name) {
		var first error
		for _, ip := range loopbacks {
			err := g.check(host, ip, uint16(p))
			if err == nil {
				return nil
			}
			if first == nil {
				first = err
			}
		}
		return first
	}
	return nil
}

// loopbacks are the addresses localhost names stand for (RFC 6761); they are
// used without a lookup.
var loopbacks = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}

// hostIP interprets host the way a browser or resolver might: IDNA mapping
// (so "①②⑦.0.0.1" is 127.0.0.1), numeric IPv4 spellings and IPv6 literals.
// For names it returns the normalised (punycode, lower-case) name.
func hostIP(host string) (ip netip.Addr, name string, isIP bool) {
	if ip, ok := canon.ParseHostIP(host); ok {
		return ip, host, true
	}
	name, err := canon.NormalizeHost(host)
	if err != nil {
		return netip.Addr{}, host, false
	}
	if ip, ok := canon.ParseHostIP(name); ok {
		return ip, name, true
	}
	return netip.Addr{}, name, false
}

type nameAllowedKey struct{}

// DialContext resolves address ("host:port"), refuses internal addresses and
// connects to the first allowed address that answers. Use it as
// net.Dialer-compatible DialContext in an http.Transport.
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("dial %q: %w", address, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("dial %q: bad port", address)
	}
	byName := g.nameAllowed(host, portStr)

	var ips []netip.Addr
	if ip, name, isIP := hostIP(host); isIP {
		ips = []netip.Addr{ip}
	} else if isLocalhostName(name) {
		ips = loopbacks
	} else {
		lookupNet := "ip"
		switch network {
		case "tcp4", "udp4":
			lookupNet = "ip4"
		case "tcp6", "udp6":
			lookupNet = "ip6"
		}
		ips, err = g.lookup(ctx, lookupNet, name)
		if err != nil {
			return nil, &ResolveError{Host: host, Err: err}
		}
	}

	var firstBlock, lastErr error
	if byName {
		ctx = context.WithValue(ctx, nameAllowedKey{}, true)
	}
	for _, ip := range ips {
		if !byName {
			if err := g.check(host, ip, uint16(port)); err != nil {
				if firstBlock == nil {
					firstBlock = err
				}
				continue
			}
		}
		conn, err := g.dialer.DialContext(ctx, network, netip.AddrPortFrom(ip.Unmap(), uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	if lastErr != nil {
		return nil, lastErr
	}
	if firstBlock != nil {
		return nil, firstBlock
	}
	return nil, &ResolveError{Host: host, Err: errors.New("the name has no addresses")}
}

// Control checks the socket address just before connect; use it as
// net.Dialer.Control when building a dialer by hand. It knows only the IP and
// port, so name entries of Options.Allow do not apply here.
func (g *Guard) Control(network, address string, _ syscall.RawConn) error {
	return g.controlAddress(address)
}

func (g *Guard) controlContext(ctx context.Context, network, address string, _ syscall.RawConn) error {
	if ok, _ := ctx.Value(nameAllowedKey{}).(bool); ok {
		return nil
	}
	return g.controlAddress(address)
}

func (g *Guard) controlAddress(address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("unexpected socket address %q: %w", address, err)
	}
	return g.check(ap.Addr().String(), ap.Addr(), ap.Port())
}

// Transport returns a new *http.Transport that dials through the guard and
// never uses a proxy.
func (g *Guard) Transport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           g.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		ResponseHeaderTimeout: g.headerTimeout,
	}
}

// NewTransport is New followed by Transport.
func NewTransport(opts Options) (*http.Transport, error) {
	g, err := New(opts)
	if err != nil {
		return nil, err
	}
	return g.Transport(), nil
}
