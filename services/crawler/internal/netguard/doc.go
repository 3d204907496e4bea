// Package netguard keeps the crawler from being used to reach internal
// networks (server-side request forgery).
//
// The decisive check happens when a connection is made: Guard.DialContext
// resolves the host itself, checks every resolved address, and connects only
// to an address that passed, so neither a redirect to an internal address nor
// a DNS answer that changes between check and use (rebinding) gets through. A
// net.Dialer.Control hook checks the socket address once more just before
// connect. NewTransport wraps this in an *http.Transport (for colly:
// c.WithTransport(t)) with proxies disabled, since a proxy would make the dial
// address meaningless.
//
// Refused by default, IPv4: 0.0.0.0/8, 10/8, 100.64/10 (CGNAT), 127/8,
// 169.254/16 (link-local, cloud metadata 169.254.169.254), 172.16/12,
// 192.0.0/24, 192.0.2/24, 192.88.99/24, 192.168/16, 198.18/15, 198.51.100/24,
// 203.0.113/24, 224/4 (multicast), 240/4 (reserved and broadcast). IPv6: ::
// and ::1, IPv4-compatible ::/96, IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96
// and 6to4 2002::/16 whenever the embedded IPv4 address is refused,
// 64:ff9b:1::/48, 100::/64, 2001::/23 (Teredo, ORCHID, ...), 2001:db8::/32 and
// 3fff::/20 (documentation), fc00::/7 (unique-local), fe80::/10 (link-local),
// fec0::/10 (site-local) and ff00::/8 (multicast). Host names "localhost" and
// "*.localhost" stand for 127.0.0.1 and ::1 without a lookup (RFC 6761), so
// an allowed "127.0.0.1:8099" also allows http://localhost:8099/.
//
// CheckURL is a cheap pre-check for queueing: it refuses URLs whose host is an
// internal address in any spelling resolvers accept (2130706433, 0x7f.1,
// 017700000001, 127.1, [::ffff:127.0.0.1], ...) without touching DNS.
//
// Operators allow exceptions (for local test sites) with Options.Allow:
// "127.0.0.1:8099" (one address and port), "127.0.0.1" (any port),
// "10.0.0.0/8" (a network), "intranet.example:8443" or "intranet.example" (a
// host name as written in the URL, whatever it resolves to).
//
// A refusal is a *BlockedError, which matches ErrBlocked with errors.Is. A
// name that does not resolve is a *ResolveError ("could not resolve host x (no
// such host)"), whose message leaves out the DNS server's address that a
// *net.DNSError shows: crawl errors are shown to API clients.
package netguard
