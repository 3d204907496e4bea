// Package api is the crawler's HTTP API under /api/v1: crawl jobs (create,
// list, status, server-sent events, cancel), synchronous single pages,
// documents (list, get, delete) and the domain blocklist. Handlers return
// errors; pkg/httpserver turns them into RFC 9457 problem documents.
package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/kgsearch/kgsearch/pkg/docid"
	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
	"github.com/kgsearch/kgsearch/services/crawler/internal/engine"
)

// API holds the handlers' dependencies.
type API struct {
	srv *httpserver.Server
	d   Deps
	// PageTimeout bounds POST /pages; default 2m.
	PageTimeout time.Duration
	// EventPoll is how often the event stream re-reads the job; default 1s.
	// The streams of one job share their reads (statusPolls).
	EventPoll time.Duration
	polls     statusPolls
	// StoreTimeout bounds the database work of one request (of each shared read
	// of the job for the event streams, of each document of DELETE
	// /documents?domain=);
	// default 10s. A database that accepts connections but does not answer (a
	// frozen or overloaded server) then gives a 503 naming MariaDB, not a
	// request that hangs until the client gives up.
	StoreTimeout time.Duration
}

// New returns the API; Register mounts it.
func New(srv *httpserver.Server, d Deps) *API {
	if d.BlocklistChanged == nil {
		d.BlocklistChanged = func() {}
	}
	return &API{srv: srv, d: d, PageTimeout: 2 * time.Minute, EventPoll: time.Second, StoreTimeout: 10 * time.Second}
}

// Register mounts the routes under /api/v1. Every route reads its URL query
// strictly (httpserver.StrictQuery): a parameter it does not take, or one given
// twice, is a 400 naming it, not silently ignored.
func (a *API) Register() {
	g := a.srv.API("/api/v1")
	a.polls.timeout = a.StoreTimeout
	// bounded routes run under StoreTimeout as a whole; the others bound their
	// own steps (the event stream each read, POST /pages by PageTimeout, the
	// delete of a domain each document).
	const bounded, unbounded = true, false
	h := func(q httpserver.QuerySpec, bound bool, fn func(*gin.Context) error) gin.HandlerFunc {
		return a.srv.Handle(func(c *gin.Context) error {
			if _, err := httpserver.StrictQuery(c.Request, q); err != nil {
				return err
			}
			if bound {
				// The clock starts once the body is in: a client's slow upload
				// is not the database's time.
				readBody(c.Request)
				ctx, cancel := a.storeCtx(c.Request.Context())
				defer cancel()
				c.Request = c.Request.WithContext(ctx)
			}
			return dbUnavailable(fn(c))
		})
	}
	g.POST("/crawls", h(bodyOnly, bounded, a.createCrawl))
	g.GET("/crawls", h(crawlListParams, bounded, a.listCrawls))
	g.GET("/crawls/:id", h(noParams, bounded, a.getCrawl))
	g.GET("/crawls/:id/events", h(noParams, unbounded, a.crawlEvents))
	g.DELETE("/crawls/:id", h(noParams, bounded, a.cancelCrawl))
	g.POST("/pages", h(bodyOnly, unbounded, a.crawlPage))
	g.GET("/documents", h(documentListParams, bounded, a.listDocuments))
	g.GET("/documents/:id", h(documentParams, bounded, a.getDocument))
	g.DELETE("/documents", h(domainDeleteParams, unbounded, a.deleteDomain))
	g.DELETE("/documents/:id", h(noParams, bounded, a.deleteDocument))
	g.GET("/chunks/:id", h(noParams, bounded, a.getChunk))
	g.GET("/blocklist", h(noParams, bounded, a.listBlocklist))
	g.POST("/blocklist", h(bodyOnly, bounded, a.addBlocklist))
	g.DELETE("/blocklist", h(unblockParams, bounded, a.removeBlocklist))
	g.DELETE("/blocklist/:domain", h(noParams, bounded, a.removeBlocklist))
}

// readBody reads r's body (limited by the server's MaxBodyBytes) into memory
// and gives the handler the same bytes, followed by the error that ended the
// read when it failed (a body over the limit stays a 413, a cut one a 400).
func readBody(r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	data, err := io.ReadAll(r.Body)
	var rest io.Reader = bytes.NewReader(data)
	if err != nil {
		rest = io.MultiReader(rest, failedRead{err})
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{rest, r.Body}
}

// failedRead is a reader that returns the error that ended a read.
type failedRead struct{ err error }

func (f failedRead) Read([]byte) (int, error) { return 0, f.err }

// storeCtx bounds database work by StoreTimeout. A timeout that fires is a
// store.Unavailable error, which dbUnavailable answers with 503.
func (a *API) storeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if a.StoreTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, a.StoreTimeout)
}

// The URL parameters of each route (httpserver.StrictQuery), with the names
// clients commonly use by mistake for a did-you-mean.
var (
	noParams = httpserver.QuerySpec{Unknown: "this endpoint takes no URL parameters"}
	bodyOnly = httpserver.QuerySpec{
		Unknown: `this endpoint reads its fields from the JSON body, e.g. {"url": "https://docs.example.com/"}; the URL takes no parameters`}
	crawlListParams = httpserver.QuerySpec{Names: []string{"status", "limit"},
		Instead: map[string]string{"state": "status", "k": "limit", "n": "limit", "size": "limit", "count": "limit", "per_page": "limit"}}
	documentListParams = httpserver.QuerySpec{Names: []string{"limit", "domain", "after"},
		Instead: map[string]string{"host": "domain", "site": "domain", "cursor": "after", "next_after": "after",
			"offset": "after", "page": "after", "k": "limit", "n": "limit", "size": "limit"}}
	documentParams = httpserver.QuerySpec{Names: []string{"chunks"},
		Instead: map[string]string{"with_chunks": "chunks", "include_chunks": "chunks", "chunk": "chunks"}}
	domainDeleteParams = httpserver.QuerySpec{Names: []string{"domain", "limit"},
		Instead: map[string]string{"host": "domain", "site": "domain", "k": "limit", "n": "limit", "size": "limit"}}
	unblockParams = httpserver.QuerySpec{Names: []string{"domain"}, Instead: map[string]string{"host": "domain", "site": "domain"}}
)

// decodeBody reads a JSON request body into v: a Content-Type other than JSON is
// a 415, as the search service answers it.
func decodeBody(c *gin.Context, v any) error {
	if err := httpserver.JSONContentType(c.Request); err != nil {
		return err
	}
	return httpserver.DecodeJSON(c.Request.Body, v)
}

// mapError turns engine and store errors into API errors. Field errors
// (engine.FieldError, store.ValidationError: both *fielderr.Error) and context
// deadlines are left to pkg/httpserver's mapper (400 naming the field; 503 with
// Retry-After).
func mapError(err error, what string) error {
	var pe *engine.PageError
	switch {
	case errors.As(err, &pe):
		removed := ""
		for _, r := range pe.Removed {
			removed += fmt.Sprintf(". The stored version of %s was removed: %s", r.URL, r.Detail)
		}
		if pe.Field != "" {
			return httpserver.BadRequest(pe.Field, pe.Err.Error()+removed)
		}
		detail := fmt.Sprintf("%s (%s)", pe.Err.Error(), pe.Reason) + removed
		return &httpserver.Error{Status: http.StatusUnprocessableEntity, Title: "page not indexed", Detail: detail, Err: err}
	case errors.Is(err, store.ErrNotFound):
		return httpserver.NotFound(what + " not found")
	case errors.Is(err, store.ErrNotReady):
		return httpserver.Unavailable("the database is not reachable; retry later", err)
	}
	return err
}

// dbUnavailable answers an error that says MariaDB could not be reached or
// dropped the connection (store.Unavailable) with 503 and Retry-After, as the
// other services answer their database's outages, instead of a 500: the request
// may succeed when the database is back. Other errors pass unchanged.
func dbUnavailable(err error) error {
	var he *httpserver.Error
	if err == nil || errors.As(err, &he) || !store.Unavailable(err) {
		return err
	}
	return httpserver.Unavailable("the database (MariaDB) is not reachable; retry later", err)
}

// crawlRequest is the body of POST /crawls.
type crawlRequest = engine.Spec

func (a *API) createCrawl(c *gin.Context) error {
	var req crawlRequest
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	spec, err := req.Normalize(a.d.Crawls.Limits(), a.d.Crawls.CanonOptions())
	if err != nil {
		return mapError(err, "")
	}
	if err := a.d.Crawls.CheckSeed(c.Request.Context(), spec.URL); err != nil {
		return mapError(err, "")
	}
	raw, _ := json.Marshal(spec)
	job, err := a.d.Jobs.CreateJob(c.Request.Context(), raw, spec.Key())
	var dup *store.DuplicateJobError
	if errors.As(err, &dup) {
		// The same crawl is queued or running: a second job would fetch
		// every page again.
		c.Header("Location", "/api/v1/crawls/"+dup.ID)
		return httpserver.Conflict(fmt.Sprintf("an identical crawl is already %s: job %s (status at /api/v1/crawls/%s) has the same start URL and the same "+
			"scope and settings, and would fetch the same pages. Follow that job, or cancel it (DELETE /api/v1/crawls/%s) before starting this one; "+
			"a crawl that differs in url, max_depth, max_pages, allowed_domains, include, exclude, tags, respect_robots, use_sitemap, recrawl or prune is not refused",
			dup.Status, dup.ID, dup.ID, dup.ID))
	}
	if err != nil {
		return mapError(err, "job")
	}
	a.d.Crawls.Wake()
	st, err := a.d.Crawls.Status(c.Request.Context(), job.ID)
	if err != nil {
		return mapError(err, "job")
	}
	c.Header("Location", "/api/v1/crawls/"+job.ID)
	c.JSON(http.StatusAccepted, st)
	return nil
}

func (a *API) listCrawls(c *gin.Context) error {
	limit, err := intParam(c, "limit", 50, 1, 1000)
	if err != nil {
		return err
	}
	status := store.JobStatus(c.Query("status"))
	switch status {
	case "", store.JobQueued, store.JobRunning, store.JobDone, store.JobFailed, store.JobCancelled:
	default:
		return httpserver.BadRequest("status", "want queued, running, done, failed or cancelled")
	}
	jobs, err := a.d.Jobs.ListJobs(c.Request.Context(), status, limit)
	if err != nil {
		return mapError(err, "jobs")
	}
	out := make([]engine.Status, 0, len(jobs))
	for _, j := range jobs {
		st, err := a.d.Crawls.Status(c.Request.Context(), j.ID)
		if err != nil {
			return mapError(err, "job")
		}
		out = append(out, st)
	}
	c.JSON(http.StatusOK, gin.H{"crawls": out})
	return nil
}

func (a *API) getCrawl(c *gin.Context) error {
	st, err := a.d.Crawls.Status(c.Request.Context(), c.Param("id"))
	if err != nil {
		return mapError(err, "crawl job "+c.Param("id"))
	}
	c.JSON(http.StatusOK, st)
	return nil
}

func (a *API) cancelCrawl(c *gin.Context) error {
	if _, err := a.d.Jobs.CancelJob(c.Request.Context(), c.Param("id")); err != nil {
		return mapError(err, "crawl job "+c.Param("id"))
	}
	st, err := a.d.Crawls.Status(c.Request.Context(), c.Param("id"))
	if err != nil {
		return mapError(err, "crawl job "+c.Param("id"))
	}
	c.JSON(http.StatusOK, st)
	return nil
}

// crawlEvents streams Server-Sent Events: "progress" with the job status when
// it changes, "page" per page this process finished, "stalled" when the job
// cannot make progress (its crawler is gone, or the database does not answer)
// and "resumed" after, and a final "summary".
func (a *API) crawlEvents(c *gin.Context) error {
	ctx := c.Request.Context()
	id := c.Param("id")
	// Subscribed before the status is read: a page finished in between has
	// its event on the stream (it may also be in the status; clients do not
	// add page events on top of a status).
	events, unsubscribe := a.d.Crawls.Subscribe(id)
	defer unsubscribe()
	st, err := a.polls.get(ctx, id, a.EventPoll/2, a.d.Crawls.Status)
	if err != nil {
		return mapError(err, "crawl job "+id)
	}
	w := c.Writer
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(ev engine.Event) bool {
		b, _ := json.Marshal(ev)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Type, b); err != nil {
			return false
		}
		w.Flush()
		return true
	}
	summary := func(st engine.Status) {
		send(engine.Event{Type: engine.EventSummary, JobID: id, At: time.Now().UTC(), Status: &st})
	}
	if st.Status.Terminal() {
		summary(st)
		return nil
	}
	if !send(engine.Event{Type: engine.EventProgress, JobID: id, At: time.Now().UTC(), Status: &st}) {
		return nil
	}
	last := progressKey(st)
	stalled := st.Stall != nil
	if stalled && !send(stallEvent(id, st.Stall.Reason, st.Stall.Detail)) {
		return nil
	}
	t := time.NewTicker(a.EventPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-events:
			if ev.Type == engine.EventProgress {
				continue // the poll below sends progress
			}
			if !send(ev) {
				return nil
			}
			if ev.Type == engine.EventSummary {
				return nil
			}
		case <-t.C:
			st, err := a.polls.get(ctx, id, a.EventPoll/2, a.d.Crawls.Status)
			if err != nil {
				if !stalled && store.Unavailable(err) && ctx.Err() == nil {
					stalled = true
					if !send(stallEvent(id, engine.StallDatabase, "the database does not answer; the job continues when it is back")) {
						return nil
					}
				}
				continue
			}
			if st.Status.Terminal() {
				summary(st)
				return nil
			}
			if now := st.Stall != nil; now != stalled {
				stalled = now
				ev := engine.Event{Type: engine.EventResumed, JobID: id, At: time.Now().UTC()}
				if now {
					ev = stallEvent(id, st.Stall.Reason, st.Stall.Detail)
				}
				if !send(ev) {
					return nil
				}
			}
			if cur := progressKey(st); !bytes.Equal(cur, last) {
				last = cur
				if !send(engine.Event{Type: engine.EventProgress, JobID: id, At: time.Now().UTC(), Status: &st}) {
					return nil
				}
			}
		}
	}
}

// progressKey is what a progress event reports a change of.
func progressKey(st engine.Status) []byte {
	b, _ := json.Marshal(struct {
		Status   store.JobStatus
		Counters engine.Counters
	}{st.Status, st.Counters})
	return b
}

func stallEvent(id, reason, detail string) engine.Event {
	return engine.Event{Type: engine.EventStalled, JobID: id, At: time.Now().UTC(), Reason: reason, Error: detail}
}

type pageRequest struct {
	URL  string   `json:"url"`
	Tags []string `json:"tags"`
}

func (a *API) crawlPage(c *gin.Context) error {
	var req pageRequest
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	if strings.TrimSpace(req.URL) == "" {
		return httpserver.BadRequest("url", "is required: the page to index")
	}
	if len(req.Tags) > engine.MaxTags {
		return httpserver.BadRequest("tags", fmt.Sprintf("%d tags, at most %d", len(req.Tags), engine.MaxTags))
	}
	for i, t := range req.Tags {
		if strings.TrimSpace(t) == "" || len(t) > 128 {
			return httpserver.BadRequest(fmt.Sprintf("tags[%d]", i), "tags must be 1..128 bytes")
		}
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), a.PageTimeout)
	defer cancel()
	res, err := a.d.Pages.CrawlPage(ctx, req.URL, engine.UniqueTags(req.Tags))
	if err != nil {
		return mapError(err, "page")
	}
	out := gin.H{
		"id": res.Document.ID, "url": res.Document.URL, "title": res.Document.Title,
		"chunks": res.Chunks, "outcome": res.Outcome, "stage_ms": res.Timings,
	}
	if res.Outcome != engine.Deleted {
		out["document"] = docJSON(res.Document) // a removed document is gone
	}
	if res.Reason != "" {
		out["reason"] = res.Reason
	}
	if res.Detail != "" {
		out["detail"] = res.Detail
	}
	if len(res.Removed) > 0 {
		out["removed"] = res.Removed
	}
	c.JSON(http.StatusOK, out)
	return nil
}

// document is the JSON shape of a stored document.
type document struct {
	ID           string      `json:"id"`
	URL          string      `json:"url"`
	Domain       string      `json:"domain"`
	Title        string      `json:"title"`
	Lang         string      `json:"lang,omitempty"`
	ContentHash  string      `json:"content_hash"`
	ETag         string      `json:"etag,omitempty"`
	LastModified string      `json:"last_modified,omitempty"`
	PublishedAt  *time.Time  `json:"published_at,omitempty"`
	FetchedAt    *time.Time  `json:"fetched_at,omitempty"`
	CreatedAt    time.Time   `json:"created_at"`
	UpdatedAt    time.Time   `json:"updated_at"`
	Tags         []string    `json:"tags"`
	Headings     []string    `json:"headings"`
	ChunkCount   int         `json:"chunk_count"`
	Chunks       []chunkJSON `json:"chunks,omitempty"`
}

type chunkJSON struct {
	ID          string   `json:"id"`
	Ordinal     int      `json:"ordinal"`
	Text        string   `json:"text"`
	TokenCount  int      `json:"token_count"`
	StartOffset int      `json:"start_offset"`
	EndOffset   int      `json:"end_offset"`
	HeadingPath []string `json:"heading_path"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func docJSON(d store.Document) document {
	return document{
		ID: d.ID, URL: d.URL, Domain: d.Domain, Title: d.Title, Lang: d.Lang, ContentHash: d.ContentHash,
		ETag: d.ETag, LastModified: d.LastModified, PublishedAt: timePtr(d.PublishedAt), FetchedAt: timePtr(d.FetchedAt),
		CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt, Tags: nonNil(d.Tags), Headings: nonNil(d.Headings), ChunkCount: d.ChunkCount,
	}
}

func intParam(c *gin.Context, name string, def, lo, hi int) (int, error) {
	v := c.Query(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, httpserver.BadRequest(name, fmt.Sprintf("want an integer in %d..%d", lo, hi))
	}
	return n, nil
}

func (a *API) listDocuments(c *gin.Context) error {
	limit, err := intParam(c, "limit", 100, 1, 1000)
	if err != nil {
		return err
	}
	after := c.Query("after")
	if after != "" && !docid.Valid(after) {
		return httpserver.BadRequest("after", "want the next_after of the previous page (a document id: 32 lower-case hex digits); leave it out for the first page")
	}
	domain := ""
	if raw := strings.TrimSpace(c.Query("domain")); raw != "" {
		if domain, err = documentHost(raw); err != nil {
			return err
		}
	}
	page, err := a.d.Documents.ListDocuments(c.Request.Context(), store.ListOptions{After: after, Limit: limit, Domain: domain})
	if err != nil {
		return mapError(err, "documents")
	}
	out := make([]document, 0, len(page.Documents))
	for _, d := range page.Documents {
		out = append(out, docJSON(d))
	}
	c.JSON(http.StatusOK, gin.H{"documents": out, "next_after": page.NextAfter})
	return nil
}

func (a *API) getDocument(c *gin.Context) error {
	ctx := c.Request.Context()
	withChunks := false
	if v, ok := c.GetQuery("chunks"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return httpserver.BadRequest("chunks", "want true or false (1 or 0)")
		}
		withChunks = b
	}
	d, err := a.d.Documents.GetDocument(ctx, c.Param("id"))
	if err != nil {
		return mapError(err, "document "+c.Param("id"))
	}
	out := docJSON(d)
	if withChunks {
		chunks, err := a.d.Documents.DocumentChunks(ctx, d.ID)
		if err != nil {
			return mapError(err, "chunks")
		}
		for _, ch := range chunks {
			out.Chunks = append(out.Chunks, chunkJSON{
				ID: strconv.FormatInt(ch.ID, 10), Ordinal: ch.Ordinal, Text: ch.Text, TokenCount: ch.TokenCount,
				StartOffset: ch.StartOffset, EndOffset: ch.EndOffset, HeadingPath: nonNil(ch.HeadingPath),
			})
		}
	}
	c.JSON(http.StatusOK, out)
	return nil
}

// chunkWithDoc is the answer of GET /chunks/{id}: one chunk with its offsets
// and the document it cites.
type chunkWithDoc struct {
	chunkJSON
	DocumentID string `json:"document_id"`
	URL        string `json:"url"`
	Title      string `json:"title"`
}

// getChunk answers one chunk by id (the chunk_id of search results), for
// citations; read-only.
func (a *API) getChunk(c *gin.Context) error {
	ctx := c.Request.Context()
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		return httpserver.NotFound("no chunk " + c.Param("id")) // decimal, but no chunk id is that large
	}
	if err != nil {
		return httpserver.BadRequest("id", "a chunk id is a decimal integer (the chunk_id of a search result)")
	}
	chunks, err := a.d.Documents.ChunksByIDs(ctx, []int64{id})
	if err != nil {
		return mapError(err, "chunk")
	}
	if len(chunks) == 0 {
		return httpserver.NotFound("no chunk " + c.Param("id"))
	}
	ch := chunks[0]
	d, err := a.d.Documents.GetDocument(ctx, ch.DocumentID)
	if err != nil {
		return mapError(err, "document "+ch.DocumentID)
	}
	c.JSON(http.StatusOK, chunkWithDoc{
		chunkJSON: chunkJSON{ID: strconv.FormatInt(ch.ID, 10), Ordinal: ch.Ordinal, Text: ch.Text, TokenCount: ch.TokenCount,
			StartOffset: ch.StartOffset, EndOffset: ch.EndOffset, HeadingPath: nonNil(ch.HeadingPath)},
		DocumentID: d.ID, URL: d.URL, Title: d.Title,
	})
	return nil
}

// deleteDocument removes the document and its chunks and vectors, records the
// change for the search index and queues the kg delete, in one transaction.
func (a *API) deleteDocument(c *gin.Context) error {
	id := c.Param("id")
	seq, err := a.d.Documents.DeleteDocument(c.Request.Context(), id, nil)
	if err != nil {
		return mapError(err, "document "+id)
	}
	c.JSON(http.StatusOK, gin.H{"id": id, "deleted": true, "change_seq": seq})
	return nil
}

// deleteDomain removes the documents of one host, at most limit of them per
// call (each in its own transaction, as deleteDocument does); "more" tells the
// caller to call again. A crawl of that host that is queued or running would
// store its pages again, so it must end first.
func (a *API) deleteDomain(c *gin.Context) error {
	ctx := c.Request.Context()
	raw := strings.TrimSpace(c.Query("domain"))
	if raw == "" {
		return httpserver.BadRequest("domain", "name the host whose documents to delete (domain=docs.example.com); one document is deleted with DELETE /api/v1/documents/{id}")
	}
	domain, err := documentHost(raw)
	if err != nil {
		return err
	}
	limit, err := intParam(c, "limit", 200, 1, 1000)
	if err != nil {
		return err
	}
	// Each step has its own StoreTimeout: a batch of many documents may take
	// longer than one, a database that does not answer may not.
	lctx, cancel := a.storeCtx(ctx)
	defer cancel()
	if job, err := a.crawlOf(lctx, domain); err != nil {
		return mapError(err, "jobs")
	} else if job != "" {
		return httpserver.Conflict(fmt.Sprintf("crawl %s covers %s and would store its pages again: cancel it (DELETE /api/v1/crawls/%s) or let it finish, then delete", job, domain, job))
	}
	page, err := a.d.Documents.ListDocuments(lctx, store.ListOptions{Domain: domain, Limit: limit})
	if err != nil {
		return mapError(err, "documents")
	}
	deleted := 0
	for _, d := range page.Documents {
		dctx, cancel := a.storeCtx(ctx)
		_, err := a.d.Documents.DeleteDocument(dctx, d.ID, &store.DeletePayload{URL: d.URL})
		cancel()
		if errors.Is(err, store.ErrNotFound) {
			continue // deleted meanwhile by another request
		}
		if err != nil {
			return mapError(err, "document "+d.ID)
		}
		deleted++
	}
	c.JSON(http.StatusOK, gin.H{"domain": domain, "deleted": deleted, "more": page.NextAfter != ""})
	return nil
}

// crawlOf returns the id of a queued or running crawl whose scope holds
// domain, or "" when there is none.
func (a *API) crawlOf(ctx context.Context, domain string) (string, error) {
	for _, status := range []store.JobStatus{store.JobRunning, store.JobQueued} {
		jobs, err := a.d.Jobs.ListJobs(ctx, status, 1000)
		if err != nil {
			return "", err
		}
		for _, j := range jobs {
			var spec engine.Spec
			if json.Unmarshal(j.Spec, &spec) != nil {
				continue
			}
			u, err := url.Parse(spec.URL)
			if err != nil {
				continue
			}
			if canon.HostInScope(domain, append([]string{u.Hostname()}, spec.AllowedDomains...)) {
				return j.ID, nil
			}
		}
	}
	return "", nil
}

type blockRequest struct {
	Domain string `json:"domain"`
	Reason string `json:"reason"`
}

func (a *API) listBlocklist(c *gin.Context) error {
	list, err := a.d.Blocklist.BlockedDomains(c.Request.Context())
	if err != nil {
		return mapError(err, "blocklist")
	}
	type entry struct {
		Domain    string    `json:"domain"`
		Reason    string    `json:"reason,omitempty"`
		CreatedAt time.Time `json:"created_at"`
	}
	out := make([]entry, 0, len(list))
	for _, b := range list {
		out = append(out, entry{b.Domain, b.Reason, b.CreatedAt})
	}
	c.JSON(http.StatusOK, gin.H{"blocklist": out})
	return nil
}

func (a *API) addBlocklist(c *gin.Context) error {
	var req blockRequest
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	if strings.TrimSpace(req.Domain) == "" {
		return httpserver.BadRequest("domain", "is required, e.g. ads.example.com")
	}
	if err := notAURL("domain", req.Domain); err != nil {
		return err
	}
	b, err := a.d.Blocklist.BlockDomain(c.Request.Context(), req.Domain, req.Reason)
	if err != nil {
		var ve *store.ValidationError
		if errors.As(err, &ve) {
			return httpserver.BadRequest("domain", ve.Reason)
		}
		return mapError(err, "blocklist")
	}
	a.d.BlocklistChanged()
	c.JSON(http.StatusCreated, gin.H{"domain": b.Domain, "reason": b.Reason, "created_at": b.CreatedAt})
	return nil
}

func (a *API) removeBlocklist(c *gin.Context) error {
	domain := c.Param("domain")
	if domain == "" {
		domain = c.Query("domain")
	}
	if domain == "" && c.Request.ContentLength != 0 {
		var req blockRequest
		if err := decodeBody(c, &req); err != nil {
			return err
		}
		domain = req.Domain
	}
	if strings.TrimSpace(domain) == "" {
		return httpserver.BadRequest("domain", "is required: DELETE /api/v1/blocklist/{domain} or ?domain=")
	}
	if err := notAURL("domain", domain); err != nil {
		return err
	}
	if err := a.d.Blocklist.UnblockDomain(c.Request.Context(), domain); err != nil {
		var ve *store.ValidationError
		if errors.As(err, &ve) {
			return httpserver.BadRequest("domain", ve.Reason)
		}
		return mapError(err, "blocklist entry "+domain)
	}
	a.d.BlocklistChanged()
	c.Status(http.StatusNoContent)
	return nil
}

// documentHost reads the domain parameter of GET and DELETE
// /api/v1/documents: a host name, as documents are stored (lower case, no
// port). A host with a port is refused with the host to give instead: the
// store does not tell a host's ports apart, so domain=127.0.0.1 lists (or
// deletes) the documents of every port of 127.0.0.1.
func documentHost(raw string) (string, error) {
	if err := notAURL("domain", raw); err != nil {
		return "", err
	}
	if h, port, err := net.SplitHostPort(raw); err == nil && h != "" && port != "" {
		host, herr := canon.NormalizeHost(h)
		if herr != nil {
			host = h
		}
		return "", httpserver.BadRequest("domain", fmt.Sprintf("documents are kept per host, without a port: give domain=%s (it covers every port of that host)", host))
	}
	host, err := canon.NormalizeHost(raw)
	if err != nil {
		return "", httpserver.BadRequest("domain", "not a host name: "+err.Error())
	}
	return host, nil
}

// notAURL refuses a URL where a host name is wanted (the blocklist, deletion by
// host): the store would read "http://x/" as the host "http". The answer names
// the URL's host when it has one.
func notAURL(field, raw string) error {
	s := strings.TrimSpace(raw)
	_, port, err := net.SplitHostPort(s)
	numericPort := err == nil && port != "" && strings.Trim(port, "0123456789") == ""
	if !strings.ContainsAny(s, "/?#@") && (err != nil || numericPort) {
		return nil // a host, maybe with a port, or an IPv6 address
	}
	msg := "give a host name such as ads.example.com, not a URL"
	withScheme := s
	if !strings.Contains(s, "://") {
		withScheme = "http://" + s
	}
	if u, err := url.Parse(withScheme); err == nil && u.Hostname() != "" && !strings.ContainsAny(u.Hostname(), ":/") {
		msg += fmt.Sprintf(" (for this URL: %s)", u.Hostname())
	}
	return httpserver.BadRequest(field, msg)
}
