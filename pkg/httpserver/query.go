package httpserver

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// QuerySpec is what one endpoint reads from the URL query.
type QuerySpec struct {
	// Names are the parameters the endpoint takes.
	Names []string
	// Repeat are those of Names that may be given more than once (lists).
	Repeat []string
	// Instead maps names clients commonly use by mistake to the right one
	// ("limit" to "k"), for a did-you-mean in the answer.
	Instead map[string]string
	// Unknown, when set, replaces the list of parameters in the answer to an
	// unknown one (a POST that reads its fields from the body says so).
	Unknown string
}

// StrictQuery parses r's query string against spec: a string that is not valid URL
// encoding (field "query"), a parameter spec does not name and a parameter given
// twice that is not a list are 400s naming the parameter. url.Values would drop the
// first, and the handler would ignore the second and keep one value of the third,
// answering a mistake as if it were not there.
func StrictQuery(r *http.Request, spec QuerySpec) (url.Values, error) {
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, queryStringError(err)
	}
	for name, vals := range v {
		if !slices.Contains(spec.Names, name) {
			return nil, unknownParam(name, spec)
		}
		if len(vals) > 1 && !slices.Contains(spec.Repeat, name) {
			return nil, BadRequest(name, fmt.Sprintf("given %d times; give it once", len(vals)))
		}
	}
	return v, nil
}

func queryStringError(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "semicolon"):
		msg = "a ';' must be percent-encoded as %3B (parameters are separated by '&')"
	case strings.Contains(msg, "invalid URL escape"):
		msg = "invalid percent-escape " + strings.TrimPrefix(msg, "invalid URL escape ") + ": a literal '%' must be sent as %25"
	}
	return BadRequest("query", "the query string is not valid URL encoding: "+msg)
}

func unknownParam(name string, spec QuerySpec) error {
	detail := fmt.Sprintf("unknown parameter %q", clipText(name, 40))
	if spec.Unknown != "" {
		return BadRequest(name, detail+"; "+spec.Unknown)
	}
	lower := strings.ToLower(name)
	if alt, ok := spec.Instead[name]; ok {
		detail += fmt.Sprintf("; did you mean %q?", alt)
	} else if alt, ok := spec.Instead[lower]; ok {
		detail += fmt.Sprintf("; did you mean %q?", alt)
	} else if lower != name && slices.Contains(spec.Names, lower) {
		detail += fmt.Sprintf("; parameter names are lower case: %q", lower)
	}
	return BadRequest(name, detail+" (the parameters are "+strings.Join(spec.Names, ", ")+")")
}

// Acceptable refuses with 406 a request whose Accept header names only media
// types other than served (and their wildcards), each with a quality above 0. No
// Accept header, or one that does not parse, is acceptable: the handler answers
// in its default format.
func Acceptable(r *http.Request, served ...string) error {
	var named []string
	for _, h := range r.Header.Values("Accept") {
		for _, part := range strings.Split(h, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			if q, err := strconv.ParseFloat(params["q"], 64); err == nil && q <= 0 {
				continue
			}
			if mediaMatch(mt, served) {
				return nil
			}
			named = append(named, mt)
		}
	}
	if len(named) == 0 {
		return nil
	}
	return &Error{Status: http.StatusNotAcceptable, Title: "not acceptable", Field: "Accept",
		Detail: fmt.Sprintf("this endpoint answers %s, not %s; ask for one of those (or */*)",
			strings.Join(served, " or "), clipText(strings.Join(named, ", "), 80))}
}

// mediaMatch reports whether the Accept range rng covers one of served.
func mediaMatch(rng string, served []string) bool {
	if rng == "*/*" {
		return true
	}
	for _, s := range served {
		if rng == s || (strings.HasSuffix(rng, "/*") && strings.HasPrefix(s, strings.TrimSuffix(rng, "*"))) {
			return true
		}
	}
	return false
}

// clipText shortens client text quoted back in an error to about n bytes, on a
// rune boundary.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
