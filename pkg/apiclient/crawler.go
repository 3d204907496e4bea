package apiclient

import (
	"bufio"
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

// CrawlSpec is the body of POST /api/v1/crawls; zero fields take the crawler's defaults.
type CrawlSpec struct {
	URL            string   `json:"url"`
	MaxDepth       *int     `json:"max_depth,omitempty"`
	MaxPages       int      `json:"max_pages,omitempty"`
	AllowedDomains []string `json:"allowed_domains,omitempty"`
	Include        []string `json:"include,omitempty"`
	Exclude        []string `json:"exclude,omitempty"`
	Tags           []string `json:"tags,omitempty"`
	RespectRobots  *bool    `json:"respect_robots,omitempty"`
	UseSitemap     *bool    `json:"use_sitemap,omitempty"`
	Recrawl        bool     `json:"recrawl,omitempty"`
	// Prune removes, when the crawl saw its whole scope, the stored pages in
	// that scope it did not reach.
	Prune bool `json:"prune,omitempty"`
}

// Counters are a crawl job's counters (see the crawler's README).
type Counters struct {
	Discovered int64 `json:"discovered"`
	Queued     int64 `json:"queued"`
	InFlight   int64 `json:"in_flight"`
	Fetched    int64 `json:"fetched"`
	Stored     int64 `json:"stored"`
	Unchanged  int64 `json:"unchanged"`
	Deleted    int64 `json:"deleted"`
	Empty      int64 `json:"empty"`
	// ScriptRendered counts the empty pages whose HTML is a shell that
	// JavaScript fills in the browser (part of Empty).
	ScriptRendered int64            `json:"script_rendered,omitempty"`
	Failed         int64            `json:"failed"`
	FailedBy       map[string]int64 `json:"failed_by_reason,omitempty"`
	// DeletedBy says why stored versions were removed (http_404, noindex,
	// empty, script_rendered, redirect, ...).
	DeletedBy map[string]int64 `json:"deleted_by_reason,omitempty"`
	Skipped   map[string]int64 `json:"skipped,omitempty"`
	Filtered  map[string]int64 `json:"filtered_links,omitempty"`
	Chunks    int64            `json:"chunks"`
	Bytes     int64            `json:"bytes"`
}

// SkippedTotal sums the skips over their reasons.
func (c Counters) SkippedTotal() int64 {
	var n int64
	for _, v := range c.Skipped {
		n += v
	}
	return n
}

// Processed is the pages the job has finished with: within the page budget
// (stored, unchanged, deleted, empty) and outside it (failed, skipped).
func (c Counters) Processed() int64 {
	return c.Stored + c.Unchanged + c.Deleted + c.Empty + c.Failed + c.SkippedTotal()
}

// Add counts one page event into c, to keep counters current between the
// job's own counters (which progress events carry about once a second).
func (c *Counters) Add(ev Event) {
	switch ev.Outcome {
	case "stored":
		c.Stored++
	case "unchanged":
		c.Unchanged++
	case "deleted":
		c.Deleted++
		if ev.Reason != "" {
			if c.DeletedBy == nil {
				c.DeletedBy = map[string]int64{}
			}
			c.DeletedBy[ev.Reason]++
		}
	case "empty", "noindex":
		c.Empty++
	case "script_rendered":
		c.Empty++
		c.ScriptRendered++
	case "failed":
		c.Failed++
		if c.FailedBy == nil {
			c.FailedBy = map[string]int64{}
		}
		c.FailedBy[ev.Reason]++
	case "skipped":
		if c.Skipped == nil {
			c.Skipped = map[string]int64{}
		}
		c.Skipped[ev.Reason]++
	}
}

// Budget is the pages that used the job's page budget (max_pages).
func (c Counters) Budget() int64 { return c.Stored + c.Unchanged + c.Deleted + c.Empty }

// CrawlStatus is a crawl job as GET /api/v1/crawls/{id} answers it.
type CrawlStatus struct {
	ID     string `json:"id"`
	Status string `json:"status"` // queued, running, stalled, done, failed, cancelled
	URL    string `json:"url"`
	Spec   struct {
		MaxDepth *int     `json:"max_depth,omitempty"`
		MaxPages int      `json:"max_pages,omitempty"`
		Tags     []string `json:"tags,omitempty"`
	} `json:"spec"`
	Counters Counters `json:"counters"`
	Rates    struct {
		PagesPerSec  float64 `json:"pages_per_sec"`
		StoredPerSec float64 `json:"stored_per_sec"`
		ChunksPerSec float64 `json:"chunks_per_sec"`
	} `json:"rates"`
	CreatedAt  time.Time  `json:"created_at"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	RunningMS  int64      `json:"running_ms"`
	LastErrors []string   `json:"last_errors"`
	// Warnings say what the user should know about the result, e.g. that
	// most pages are rendered by JavaScript and the crawl found no text.
	Warnings []string `json:"warnings,omitempty"`
}

// Terminal reports whether the job has ended.
func (s CrawlStatus) Terminal() bool {
	return s.Status == "done" || s.Status == "failed" || s.Status == "cancelled"
}

// Event is one server-sent event of GET /api/v1/crawls/{id}/events: "progress"
// and "summary" carry the status, "page" one finished page.
type Event struct {
	Type    string       `json:"type"`
	JobID   string       `json:"job_id"`
	URL     string       `json:"url,omitempty"`
	Outcome string       `json:"outcome,omitempty"`
	Reason  string       `json:"reason,omitempty"`
	Chunks  int          `json:"chunks,omitempty"`
	Error   string       `json:"error,omitempty"`
	Status  *CrawlStatus `json:"status,omitempty"`
}

// Chunk is one stored chunk with the byte offsets of its text in the document.
type Chunk struct {
	ID          string   `json:"id"`
	Ordinal     int      `json:"ordinal"`
	Text        string   `json:"text"`
	TokenCount  int      `json:"token_count"`
	StartOffset int      `json:"start_offset"`
	EndOffset   int      `json:"end_offset"`
	HeadingPath []string `json:"heading_path"`
	// Set by GET /api/v1/chunks/{id}: the document the chunk cites.
	DocumentID string `json:"document_id,omitempty"`
	URL        string `json:"url,omitempty"`
	Title      string `json:"title,omitempty"`
}

// Document is a stored document.
type Document struct {
	ID          string     `json:"id"`
	URL         string     `json:"url"`
	Domain      string     `json:"domain"`
	Title       string     `json:"title"`
	Lang        string     `json:"lang,omitempty"`
	PublishedAt *time.Time `json:"published_at,omitempty"`
	FetchedAt   *time.Time `json:"fetched_at,omitempty"`
	UpdatedAt   time.Time  `json:"updated_at"`
	Tags        []string   `json:"tags"`
	Headings    []string   `json:"headings"`
	ChunkCount  int        `json:"chunk_count"`
	Chunks      []Chunk    `json:"chunks,omitempty"`
}

// DocumentPage is one page of GET /api/v1/documents.
type DocumentPage struct {
	Documents []Document `json:"documents"`
	NextAfter string     `json:"next_after"`
}

// CrawlerClient calls the crawler.
type CrawlerClient struct{ b base }

// NewCrawler returns a client for the crawler at baseURL. A nil hc gets one with
// a 60 s timeout (event streams use a copy without one).
func NewCrawler(baseURL string, hc *http.Client, apiKey string) *CrawlerClient {
	return &CrawlerClient{b: newBase("crawler", baseURL, hc, apiKey)}
}

// Start creates a crawl job.
func (c *CrawlerClient) Start(ctx context.Context, spec CrawlSpec) (*CrawlStatus, error) {
	var out CrawlStatus
	return &out, c.b.getJSON(ctx, http.MethodPost, "/api/v1/crawls", spec, &out)
}

// Crawl returns a job's status.
func (c *CrawlerClient) Crawl(ctx context.Context, id string) (*CrawlStatus, error) {
	var out CrawlStatus
	return &out, c.b.getJSON(ctx, http.MethodGet, "/api/v1/crawls/"+url.PathEscape(id), nil, &out)
}

// Crawls lists the latest jobs, newest first; limit <= 0 takes the crawler's default.
func (c *CrawlerClient) Crawls(ctx context.Context, limit int) ([]CrawlStatus, error) {
	return c.CrawlsWithStatus(ctx, "", limit)
}

// CrawlsWithStatus lists the latest jobs in one status (queued, running, done,
// failed or cancelled; "" for every status), newest first; limit <= 0 takes the
// crawler's default.
func (c *CrawlerClient) CrawlsWithStatus(ctx context.Context, status string, limit int) ([]CrawlStatus, error) {
	q := url.Values{}
	if status != "" {
		q.Set("status", status)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	path := "/api/v1/crawls"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out struct {
		Crawls []CrawlStatus `json:"crawls"`
	}
	err := c.b.getJSON(ctx, http.MethodGet, path, nil, &out)
	return out.Crawls, err
}

// Cancel cancels a job.
func (c *CrawlerClient) Cancel(ctx context.Context, id string) (*CrawlStatus, error) {
	var out CrawlStatus
	return &out, c.b.getJSON(ctx, http.MethodDelete, "/api/v1/crawls/"+url.PathEscape(id), nil, &out)
}

// Chunk returns one chunk with its document's id, URL and title.
func (c *CrawlerClient) Chunk(ctx context.Context, id string) (*Chunk, error) {
	var out Chunk
	return &out, c.b.getJSON(ctx, http.MethodGet, "/api/v1/chunks/"+url.PathEscape(id), nil, &out)
}

// Document returns a document, with its chunks when chunks is true.
func (c *CrawlerClient) Document(ctx context.Context, id string, chunks bool) (*Document, error) {
	var out Document
	path := "/api/v1/documents/" + url.PathEscape(id)
	if chunks {
		path += "?chunks=true"
	}
	return &out, c.b.getJSON(ctx, http.MethodGet, path, nil, &out)
}

// Documents lists documents in id order after the cursor after.
func (c *CrawlerClient) Documents(ctx context.Context, domain, after string, limit int) (*DocumentPage, error) {
	q := url.Values{}
	if domain != "" {
		q.Set("domain", domain)
	}
	if after != "" {
		q.Set("after", after)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out DocumentPage
	return &out, c.b.getJSON(ctx, http.MethodGet, "/api/v1/documents?"+q.Encode(), nil, &out)
}

// DeleteDocument deletes a document (chunks, vectors; search and kg are told).
func (c *CrawlerClient) DeleteDocument(ctx context.Context, id string) error {
	return c.b.getJSON(ctx, http.MethodDelete, "/api/v1/documents/"+url.PathEscape(id), nil, nil)
}

// DomainDeletion is one batch of DELETE /api/v1/documents?domain=.
type DomainDeletion struct {
	Domain  string `json:"domain"`
	Deleted int    `json:"deleted"`
	More    bool   `json:"more"` // documents of the host remain: call again
}

// DeleteDomain deletes at most limit documents of a host (0: the server's
// default); More says whether to call again.
func (c *CrawlerClient) DeleteDomain(ctx context.Context, domain string, limit int) (*DomainDeletion, error) {
	q := url.Values{"domain": {domain}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out DomainDeletion
	return &out, c.b.getJSON(ctx, http.MethodDelete, "/api/v1/documents?"+q.Encode(), nil, &out)
}

// Ready returns GET /readyz.
func (c *CrawlerClient) Ready(ctx context.Context) (map[string]any, error) { return ready(ctx, c.b) }

// EventStream opens a job's server-sent event stream (GET
// /api/v1/crawls/{id}/events) and returns its body unread, for a caller that
// relays the stream as it is; the caller closes it. The stream lasts as long as
// the crawl: ctx bounds it, the client's timeout does not. An error answer is an
// *Error.
func (c *CrawlerClient) EventStream(ctx context.Context, id string) (io.ReadCloser, error) {
	sb := c.b
	hc := *sb.http
	hc.Timeout = 0
	sb.http = &hc
	resp, err := sb.open(ctx, http.MethodGet, "/api/v1/crawls/"+url.PathEscape(id)+"/events", nil, "text/event-stream")
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// Events follows a job's event stream, calling fn for each event, until the
// summary (returned), the end of the stream, ctx or an error of fn.
func (c *CrawlerClient) Events(ctx context.Context, id string, fn func(Event) error) (*CrawlStatus, error) {
	body, err := c.EventStream(ctx, id)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			data.WriteString(strings.TrimPrefix(d, " "))
			continue
		}
		if line != "" || data.Len() == 0 {
			continue // "event:" lines (the type is in the data too), comments
		}
		var ev Event
		err := json.Unmarshal([]byte(data.String()), &ev)
		data.Reset()
		if err != nil {
			return nil, fmt.Errorf("crawler event stream of %s: bad event: %w", id, err)
		}
		if err := fn(ev); err != nil {
			return nil, err
		}
		if ev.Type == "summary" && ev.Status != nil {
			return ev.Status, nil
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, context.Canceled) {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("crawler event stream of %s: %w", id, err)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, fmt.Errorf("crawler event stream of %s ended before the summary", id)
}
