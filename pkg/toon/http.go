package toon

import (
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// Format is a response encoding chosen by content negotiation.
type Format int

const (
	// FormatJSON is application/json.
	FormatJSON Format = iota
	// FormatTOON is text/toon.
	FormatTOON
)

// Media types of the two formats.
const (
	MediaTypeTOON   = "text/toon"
	MediaTypeJSON   = "application/json"
	ContentTypeTOON = "text/toon; charset=utf-8"
	ContentTypeJSON = "application/json; charset=utf-8"
)

func (f Format) String() string {
	if f == FormatTOON {
		return "toon"
	}
	return "json"
}

// ContentType returns the Content-Type header value for f.
func (f Format) ContentType() string {
	if f == FormatTOON {
		return ContentTypeTOON
	}
	return ContentTypeJSON
}

// ParseFormat maps "toon" or "json" (any case) to a Format.
func ParseFormat(s string) (Format, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "toon":
		return FormatTOON, true
	case "json":
		return FormatJSON, true
	}
	return FormatJSON, false
}

// Negotiate picks the response format for r. A format query parameter
// (?format=toon or ?format=json) wins; otherwise the Accept header decides
// by quality value (text/toon → TOON, application/json → JSON, the more
// specific range winning over wildcards); when Accept is missing, only has
// wildcards, or ties, def is used.
func Negotiate(r *http.Request, def Format) Format {
	if r.URL != nil {
		if f, ok := ParseFormat(r.URL.Query().Get("format")); ok {
			return f
		}
	}
	accept := r.Header.Values("Accept")
	if len(accept) == 0 {
		return def
	}
	var toon, js acceptMatch
	for _, h := range accept {
		for _, part := range strings.Split(h, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			q := 1.0
			if qs, ok := params["q"]; ok {
				if v, err := strconv.ParseFloat(qs, 64); err == nil && v >= 0 && v <= 1 {
					q = v
				}
			}
			toon.consider(mt, MediaTypeTOON, q)
			js.consider(mt, MediaTypeJSON, q)
			if mt == "application/toon" {
				toon.consider(MediaTypeTOON, MediaTypeTOON, q)
			}
		}
	}
	if toon.spec < 3 && js.spec < 3 {
		// Only wildcards matched: the client has no preference.
		if (def == FormatTOON && toon.q > 0) || (def == FormatJSON && js.q > 0) {
			return def
		}
	}
	switch {
	case toon.q > js.q:
		return FormatTOON
	case js.q > toon.q:
		return FormatJSON
	}
	return def
}

// acceptMatch tracks the most specific Accept range matching a media type
// (spec 1 = */*, 2 = type/*, 3 = exact) and its quality.
type acceptMatch struct {
	spec int
	q    float64
}

func (m *acceptMatch) consider(rng, target string, q float64) {
	spec := 0
	switch {
	case rng == target:
		spec = 3
	case strings.HasSuffix(rng, "/*") && strings.HasPrefix(target, strings.TrimSuffix(rng, "*")):
		spec = 2
	case rng == "*/*":
		spec = 1
	}
	if spec > m.spec || (spec == m.spec && spec > 0 && q > m.q) {
		m.spec, m.q = spec, q
	}
}

// WriteHTTP encodes v in the negotiated format (see Negotiate) and writes
// it with the matching Content-Type and status. Nothing is written when
// encoding fails, so the caller can still answer with an error.
func WriteHTTP(w http.ResponseWriter, r *http.Request, status int, v any, def Format) error {
	f := Negotiate(r, def)
	var body []byte
	var err error
	if f == FormatTOON {
		body, err = Marshal(v)
	} else {
		body, err = json.Marshal(v)
	}
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", f.ContentType())
	h.Add("Vary", "Accept")
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return nil
	}
	_, err = w.Write(body)
	return err
}
