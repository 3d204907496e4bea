package apiclient

import (
	"context"
	"net/http"
	"net/url"
)

// SearchRequest is the JSON body of POST /api/v1/search; empty fields are left to
// the service's defaults. Format is "toon" or "json".
type SearchRequest struct {
	Q               string   `json:"q"`
	K               int      `json:"k,omitempty"`
	Offset          int      `json:"offset,omitempty"`
	Tags            []string `json:"tags,omitempty"`
	Domain          string   `json:"domain,omitempty"`
	PublishedAfter  string   `json:"published_after,omitempty"`
	PublishedBefore string   `json:"published_before,omitempty"`
	Weights         string   `json:"weights,omitempty"`
	Fusion          string   `json:"fusion,omitempty"`
	MMR             *float64 `json:"mmr,omitempty"`
	Expand          *bool    `json:"expand,omitempty"`
	History         string   `json:"history,omitempty"`
	Generated       string   `json:"generated,omitempty"`
	Explain         bool     `json:"explain,omitempty"`
	Format          string   `json:"format,omitempty"`
}

// SearchClient calls the search service.
type SearchClient struct{ b base }

// NewSearch returns a client for the search service at baseURL. A nil hc gets
// one with a 60 s timeout; apiKey may be empty.
func NewSearch(baseURL string, hc *http.Client, apiKey string) *SearchClient {
	return &SearchClient{b: newBase("search", baseURL, hc, apiKey)}
}

// Search runs a search and returns the answer as the service wrote it (TOON or
// JSON after req.Format) with its content type.
//
// The format goes in the query string: the service negotiates the answer's format
// from ?format= and Accept, and does not read the body's format field.
func (c *SearchClient) Search(ctx context.Context, req SearchRequest) ([]byte, string, error) {
	path := "/api/v1/search"
	if req.Format != "" {
		path += "?format=" + url.QueryEscape(req.Format)
		req.Format = ""
	}
	return c.b.request(ctx, http.MethodPost, path, req, "")
}

// Status returns GET /api/v1/status (index watermark, lag, documents, model, ...).
func (c *SearchClient) Status(ctx context.Context) (map[string]any, error) {
	var out map[string]any
	return out, c.b.getJSON(ctx, http.MethodGet, "/api/v1/status", nil, &out)
}

// Ready returns GET /readyz: nil when the service is ready, else an error with its
// answer (the checks that failed).
func (c *SearchClient) Ready(ctx context.Context) (map[string]any, error) {
	return ready(ctx, c.b)
}

// KGClient reads the kg service's status endpoints (its graph API is pkg/kgapi).
type KGClient struct{ b base }

// NewKG returns a status client for the kg service.
func NewKG(baseURL string, hc *http.Client, apiKey string) *KGClient {
	return &KGClient{b: newBase("kg", baseURL, hc, apiKey)}
}

// Stats returns GET /api/v1/stats (documents, chunks, entities, relations, ...).
func (c *KGClient) Stats(ctx context.Context) (map[string]any, error) {
	var out map[string]any
	return out, c.b.getJSON(ctx, http.MethodGet, "/api/v1/stats", nil, &out)
}

// Ready returns GET /readyz.
func (c *KGClient) Ready(ctx context.Context) (map[string]any, error) { return ready(ctx, c.b) }

// ready reads /readyz; a 503 still carries the per-check answer, returned with the error.
func ready(ctx context.Context, b base) (map[string]any, error) {
	var out map[string]any
	err := b.getJSON(ctx, http.MethodGet, "/readyz", nil, &out)
	return out, err
}
