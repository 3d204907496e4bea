package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ErrUnreachable means the search service did not answer at all.
var ErrUnreachable = errors.New("search service unreachable")

// Client calls the search service's JSON API.
type Client struct {
	base *url.URL
	http *http.Client
}

// NewClient returns a client for the service at base (http://127.0.0.1:8080).
func NewClient(base string, timeout time.Duration) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("search url %q: want http(s)://host:port", base)
	}
	return &Client{base: u, http: &http.Client{Timeout: timeout}}, nil
}

// SearchResponse is the part of the search answer the evaluation reads.
type SearchResponse struct {
	Query struct {
		Normalized string `json:"normalized"`
		Entities   []struct {
			Text string `json:"text"`
			Type string `json:"type"`
		} `json:"entities"`
	} `json:"query"`
	Results     []SearchResult `json:"results"`
	ResultCount int            `json:"result_count"`
	TotalTimeMS float64        `json:"total_time_ms"`
	Degraded    []string       `json:"degraded"`
	Explain     *struct {
		Weights string   `json:"weights"`
		Fusion  string   `json:"fusion"`
		Notes   []string `json:"notes"`
	} `json:"explain"`
}

// SearchResult is one ranked hit.
type SearchResult struct {
	Rank           int                `json:"rank"`
	URL            string             `json:"url"`
	Title          string             `json:"title"`
	Score          float64            `json:"score"`
	ScoreBreakdown map[string]float64 `json:"score_breakdown"`
	Source         string             `json:"source"`
	ChunkID        string             `json:"chunk_id"`
}

// Status is the search index's state (GET /api/v1/status).
type Status struct {
	IndexLag      int64  `json:"index_lag"`
	IndexedChunks int64  `json:"indexed_chunks"`
	Documents     int64  `json:"documents"`
	CaughtUp      bool   `json:"caught_up"`
	Reindexing    bool   `json:"reindexing"`
	LastError     string `json:"last_error"`
}

// Search runs q with the method's parameters and k results, as JSON.
func (c *Client) Search(ctx context.Context, q string, k int, params url.Values) (*SearchResponse, error) {
	v := url.Values{}
	for name, vals := range params {
		v[name] = append([]string(nil), vals...)
	}
	v.Set("q", q)
	v.Set("k", strconv.Itoa(k))
	v.Set("format", "json")
	v.Set("explain", "true")
	var out SearchResponse
	if err := c.get(ctx, "/api/v1/search", v, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Status reads the index status.
func (c *Client) Status(ctx context.Context) (*Status, error) {
	var st Status
	if err := c.get(ctx, "/api/v1/status", nil, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

func (c *Client) get(ctx context.Context, path string, v url.Values, out any) error {
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawQuery = v.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("build request %s: %w", path, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%w: GET %s: %w", ErrUnreachable, u.Redacted(), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("read answer of GET %s: %w", u.Redacted(), err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d: %s", u.Redacted(), resp.StatusCode, snippet(body))
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("decode answer of GET %s: %w (body starts %q)", u.Redacted(), err, snippet(body))
	}
	return nil
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
