package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// SearchResponse is the search service's answer in JSON (format=json), as its
// clients read it. It is the HTTP contract, kept apart from the service's own
// types (services/search/internal/pipeline) on purpose: the service may add
// fields, and what a client does not read is left out here.
type SearchResponse struct {
	Query            SearchQueryInfo `json:"query"`
	Results          []SearchResult  `json:"results"`
	ResultCount      int             `json:"result_count"`
	TotalTimeMS      float64         `json:"total_time_ms"`
	SuggestedQueries []string        `json:"suggested_queries"`
	Degraded         []string        `json:"degraded"`
	Explain          *SearchExplain  `json:"explain,omitempty"`
}

// SearchQueryInfo is the query as the service parsed it.
type SearchQueryInfo struct {
	Normalized string         `json:"normalized"`
	Entities   []SearchEntity `json:"entities"`
	Intent     string         `json:"intent"`
}

// SearchEntity is an entity found in the query.
type SearchEntity struct {
	Text string `json:"text"`
	Type string `json:"type"`
}

// SearchResult is one ranked hit.
type SearchResult struct {
	Rank           int            `json:"rank"`
	URL            string         `json:"url"`
	Title          string         `json:"title"`
	Preview        string         `json:"preview"`
	Score          float64        `json:"score"`
	ScoreBreakdown ScoreBreakdown `json:"score_breakdown"`
	Source         string         `json:"source"` // the retrievers that found the chunk, e.g. "vector+bm25"
	ChunkID        string         `json:"chunk_id"`
	Start          int            `json:"start"` // the chunk's byte offsets in the document text
	End            int            `json:"end"`
}

// ScoreBreakdown holds a result's normalised signals.
type ScoreBreakdown struct {
	Vector  float64 `json:"vector"`
	Graph   float64 `json:"graph"`
	BM25    float64 `json:"bm25"`
	Recency float64 `json:"recency"`
	Title   float64 `json:"title"`
}

// Map is the breakdown keyed by signal name (vector, graph, bm25, recency, title).
func (b ScoreBreakdown) Map() map[string]float64 {
	return map[string]float64{"vector": b.Vector, "graph": b.Graph, "bm25": b.BM25, "recency": b.Recency, "title": b.Title}
}

// SearchExplain is how the scores were made, answered with explain=true.
type SearchExplain struct {
	Weights    string                     `json:"weights"`
	Fusion     string                     `json:"fusion"`
	MMR        bool                       `json:"mmr"`
	Candidates int                        `json:"candidates"`
	Retrievers map[string]RetrieverReport `json:"retrievers"`
	Notes      []string                   `json:"notes,omitempty"`
}

// RetrieverReport is one retriever's part in an explained search.
type RetrieverReport struct {
	Hits   int     `json:"hits"`
	TookMS float64 `json:"took_ms"`
	Error  string  `json:"error,omitempty"`
}

// SearchJSON runs a search in the JSON format and decodes the answer (req.Format
// is ignored).
func (c *SearchClient) SearchJSON(ctx context.Context, req SearchRequest) (*SearchResponse, error) {
	req.Format = "json"
	body, _, err := c.Search(ctx, req)
	if err != nil {
		return nil, err
	}
	var out SearchResponse
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("decode the search answer: %w", err)
	}
	return &out, nil
}

// SearchStatus is the part of GET /api/v1/status that says whether the index
// is complete.
type SearchStatus struct {
	IndexLag      int64  `json:"index_lag"`
	IndexedChunks int64  `json:"indexed_chunks"`
	Documents     int64  `json:"documents"`
	CaughtUp      bool   `json:"caught_up"`
	Reindexing    bool   `json:"reindexing"`
	LastError     string `json:"last_error"`
}

// IndexStatus returns GET /api/v1/status as a SearchStatus.
func (c *SearchClient) IndexStatus(ctx context.Context) (*SearchStatus, error) {
	var out SearchStatus
	if err := c.b.getJSON(ctx, http.MethodGet, "/api/v1/status", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ParseSearchQuery reads a search written as URL query parameters, the fields
// GET /api/v1/search takes (q=…&k=7&weights=bm25:1&expand=false), into a request.
// A parameter the API does not have, or a value of the wrong type, is an error
// naming it; the service checks the values' ranges. tags (or tag) may repeat and
// be comma-separated; mmr is a lambda or false; an empty value is left unset.
func ParseSearchQuery(v url.Values) (SearchRequest, error) {
	var r SearchRequest
	for _, name := range []string{"tags", "tag"} { // in the service's order
		for _, t := range v[name] {
			for p := range strings.SplitSeq(t, ",") {
				if p = strings.TrimSpace(p); p != "" {
					r.Tags = append(r.Tags, p)
				}
			}
		}
	}
	for name, vals := range v {
		s := ""
		if len(vals) > 0 {
			s = strings.TrimSpace(vals[0])
		}
		if err := r.setParam(name, s); err != nil {
			return SearchRequest{}, fmt.Errorf("search parameter %s=%q: %w", name, s, err)
		}
	}
	return r, nil
}

func (r *SearchRequest) setParam(name, s string) error {
	var err error
	switch name {
	case "tags", "tag": // read above
	case "q":
		r.Q = s
	case "domain":
		r.Domain = s
	case "published_after":
		r.PublishedAfter = s
	case "published_before":
		r.PublishedBefore = s
	case "weights":
		r.Weights = s
	case "fusion":
		r.Fusion = s
	case "history":
		r.History = s
	case "generated":
		r.Generated = s
	case "format":
		r.Format = s
	case "k", "offset", "mmr", "expand", "explain":
		if s != "" {
			err = r.setTyped(name, s)
		}
	default:
		return errors.New("not a parameter of the search API")
	}
	return err
}

// setTyped sets a parameter whose value is a number or a boolean.
func (r *SearchRequest) setTyped(name, s string) error {
	var err error
	switch name {
	case "k":
		r.K, err = strconv.Atoi(s)
	case "offset":
		r.Offset, err = strconv.Atoi(s)
	case "mmr":
		if off, bad := strconv.ParseBool(s); bad == nil && !off {
			r.MMR = nil
			return nil
		}
		var x float64
		x, err = strconv.ParseFloat(s, 64)
		r.MMR = &x
	case "expand", "explain":
		var b bool
		b, err = strconv.ParseBool(s)
		if name == "expand" {
			r.Expand = &b
		} else {
			r.Explain = b
		}
	}
	if err != nil {
		return fmt.Errorf("want %s: %w", typedWant[name], err)
	}
	return nil
}

// typedWant says what each typed parameter takes.
var typedWant = map[string]string{
	"k": "a whole number", "offset": "a whole number", "mmr": "a lambda in [0,1] or false",
	"expand": "true or false", "explain": "true or false",
}
