package kgapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
)

// ErrUnavailable wraps failures to reach the kg service (connection refused, 5xx,
// 429, 408, timeouts): callers degrade or retry later.
var ErrUnavailable = errors.New("kg service unavailable")

// StatusError is a 4xx answer other than 408 and 429: the request itself was
// wrong (or not allowed); retrying it unchanged will not help.
type StatusError struct {
	Status int
	Detail string
}

func (e *StatusError) Error() string { return fmt.Sprintf("kg service: %d: %s", e.Status, e.Detail) }

// Client calls the kg service.
type Client struct {
	base   string
	http   *http.Client
	apiKey string
}

// NewClient returns a client for the kg service at baseURL (e.g. http://127.0.0.1:8088).
// A nil httpClient gets one with a 10 s timeout; apiKey may be empty.
func NewClient(baseURL string, httpClient *http.Client, apiKey string) *Client {
	if httpClient == nil {
		httpClient = &http.Client{Timeout: 10 * time.Second}
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), http: httpClient, apiKey: apiKey}
}

// Ingest sends a stored document for extraction.
func (c *Client) Ingest(ctx context.Context, doc Document) (*IngestResponse, error) {
	var out IngestResponse
	if err := c.do(ctx, http.MethodPost, "/api/v1/ingest", IngestRequest{Document: doc}, &out); err != nil {
		return nil, fmt.Errorf("ingest document %s: %w", doc.ID, err)
	}
	return &out, nil
}

// DeleteDocument removes a document's part of the graph. A document the graph does
// not know is not an error.
func (c *Client) DeleteDocument(ctx context.Context, id string) error {
	err := c.do(ctx, http.MethodDelete, "/api/v1/documents/"+url.PathEscape(id), nil, nil)
	var se *StatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete document %s: %w", id, err)
	}
	return nil
}

// Match returns the chunks mentioning the entities.
func (c *Client) Match(ctx context.Context, req MatchRequest) (*MatchResponse, error) {
	var out MatchResponse
	if err := c.do(ctx, http.MethodPost, "/api/v1/entities/match", req, &out); err != nil {
		return nil, fmt.Errorf("match entities: %w", err)
	}
	return &out, nil
}

// Expand returns entities related to the given ones.
func (c *Client) Expand(ctx context.Context, req ExpandRequest) (*ExpandResponse, error) {
	var out ExpandResponse
	if err := c.do(ctx, http.MethodPost, "/api/v1/expand/entities", req, &out); err != nil {
		return nil, fmt.Errorf("expand entities: %w", err)
	}
	return &out, nil
}

// Retrieve runs a match and, when req.Expand is set, an expansion and the match of
// the related entities it uses, in one round trip.
func (c *Client) Retrieve(ctx context.Context, req RetrieveRequest) (*RetrieveResponse, error) {
	var out RetrieveResponse
	if err := c.do(ctx, http.MethodPost, "/api/v1/retrieve", req, &out); err != nil {
		return nil, fmt.Errorf("retrieve from the graph: %w", err)
	}
	return &out, nil
}

// Parse extracts entities from a query string.
func (c *Client) Parse(ctx context.Context, text string) (*ParseResponse, error) {
	var out ParseResponse
	if err := c.do(ctx, http.MethodPost, "/api/v1/parse", ParseRequest{Text: text}, &out); err != nil {
		return nil, fmt.Errorf("parse query: %w", err)
	}
	return &out, nil
}

// Entities lists entities whose name starts with prefix (autocomplete), at most limit
// (kg refuses more than MaxEntityList; 0 takes kg's default).
func (c *Client) Entities(ctx context.Context, prefix, typ string, limit int) (*EntityList, error) {
	q := url.Values{}
	q.Set("prefix", prefix)
	if typ != "" {
		q.Set("type", typ)
	}
	if limit > 0 {
		q.Set("limit", fmt.Sprint(limit))
	}
	var out EntityList
	if err := c.do(ctx, http.MethodGet, "/api/v1/entities?"+q.Encode(), nil, &out); err != nil {
		return nil, fmt.Errorf("list entities: %w", err)
	}
	return &out, nil
}

// Entity returns one entity by id or name with its aliases, counters and strongest
// relations. An unknown entity is a *StatusError with Status 404.
func (c *Client) Entity(ctx context.Context, id string) (*Entity, error) {
	var out Entity
	if err := c.do(ctx, http.MethodGet, "/api/v1/entities/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, fmt.Errorf("get entity %q: %w", id, err)
	}
	return &out, nil
}

// Ready reports whether the kg service answers /readyz with 200.
func (c *Client) Ready(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/readyz", nil, nil)
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	req, err := apiclient.NewRequest(ctx, method, c.base+path, in, "application/json", c.apiKey)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err) //nolint:errorlint // the sentinel is the one class callers test; the transport error stays text so its own class (a timeout) does not leak
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%w: read response: %v", ErrUnavailable, err) //nolint:errorlint // the sentinel is the one class callers test; the transport error stays text so its own class (a timeout) does not leak
	}
	if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout {
		return fmt.Errorf("%w: %s: %s", ErrUnavailable, resp.Status, problemDetail(resp.StatusCode, data))
	}
	if resp.StatusCode >= 400 {
		return &StatusError{Status: resp.StatusCode, Detail: problemDetail(resp.StatusCode, data)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode %s response: %w", path, err)
	}
	return nil
}

// problemDetail is the detail of a problem document, else its title, else the
// answer's first 200 bytes.
func problemDetail(status int, data []byte) string {
	p := apiclient.Problem("kg", status, data)
	if p.Detail == "" {
		return p.Title
	}
	return p.Detail
}
