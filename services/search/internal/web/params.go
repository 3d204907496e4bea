package web

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// A page reads the URL parameters it knows and ignores the others: links and
// bookmarks carry tracking parameters (utm_source, fbclid) a page must not refuse.
// A parameter it knows with a value it cannot use is never ignored: the page
// answers 400 and says so above its content (paramError), naming the parameter,
// the values it takes and a link to the page without it. The JSON routes read
// their parameters strictly instead (httpserver.StrictQuery).

// pageQuery is what one page reads from its URL.
type pageQuery struct {
	Path  string   // the page's path, for the link without the parameter
	Known []string // the parameters it reads
	Lists []string // those of Known that may be given more than once
}

// paramError is a URL parameter the page cannot use.
type paramError struct {
	Name    string // the parameter ("" when the address itself does not parse)
	Value   string // as given, clipped
	Problem string // what is wrong with it, a sentence
	Accepts string // the values it takes, a sentence
	Without string // the page's address without the parameter
	// Instead is an address with a value that works (a domain given as a URL: its
	// host), with the text of its link; "" when there is none.
	Instead, InsteadText string
}

// WithoutText is the text of the link to the page without the parameter.
func (e *paramError) WithoutText() string {
	if e.Name == "" {
		return "Open the page without the parameters"
	}
	return "Open the page without " + e.Name
}

// read parses the page's query: an address that is not valid URL encoding and a
// known parameter given twice (not a list) are refused; unknown parameters are
// dropped from the values returned.
func (q pageQuery) read(r *http.Request) (url.Values, *paramError) {
	all, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, &paramError{Problem: "The address is not valid: its parameters are not URL-encoded (a '%' must be followed by two hex digits; send a literal % as %25).",
			Accepts: "Open the page from its navigation link or form.", Without: q.Path}
	}
	return q.filter(all)
}

// filter keeps the parameters of all the page knows; a known one given twice (not
// a list) is refused.
func (q pageQuery) filter(all url.Values) (url.Values, *paramError) {
	v := url.Values{}
	for name, vals := range all {
		if !slices.Contains(q.Known, name) {
			continue
		}
		v[name] = vals
	}
	for name, vals := range v {
		if len(vals) > 1 && !slices.Contains(q.Lists, name) {
			return v, &paramError{Name: name, Value: clip(strings.Join(vals, ", "), 60),
				Problem: fmt.Sprintf("The address gives %s %d times.", name, len(vals)), Accepts: "Give it once.", Without: q.without(v, name)}
		}
	}
	return v, nil
}

// bad is the error of parameter name of v with the value given.
func (q pageQuery) bad(v url.Values, name, accepts string) *paramError {
	val := v.Get(name)
	return &paramError{Name: name, Value: clip(val, 60), Accepts: accepts, Without: q.without(v, name),
		Problem: fmt.Sprintf("The address asks for %s=%s, which this page cannot use.", name, strconv.Quote(clip(val, 60)))}
}

// without is the page's address with v's parameters but name.
func (q pageQuery) without(v url.Values, name string) string {
	rest := url.Values{}
	for k, vs := range v {
		if k != name {
			rest[k] = vs
		}
	}
	if len(rest) == 0 {
		return q.Path
	}
	return q.Path + "?" + rest.Encode()
}

// with is the page's address with v's parameters and name set to value.
func (q pageQuery) with(v url.Values, name, value string) string {
	rest := url.Values{}
	for k, vs := range v {
		rest[k] = vs
	}
	rest.Set(name, value)
	return q.Path + "?" + rest.Encode()
}

// intParam reads a whole number from lo to hi, def when absent or empty; ok is
// false for anything else.
func intParam(v url.Values, name string, def, lo, hi int) (int, bool) {
	s := strings.TrimSpace(v.Get(name))
	if s == "" {
		return def, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return def, false
	}
	return n, true
}

// hostParam checks a host name filter (documents' domain): lower-cased, without
// a trailing dot. A URL, a host with a port or a path, or a name that is not an
// ASCII host name is refused; for a URL, host is the host in it (to offer the
// filter by that host instead).
func hostParam(raw string) (norm, host string, ok bool) {
	s := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(raw)), ".")
	if s == "" {
		return "", "", true
	}
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil && a.Zone() == "" {
		return a.String(), "", true
	}
	if len(s) <= 253 && validHostName(s) {
		return s, "", true
	}
	withScheme := s
	if !strings.Contains(s, "://") {
		withScheme = "http://" + s
	}
	if u, err := url.Parse(withScheme); err == nil && u.Hostname() != "" {
		if h := strings.TrimSuffix(strings.ToLower(u.Hostname()), "."); h != s && len(h) <= 253 && validHostName(h) {
			return "", h, false
		}
	}
	return "", "", false
}

// validHostName reports whether s is dot-separated labels of ASCII letters,
// digits, hyphens and underscores, none empty or longer than 63 bytes.
func validHostName(s string) bool {
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}
