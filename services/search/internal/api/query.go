package api

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/kgsearch/kgsearch/pkg/httpserver"
)

// paramSet is what one endpoint reads from the URL query: the parameters, which of
// them may repeat, and the names clients commonly use instead (limit for k, ...).
type paramSet struct {
	names   []string
	repeat  map[string]bool
	instead map[string]string
}

var searchParams = paramSet{
	names: []string{"q", "k", "offset", "tags", "tag", "domain", "published_after", "published_before",
		"weights", "fusion", "mmr", "expand", "explain", "format"},
	repeat: map[string]bool{"tags": true, "tag": true},
	instead: map[string]string{"limit": "k", "size": "k", "n": "k", "top_k": "k", "count": "k", "num": "k",
		"page": "offset", "from": "offset", "start": "offset", "skip": "offset",
		"query": "q", "text": "q", "search": "q", "term": "q", "after": "published_after", "before": "published_before"},
}

var suggestParams = paramSet{
	names:   []string{"prefix", "limit", "format"},
	instead: map[string]string{"q": "prefix", "query": "prefix", "text": "prefix", "term": "prefix", "k": "limit", "n": "limit", "size": "limit"},
}

// postSearchParams: a POST search reads the search from its body; the URL may
// only choose the answer's format.
var postSearchParams = paramSet{names: []string{"format"}}

// strictQuery parses the request's query string against the endpoint's parameters:
// a string that is not valid URL encoding, an unknown parameter and a parameter
// given twice are 400s naming the parameter, where url.Values would drop the first,
// ignore the second and keep one of the third silently.
func strictQuery(r *http.Request, ps paramSet) (url.Values, error) {
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, queryStringError(err)
	}
	for name, vals := range v {
		if !slices.Contains(ps.names, name) {
			return nil, unknownParam(name, ps, r.Method)
		}
		if len(vals) > 1 && !ps.repeat[name] {
			return nil, httpserver.BadRequest(name, fmt.Sprintf("given %d times; give it once", len(vals)))
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
		msg = strings.TrimPrefix(msg, "invalid URL escape ")
		msg = "invalid percent-escape " + msg + ": a literal '%' must be sent as %25"
	}
	return httpserver.BadRequest("query", "the query string is not valid URL encoding: "+msg)
}

func unknownParam(name string, ps paramSet, method string) error {
	detail := fmt.Sprintf("unknown parameter %q", clip(name))
	if method == http.MethodPost && len(ps.names) == 1 {
		return httpserver.BadRequest(name, detail+"; a POST search reads its fields from the JSON body, e.g. {\"q\": \"...\", \"k\": 5}; the URL may only carry format")
	}
	if alt, ok := ps.instead[name]; ok {
		detail += fmt.Sprintf("; did you mean %q?", alt)
	} else if alt, ok := ps.instead[strings.ToLower(name)]; ok {
		detail += fmt.Sprintf("; did you mean %q?", alt)
	} else if lower := strings.ToLower(name); lower != name && slices.Contains(ps.names, lower) {
		detail += fmt.Sprintf("; parameter names are lower case: %q", lower)
	}
	return httpserver.BadRequest(name, detail+" (the parameters are "+strings.Join(ps.names, ", ")+")")
}

// acceptable refuses, with 406, a request whose Accept header names only media
// types the API does not write (TOON and JSON); no Accept, a wildcard or a
// ?format= is fine. An unparsable header is ignored, as the negotiation ignores it.
func acceptable(r *http.Request) error {
	if r.URL.Query().Get("format") != "" {
		return nil
	}
	var named []string
	for _, h := range r.Header.Values("Accept") {
		for _, part := range strings.Split(h, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			if params["q"] == "0" || params["q"] == "0.0" || params["q"] == "0.00" || params["q"] == "0.000" {
				continue
			}
			switch mt {
			case "*/*", "text/*", "application/*", "text/toon", "application/toon", "application/json":
				return nil
			}
			named = append(named, mt)
		}
	}
	if len(named) == 0 {
		return nil
	}
	return &httpserver.Error{Status: http.StatusNotAcceptable, Title: "not acceptable", Field: "Accept",
		Detail: fmt.Sprintf("this endpoint answers text/toon (the default) or application/json, not %s; send Accept: application/json or ?format=json",
			clip(strings.Join(named, ", ")))}
}
