package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/fetch"
	"github.com/kgsearch/kgsearch/services/crawler/internal/htmltext"
	"github.com/kgsearch/kgsearch/services/crawler/internal/pipeline"
)

// The page step: one page from fetch to store. Crawl jobs (jobRun.handle)
// and POST /api/v1/pages (CrawlPage) both take every page through runPage,
// so they follow the same stages and count the same metrics:
//
//	fetch → extract → [queue links] → chunk → embed → store + outbox
//
// fetch is the fetch package (colly behind the SSRF guard), extract is
// htmltext, and chunk, embed and store + outbox are the Indexer
// (pipeline.Pipeline, one MariaDB transaction for the document, its chunks and
// the kg outbox row). What comes before (the frontier: claim, admit, dedupe)
// and after (complete the frontier row; the outbox worker delivers to kg) is
// the caller's.

// pageJob is one page for the page step.
type pageJob struct {
	u    *url.URL
	req  fetch.Request
	prev *store.Document // the stored version; nil when the page is new
	tags []string
	// beforeStore, when set, gets the extracted page before it is stored: a
	// crawl queues the page's links first, so that a crash after storing
	// loses nothing (the resumed job completes the URL without fetching it).
	beforeStore func(*htmltext.Page) error
}

// pageDone is what the page step did.
type pageDone struct {
	out  outcome         // how the page ends; state "" when ctx ended
	resp *fetch.Response // nil when there was no HTTP answer
	// location is the redirect target when out.reason is SkipRedirect: the
	// answer's Location, or the page's own meta refresh.
	location string
	result   pipeline.Result // when the page reached the indexer
	stages   StageTimes
}

// runPage takes one page through the step and counts the crawler's metrics
// for it. A redirect — a 3xx answer, or a page whose meta refresh sends the
// reader elsewhere within seconds — ends it as skipped (SkipRedirect) with the
// target in pageDone.location; any other answer than 2xx or 304 fails it as
// http_<status>.
func (e *Engine) runPage(ctx context.Context, p pageJob) pageDone {
	var d pageDone
	fetchedAt := time.Now().UTC()
	resp, err := e.fetcher.Fetch(ctx, p.req)
	d.resp = resp
	if resp != nil {
		d.stages.Fetch = ms(resp.Duration)
		e.m.fetchDur.Observe(resp.Duration.Seconds())
		e.m.stageDur.WithLabelValues("fetch").Observe(resp.Duration.Seconds())
		e.m.bytes.Add(float64(len(resp.Body)))
		e.m.fetched.Inc()
	}
	if err != nil {
		d.out = classifyFetchError(ctx, err)
		return d
	}
	if out, ok := answerOutcome(resp); !ok {
		if out.reason == DoneUnchanged {
			d.out = e.notModified(ctx, p, out)
			return d
		}
		d.out = out
		if out.reason == SkipRedirect {
			d.location = resp.Location
		}
		return d
	}

	page, took, err := pipeline.Extract(p.u, resp.ContentType, resp.Body, resp.Header)
	d.stages.Extract = ms(took)
	e.m.stageDur.WithLabelValues("extract").Observe(took.Seconds())
	switch {
	case errors.Is(err, htmltext.ErrUnsupportedType):
		d.out = outcome{state: store.FrontierSkipped, reason: fetch.ReasonContentType, err: err}
		return d
	case err != nil:
		d.out = outcome{state: store.FrontierFailed, reason: FailExtract, err: err}
		return d
	case page.Refresh != "":
		// A redirect written in HTML: followed like a 3xx, never stored.
		d.out, d.location = outcome{state: store.FrontierSkipped, reason: SkipRedirect}, page.Refresh
		return d
	}
	if p.beforeStore != nil {
		if err := p.beforeStore(page); err != nil {
			d.out = storeFailure(ctx, FailStore, err)
			return d
		}
	}

	res, err := e.pipe.Index(ctx, pipeline.Page{
		URL: p.req.URL, Extracted: page, ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified"),
		FetchedAt: fetchedAt, Tags: p.tags, Previous: p.prev, Body: resp.Body, ContentType: resp.ContentType,
	})
	d.result = res
	d.stages.Chunk, d.stages.Embed, d.stages.Store = ms(res.Timings.Chunk), ms(res.Timings.Embed), ms(res.Timings.Store)
	e.observeIndex(res)
	switch {
	case errors.Is(err, pipeline.ErrEmbed):
		d.out = storeFailure(ctx, FailEmbed, err)
	case err != nil:
		d.out = storeFailure(ctx, FailStore, err)
	default:
		d.out = indexOutcome(res)
	}
	return d
}

// notModified ends a page answered 304 Not Modified: unchanged, with the
// request's tags given to its stored version when they differ (as Index does
// for a page whose content hash is unchanged).
func (e *Engine) notModified(ctx context.Context, p pageJob, out outcome) outcome {
	e.m.unchanged.Inc()
	if p.prev == nil {
		return out
	}
	out.chunks = p.prev.ChunkCount
	_, detail, err := e.pipe.Retag(ctx, p.prev, p.tags)
	if err != nil {
		return storeFailure(ctx, FailStore, err)
	}
	out.detail = detail
	return out
}

// answerOutcome decides what an HTTP answer means before extraction: ok is
// true for a 2xx answer, whose body goes on through the step.
func answerOutcome(resp *fetch.Response) (outcome, bool) {
	switch {
	case resp.NotModified():
		return outcome{state: store.FrontierDone, reason: DoneUnchanged}, false
	case resp.Redirect():
		return outcome{state: store.FrontierSkipped, reason: SkipRedirect}, false
	case resp.Status == http.StatusNotFound || resp.Status == http.StatusGone:
		return outcome{state: store.FrontierFailed, reason: "http_" + strconv.Itoa(resp.Status), err: fmt.Errorf("HTTP %d", resp.Status)}, false
	case resp.Status < 200 || resp.Status > 299:
		return outcome{state: store.FrontierFailed, reason: "http_" + strconv.Itoa(resp.Status),
			err: fmt.Errorf("HTTP %d after %d attempts", resp.Status, resp.Attempts)}, false
	}
	return outcome{}, true
}

// storeFailure is a failure of the store or embedding stage, or nothing when
// the caller's context ended (the URL is released, not failed).
func storeFailure(ctx context.Context, reason string, err error) outcome {
	if ctx.Err() != nil {
		return outcome{}
	}
	return outcome{state: store.FrontierFailed, reason: reason, err: err}
}

// indexOutcome maps what the indexer did to the page's frontier outcome.
func indexOutcome(res pipeline.Result) outcome {
	switch res.Outcome {
	case pipeline.Stored:
		return outcome{state: store.FrontierDone, reason: DoneStored, chunks: res.Chunks}
	case pipeline.Unchanged:
		return outcome{state: store.FrontierDone, reason: DoneUnchanged, chunks: res.Chunks, detail: res.RetagDetail}
	case pipeline.NoIndex:
		return outcome{state: store.FrontierDone, reason: DoneNoIndex}
	case pipeline.ScriptRendered:
		return outcome{state: store.FrontierDone, reason: DoneScriptRendered, detail: res.Shell.Evidence()}
	default:
		return outcome{state: store.FrontierDone, reason: DoneEmpty}
	}
}

// observeIndex counts the indexer's stage times and what it stored.
func (e *Engine) observeIndex(res pipeline.Result) {
	if res.Timings.Chunk > 0 {
		e.m.stageDur.WithLabelValues("chunk").Observe(res.Timings.Chunk.Seconds())
	}
	if res.Timings.Embed > 0 {
		e.m.embedDur.Observe(res.Timings.Embed.Seconds())
		e.m.stageDur.WithLabelValues("embed").Observe(res.Timings.Embed.Seconds())
	}
	if res.Timings.Store > 0 {
		e.m.stageDur.WithLabelValues("store").Observe(res.Timings.Store.Seconds())
	}
	switch res.Outcome {
	case pipeline.Stored:
		e.m.stored.Inc()
		e.m.chunks.Add(float64(res.Chunks))
	case pipeline.Unchanged:
		e.m.unchanged.Inc()
	}
}

// countEnd counts a page's final outcome when it is skipped, failed or
// deleted.
func (e *Engine) countEnd(out outcome) {
	switch out.state {
	case store.FrontierDone:
		if why, ok := deletedWhy(out.reason); ok {
			e.m.deleted.WithLabelValues(why).Inc()
		}
	case store.FrontierSkipped:
		e.m.skipped.WithLabelValues(out.reason).Inc()
	case store.FrontierFailed:
		e.m.failed.WithLabelValues(failLabel(out.reason)).Inc()
	}
}

// previous returns the stored version of a page, nil when there is none.
func (e *Engine) previous(ctx context.Context, canonicalURL string) (*store.Document, error) {
	d, err := e.st.DocumentByURL(ctx, canonicalURL)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// add sums another page's stage times.
func (s *StageTimes) add(o StageTimes) {
	s.Fetch += o.Fetch
	s.Extract += o.Extract
	s.Chunk += o.Chunk
	s.Embed += o.Embed
	s.Store += o.Store
}

func (s StageTimes) asMap() map[string]float64 {
	return map[string]float64{"fetch": s.Fetch, "extract": s.Extract, "chunk": s.Chunk, "embed": s.Embed, "store": s.Store}
}
