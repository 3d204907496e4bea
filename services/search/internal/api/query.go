package api

import (
	"net/http"

	"github.com/kgsearch/kgsearch/pkg/httpserver"
)

// The URL parameters of each endpoint (httpserver.StrictQuery): a parameter not
// listed, or a single one given twice, is a 400 naming it.
var (
	searchParams = httpserver.QuerySpec{
		Names: []string{"q", "k", "offset", "tags", "tag", "domain", "published_after", "published_before",
			"weights", "fusion", "mmr", "expand", "history", "generated", "explain", "format"},
		Repeat: []string{"tags", "tag"},
		Instead: map[string]string{"limit": "k", "size": "k", "n": "k", "top_k": "k", "count": "k", "num": "k",
			"page": "offset", "from": "offset", "start": "offset", "skip": "offset",
			"query": "q", "text": "q", "search": "q", "term": "q", "after": "published_after", "before": "published_before"},
	}
	suggestParams = httpserver.QuerySpec{
		Names:   []string{"prefix", "limit", "format"},
		Instead: map[string]string{"q": "prefix", "query": "prefix", "text": "prefix", "term": "prefix", "k": "limit", "n": "limit", "size": "limit"},
	}
	// A POST search reads the search from its body; the URL may only choose the
	// answer's format.
	postSearchParams = httpserver.QuerySpec{Names: []string{"format"},
		Unknown: `a POST search reads its fields from the JSON body, e.g. {"q": "...", "k": 5}; the URL may only carry format`}
)

// acceptable refuses, with 406, an Accept header naming only media types the API
// does not write (TOON and JSON); a ?format= chooses the format whatever Accept says.
func acceptable(r *http.Request) error {
	if r.URL.Query().Get("format") != "" {
		return nil
	}
	return httpserver.Acceptable(r, "text/toon", "application/json", "application/toon")
}
