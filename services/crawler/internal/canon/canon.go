package canon

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/kgsearch/kgsearch/pkg/store"
)

// Errors returned by Canonicalize, wrapped with the offending URL.
var (
	// ErrScheme means the URL is not http or https (or has no scheme at all).
	ErrScheme = errors.New("unsupported scheme (want http or https)")
	// ErrHost means the URL has no usable host.
	ErrHost = errors.New("missing or invalid host")
	// ErrInvalid means the URL cannot be parsed.
	ErrInvalid = errors.New("invalid URL")
	// ErrTooLong means the canonical URL is longer than MaxBytes.
	ErrTooLong = errors.New("URL too long")
)

// MaxBytes is the longest canonical URL: the longest document URL the store holds,
// so that every URL the crawler queues can be stored as a document.
const MaxBytes = store.MaxURLBytes

// TrailingSlash says what to do with a slash at the end of a path.
type TrailingSlash int

const (
	// KeepTrailingSlash leaves /a and /a/ distinct (the default: servers may
	// serve different pages for them).
	KeepTrailingSlash TrailingSlash = iota
	// StripTrailingSlash turns /a/ into /a (the root path / is kept).
	StripTrailingSlash
)

// DefaultTrackingParams lists query parameters that only identify a campaign or
// a click and never change the page. A trailing * matches a prefix. Matching
// ignores case.
var DefaultTrackingParams = []string{
	"utm_*", "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "fbclid", "msclkid",
	"yclid", "twclid", "ttclid", "igshid", "li_fat_id", "mc_cid", "mc_eid",
	"ref_src", "ref_url", "_ga", "_gl", "_hsenc", "_hsmi", "__hssc", "__hstc",
	"__hsfp", "hsctatracking", "mkt_tok", "oly_anon_id", "oly_enc_id", "vero_id",
	"vero_conv", "wickedid", "rb_clickid", "s_cid", "srsltid", "at_medium",
	"at_campaign", "pk_campaign", "pk_kwd", "pk_source", "pk_medium", "piwik_campaign",
	"matomo_campaign", "spm", "scm",
}

// DefaultIndexNames are the directory index file names IndexNames usually holds.
var DefaultIndexNames = []string{"index.html", "index.htm", "index.php", "default.htm", "default.html", "default.aspx"}

// Options holds the site-dependent canonicalisation choices. The zero value is
// usable but keeps tracking parameters; start from DefaultOptions.
type Options struct {
	// StripParams are query parameter names removed from every URL, compared
	// without regard to case; a trailing * matches any suffix ("utm_*").
	StripParams []string
	// StripWWW makes www.example.com and example.com the same host by removing
	// a leading "www." label (only when a dot remains, so www.com is kept).
	StripWWW bool
	// TrailingSlash chooses the trailing-slash policy.
	TrailingSlash TrailingSlash
	// IndexNames are final path segments treated as their directory, so that
	// /docs/index.html becomes /docs/. Empty means none (the default).
	IndexNames []string
}

// DefaultOptions returns the defaults: tracking parameters removed, hosts and
// trailing slashes kept as written.
func DefaultOptions() Options {
	return Options{StripParams: slices.Clone(DefaultTrackingParams)}
}

// Canonicalize returns the canonical form of an absolute http or https URL. See
// the package documentation for the rules.
func Canonicalize(raw string, opts Options) (string, error) {
	u, err := parse(raw)
	if err != nil {
		return "", err
	}
	return canonicalURL(u, raw, opts)
}

// Resolve resolves ref (an href as found in a page) against base and returns
// the canonical form of the result. Links to other schemes (mailto:,
// javascript:, ...) give ErrScheme.
func Resolve(base *url.URL, ref string, opts Options) (string, error) {
	r, err := parse(ref)
	if err != nil {
		return "", err
	}
	if base == nil {
		return canonicalURL(r, ref, opts)
	}
	return canonicalURL(base.ResolveReference(r), ref, opts)
}

// MustCanonicalize is Canonicalize for URLs known to be valid at compile time
// (tests, fixtures); it panics on error.
func MustCanonicalize(raw string, opts Options) string {
	s, err := Canonicalize(raw, opts)
	if err != nil {
		panic(err)
	}
	return s
}

// parse cleans the characters browsers ignore and parses the URL.
func parse(raw string) (*url.URL, error) {
	s := strings.TrimFunc(raw, func(r rune) bool { return r <= ' ' })
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s)
	}
	// Escape stray '%' signs (not followed by two hex digits) so that url.Parse
	// accepts links such as /100%real and the result is stable.
	s = fixPercents(s)
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("canonicalize %q: %w: %v", raw, ErrInvalid, unwrapURLError(err)) //nolint:errorlint // the sentinel classifies the input as invalid; the parser's error is only its description
	}
	return u, nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func canonicalURL(u *url.URL, raw string, opts Options) (string, error) {
	c, err := canonicalForm(u, raw, opts)
	if err != nil {
		return "", err
	}
	if len(c) > MaxBytes {
		// The URL itself is left out of the message: it is long.
		return "", fmt.Errorf("canonicalize: %w: %d bytes, at most %d", ErrTooLong, len(c), MaxBytes)
	}
	return c, nil
}

// canonicalForm is canonicalURL without the length limit.
func canonicalForm(u *url.URL, raw string, opts Options) (string, error) {
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		if scheme == "" {
			return "", fmt.Errorf("canonicalize %q: %w: no scheme", raw, ErrScheme)
		}
		return "", fmt.Errorf("canonicalize %q: %w: got %q", raw, ErrScheme, scheme)
	}
	if u.Opaque != "" || u.Host == "" {
		return "", fmt.Errorf("canonicalize %q: %w", raw, ErrHost)
	}
	host, err := NormalizeHost(u.Hostname())
	if err != nil {
		return "", fmt.Errorf("canonicalize %q: %w", raw, err)
	}
	if opts.StripWWW {
		host = stripWWW(host)
	}
	port, err := normalizePort(u.Port(), scheme)
	if err != nil {
		return "", fmt.Errorf("canonicalize %q: %w", raw, err)
	}

	var b strings.Builder
	b.Grow(len(raw) + 8)
	b.WriteString(scheme)
	b.WriteString("://")
	if strings.IndexByte(host, ':') >= 0 {
		b.WriteByte('[')
		b.WriteString(host)
		b.WriteByte(']')
	} else {
		b.WriteString(host)
	}
	if port != "" {
		b.WriteByte(':')
		b.WriteString(port)
	}
	b.WriteString(normalizePath(u.EscapedPath(), opts))
	if q := normalizeQuery(u.RawQuery, opts.StripParams); q != "" {
		b.WriteByte('?')
		b.WriteString(q)
	}
	return b.String(), nil
}

func stripWWW(host string) string {
	if rest, ok := strings.CutPrefix(host, "www."); ok && strings.Contains(rest, ".") {
		return rest
	}
	return host
}

func normalizePort(port, scheme string) (string, error) {
	if port == "" {
		return "", nil
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return "", fmt.Errorf("%w: port %q out of range", ErrInvalid, port)
	}
	if (scheme == "http" && n == 80) || (scheme == "https" && n == 443) {
		return "", nil
	}
	return strconv.FormatUint(n, 10), nil
}

func normalizePath(escaped string, opts Options) string {
	p := normalizeEscapes(escaped, isPathChar)
	p = removeDotSegments(p)
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	for {
		before := p
		if len(opts.IndexNames) > 0 {
			i := strings.LastIndexByte(p, '/')
			last := p[i+1:]
			for _, name := range opts.IndexNames {
				if last != "" && strings.EqualFold(last, name) {
					p = p[:i+1]
					break
				}
			}
		}
		if opts.TrailingSlash == StripTrailingSlash {
			p = strings.TrimRight(p, "/")
			if p == "" {
				p = "/"
			}
		}
		if p == before {
			return p
		}
	}
}

// removeDotSegments implements RFC 3986 section 5.2.4 on an absolute path.
func removeDotSegments(p string) string {
	if !strings.Contains(p, ".") {
		return p
	}
	segs := strings.Split(p, "/")
	out := make([]string, 0, len(segs))
	// segs[0] is "" for an absolute path.
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	r := strings.Join(out, "/")
	if r == "" {
		return "/"
	}
	return r
}

func normalizeQuery(raw string, strip []string) string {
	if raw == "" {
		return ""
	}
	type param struct {
		name, value string
		hasEq       bool
	}
	var params []param
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		name, value, hasEq := strings.Cut(part, "=")
		name = normalizeEscapes(name, isQueryChar)
		value = normalizeEscapes(value, isQueryChar)
		if name == "" && !hasEq {
			continue
		}
		if isStripped(name, strip) {
			continue
		}
		params = append(params, param{name, value, hasEq})
	}
	slices.SortStableFunc(params, func(a, b param) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := strings.Compare(a.value, b.value); c != 0 {
			return c
		}
		switch {
		case a.hasEq == b.hasEq:
			return 0
		case a.hasEq:
			return 1
		default:
			return -1
		}
	})
	var b strings.Builder
	for i, p := range params {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.name)
		if p.hasEq {
			b.WriteByte('=')
			b.WriteString(p.value)
		}
	}
	return b.String()
}

func isStripped(escapedName string, strip []string) bool {
	if len(strip) == 0 {
		return false
	}
	name, err := url.QueryUnescape(escapedName)
	if err != nil {
		name = escapedName
	}
	for _, pat := range strip {
		if prefix, ok := strings.CutSuffix(pat, "*"); ok {
			if len(name) >= len(prefix) && strings.EqualFold(name[:len(prefix)], prefix) {
				return true
			}
		} else if strings.EqualFold(name, pat) {
			return true
		}
	}
	return false
}

// normalizeEscapes rewrites s so that every byte outside allowed is
// percent-encoded with upper-case hex, escapes of unreserved characters are
// decoded, other escapes are upper-cased, and stray '%' become %25.
func normalizeEscapes(s string, allowed func(byte) bool) string {
	clean := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' || !allowed(c) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				d := unhex(s[i+1])<<4 | unhex(s[i+2])
				if isUnreserved(d) {
					b.WriteByte(d)
				} else {
					writeEscaped(&b, d)
				}
				i += 2
				continue
			}
			b.WriteString("%25")
			continue
		}
		if allowed(c) {
			b.WriteByte(c)
		} else {
			writeEscaped(&b, c)
		}
	}
	return b.String()
}

func fixPercents(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && !(i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2])) {
			b.WriteString("%25")
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

const upperHex = "0123456789ABCDEF"

func writeEscaped(b *strings.Builder, c byte) {
	b.WriteByte('%')
	b.WriteByte(upperHex[c>>4])
	b.WriteByte(upperHex[c&15])
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func isSubDelim(c byte) bool {
	switch c {
	case '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=':
		return true
	}
	return false
}

// isPathChar reports whether c may appear unescaped in a path (RFC 3986 pchar
// plus '/').
func isPathChar(c byte) bool {
	return isUnreserved(c) || isSubDelim(c) || c == ':' || c == '@' || c == '/'
}

// isQueryChar reports whether c may appear unescaped inside a query parameter
// name or value ('&' separates parameters, so it stays escaped).
func isQueryChar(c byte) bool {
	return c != '&' && (isPathChar(c) || c == '?')
}
