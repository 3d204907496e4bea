package web

import (
	"bytes"
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

// Crawler calls the crawler service's API on behalf of the pages. Its API key stays
// here, on the server; browsers never see it.
type Crawler struct {
	base   string
	key    string
	http   *http.Client // bounded calls
	stream *http.Client // event streams: no overall timeout
}

// NewCrawler returns a client for the crawler at baseURL (e.g. http://127.0.0.1:8081).
func NewCrawler(baseURL, apiKey string) *Crawler {
	return &Crawler{base: strings.TrimRight(baseURL, "/"), key: apiKey,
		http: &http.Client{Timeout: 15 * time.Second}, stream: &http.Client{}}
}

// StatusError is a 4xx answer of the crawler, with its problem detail.
type StatusError struct {
	Status int
	Field  string
	Detail string
}

func (e *StatusError) Error() string { return fmt.Sprintf("crawler: %d: %s", e.Status, e.Detail) }

// ErrCrawlerUnavailable wraps failures to reach the crawler.
var ErrCrawlerUnavailable = errors.New("crawler unavailable")

// CrawlSpec is the body of POST /api/v1/crawls.
type CrawlSpec struct {
	URL           string   `json:"url"`
	MaxDepth      *int     `json:"max_depth,omitempty"`
	MaxPages      int      `json:"max_pages,omitempty"`
	Include       []string `json:"include,omitempty"`
	Exclude       []string `json:"exclude,omitempty"`
	Tags          []string `json:"tags,omitempty"`
	RespectRobots *bool    `json:"respect_robots,omitempty"`
	UseSitemap    *bool    `json:"use_sitemap,omitempty"`
}

// Job is a crawl job as the crawler reports it (the fields the pages show).
type Job struct {
	ID       string    `json:"id"`
	Status   string    `json:"status"`
	URL      string    `json:"url"`
	Spec     CrawlSpec `json:"spec"`
	Counters struct {
		Discovered int64            `json:"discovered"`
		Queued     int64            `json:"queued"`
		InFlight   int64            `json:"in_flight"`
		Fetched    int64            `json:"fetched"`
		Stored     int64            `json:"stored"`
		Unchanged  int64            `json:"unchanged"`
		Deleted    int64            `json:"deleted"`
		Empty      int64            `json:"empty"`
		Failed     int64            `json:"failed"`
		FailedBy   map[string]int64 `json:"failed_by_reason"`
		Skipped    map[string]int64 `json:"skipped"`
		Chunks     int64            `json:"chunks"`
		Bytes      int64            `json:"bytes"`
	} `json:"counters"`
	Rates struct {
		PagesPerSec  float64 `json:"pages_per_sec"`
		StoredPerSec float64 `json:"stored_per_sec"`
		ChunksPerSec float64 `json:"chunks_per_sec"`
	} `json:"rates"`
	CreatedAt  time.Time  `json:"created_at"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	RunningMS  int64      `json:"running_ms"`
	LastErrors []string   `json:"last_errors"`
}

// Terminal reports whether the job has ended.
func (j *Job) Terminal() bool {
	return j.Status == "done" || j.Status == "failed" || j.Status == "cancelled"
}

// Document is a stored document as the crawler lists it.
type Document struct {
	ID         string     `json:"id"`
	URL        string     `json:"url"`
	Domain     string     `json:"domain"`
	Title      string     `json:"title"`
	Tags       []string   `json:"tags"`
	ChunkCount int        `json:"chunk_count"`
	FetchedAt  *time.Time `json:"fetched_at"`
}

// DocumentPage is one page of the document list.
type DocumentPage struct {
	Documents []Document `json:"documents"`
	NextAfter string     `json:"next_after"`
}

// Start starts a crawl.
func (c *Crawler) Start(ctx context.Context, spec CrawlSpec) (*Job, error) {
	var j Job
	return &j, c.do(ctx, http.MethodPost, "/api/v1/crawls", spec, &j)
}

// Job returns a crawl's status.
func (c *Crawler) Job(ctx context.Context, id string) (*Job, error) {
	var j Job
	return &j, c.do(ctx, http.MethodGet, "/api/v1/crawls/"+url.PathEscape(id), nil, &j)
}

// Jobs lists the latest crawls.
func (c *Crawler) Jobs(ctx context.Context, limit int) ([]Job, error) {
	var out struct {
		Crawls []Job `json:"crawls"`
	}
	err := c.do(ctx, http.MethodGet, "/api/v1/crawls?limit="+strconv.Itoa(limit), nil, &out)
	return out.Crawls, err
}

// Cancel cancels a crawl.
func (c *Crawler) Cancel(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/api/v1/crawls/"+url.PathEscape(id), nil, nil)
}

// Documents lists stored documents after the id after.
func (c *Crawler) Documents(ctx context.Context, after, domain string, limit int) (*DocumentPage, error) {
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	if after != "" {
		q.Set("after", after)
	}
	if domain != "" {
		q.Set("domain", domain)
	}
	var p DocumentPage
	return &p, c.do(ctx, http.MethodGet, "/api/v1/documents?"+q.Encode(), nil, &p)
}

// DeleteDocument deletes a stored document (its chunks, vectors, index and graph entries).
func (c *Crawler) DeleteDocument(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/api/v1/documents/"+url.PathEscape(id), nil, nil)
}

// Events opens a crawl's server-sent event stream; the caller closes the body.
func (c *Crawler) Events(ctx context.Context, id string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/api/v1/crawls/"+url.PathEscape(id)+"/events", nil)
	if err != nil {
		return nil, fmt.Errorf("build events request: %w", err)
	}
	req.Header.Set("Accept", "text/event-stream")
	c.auth(req)
	resp, err := c.stream.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCrawlerUnavailable, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return nil, statusError(resp.StatusCode, data)
	}
	return resp, nil
}

func (c *Crawler) auth(req *http.Request) {
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
}

func (c *Crawler) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode crawler request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("build crawler request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.auth(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCrawlerUnavailable, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("%w: read answer: %v", ErrCrawlerUnavailable, err)
	}
	if resp.StatusCode >= 300 {
		return statusError(resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode crawler answer to %s: %w", path, err)
	}
	return nil
}

// statusError reads a problem document: 4xx becomes a *StatusError, the rest is
// the crawler being unavailable.
func statusError(status int, data []byte) error {
	var p struct {
		Title, Detail, Field string
	}
	_ = json.Unmarshal(data, &p)
	if p.Detail == "" {
		p.Detail = p.Title
	}
	if status >= 500 || status == http.StatusTooManyRequests {
		return fmt.Errorf("%w: %d: %s", ErrCrawlerUnavailable, status, p.Detail)
	}
	if status == http.StatusUnauthorized {
		p.Detail = "the crawler refused this server's API key (KGS_CRAWLER_API_KEY)"
	}
	return &StatusError{Status: status, Field: p.Field, Detail: p.Detail}
}
