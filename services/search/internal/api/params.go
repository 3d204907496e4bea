package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/ranker"
	"github.com/kgsearch/kgsearch/services/search/internal/pipeline"
)

// body is the JSON body of POST /api/v1/search. Every field is optional except q;
// tags may be a list or a comma-separated string; weights a string such as
// "vector:0.5,bm25:0.5" or an object {"vector":0.5,"bm25":0.5}; mmr a lambda or false.
type body struct {
	Q               *string         `json:"q"`
	K               *int            `json:"k"`
	Offset          *int            `json:"offset"`
	Tags            json.RawMessage `json:"tags"`
	Domain          string          `json:"domain"`
	PublishedAfter  string          `json:"published_after"`
	PublishedBefore string          `json:"published_before"`
	Weights         json.RawMessage `json:"weights"`
	Fusion          string          `json:"fusion"`
	MMR             json.RawMessage `json:"mmr"`
	Expand          *bool           `json:"expand"`
	History         string          `json:"history"`
	Generated       string          `json:"generated"`
	Explain         *bool           `json:"explain"`
	Format          string          `json:"format"`
}

// fields is the request in string form, whichever method it came by.
type fields struct {
	q, k, offset, domain, after, before, weights, fusion, mmr, expand, history, generated, explain string
	tags                                                                                           []string
	hasQ                                                                                           bool
	// body is set for a POST search, whose fields come from a JSON body.
	body bool
	// format is the body's "format" (a POST search); the URL's ?format= and the
	// Accept header are read where the answer is written.
	format string
}

func fromQuery(v url.Values) fields {
	f := fields{
		q: v.Get("q"), k: v.Get("k"), offset: v.Get("offset"), domain: v.Get("domain"),
		after: v.Get("published_after"), before: v.Get("published_before"), weights: v.Get("weights"),
		fusion: v.Get("fusion"), mmr: v.Get("mmr"), expand: v.Get("expand"), history: v.Get("history"),
		generated: v.Get("generated"), explain: v.Get("explain"),
	}
	_, f.hasQ = v["q"]
	for _, t := range v["tags"] {
		f.tags = append(f.tags, splitList(t)...)
	}
	for _, t := range v["tag"] {
		f.tags = append(f.tags, splitList(t)...)
	}
	return f
}

// RequestFromQuery validates search fields given as a URL query, as GET
// /api/v1/search reads them, into a pipeline request; a bad field is a 400
// *httpserver.Error naming it. The web pages use it to read the same fields.
func RequestFromQuery(v url.Values) (pipeline.Request, error) { return fromQuery(v).request() }

func fromBody(r io.Reader) (fields, error) {
	var b body
	if err := httpserver.DecodeJSON(r, &b); err != nil {
		return fields{}, err
	}
	f := fields{domain: b.Domain, after: b.PublishedAfter, before: b.PublishedBefore, fusion: b.Fusion,
		history: b.History, generated: b.Generated, format: b.Format, body: true}
	if err := checkFormat(b.Format); err != nil {
		return fields{}, err
	}
	if b.Q != nil {
		f.q, f.hasQ = *b.Q, true
	}
	if b.K != nil {
		f.k = strconv.Itoa(*b.K)
	}
	if b.Offset != nil {
		f.offset = strconv.Itoa(*b.Offset)
	}
	if b.Expand != nil {
		f.expand = strconv.FormatBool(*b.Expand)
	}
	if b.Explain != nil {
		f.explain = strconv.FormatBool(*b.Explain)
	}
	if t := bytes.TrimSpace(b.Tags); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		var list []string
		var one string
		switch {
		case json.Unmarshal(t, &list) == nil:
			f.tags = list
		case json.Unmarshal(t, &one) == nil:
			f.tags = splitList(one)
		default:
			return fields{}, httpserver.BadRequest("tags", `must be a list of strings or a comma-separated string`)
		}
	}
	if w := bytes.TrimSpace(b.Weights); len(w) > 0 && !bytes.Equal(w, []byte("null")) {
		var s string
		var m map[string]float64
		switch {
		case json.Unmarshal(w, &s) == nil:
			f.weights = s
		case json.Unmarshal(w, &m) == nil:
			parts := make([]string, 0, len(m))
			for k, v := range m {
				parts = append(parts, k+":"+strconv.FormatFloat(v, 'g', -1, 64))
			}
			f.weights = strings.Join(parts, ",")
			if len(m) == 0 {
				return fields{}, httpserver.BadRequest("weights", "must name at least one signal")
			}
		default:
			return fields{}, httpserver.BadRequest("weights", `must be a string such as "vector:0.5,bm25:0.5" or an object {"vector":0.5}`)
		}
	}
	if m := bytes.TrimSpace(b.MMR); len(m) > 0 && !bytes.Equal(m, []byte("null")) {
		var x float64
		var on bool
		switch {
		case json.Unmarshal(m, &x) == nil:
			f.mmr = strconv.FormatFloat(x, 'g', -1, 64)
		case json.Unmarshal(m, &on) == nil && !on:
			f.mmr = "false"
		default:
			return fields{}, httpserver.BadRequest("mmr", "must be a lambda in [0,1], or false")
		}
	}
	return f, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// defaultExpand is whether a search expands its entities through kg unless told.
const defaultExpand = true

// request validates the fields into a pipeline request.
func (f fields) request() (pipeline.Request, error) {
	req := pipeline.Request{Query: f.q, K: pipeline.DefaultK, Domain: strings.TrimSpace(f.domain), Tags: f.tags}
	if !f.hasQ || strings.TrimSpace(f.q) == "" {
		if f.body {
			return req, httpserver.BadRequest("q", `missing or empty: give the words to search for in the body, e.g. {"q": "postgres replication"}`)
		}
		return req, httpserver.BadRequest("q", "missing or empty: give the words to search for, e.g. ?q=postgres+replication")
	}
	if !utf8.ValidString(f.q) {
		return req, httpserver.BadRequest("q", "is not valid UTF-8: send the query as UTF-8 text (percent-encoded in a URL)")
	}
	var err error
	if f.k != "" {
		if req.K, err = strconv.Atoi(strings.TrimSpace(f.k)); err != nil || req.K < 1 || req.K > pipeline.MaxK {
			return req, httpserver.BadRequest("k", fmt.Sprintf("must be an integer in 1..%d, got %q", pipeline.MaxK, clip(f.k)))
		}
	}
	if f.offset != "" {
		if req.Offset, err = strconv.Atoi(strings.TrimSpace(f.offset)); err != nil || req.Offset < 0 || req.Offset > pipeline.MaxOffset {
			return req, httpserver.BadRequest("offset", fmt.Sprintf("must be an integer in 0..%d, got %q", pipeline.MaxOffset, clip(f.offset)))
		}
	}
	if req.PublishedAfter, err = parseDate(f.after); err != nil {
		return req, httpserver.BadRequest("published_after", err.Error())
	}
	if req.PublishedBefore, err = parseDate(f.before); err != nil {
		return req, httpserver.BadRequest("published_before", err.Error())
	}
	if strings.TrimSpace(f.weights) != "" {
		if req.Weights, err = ranker.ParseWeights(f.weights); err != nil {
			return req, httpserver.BadRequest("weights", err.Error()+`; for example "`+ranker.DefaultWeights().String()+`"`)
		}
	}
	if req.Fusion, err = ranker.ParseFusion(f.fusion); err != nil {
		return req, httpserver.BadRequest("fusion", err.Error())
	}
	switch m := strings.ToLower(strings.TrimSpace(f.mmr)); m {
	case "", "false", "off":
	default:
		lambda, err := strconv.ParseFloat(m, 64)
		if err != nil || lambda < 0 || lambda > 1 || lambda != lambda {
			return req, httpserver.BadRequest("mmr", fmt.Sprintf("must be a lambda in [0,1] (1 = relevance only), got %q", clip(f.mmr)))
		}
		req.MMR, req.Lambda = true, lambda
	}
	if req.Expand, err = parseBool(f.expand, defaultExpand); err != nil {
		return req, httpserver.BadRequest("expand", err.Error())
	}
	switch h := strings.ToLower(strings.TrimSpace(f.history)); h {
	case "", "demote":
	case "keep":
		req.KeepHistory = true
	default:
		return req, httpserver.BadRequest("history", fmt.Sprintf(`must be "demote" (the default: release notes and changelogs rank lower unless the query asks about versions) or "keep", got %q`, clip(f.history)))
	}
	switch g := strings.ToLower(strings.TrimSpace(f.generated)); g {
	case "", "demote":
	case "keep":
		req.KeepGenerated = true
	default:
		return req, httpserver.BadRequest("generated", fmt.Sprintf(`must be "demote" (the default: source listings and generated indexes rank lower; listings keep their score when the query asks for source code) or "keep", got %q`, clip(f.generated)))
	}
	if req.Explain, err = parseBool(f.explain, false); err != nil {
		return req, httpserver.BadRequest("explain", err.Error())
	}
	if host, ok := hostOfDomain(req.Domain); !ok {
		return req, httpserver.BadRequest("domain", fmt.Sprintf("documents are filtered by host name, without scheme or port: give %s", host))
	}
	if err := req.Validate(); err != nil {
		var fe *pipeline.FieldError
		if errors.As(err, &fe) {
			return req, httpserver.BadRequest(fe.Field, fe.Reason)
		}
		return req, err
	}
	return req, nil
}

// hostOfDomain says whether a domain filter can match a stored document, whose
// domain is its URL's host name without a port. A host with a port
// (127.0.0.1:8099, [::1]:8099) or a bracketed IPv6 address would silently
// match nothing; for those it returns the host to give instead.
func hostOfDomain(d string) (string, bool) {
	if d == "" || strings.Contains(d, "/") {
		return d, true // a URL is refused by the request's own validation
	}
	if h, port, err := net.SplitHostPort(d); err == nil && h != "" && port != "" && strings.Trim(port, "0123456789") == "" {
		return h, false
	}
	if len(d) > 2 && d[0] == '[' && d[len(d)-1] == ']' {
		return d[1 : len(d)-1], false
	}
	return d, true
}

// parseDate reads RFC 3339 or YYYY-MM-DD (midnight UTC).
func parseDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not a date: use RFC 3339 (2025-01-31T00:00:00Z) or YYYY-MM-DD", clip(s))
}

func parseBool(s string, def bool) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return def, nil
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return def, fmt.Errorf("must be true or false, got %q", clip(s))
}

// clip shortens a value quoted back to the client.
func clip(s string) string {
	if len(s) <= 40 {
		return s
	}
	cut := 40
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
