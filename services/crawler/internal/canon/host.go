package canon

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// idnaProfile maps and converts internationalised host names. It is lenient
// about STD3 rules because real hosts contain underscores.
var idnaProfile = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.StrictDomainName(false))

// NormalizeHost returns the canonical spelling of a host name without port:
// lower case, punycode for internationalised names, no trailing dot, and IP
// addresses in standard form (numeric IPv4 spellings such as 2130706433 or
// 0x7f.1 become 127.0.0.1, IPv6 literals are compressed and unbracketed).
func NormalizeHost(host string) (string, error) {
	h := host
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if h == "" {
		return "", ErrHost
	}
	if strings.IndexByte(h, ':') >= 0 {
		a, err := netip.ParseAddr(h)
		if err != nil {
			return "", fmt.Errorf("%w: %q is not an IPv6 address", ErrHost, host)
		}
		if a.Zone() != "" {
			return "", fmt.Errorf("%w: %q: IPv6 zones are not supported", ErrHost, host)
		}
		return a.String(), nil
	}
	if ascii(h) {
		h = strings.ToLower(h)
	} else {
		var err error
		h, err = idnaProfile.ToASCII(h)
		if err != nil {
			return "", fmt.Errorf("%w: %q: %v", ErrHost, host, err) //nolint:errorlint // the sentinel classifies the input as invalid; the parser's error is only its description
		}
		h = strings.ToLower(h)
	}
	h = strings.TrimSuffix(h, ".")
	if h == "" || strings.HasPrefix(h, ".") || strings.HasSuffix(h, ".") || strings.Contains(h, "..") {
		return "", fmt.Errorf("%w: %q has an empty label", ErrHost, host)
	}
	if a, isIP, err := parseIPv4(h); isIP {
		if err != nil {
			return "", fmt.Errorf("%w: %q: %v", ErrHost, host, err) //nolint:errorlint // the sentinel classifies the input as invalid; the parser's error is only its description
		}
		return a.String(), nil
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; c <= ' ' || strings.IndexByte("#%/:<>?@[\\]^|", c) >= 0 {
			return "", fmt.Errorf("%w: %q contains %q", ErrHost, host, c)
		}
	}
	return h, nil
}

// ParseHostIP reports whether host (as found in a URL, possibly bracketed) is
// an IP address in any spelling a browser or resolver accepts, including the
// numeric IPv4 forms 2130706433, 0x7f000001, 0177.0.0.1 and 127.1, and
// returns it. Names, and numeric spellings that are out of range, give false.
func ParseHostIP(host string) (netip.Addr, bool) {
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.IndexByte(h, ':') >= 0 {
		a, err := netip.ParseAddr(h)
		return a, err == nil
	}
	a, isIP, err := parseIPv4(strings.TrimSuffix(h, "."))
	return a, isIP && err == nil
}

// parseIPv4 follows the WHATWG URL standard's IPv4 parser: a host whose last
// label is a number is an IPv4 address written with one to four parts, each
// decimal, octal (leading 0) or hex (0x). isIP is false for ordinary names;
// err is set when the host looks numeric but is not a valid address.
func parseIPv4(h string) (addr netip.Addr, isIP bool, err error) {
	parts := strings.Split(h, ".")
	if !isNumberLabel(parts[len(parts)-1]) {
		return netip.Addr{}, false, nil
	}
	if len(parts) > 4 {
		return netip.Addr{}, true, fmt.Errorf("numeric host with %d parts", len(parts))
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Part(p)
		if !ok {
			return netip.Addr{}, true, fmt.Errorf("bad IPv4 part %q", p)
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, true, fmt.Errorf("IPv4 part %d > 255", n)
		}
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, true, fmt.Errorf("IPv4 address out of range")
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, nil
}

func isNumberLabel(p string) bool {
	if p == "" {
		return false
	}
	if len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') {
		for i := 2; i < len(p); i++ {
			if !isHex(p[i]) {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
	}
	return true
}

func parseIPv4Part(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		p, base = p[2:], 16
		if p == "" {
			return 0, true
		}
	case len(p) >= 2 && p[0] == '0':
		p, base = p[1:], 8
	}
	// Parts longer than this cannot be valid and would overflow.
	if len(p) > 32 {
		return 0, false
	}
	n, err := strconv.ParseUint(p, base, 64)
	return n, err == nil
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// InScope reports whether u's host is one of domains or a subdomain of one.
// Domains are compared in canonical form (case, punycode and trailing dots do
// not matter), and www.example.com and example.com count as the same domain.
// An entry may start with "*." or "." (same meaning). An empty list allows
// nothing.
func InScope(u *url.URL, domains []string) bool {
	if u == nil {
		return false
	}
	return HostInScope(u.Hostname(), domains)
}

// HostInScope is InScope for a bare host name.
func HostInScope(host string, domains []string) bool {
	h, err := NormalizeHost(host)
	if err != nil {
		return false
	}
	for _, d := range domains {
		d = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(d), "*"), ".")
		nd, err := NormalizeHost(d)
		if err != nil {
			continue
		}
		if h == nd {
			return true
		}
		if _, isIP := ParseHostIP(h); isIP {
			continue
		}
		if strings.HasSuffix(h, "."+nd) {
			return true
		}
		// www.example.com allowed → example.com allowed, and the reverse is
		// covered by the subdomain rule.
		if bare, ok := strings.CutPrefix(nd, "www."); ok && h == bare {
			return true
		}
	}
	return false
}
